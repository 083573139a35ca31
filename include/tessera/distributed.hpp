// Distributed memory: matrices spread over the ranks of an MPI communicator, factored and solved
// by the same tile algorithms as on one node, through StarPU-MPI. Every rank inserts the whole
// task graph; each task runs on the rank that owns the tile it writes, and StarPU-MPI moves the
// tiles it reads. Only in a Tessera built with StarPU-MPI (TESSERA_HAVE_DISTRIBUTED in
// tessera/version.h).
//
// Layout: ScaLAPACK's 2-D block-cyclic distribution on a P x Q process grid whose ranks are
// numbered row-major (BLACS' "Row" order: rank = p * Q + q), with square nb x nb blocks (MB = NB)
// starting on process (0, 0) (RSRC = CSRC = 0). Tile (I, J) is block (I, J); each rank keeps the
// tiles of its blocks, and its part of the matrix in ScaLAPACK's layout is the column-major local
// array of local_rows() x local_cols() elements (NUMROC) that import_local and export_local read
// and write. A symmetric matrix holds one triangle, as ScaLAPACK's pxpotrf reads it.
//
// Every function here is collective: each rank of the communicator calls it, in the same order,
// with the same sizes (a matrix's tags are handed out in construction order). Misuse throws
// InvalidArgument; numerical failure is LAPACK's info, the same global column on every rank.
#pragma once

#include "tessera/export.h"

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>

#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {
struct DistributedAccess;
}

namespace tessera::distributed {

// P x Q processes.
struct Grid {
  int rows = 1;
  int cols = 1;
};

// The tiles one rank exchanged with the others during one collective operation: each tile once
// per rank that reads it (StarPU-MPI keeps what a rank received until the operation ends), again
// after a task wrote it.
struct Traffic {
  std::int64_t tiles_sent = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t tiles_received = 0;
  std::int64_t bytes_received = 0;
};

// StarPU-MPI on a communicator, over the StarPU a Runtime started or attached to. One per
// process at a time. MPI must be initialized with MPI_THREAD_MULTIPLE (StarPU-MPI's thread calls
// MPI beside the application's); the communicator's size must be grid.rows x grid.cols.
class TESSERA_EXPORT Context {
 public:
  // Throws InvalidArgument for a grid that does not match the communicator, RuntimeError when MPI
  // is not initialized or not thread-safe, or StarPU-MPI is already running in this process.
  Context(Runtime& runtime, MPI_Comm comm, Grid grid);
  // Collective: waits for every rank's transfers, then stops StarPU-MPI.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Runtime& runtime() const noexcept;
  MPI_Comm comm() const noexcept;
  Grid grid() const noexcept;
  int rank() const noexcept;
  int size() const noexcept;
  int grid_row() const noexcept { return rank() / grid().cols; }
  int grid_col() const noexcept { return rank() % grid().cols; }
  // This rank's tile transfers in the last collective operation on the context's matrices (posv:
  // its solve; an import, export or fill moves none). A traced operation also lists them in its
  // trace's transfers, from "rank R" to "rank D".
  Traffic last_traffic() const noexcept;

 private:
  friend struct detail::DistributedAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether the process was started by an MPI launcher (mpirun, mpiexec, srun): programs that work
// with or without MPI decide from it whether to initialize MPI.
TESSERA_EXPORT bool launched_by_mpi();

template <class T>
class TESSERA_EXPORT Matrix {
 public:
  // A symmetric n x n matrix of which the triangle `uplo` is held.
  Matrix(Context& context, int n, int nb, Uplo uplo);
  // A general rows x cols matrix (right-hand sides, solutions).
  Matrix(Context& context, int rows, int cols, int nb);
  // Collective: the tiles are released on every rank.
  ~Matrix();
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;

  int rows() const noexcept;
  int cols() const noexcept;
  int nb() const noexcept;
  bool symmetric() const noexcept;
  Uplo uplo() const noexcept;  // lower for a general matrix
  Context& context() const noexcept;
  // The size of this rank's local array in ScaLAPACK's layout.
  int local_rows() const noexcept;
  int local_cols() const noexcept;

  // Tiles <- this rank's local array (column-major, leading dimension lld >= max(1,
  // local_rows())). A symmetric matrix reads the triangle uplo only; values are copied as they
  // are (a NaN is not looked for here).
  void import_local(const T* local, int lld);
  // This rank's local array <- tiles (a symmetric matrix writes the triangle uplo only).
  void export_local(T* local, int lld) const;
  // Every element of the matrix (the triangle uplo of a symmetric one) <- value(i, j), global
  // 0-based indices; each rank computes the elements it holds only.
  void fill(const std::function<T(int i, int j)>& value);

 private:
  friend struct detail::DistributedAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class Matrix<float>;
extern template class Matrix<double>;
extern template class Matrix<std::complex<float>>;
extern template class Matrix<std::complex<double>>;

// A collective operation in flight (potrf_async, potrs_async): this rank's tasks run while the
// caller goes on (its own work, progress reports). One at a time on a context: any other function
// of this header on the context's matrices before wait() throws InvalidArgument, on every rank
// alike. The matrices must outlive it.
class TESSERA_EXPORT Operation {
 public:
  Operation(Operation&& other) noexcept;
  Operation& operator=(Operation&&) = delete;
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  // Collective, as wait(), when wait() was not called (its error, if any, is then dropped).
  ~Operation();

  // Collective: every rank calls it. The operation's info (potrf: LAPACK's, the same on every
  // rank; potrs: 0); rethrows as the blocking forms throw. Again the same when called again.
  int wait();
  // Whether this rank's tasks are done (other ranks may still be working, and this rank sending).
  bool done() const;
  // This rank's tasks finished and submitted.
  Progress progress() const;

 private:
  friend struct detail::DistributedAccess;
  struct Impl;
  explicit Operation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// T: any scalar type of tessera/precision.hpp (a complex matrix is Hermitian: A = L L^H).
// A = L L^T (or U^T U; L L^H, U^H U for complex) in place; returns LAPACK's info, the first failing column of the whole
// matrix, on every rank. options.uplo and options.nb are not used: the matrix fixes them; nor is
// options.grain: a block-column task would write tiles of several ranks, so the tasks are tiles.
// options.log_determinant (each rank its own pointer): log det(A) written there on every rank,
// each rank summing over the diagonal tiles it owns and the sums added up over the ranks; 0 when
// the factorization failed.
// options.trace (each rank its own) records the tasks this rank runs, as in one process.
template <class T>
TESSERA_EXPORT int potrf(Matrix<T>& A, const FactorOptions& options = {});
// potrf and potrs started on every rank, returning at once: Operation::wait() gives the result.
template <class T>
TESSERA_EXPORT Operation potrf_async(Matrix<T>& A, const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT Operation potrs_async(const Matrix<T>& A, Matrix<T>& B, const FactorOptions& options = {});
// B := A^{-1} B with A factored by potrf; B general, with A's rows and nb.
template <class T>
TESSERA_EXPORT void potrs(const Matrix<T>& A, Matrix<T>& B, const FactorOptions& options = {});
// potrf, then potrs when it succeeded (B is left as it was otherwise); returns potrf's info.
template <class T>
TESSERA_EXPORT int posv(Matrix<T>& A, Matrix<T>& B, const FactorOptions& options = {});

// ||A - L L^T||_1 / (n ||A||_1 eps) (L L^H for complex), computed by tile tasks where the tiles
// are and reduced over the ranks: the same value on every rank. A and L symmetric (Hermitian), of
// one size, tile size and uplo.
template <class T>
TESSERA_EXPORT double backward_error(const Matrix<T>& A, const Matrix<T>& L, Mode mode = Mode::automatic);

}  // namespace tessera::distributed
