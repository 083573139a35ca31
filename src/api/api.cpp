// The operations on tiles and on host arrays (src/api/operations.hpp), and loading and storing
// tiles: argument checks, temporaries, then the tile algorithms.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "argument_errors.hpp"
#include "calling_thread.hpp"
#include "operations.hpp"
#include "plan_requests.hpp"
#include "request_support.hpp"
#include "caller_memory.hpp"
#include "device_memory.hpp"
#include "tile_access.hpp"
#include "plan.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

using detail::DataPlace;
using detail::make_context;
using detail::make_request;
using detail::Plan;
using detail::plan_request;
using detail::PlanRequest;
using detail::Submission;
using detail::TaskContext;
using detail::TileGrid;
using detail::upper_as_stored;

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

// The caller's array of a tile matrix's copy in or out (the matrix's sizes are valid already).
void check_lapack_array(const char* routine, int rows, int cols, const void* array, int ld) {
  require(ld >= std::max(1, rows), std::string(routine) + ": leading dimension " + std::to_string(ld) + " < max(1, " +
                                       std::to_string(rows) + ")");
  require(array != nullptr || rows == 0 || cols == 0, std::string(routine) + ": null pointer");
}

template <class T>
void check_same_runtime_and_tiles(const TileMatrix<T>& L, const TileMatrix<T>& B) {
  require(&L.runtime() == &B.runtime(), "tile matrices belong to different runtimes");
  require(L.structure() == TileStructure::symmetric_lower, "the factor must be a symmetric tile matrix");
  require(B.structure() == TileStructure::general, "right-hand sides must be a general tile matrix");
  require(L.rows() == B.rows() && L.nb() == B.nb(), "factor and right-hand sides differ in rows or tile size");
}

// The tiles of one LAPACK-layout array: tiles from the pool (copied in and out), or the array
// itself (in place: a view, pinned for the call when GPU workers take part). In place the load and
// store tasks stay: they scan the input for NaN and infinity and bring each tile home, and copy
// nothing. Members in this order: the tiles are released (their latest values home) before the
// memory is unpinned.
template <class T>
class ArrayTiles {
 public:
  explicit ArrayTiles(std::unique_ptr<TileMatrix<T>> pool_tiles) : tiles_(std::move(pool_tiles)) {}
  ArrayTiles(Runtime& runtime, int rows, int cols, int nb, TileStructure structure)
      : ArrayTiles(std::make_unique<TileMatrix<T>>(runtime, rows, cols, nb, structure)) {}
#ifdef TESSERA_HAVE_CUDA
  // An n x n symmetric matrix's tiles on the GPUs owning them, laid out as `layout` says
  // (HostTiles::staged); with `transposed`, an upper-stored one's blocks as stored
  // (TileRef::transposed).
  ArrayTiles(Runtime& runtime, int n, int nb, std::vector<int> devices, detail::OwnedPanels layout, bool transposed)
      : device_tiles_(std::make_unique<detail::DeviceTiles<T>>(std::move(devices), std::move(layout))),
        tiles_(detail::TileAccess::on_gpus(runtime, n, nb, *device_tiles_, transposed)) {}
#endif
  ArrayTiles(Runtime& runtime, Mode resolved, int rows, int cols, int nb, TileStructure structure, const T* array,
             int ld, bool transposed = false)
      : pinned_(std::make_unique<detail::PinnedCallerMemory>(const_cast<T*>(array),
                                                             resolved == Mode::cpu ? 0 : span_bytes(rows, cols, ld))),
        tiles_(detail::TileAccess::view(runtime, rows, cols, nb, structure, const_cast<T*>(array), ld,
                                        detail::kHostMemory, transposed)) {}
  const TileMatrix<T>& tiles() const { return *tiles_; }
  TileGrid grid() const { return detail::tile_grid(*tiles_); }

 private:
  static std::size_t span_bytes(int rows, int cols, int ld) {
    if (rows == 0 || cols == 0) return 0;
    return (static_cast<std::size_t>(cols - 1) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(rows)) * sizeof(T);
  }
  std::unique_ptr<detail::PinnedCallerMemory> pinned_;
#ifdef TESSERA_HAVE_CUDA
  std::unique_ptr<detail::DeviceTiles<T>> device_tiles_;  // before tiles_: outlives their view
#endif
  std::unique_ptr<TileMatrix<T>> tiles_;
};

// The symmetric matrix of a call as tiles, held as its plan says (Plan::host_tiles): lower tiles,
// or transposed ones (upper_as_stored). Staged tiles that cannot be had after all (GPU memory
// taken since the plan counted it) are pooled tiles; `staging` is the runtime's slots for staged
// ones, null otherwise.
template <class T>
std::shared_ptr<ArrayTiles<T>> matrix_tiles(Runtime& runtime, const Plan& plan, const FactorOptions& options, int n,
                                            const T* A, int lda, detail::StagingRing*& staging) {
  const int nb = plan.nb;
  const bool transposed = upper_as_stored(options);
  staging = nullptr;
  switch (plan.host_tiles) {
    case detail::HostArrayTiles::staged:
#ifdef TESSERA_HAVE_CUDA
      try {
        staging = &detail::staging_ring_of(runtime);
        return std::make_shared<ArrayTiles<T>>(runtime, n, nb, plan.staging_devices, *plan.staged_panels, transposed);
      } catch (const ResourceError&) {
      } catch (const CudaError&) {
      }
      staging = nullptr;
#endif
      break;
    case detail::HostArrayTiles::in_place:
      return std::make_shared<ArrayTiles<T>>(runtime, plan.mode, n, n, nb, TileStructure::symmetric_lower, A, lda,
                                             transposed);
    case detail::HostArrayTiles::pooled:
      break;
  }
  if (transposed) return std::make_shared<ArrayTiles<T>>(detail::TileAccess::transposed_tiles<T>(runtime, n, nb));
  return std::make_shared<ArrayTiles<T>>(runtime, n, n, nb, TileStructure::symmetric_lower);
}

// The tiles of a LAPACK-layout solve: the matrix (or its factor) and the right-hand sides.
template <class T>
struct MatrixAndRhs {
  std::shared_ptr<ArrayTiles<T>> A;
  ArrayTiles<T> B;
};

}  // namespace

template <class T>
Request load_async(TileMatrix<T>& A, Uplo uplo, const T* src, int ld, const SchedulingHints& hints) {
  check_lapack_array("load", A.rows(), A.cols(), src, ld);
  return make_request(A.runtime(), nullptr, [&](Submission& s) {
    detail::insert_load(make_context(A.runtime(), s, Mode::cpu, GpuKernels::any), A, uplo, src, ld,
                        detail::NonFiniteInput::fails_factorization, hints);
  });
}

template <class T>
Request store_async(const TileMatrix<T>& A, Uplo uplo, T* dst, int ld, const SchedulingHints& hints) {
  check_lapack_array("store", A.rows(), A.cols(), dst, ld);
  return make_request(A.runtime(), nullptr, [&](Submission& s) {
    detail::insert_store(make_context(A.runtime(), s, Mode::cpu, GpuKernels::any), A, uplo, dst, ld, false, hints);
  });
}

template <class T>
Request load_async(TileMatrix<T>& B, const T* src, int ld) {
  return load_async(B, Uplo::lower, src, ld);
}

template <class T>
Request store_async(const TileMatrix<T>& B, T* dst, int ld) {
  return store_async(B, Uplo::lower, dst, ld);
}

template <class T>
Request detail::potrf_tiles_async(TileMatrix<T>& A, const FactorOptions& options) {
  require(A.structure() == TileStructure::symmetric_lower, "potrf needs a symmetric tile matrix");
  const Plan plan = plan_request(A.runtime(), detail::tiles_request(A, options, true));
  return make_request(A.runtime(), nullptr, [&](Submission& s) {
    s.set_trace(options.trace);
    const TaskContext ctx = make_context(A.runtime(), s, plan, options.gpu_kernels);
    detail::insert_cholesky<T>(ctx, detail::tile_grid(A), options.hints, plan.cholesky(options.tile_arithmetic));
    if (double* slots = detail::log_diagonal_slots(s, A.tile_rows(), options.log_determinant))
      detail::insert_log_diagonals<T>(ctx, detail::tile_grid(A), slots, options.hints);
  });
}

template <class T>
Request detail::potrs_tiles_async(const TileMatrix<T>& L, TileMatrix<T>& B, const FactorOptions& options) {
  check_same_runtime_and_tiles(L, B);
  const Plan plan = plan_request(L.runtime(), detail::tiles_request(L, options, false));
  return make_request(L.runtime(), nullptr, [&](Submission& s) {
    s.set_trace(options.trace);
    detail::insert_cholesky_solve(make_context(L.runtime(), s, plan, options.gpu_kernels), L, B, options.hints);
  });
}

// A request on one LAPACK-layout array (potrf, potri): its tiles held as the plan says, then
// `insert` inserts the tasks on them.
template <class T, class Insert>
Request submit_on_matrix_tiles(Runtime& runtime, const Plan& plan, int n, T* A, int lda, const FactorOptions& options,
                               Insert&& insert) {
  detail::StagingRing* staging = nullptr;
  std::shared_ptr<ArrayTiles<T>> tiles = matrix_tiles<T>(runtime, plan, options, n, A, lda, staging);
  return make_request(runtime, tiles, [&](Submission& s) {
    s.set_trace(options.trace);
    TaskContext ctx = make_context(runtime, s, plan, options.gpu_kernels);
    ctx.staging = staging;
    insert(ctx, tiles->grid());
  });
}

template <class T>
Request detail::potrf_array_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options) {
  detail::throw_if_invalid("potrf", potrf_argument_error(detail::uplo_letter(options.uplo), n, A, lda));
  const Plan plan = plan_request(runtime, detail::array_request<T>(runtime, n, A, options, true));
  if (plan.path == detail::Path::calling_thread) {
    const detail::CallingThreadResult result = detail::potrf_on_calling_thread(options.uplo, n, A, lda);
    if (options.log_determinant)
      detail::write_log_determinants(MatrixView<T>::host(n, n, A, lda), result.info, options.log_determinant);
    return detail::finished_request(result);
  }
  return submit_on_matrix_tiles<T>(runtime, plan, n, A, lda, options, [&](const TaskContext& ctx, const TileGrid& tiles) {
    detail::insert_lapack_potrf<T>(
        ctx, tiles, options.uplo, A, lda, options.hints, plan.cholesky(options.tile_arithmetic),
        detail::log_diagonal_slots(*ctx.submission, tiles.tile_rows(), options.log_determinant));
  });
}

// A solve in LAPACK layout (potrs, posv): the matrix and the right-hand sides as tiles, held as
// the plan says, then `insert_solve` inserts the tasks on the two tile grids. A staged matrix's
// right-hand sides are pooled tiles, which the algorithms copy without the slots.
template <class T, class InsertSolve>
Request submit_lapack_solve(Runtime& runtime, const Plan& plan, int n, int nrhs, const T* A, int lda, T* B, int ldb,
                            const FactorOptions& options, InsertSolve&& insert_solve) {
  detail::StagingRing* staging = nullptr;
  std::shared_ptr<ArrayTiles<T>> matrix = matrix_tiles<T>(runtime, plan, options, n, A, lda, staging);
  auto tiles = std::make_shared<MatrixAndRhs<T>>(MatrixAndRhs<T>{
      std::move(matrix), plan.rhs_in_place
                             ? ArrayTiles<T>(runtime, plan.mode, n, nrhs, plan.nb, TileStructure::general, B, ldb)
                             : ArrayTiles<T>(runtime, n, nrhs, plan.nb, TileStructure::general)});
  return make_request(runtime, tiles, [&](Submission& s) {
    s.set_trace(options.trace);
    TaskContext ctx = make_context(runtime, s, plan, options.gpu_kernels);
    ctx.staging = staging;
    insert_solve(ctx, tiles->A->grid(), tiles->B.grid());
  });
}

template <class T>
Request detail::potrs_array_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb,
                                  const FactorOptions& options) {
  detail::throw_if_invalid("potrs",
                           potrs_argument_error(detail::uplo_letter(options.uplo), n, nrhs, A, lda, B, ldb));
  const Plan plan = plan_request(runtime, detail::solve_array_request<T>(runtime, n, nrhs, A, options, false));
  if (plan.path == detail::Path::calling_thread) {
    detail::potrs_on_calling_thread(options.uplo, n, nrhs, A, lda, B, ldb);
    return detail::finished_request(0);
  }
  return submit_lapack_solve<T>(runtime, plan, n, nrhs, A, lda, B, ldb, options,
                                [&](const TaskContext& ctx, const TileGrid& a_tiles, const TileGrid& b_tiles) {
                                  detail::insert_lapack_potrs<T>(ctx, a_tiles, b_tiles, options.uplo, A, lda, B, ldb,
                                                                options.hints);
                                });
}

template <class T>
Request detail::posv_array_async(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb,
                                 const FactorOptions& options) {
  detail::throw_if_invalid("posv",
                           posv_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs, A, lda, B, ldb));
  const Plan plan = plan_request(runtime, detail::solve_array_request<T>(runtime, n, nrhs, A, options, true));
  if (plan.path == detail::Path::calling_thread) {
    const detail::CallingThreadResult result = detail::posv_on_calling_thread(options.uplo, n, nrhs, A, lda, B, ldb);
    if (options.log_determinant)
      detail::write_log_determinants(MatrixView<T>::host(n, n, A, lda), result.info, options.log_determinant);
    return detail::finished_request(result);
  }
  return submit_lapack_solve<T>(runtime, plan, n, nrhs, A, lda, B, ldb, options,
                                [&](const TaskContext& ctx, const TileGrid& a_tiles, const TileGrid& b_tiles) {
                                  double* slots =
                                      detail::log_diagonal_slots(*ctx.submission, a_tiles.tile_rows(), options.log_determinant);
                                  detail::insert_lapack_posv<T>(ctx, a_tiles, b_tiles, options.uplo, A, lda, B, ldb,
                                                                options.hints, plan.cholesky(options.tile_arithmetic), slots);
                                });
}

template <class T>
Request detail::potri_array_async(Runtime& runtime, int n, T* A, int lda, const FactorOptions& options) {
  detail::throw_if_invalid("potri", potrf_argument_error(detail::uplo_letter(options.uplo), n, A, lda));
  if (n == 0) return detail::finished_request(0);
  // xTRTRI's check, before anything changes; the tasks then never meet a zero pivot.
  if (const int zero = detail::first_zero_diagonal(n, A, lda)) return detail::finished_request(zero);
  const Plan plan = plan_request(runtime, detail::array_request<T>(runtime, n, A, options, false));
  if (plan.path == detail::Path::calling_thread)
    return detail::finished_request(detail::potri_on_calling_thread(options.uplo, n, A, lda));
  return submit_on_matrix_tiles<T>(runtime, plan, n, A, lda, options, [&](const TaskContext& ctx, const TileGrid& tiles) {
    detail::insert_lapack_potri<T>(ctx, tiles, options.uplo, A, lda, options.hints);
  });
}

#define TESSERA_INSTANTIATE(T)                                                                                 \
  template Request detail::potri_array_async<T>(Runtime&, int, T*, int, const FactorOptions&);                 \
  template Request load_async<T>(TileMatrix<T>&, Uplo, const T*, int, const SchedulingHints&);                 \
  template Request store_async<T>(const TileMatrix<T>&, Uplo, T*, int, const SchedulingHints&);                \
  template Request load_async<T>(TileMatrix<T>&, const T*, int);                                               \
  template Request store_async<T>(const TileMatrix<T>&, T*, int);                                              \
  template Request detail::potrf_tiles_async<T>(TileMatrix<T>&, const FactorOptions&);                         \
  template Request detail::potrs_tiles_async<T>(const TileMatrix<T>&, TileMatrix<T>&, const FactorOptions&);   \
  template Request detail::potrf_array_async<T>(Runtime&, int, T*, int, const FactorOptions&);                 \
  template Request detail::potrs_array_async<T>(Runtime&, int, int, const T*, int, T*, int, const FactorOptions&); \
  template Request detail::posv_array_async<T>(Runtime&, int, int, T*, int, T*, int, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
