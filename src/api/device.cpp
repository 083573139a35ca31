// The dense functions of the device-resident API (tessera/device.hpp): the caller's matrices in
// GPU memory become tile matrices registered in place (views whose home is that GPU), and the
// tile algorithms of the host path run on them, with no copy in or out.
#include "tessera/device.hpp"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "argument_errors.hpp"
#include "device_checks.hpp"
#include "operations.hpp"
#include "plan_requests.hpp"
#include "callers_stream.hpp"
#include "device_factor.hpp"
#include "device_memory.hpp"
#include "request_support.hpp"
#include "tile_access.hpp"
#include "plan.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "cuda/vendor.hpp"
#endif

namespace tessera::device {

#ifdef TESSERA_HAVE_CUDA

namespace {

using detail::TileAccess;

template <class T>
std::unique_ptr<TileMatrix<T>> symmetric_view(Runtime& runtime, int n, int nb, T* matrix, int ld, int device) {
  return TileAccess::view(runtime, n, n, nb, TileStructure::symmetric_lower, matrix, ld, device);
}

// The symmetric matrix of a call as tiles, in place: a view of A itself, its lower tiles or (upper
// storage) its upper blocks as transposed tiles. Block-column tasks take lower tiles only: for
// them an upper-stored A is transposed into a workspace on A's GPU (n x n elements more there
// during the call, one pass over the triangle in and one out), whose view the tiles are.
// Complex matrices take no block-column tasks (the plan gives them tiles): no workspace.
struct NoTransposedUpper {};
template <class T>
using TransposedUpperOf = std::conditional_t<kIsComplex<T>, NoTransposedUpper, detail::TransposedUpper<T>>;

template <class T>
class SymmetricTiles {
 public:
  SymmetricTiles(Runtime& runtime, int n, int nb, const FactorOptions& options, T* A, int lda, int device) {
    if (options.uplo == Uplo::lower || detail::upper_as_stored(options) || kIsComplex<T>) {
      tiles_ = TileAccess::view(runtime, n, n, nb, TileStructure::symmetric_lower, A, lda, device,
                                options.uplo == Uplo::upper);
    } else if constexpr (!kIsComplex<T>) {
      transposed_.emplace(device, n, A, lda);
      tiles_ = symmetric_view(runtime, n, nb, transposed_->lower(), transposed_->ld(), device);
    }
  }

  const TileMatrix<T>& tiles() const { return *tiles_; }

  // Releases the tiles, which leaves their latest values in GPU memory, and puts the factor in
  // the triangle the caller stores it in.
  void store(T* A, int lda) {
    tiles_.reset();
    if constexpr (!kIsComplex<T>)
      if (transposed_) transposed_->store(A, lda);
  }

 private:
  std::optional<TransposedUpperOf<T>> transposed_;  // declared first: outlives the tiles
  std::unique_ptr<TileMatrix<T>> tiles_;
};

// One request on `runtime` (insert(ctx) inserts its tasks), waited for; returns its info.
template <class Insert>
int run_request(Runtime& runtime, const detail::Plan& plan, const FactorOptions& options, Insert&& insert) {
  Request request = detail::make_request(runtime, nullptr, [&](detail::Submission& submission) {
    submission.set_trace(options.trace);
    insert(detail::make_context(runtime, submission, plan, options.gpu_kernels));
  });
  return request.wait();
}

// A factorization's kept inverses (the refined solve's): where the plan's factorization solves its
// panels by the inverses of its diagonal tiles' factors, those inverses go to `tiles` and `kept`
// says so.
struct KeptInverses {
  const detail::TileGrid* tiles = nullptr;
  bool kept = false;
};

template <class T>
int factor(Runtime& runtime, const detail::Plan& plan, const SymmetricTiles<T>& A, const FactorOptions& options,
           KeptInverses* keep = nullptr) {
  return run_request(runtime, plan, options, [&](const detail::TaskContext& ctx) {
    const detail::TileGrid grid = detail::tile_grid(A.tiles());
    const detail::CholeskyPlan cholesky = plan.cholesky(options.tile_arithmetic);
    detail::TaskContext context = ctx;
    if (keep && detail::solves_panels_by_inverse<T>(ctx, grid, cholesky)) {
      context.kept_panel_inverses = keep->tiles;
      keep->kept = true;
    }
    detail::insert_cholesky<T>(context, grid, options.hints, cholesky);
  });
}

template <class T>
void solve(Runtime& runtime, const detail::Plan& plan, const SymmetricTiles<T>& A, const TileMatrix<T>& B,
           const FactorOptions& options) {
  run_request(runtime, plan, options, [&](const detail::TaskContext& ctx) {
    detail::insert_cholesky_solve(ctx, A.tiles(), B, options.hints);
  });
}

// The plan of an n x n device-API call (`inverts`: the inverse from its factor).
template <class T>
detail::Plan device_plan(const Runtime& runtime, int n, const FactorOptions& options, bool inverts = false) {
  return detail::plan_request(runtime, detail::device_array_request<T>(n, options, inverts));
}

// The options the tiles of a call are made with: the plan's grain (the whole matrix as one tile
// where the plan says so).
FactorOptions as_planned(const FactorOptions& options, const detail::Plan& plan) {
  FactorOptions planned = options;
  planned.grain = plan.grain;
  planned.nb = plan.nb;
  return planned;
}

// How a call on the caller's stream launches its factorization, as `plan` says.
detail::OneMatrixLaunch one_matrix_launch(const detail::Plan& plan) {
  if (plan.factors_in_one_block) return detail::OneMatrixLaunch::one_block;
  return plan.replays_launches ? detail::OneMatrixLaunch::replayed : detail::OneMatrixLaunch::calls;
}

// Whether the call runs on the caller's stream (Path::callers_stream) with its matrices on the one
// GPU of the runtime; a matrix elsewhere takes the runtime's path, which says why it cannot.
bool on_callers_stream(const detail::Plan& plan, std::initializer_list<int> devices) {
  if (plan.path != detail::Path::callers_stream) return false;
  const int gpu = detail::first_cuda_device();
  return std::all_of(devices.begin(), devices.end(), [&](int device) { return device == gpu; });
}

// A planned factorization of A in place on `device`, through the runtime's tasks (keeping its
// diagonal tiles' inverses where `keep` asks and the plan makes them).
template <class T>
int factor_planned(Runtime& runtime, const detail::Plan& plan, int n, T* A, int lda, int device,
                   const FactorOptions& options, KeptInverses* keep = nullptr) {
  const FactorOptions planned = as_planned(options, plan);
  SymmetricTiles<T> tiles(runtime, n, plan.nb, planned, A, lda, device);
  const int info = factor(runtime, plan, tiles, planned, keep);
  tiles.store(A, lda);
  return info;
}

// The refined solve's block inverses (kernels::cuda::vendor's layout, at `inverses` on `device`) as
// the tiles a factorization keeps its diagonal tiles' inverses in: block k is tile (0, k) of a
// b x (b + 1) blocks view, each block starting b (b + 1) elements after the one before
// (inverse_block_offset). Released, the view leaves the inverses where they were made.
std::unique_ptr<TileMatrix<float>> inverse_blocks_view(Runtime& runtime, int n, float* inverses, int device) {
  namespace vendor = kernels::cuda::vendor;
  constexpr int b = vendor::kInverseBlock;
  return TileAccess::view(runtime, b, vendor::inverse_blocks(n) * (b + 1), b + 1, TileStructure::general, inverses, b,
                          device);
}

// Whether a float factorization by `plan` makes the refined solve's block inverses: the
// tensor-core tile DAG of the lower triangle, its tiles the blocks' width.
bool makes_block_inverses(const detail::Plan& plan, const FactorOptions& options) {
  return options.uplo == Uplo::lower && plan.tensor_cores != TensorCores::off &&
         plan.nb == kernels::cuda::vendor::kInverseBlock;
}

// device::potrf: checked, planned once, then run on the caller's stream or through the runtime's
// tasks; `inverses` (float only, may be null) takes the diagonal tiles' inverses where
// makes_block_inverses, and *kept says whether it did.
template <class T>
int potrf_planned(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options,
                  float* inverses = nullptr, bool* kept = nullptr) {
  detail::throw_if_invalid("device::potrf", potrf_argument_error(detail::uplo_letter(options.uplo), n, A, lda));
  require_cuda_workers("potrf", runtime);
  if (n == 0) return 0;
  const detail::Plan plan = device_plan<T>(runtime, n, options);
  const int device = device_holding("potrf", A, "A", 3);
  if (on_callers_stream(plan, {device}))
    return detail::potrf_on_callers_stream(runtime, device, options.uplo, n, A, lda, stream, plan.tensor_cores,
                                           one_matrix_launch(plan));
  detail::synchronize_stream(stream);
  if constexpr (std::is_same_v<T, float>) {
    if (inverses && makes_block_inverses(plan, options)) {
      const std::unique_ptr<TileMatrix<float>> blocks = inverse_blocks_view(runtime, n, inverses, device);
      const detail::TileGrid grid = detail::tile_grid(*blocks);
      KeptInverses keep{&grid};
      const int info = factor_planned(runtime, plan, n, A, lda, device, options, &keep);
      *kept = keep.kept;
      return info;
    }
  }
  return factor_planned(runtime, plan, n, A, lda, device, options);
}

}  // namespace

template <class T>
int potrf_dense(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options) {
  return potrf_planned(runtime, n, A, lda, stream, options);
}

int potrf_keeping_diagonal_inverses(Runtime& runtime, int n, float* A, int lda, float* inverses, bool* kept,
                                    Stream stream, const FactorOptions& options) {
  *kept = false;
  return potrf_planned(runtime, n, A, lda, stream, options, inverses, kept);
}

namespace {

// potrf_ex by `plan` once its arguments are checked: A (n > 0) on `device`, info on `info_device`.
template <class T>
void potrf_ex_planned(Runtime& runtime, const detail::Plan& plan, int n, T* A, int lda, int* info, int device,
                      int info_device, Stream stream, const FactorOptions& options) {
  if (on_callers_stream(plan, {device, info_device})) {
    detail::potrf_on_callers_stream_async(runtime, device, options.uplo, n, A, lda, info, stream, plan.tensor_cores,
                                          one_matrix_launch(plan));
    return;
  }
  detail::synchronize_stream(stream);
  detail::write_int_on_stream(info, factor_planned(runtime, plan, n, A, lda, device, options), stream);
}

template <class T>
void potrf_ex_checked(Runtime& runtime, int n, T* A, int lda, int* info, int device, int info_device, Stream stream,
                      const FactorOptions& options) {
  potrf_ex_planned(runtime, device_plan<T>(runtime, n, options), n, A, lda, info, device, info_device, stream, options);
}

}  // namespace

template <class T>
void potrf_ex(Runtime& runtime, int n, T* A, int lda, int* info, Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potrf_ex", potrf_argument_error(detail::uplo_letter(options.uplo), n, A, lda));
  if (info == nullptr) throw InvalidArgument(qualified("potrf_ex") + ": info (argument 5) is null", 5);
  require_cuda_workers("potrf_ex", runtime);
  const int device = n > 0 ? device_holding("potrf_ex", A, "A", 3) : -1;
  const int info_device = device_holding("potrf_ex", info, "info", 5);
  if (n == 0) {
    detail::write_int_on_stream(info, 0, stream);
    return;
  }
  potrf_ex_checked(runtime, n, A, lda, info, device, info_device, stream, options);
}

template <class T>
void potrf_ex(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA, T* L, int ldl, int* info,
              Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potrf_ex", potrf_out_of_place_argument_error(detail::uplo_letter(options.uplo), n, A,
                                                                                 rowStrideA, colStrideA, L, ldl, info));
  require_cuda_workers("potrf_ex", runtime);
  const int device = n > 0 ? device_holding("potrf_ex", A, "A", 3) : -1;
  if (n > 0 && device_holding("potrf_ex", L, "L", 6) != device)
    throw InvalidArgument(qualified("potrf_ex") + ": L (argument 6) is not on the GPU that holds A", 6);
  const int info_device = device_holding("potrf_ex", info, "info", 8);
  if (n == 0) {
    detail::write_int_on_stream(info, 0, stream);
    return;
  }
  if (A == L) {  // in place: the only overlap the checks let through
    potrf_ex_checked(runtime, n, L, ldl, info, device, info_device, stream, options);
    zero_opposite_triangle(options.uplo, n, L, ldl, 0, 1, stream);
    return;
  }
  FactorOptions lower = options;
  lower.uplo = Uplo::lower;
  const detail::Plan plan = device_plan<T>(runtime, n, lower);
  if (on_callers_stream(plan, {device, info_device})) {
    detail::potrf_into_on_callers_stream_async(runtime, device, options.uplo, n, A, rowStrideA, colStrideA, L, ldl,
                                               info, stream, plan.tensor_cores, one_matrix_launch(plan));
    return;
  }
  // The triangle read as the lower triangle of L: an upper one through the transposed strides (and
  // conjugated: a Hermitian matrix's lower triangle).
  const bool upper = options.uplo == Uplo::upper;
  detail::load_lower_on_stream(device, n, A, upper ? colStrideA : rowStrideA, upper ? rowStrideA : colStrideA, L, ldl,
                               upper, stream);
  potrf_ex_planned(runtime, plan, n, L, ldl, info, device, info_device, stream, lower);
  if (upper) detail::lower_to_upper_on_stream(device, n, L, ldl, stream);
}

template <class T>
int potrf(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA, T* L, int ldl, Stream stream,
          const FactorOptions& options) {
  detail::throw_if_invalid("device::potrf", potrf_out_of_place_argument_error(detail::uplo_letter(options.uplo), n, A,
                                                                              rowStrideA, colStrideA, L, ldl));
  require_cuda_workers("potrf", runtime);
  if (n == 0) return 0;
  const int device = device_holding("potrf", A, "A", 3);
  if (device_holding("potrf", L, "L", 6) != device)
    throw InvalidArgument(qualified("potrf") + ": L (argument 6) is not on the GPU that holds A", 6);
  if (A == L) {  // in place: the only overlap the checks let through
    const int info = potrf_dense(runtime, n, L, ldl, stream, options);
    zero_opposite_triangle(options.uplo, n, L, ldl, 0, 1, stream);
    detail::synchronize_stream(stream);
    return info;
  }
  FactorOptions lower = options;
  lower.uplo = Uplo::lower;
  const detail::Plan plan = device_plan<T>(runtime, n, lower);
  if (on_callers_stream(plan, {device}))
    return detail::potrf_into_on_callers_stream(runtime, device, options.uplo, n, A, rowStrideA, colStrideA, L, ldl,
                                                stream, plan.tensor_cores, one_matrix_launch(plan));
  const bool upper = options.uplo == Uplo::upper;
  detail::load_lower_on_stream(device, n, A, upper ? colStrideA : rowStrideA, upper ? rowStrideA : colStrideA, L, ldl,
                               upper, stream);
  detail::synchronize_stream(stream);
  const int info = factor_planned(runtime, plan, n, L, ldl, device, lower);
  if (upper) {
    detail::lower_to_upper_on_stream(device, n, L, ldl, stream);
    detail::synchronize_stream(stream);
  }
  return info;
}

template <class T>
void potrf_stack_ex(Runtime& runtime, int n, const T* A, long long rowStrideA, long long colStrideA, long long strideA,
                    T* L, int ldl, long long strideL, int batch, int* info, Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potrf_stack_ex",
                           potrf_batched_out_of_place_argument_error<T>(detail::uplo_letter(options.uplo), n, A,
                                                                        rowStrideA, colStrideA, strideA, L, ldl,
                                                                        strideL, batch, info));
  require_cuda_workers("potrf_stack_ex", runtime);
  if (batch == 0) return;
  const int device = n > 0 ? device_holding("potrf_stack_ex", A, "A", 3) : -1;
  if (n > 0 && device_holding("potrf_stack_ex", L, "L", 7) != device)
    throw InvalidArgument(qualified("potrf_stack_ex") + ": L (argument 7) is not on the GPU that holds A", 7);
  const int info_device = device_holding("potrf_stack_ex", info, "info", 11);
  const detail::StackPath path = detail::stack_path(n, batch, ScalarTraits<T>::precision);
  const bool one_call = path == detail::StackPath::vendor_batched || path == detail::StackPath::blocked_kernels ||
                        path == detail::StackPath::one_block;
  if (n > 0 && batch > 1 && one_call && on_callers_stream(device_plan<T>(runtime, n, options), {device, info_device})) {
    const detail::StackLaunch launch = path == detail::StackPath::blocked_kernels ? detail::StackLaunch::in_blocks
                                       : path == detail::StackPath::one_block     ? detail::StackLaunch::one_block
                                                                                  : detail::StackLaunch::vendor_batched;
    detail::potrf_stack_on_callers_stream_async(runtime, device, options.uplo, n, A, rowStrideA, colStrideA, strideA, L,
                                                ldl, strideL, batch, info, stream, launch);
    return;
  }
  if (n > 0 && path == detail::StackPath::blocked_kernels) {  // off the caller's stream: the kernels alone
    potrf_batched_ex(options.uplo, n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch, info, stream);
    return;
  }
  for (int k = 0; k < batch; ++k)
    potrf_ex(runtime, n, A + k * strideA, rowStrideA, colStrideA, L + k * strideL, ldl, info + k, stream, options);
}

template <class T>
int potrs_dense(Runtime& runtime, int n, int nrhs, const T* A, int lda, T* B, int ldb, Stream stream,
          const FactorOptions& options) {
  detail::throw_if_invalid("device::potrs",
                           potrs_argument_error(detail::uplo_letter(options.uplo), n, nrhs, A, lda, B, ldb));
  require_cuda_workers("potrs", runtime);
  if (n == 0 || nrhs == 0) return 0;
  const detail::Plan plan = device_plan<T>(runtime, n, options);
  const FactorOptions run = as_planned(options, plan);
  const int nb = plan.nb;
  const int a_device = device_holding("potrs", A, "A", 4);
  const int b_device = device_holding("potrs", B, "B", 6);
  if (on_callers_stream(plan, {a_device, b_device})) {
    detail::potrs_on_callers_stream(runtime, a_device, options.uplo, n, nrhs, A, lda, B, ldb, stream);
    return 0;
  }
  detail::synchronize_stream(stream);
  // The factor's tiles are only read (no task writes them, so nothing is written back).
  SymmetricTiles<T> factor_tiles(runtime, n, nb, run, const_cast<T*>(A), lda, a_device);
  const auto rhs = TileAccess::view(runtime, n, nrhs, nb, TileStructure::general, B, ldb, b_device);
  solve(runtime, plan, factor_tiles, *rhs, run);
  return 0;
}

template <class T>
void potrs_stack_ex(Runtime& runtime, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                    long long strideB, int batch, Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potrs_stack_ex",
                           potrs_batched_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs, A, lda, strideA,
                                                           B, ldb, strideB, batch));
  require_cuda_workers("potrs_stack_ex", runtime);
  if (n == 0 || nrhs == 0 || batch == 0) return;
  const int a_device = device_holding("potrs_stack_ex", A, "A", 4);
  const int b_device = device_holding("potrs_stack_ex", B, "B", 7);
  if (on_callers_stream(device_plan<T>(runtime, n, options), {a_device, b_device})) {
    detail::potrs_stack_on_callers_stream_async(runtime, a_device, options.uplo, n, nrhs, A, lda, strideA, B, ldb,
                                                strideB, batch, stream);
    return;
  }
  for (int k = 0; k < batch; ++k)
    potrs_dense(runtime, n, nrhs, A + k * strideA, lda, B + k * strideB, ldb, stream, options);
}

template <class T>
int posv_dense(Runtime& runtime, int n, int nrhs, T* A, int lda, T* B, int ldb, Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::posv",
                           posv_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs, A, lda, B, ldb));
  require_cuda_workers("posv", runtime);
  if (n == 0) return 0;
  const detail::Plan plan = device_plan<T>(runtime, n, options);
  const FactorOptions run = as_planned(options, plan);
  const int nb = plan.nb;
  const int a_device = device_holding("posv", A, "A", 4);
  const int b_device = nrhs > 0 ? device_holding("posv", B, "B", 6) : a_device;
  if (on_callers_stream(plan, {a_device, b_device})) {
    // As LAPACK: B is left as it was when the factorization fails.
    const int info =
        detail::potrf_on_callers_stream(runtime, a_device, options.uplo, n, A, lda, stream, plan.tensor_cores,
                                        one_matrix_launch(plan));
    if (info == 0 && nrhs > 0)
      detail::potrs_on_callers_stream<T>(runtime, a_device, options.uplo, n, nrhs, A, lda, B, ldb, stream);
    return info;
  }
  detail::synchronize_stream(stream);
  SymmetricTiles<T> tiles(runtime, n, nb, run, A, lda, a_device);
  std::unique_ptr<TileMatrix<T>> rhs;
  if (nrhs > 0) rhs = TileAccess::view(runtime, n, nrhs, nb, TileStructure::general, B, ldb, b_device);
  // Factor, then solve only once the factor is known to exist: the right-hand sides are the
  // caller's memory, which LAPACK leaves as it was when the factorization fails (the host path
  // copies them back only then). The solve then starts after the last tile is factored instead
  // of following the factorization panel by panel.
  const int info = factor(runtime, plan, tiles, run);
  if (info == 0 && rhs) solve(runtime, plan, tiles, *rhs, run);
  tiles.store(A, lda);
  return info;
}

namespace {

// The factor in the triangle options.uplo of A (n > 0, on `device`, with no zero on its diagonal)
// := its inverse as the tile tasks of the triangular inverse and its product: tiles unless the
// whole matrix as one tile is asked for.
template <class T>
void invert_as_tiles(Runtime& runtime, int n, T* A, int lda, int device, const FactorOptions& options) {
  FactorOptions tiled = options;
  if (tiled.grain == TaskGrain::automatic) tiled.grain = TaskGrain::tiles;
  const detail::Plan plan = device_plan<T>(runtime, n, tiled, true);
  const FactorOptions planned = as_planned(tiled, plan);
  SymmetricTiles<T> tiles(runtime, n, plan.nb, planned, A, lda, device);
  run_request(runtime, plan, planned, [&](const detail::TaskContext& ctx) {
    detail::insert_cholesky_inverse<T>(ctx, detail::tile_grid(tiles.tiles()), planned.hints);
  });
  tiles.store(A, lda);
}

}  // namespace

template <class T>
int potri_dense(Runtime& runtime, int n, T* A, int lda, Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potri", potrf_argument_error(detail::uplo_letter(options.uplo), n, A, lda));
  require_cuda_workers("potri", runtime);
  if (n == 0) return 0;
  const int device = device_holding("potri", A, "A", 3);
  // xTRTRI's check before anything changes (after the work already on the stream).
  if (const int zero = detail::first_zero_diagonal_on_stream(n, A, lda, stream)) return zero;
  if (on_callers_stream(device_plan<T>(runtime, n, options, true), {device}))
    detail::potri_on_callers_stream(runtime, device, options.uplo, n, A, lda, stream,
                                    detail::triangle_inverse_by_levels(n));
  else
    invert_as_tiles(runtime, n, A, lda, device, options);
  return 0;
}

template <class T>
void potri_ex(Runtime& runtime, int n, const T* L, long long rowStrideL, long long colStrideL, T* X, int ldx, int* info,
              Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potri_ex", potrf_out_of_place_argument_error(detail::uplo_letter(options.uplo), n,
                                                                                 L, rowStrideL, colStrideL, X, ldx));
  require_cuda_workers("potri_ex", runtime);
  const int device = n > 0 ? device_holding("potri_ex", L, "L", 3) : -1;
  if (n > 0 && device_holding("potri_ex", X, "X", 6) != device)
    throw InvalidArgument(qualified("potri_ex") + ": X (argument 6) is not on the GPU that holds L", 6);
  const int info_device = info ? device_holding("potri_ex", info, "info", 8) : device;
  if (n == 0) {
    if (info) detail::write_int_on_stream(info, 0, stream);
    return;
  }
  if (L == X) throw InvalidArgument(qualified("potri_ex") + ": X (argument 6) is the memory of L (argument 3)", 6);
  if (on_callers_stream(device_plan<T>(runtime, n, options, true), {device, info_device})) {
    detail::potri_into_on_callers_stream_async(runtime, device, options.uplo, n, L, rowStrideL, colStrideL, X, ldx,
                                               info, stream, detail::triangle_inverse_by_levels(n));
    return;
  }
  // The factor as a lower one in X (an upper one read as its conjugate transpose: the same
  // matrix), inverted there in place, then mirrored (or all NaN where it has a zero on its diagonal).
  const bool upper = options.uplo == Uplo::upper;
  detail::load_lower_on_stream(device, n, L, upper ? colStrideL : rowStrideL, upper ? rowStrideL : colStrideL, X, ldx,
                               upper, stream);
  FactorOptions lower = options;
  lower.uplo = Uplo::lower;
  potri_dense(runtime, n, X, ldx, stream, lower);
  detail::finish_inverse_on_stream(device, n, L, rowStrideL + colStrideL, X, ldx, info, stream);
  detail::synchronize_stream(stream);
}

#else

template <class T>
int potrf_dense(Runtime&, int, T*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrf") + ": Tessera was built without CUDA");
}

template <class T>
int potri_dense(Runtime&, int, T*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potri") + ": Tessera was built without CUDA");
}

template <class T>
void potri_ex(Runtime&, int, const T*, long long, long long, T*, int, int*, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potri_ex") + ": Tessera was built without CUDA");
}

template <class T>
void potrf_ex(Runtime&, int, T*, int, int*, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrf_ex") + ": Tessera was built without CUDA");
}

template <class T>
void potrf_ex(Runtime&, int, const T*, long long, long long, T*, int, int*, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrf_ex") + ": Tessera was built without CUDA");
}

template <class T>
int potrf(Runtime&, int, const T*, long long, long long, T*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrf") + ": Tessera was built without CUDA");
}

template <class T>
void potrf_stack_ex(Runtime&, int, const T*, long long, long long, long long, T*, int, long long, int, int*, Stream,
                    const FactorOptions&) {
  throw RuntimeError(qualified("potrf_stack_ex") + ": Tessera was built without CUDA");
}

template <class T>
int potrs_dense(Runtime&, int, int, const T*, int, T*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrs") + ": Tessera was built without CUDA");
}

template <class T>
void potrs_stack_ex(Runtime&, int, int, const T*, int, long long, T*, int, long long, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("potrs_stack_ex") + ": Tessera was built without CUDA");
}

template <class T>
int posv_dense(Runtime&, int, int, T*, int, T*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("posv") + ": Tessera was built without CUDA");
}

#endif

// Every scalar type: the factorization (in place, out of place, stacks), the solves and the inverse.
#define TESSERA_INSTANTIATE(T)                                                                                       \
  template int potrf_dense<T>(Runtime&, int, T*, int, Stream, const FactorOptions&);                                 \
  template int potri_dense<T>(Runtime&, int, T*, int, Stream, const FactorOptions&);                                 \
  template void potri_ex<T>(Runtime&, int, const T*, long long, long long, T*, int, int*, Stream,                    \
                            const FactorOptions&);                                                                   \
  template void potrf_ex<T>(Runtime&, int, const T*, long long, long long, T*, int, int*, Stream,                    \
                            const FactorOptions&);                                                                   \
  template void potrf_stack_ex<T>(Runtime&, int, const T*, long long, long long, long long, T*, int, long long, int, \
                                  int*, Stream, const FactorOptions&);                                               \
  template void potrf_ex<T>(Runtime&, int, T*, int, int*, Stream, const FactorOptions&);                             \
  template int potrf<T>(Runtime&, int, const T*, long long, long long, T*, int, Stream, const FactorOptions&);       \
  template int potrs_dense<T>(Runtime&, int, int, const T*, int, T*, int, Stream, const FactorOptions&);             \
  template void potrs_stack_ex<T>(Runtime&, int, int, const T*, int, long long, T*, int, long long, int, Stream,     \
                                  const FactorOptions&);                                                             \
  template int posv_dense<T>(Runtime&, int, int, T*, int, T*, int, Stream, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::device
