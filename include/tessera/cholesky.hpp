// Cholesky factorization and solves of symmetric positive definite matrices.
//
// Every operation is submitted as a task graph and returns at once with a Request; wait() blocks
// until the tasks are done and returns LAPACK's info: 0 on success, k > 0 when the leading minor
// of order k is the first one found not positive definite, a NaN pivot included (a NaN or
// infinity in the input fails where LAPACK's factorization fails on it, or not at all: +inf on the
// diagonal has a square root; Request::non_finite_input() tells). A solve never fails that way:
// a NaN or infinity in its factor or right-hand sides propagates into the solution (LAPACK's
// xPOTRS). Misuse throws
// tessera::InvalidArgument; what does not fit the machine (memory, tiles too large for the GPU)
// tessera::ResourceError; a failure of the machinery (a CUDA error inside a task, no worker able
// to run the chosen mode) tessera::CudaError or tessera::RuntimeError, from the call or from
// wait(); all derive from tessera::Error.
#pragma once

#include "tessera/export.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tessera/matrix.hpp"
#include "tessera/options.hpp"
#include "tessera/precision.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tile_matrix.hpp"

namespace tessera {

namespace detail {
class Submission;
struct RequestAccess;
}

// A request may outlive its Runtime: the Runtime's destructor waits for every request submitted
// through it and releases what their tasks used, so wait() afterwards returns the same info (or
// rethrows the same error) at once.
class TESSERA_EXPORT Request {
 public:
  Request() = default;
  // Used by Tessera's own submission functions.
  explicit Request(std::shared_ptr<detail::Submission> submission);
  Request(Request&&) noexcept = default;
  Request& operator=(Request&&) noexcept;
  // Waits: the tasks may still use memory the request refers to.
  ~Request();

  // Blocks until every task of the request has finished; returns info. Rethrows the first
  // exception a task raised, with its type (CudaError, ResourceError...; the task named in its
  // message). May be called again (returns the same info).
  int wait();
  bool done() const;
  // Blocks until the request is done or `timeout` has passed, whichever comes first; returns
  // done(). Woken by the last task itself (no polling); wait() then gives info.
  bool wait_for(std::chrono::milliseconds timeout);
  // wait(), calling `report` on this thread every `interval` until the request is done and once
  // more after; an empty report is a plain wait(). An exception from `report` cancels the request,
  // waits for its running tasks and propagates.
  int wait(const ProgressReport& report, std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  // Its tasks finished and submitted so far; from any thread.
  Progress progress() const;
  // After wait(): true when the referenced triangle of the input held a NaN or an infinity
  // (whatever info is: LAPACK's, which may fail before it, or not at all for +inf on the diagonal).
  bool non_finite_input() const;
  // Stops the request: the tasks that have not started return at once, those running finish;
  // wait() then throws Cancelled, and the arrays the request writes hold partial results. Returns
  // false, changing nothing, for a request already done (wait() gives its result). From any
  // thread; the runtime stays usable.
  bool cancel();

 private:
  friend struct detail::RequestAccess;
  void finish();

  std::shared_ptr<detail::Submission> submission_;  // with the temporaries its tasks use
};

// ---- the operations: one entry each, wherever the matrices lie (tessera/matrix.hpp) ------------------
//
// A = L L^T (options.uplo lower) or U^T U (upper), in place; the request's info is LAPACK's. Where
// A lies decides how it runs:
//   - MatrixIn::host: a column-major array; only the triangle options.uplo is read and written.
//   - MatrixIn::tiles: tiles of the runtime (options.uplo and options.nb unused: the tiles fix
//     them).
//   - MatrixIn::device: an array in GPU memory, factored as tessera/device.hpp says; the call
//     returns once the result is complete, with a request that is already done.
//   - MatrixIn::host_batch, host_variable_batch: each matrix on its own (tessera/batched.hpp), the
//     view's info[k] receiving matrix k's info; the request's info is 0. options.batch_chunk and
//     options.fast_math apply here only.
// Misuse throws InvalidArgument; a square matrix is required, and positions in messages are
// those of the LAPACK-layout form of A's home (below, tessera/device.hpp, tessera/batched.hpp).
template <class T>
TESSERA_EXPORT Request potrf_async(Runtime& runtime, const MatrixView<T>& A, const FactorOptions& options = {});
// B := A^{-1} B with `factor` from potrf_async, in the same home (B may lie on another of the
// runtime's GPUs than a device factor; a tile B has the factor's nb). B has the factor's rows (a
// variable batch: the same n[k]); its columns are the right-hand sides. The factor is only read.
template <class T>
TESSERA_EXPORT Request potrs_async(Runtime& runtime, const MatrixView<T>& factor, const MatrixView<T>& B,
                                   const FactorOptions& options = {});
// potrf_async, then potrs_async where the factorization succeeded: B is left as it was when
// info > 0, as in LAPACK. Tiles and GPU arrays are factored before the call returns (so that B is
// solved only once the factor is known to exist); host arrays and batches run as one task graph.
template <class T>
TESSERA_EXPORT Request posv_async(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B,
                                  const FactorOptions& options = {});

// A^{-1} from its Cholesky factor (LAPACK's xPOTRI): `factor` holds the factor potrf_async left in
// the triangle options.uplo, which is overwritten with that triangle of A^{-1}; the other triangle
// is not touched. Info k > 0: the factor's diagonal entry k is exactly zero, and nothing has
// changed (xTRTRI's check, made before any task). A NaN or infinity in the factor propagates.
// As a tile task graph: the triangular inverse, then the product of its transpose with it.
// For a factor in host memory (MatrixIn::host) or GPU memory (MatrixIn::device: the call returns
// once the inverse is complete, after the work already on the view's stream), or a strided host
// batch (MatrixIn::host_batch: each matrix's info in the view's info, as potri_batched_async);
// other homes throw InvalidArgument.
template <class T>
TESSERA_EXPORT Request potri_async(Runtime& runtime, const MatrixView<T>& factor, const FactorOptions& options = {});

template <class T>
int potrf(Runtime& runtime, const MatrixView<T>& A, const FactorOptions& options = {}) {
  return potrf_async(runtime, A, options).wait(options.progress, options.progress_interval);
}
template <class T>
int potrs(Runtime& runtime, const MatrixView<T>& factor, const MatrixView<T>& B, const FactorOptions& options = {}) {
  return potrs_async(runtime, factor, B, options).wait(options.progress, options.progress_interval);
}
template <class T>
int posv(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B, const FactorOptions& options = {}) {
  return posv_async(runtime, A, B, options).wait(options.progress, options.progress_interval);
}
template <class T>
int potri(Runtime& runtime, const MatrixView<T>& factor, const FactorOptions& options = {}) {
  return potri_async(runtime, factor, options).wait(options.progress, options.progress_interval);
}

// ---- small work on host memory, with no runtime ----------------------------------------------------
//
// Tessera's plan runs a request on host memory (MatrixIn::host, or a strided MatrixIn::host_batch)
// with LAPACK on the calling thread, with no task, where it does at most the arithmetic of one
// factorization of order 384 (matrices x n^2 x (n + 6 nrhs) <= 384^3) and its options leave the
// mode (cpu or auto), tile size, grain and chunk to Tessera and ask for no trace: the runtime's
// latency would exceed the arithmetic. Matrices of order below 128 run with one BLAS thread, a
// stack of them split over up to the program's BLAS threads (threads of their own, joined before
// the call returns). The calls above take that path by themselves;
// runs_on_calling_thread says whether a request does (nrhs: the right-hand sides of a solve, 0 for
// a factorization), and the forms below run such a request without a runtime, so that none need
// be started for small work (the C API and the Python package call them). Their arguments are
// checked as the calls above check them; a request that would not run on the calling thread
// throws InvalidArgument.
template <class T>
TESSERA_EXPORT bool runs_on_calling_thread(const MatrixView<T>& A, int nrhs, const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT int potrf_on_calling_thread(const MatrixView<T>& A, const FactorOptions& options = {});
// Out of place, two strided host batches of the same order and count: each matrix's triangle
// options.uplo of A (not written) copied into `factors`, the other triangle zero, and factored
// there at once while it is in cache; factors.info() receives each matrix's info.
template <class T>
TESSERA_EXPORT int potrf_on_calling_thread(const MatrixView<T>& A, const MatrixView<T>& factors,
                                           const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT int potrs_on_calling_thread(const MatrixView<T>& factor, const MatrixView<T>& B,
                                           const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT int posv_on_calling_thread(const MatrixView<T>& A, const MatrixView<T>& B,
                                          const FactorOptions& options = {});
// potri_async's request on the calling thread (runs_on_calling_thread(factor, 0, options)).
template <class T>
TESSERA_EXPORT int potri_on_calling_thread(const MatrixView<T>& factor, const FactorOptions& options = {});
// Out of place, two strided host batches of the same order and count: each factor's triangle
// options.uplo (potrf's; not written) copied into `inverses` and inverted there by xPOTRI, then
// mirrored into the other triangle (the whole Hermitian inverse), at once while it is in cache;
// inverses.info() receives each matrix's xPOTRI info, and a failed matrix's inverse is NaN.
template <class T>
TESSERA_EXPORT int potri_on_calling_thread(const MatrixView<T>& factors, const MatrixView<T>& inverses,
                                           const FactorOptions& options = {});

// ---- tile matrices: loading and storing ---------------------------------------------------------

// Tiles of A <- the n x n matrix at `src` (column-major, leading dimension ld >= n); only the
// triangle `uplo` is read. The other direction writes only that triangle of dst. Loading a
// symmetric matrix reports a NaN or infinity through non_finite_input() (its info stays 0);
// the tiles are loaded all the same, so a factor loaded for potrs_async still solves. The copy
// tasks are scheduled by `hints` (TaskKind::copy_in, copy_out).
template <class T>
TESSERA_EXPORT Request load_async(TileMatrix<T>& A, Uplo uplo, const T* src, int ld,
                                  const SchedulingHints& hints = critical_path_hints);
template <class T>
TESSERA_EXPORT Request store_async(const TileMatrix<T>& A, Uplo uplo, T* dst, int ld,
                                   const SchedulingHints& hints = critical_path_hints);
// General (right-hand side) tile matrices: the whole rows x cols block.
template <class T>
TESSERA_EXPORT Request load_async(TileMatrix<T>& B, const T* src, int ld);
template <class T>
TESSERA_EXPORT Request store_async(const TileMatrix<T>& B, T* dst, int ld);

// ---- the LAPACK-layout forms, compositions of the entries above ----------------------------------

// On tiles: A = L L^T in place (lower tiles); B := A^{-1} B with B general of the same nb.
template <class T>
Request potrf_async(TileMatrix<T>& A, const FactorOptions& options = {}) {
  return potrf_async(A.runtime(), MatrixView<T>::of(A), options);
}
template <class T>
Request potrs_async(const TileMatrix<T>& L, TileMatrix<T>& B, const FactorOptions& options = {}) {
  return potrs_async(L.runtime(), MatrixView<T>::of(L), MatrixView<T>::of(B), options);
}

// On column-major host arrays (the triangle options.uplo).
template <class T>
Request potrf_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {}) {
  return potrf_async(runtime, MatrixView<T>::host(n, n, A, lda), options);
}
template <class T>
Request potrs_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb,
                    const FactorOptions& options = {}) {
  return potrs_async(runtime, MatrixView<T>::host(n, n, const_cast<T*>(A), lda), MatrixView<T>::host(n, nrhs, B, ldb),
                     options);
}
template <class T>
Request posv_async(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, const FactorOptions& options = {}) {
  return posv_async(runtime, MatrixView<T>::host(n, n, A, lda), MatrixView<T>::host(n, nrhs, B, ldb), options);
}

template <class T>
Request potri_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {}) {
  return potri_async(runtime, MatrixView<T>::host(n, n, A, lda), options);
}

template <class T>
int potrf(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {}) {
  return potrf_async(runtime, n, A, lda, options).wait(options.progress, options.progress_interval);
}
template <class T>
int potrs(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb, const FactorOptions& options = {}) {
  return potrs_async(runtime, n, nrhs, A, lda, B, ldb, options).wait(options.progress, options.progress_interval);
}
template <class T>
int posv(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, const FactorOptions& options = {}) {
  return posv_async(runtime, n, nrhs, A, lda, B, ldb, options).wait(options.progress, options.progress_interval);
}
template <class T>
int potri(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {}) {
  return potri_async(runtime, n, A, lda, options).wait(options.progress, options.progress_interval);
}

// ---- checks -------------------------------------------------------------------------------------

// ||A - L L^T||_1 / (n ||A||_1 eps) (L L^H for complex) with A held by `A` and L by `L` (lower
// tiles of the same size), computed as tile tasks on the chosen mode's workers (on the GPU in gpu mode). The
// tiles of L are only read.
template <class T>
TESSERA_EXPORT double backward_error(const TileMatrix<T>& A, const TileMatrix<T>& L, Mode mode = Mode::hybrid);

// The tile size Tessera picks for an n x n matrix when FactorOptions::nb is 0; in cpu mode it
// depends on the number of CPU workers too (0: not known).
TESSERA_EXPORT int default_tile_size(int n, Precision precision, Mode resolved_mode, int cpu_workers = 0);
// The same for a factorization asking `runtime` for `requested`: the mode it resolves to, except
// that hybrid takes gpu mode's tiles on a runtime whose GPUs dominate (where auto runs gpu mode),
// since the CPUs there take next to no tile task.
TESSERA_EXPORT int default_tile_size(const Runtime& runtime, int n, Precision precision, Mode requested);

// How Tessera runs a request, and why. Every request is planned once, before any task runs (its
// mode, tile size and path), from what the runtime has and one table of thresholds; this is the
// plan potrf_async(runtime, A, options) makes (A's data is not read). Throws as that potrf would
// for the same options (a mode the runtime cannot run, tiles too large for the GPU).
struct PlanExplanation {
  Mode mode = Mode::cpu;  // resolved
  int nb = 0;
  // "tiles", "one task" (the vendor's potrf on the whole matrix), "caller's stream", "batched chunks"
  // or "calling thread" (LAPACK, no task: runs_on_calling_thread)
  std::string path;
  std::vector<std::string> reasons;  // one line per decision
};
template <class T>
TESSERA_EXPORT PlanExplanation explain_potrf(const Runtime& runtime, const MatrixView<T>& A,
                                             const FactorOptions& options = {});
// The plan of an n x n matrix in host memory (MatrixIn::host) or GPU memory (MatrixIn::device).
template <class T>
PlanExplanation explain_potrf(const Runtime& runtime, int n, const FactorOptions& options = {},
                              MatrixIn where = MatrixIn::host) {
  const MatrixView<T> A = where == MatrixIn::device ? MatrixView<T>::on_device(n, n, nullptr, n, nullptr)
                                                    : MatrixView<T>::host(n, n, nullptr, n);
  return explain_potrf<T>(runtime, A, options);
}

}  // namespace tessera
