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

#include "tessera/options.hpp"
#include "tessera/precision.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tile_matrix.hpp"

namespace tessera {

namespace detail {
class Submission;
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
  // After wait(): true when the referenced triangle of the input held a NaN or an infinity
  // (whatever info is: LAPACK's, which may fail before it, or not at all for +inf on the diagonal).
  bool non_finite_input() const;

 private:
  void finish();

  std::shared_ptr<detail::Submission> submission_;  // with the temporaries its tasks use
};

// ---- on tile matrices ------------------------------------------------------------------------

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

// A = L L^T in place (lower tiles). options.uplo and options.nb are not used here: the tiles
// already fix them.
template <class T>
TESSERA_EXPORT Request potrf_async(TileMatrix<T>& A, const FactorOptions& options = {});
// B := A^{-1} B with A factored by potrf_async; B general with the same nb.
template <class T>
TESSERA_EXPORT Request potrs_async(const TileMatrix<T>& L, TileMatrix<T>& B, const FactorOptions& options = {});

// ---- on LAPACK-layout arrays (column-major, the triangle options.uplo) ---------------------------

template <class T>
TESSERA_EXPORT Request potrf_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT Request potrs_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb,
                    const FactorOptions& options = {});
template <class T>
TESSERA_EXPORT Request posv_async(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb,
                   const FactorOptions& options = {});

template <class T>
int potrf(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options = {}) {
  return potrf_async(runtime, n, A, lda, options).wait();
}
template <class T>
int potrs(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb, const FactorOptions& options = {}) {
  return potrs_async(runtime, n, nrhs, A, lda, B, ldb, options).wait();
}
template <class T>
int posv(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, const FactorOptions& options = {}) {
  return posv_async(runtime, n, nrhs, A, lda, B, ldb, options).wait();
}

// ---- checks -------------------------------------------------------------------------------------

// ||A - L L^T||_1 / (n ||A||_1 eps) with A held by `A` and L by `L` (lower tiles of the same
// size), computed as tile tasks on the chosen mode's workers (on the GPU in gpu mode). The
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

// Where a request's matrix lies: LAPACK layout in host memory (potrf_async), or in the memory of
// the runtime's GPU (tessera::device::potrf).
enum class MatrixIn { host, device };

// How Tessera runs a request, and why. Every request is planned once, before any task runs (its
// mode, tile size and path), from what the runtime has and one table of thresholds; this is the
// plan an n x n potrf of T with `options` on `runtime` gets. Throws as that potrf would for the
// same options (a mode the runtime cannot run, tiles too large for the GPU).
struct PlanExplanation {
  Mode mode = Mode::cpu;  // resolved
  int nb = 0;
  std::string path;  // "tiles", "one task" (the vendor's potrf on the whole matrix) or "caller's stream"
  std::vector<std::string> reasons;  // one line per decision
};
template <class T>
TESSERA_EXPORT PlanExplanation explain_potrf(const Runtime& runtime, int n, const FactorOptions& options = {},
                                             MatrixIn where = MatrixIn::host);

}  // namespace tessera
