// device::posv_refined_batched (tessera/device.hpp): LAPACK's DSPOSV and ZCPOSV on each matrix of a
// strided batch in GPU memory. Every step is one launch over the whole batch: the scaled copies in
// single precision, their factorization and solves by the batched kernels, the residuals and
// LAPACK's test per matrix; the host only reads, after each step, how many matrices still refine.
// The matrices whose refinement cannot work are then factored and solved in double precision, as
// is every matrix where the plan finds that single precision cannot be the faster.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "argument_errors.hpp"
#include "batched_refined_solve.hpp"
#include "plan.hpp"
#include "refined_solve.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"
#include "tessera/tools/lapack_arguments.hpp"

#if TESSERA_HAVE_CUDA
#include "cuda/batch_uplo.hpp"
#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#include "cuda/kept_pool.hpp"
#include "cuda/refinement.hpp"
#include "cuda/stream_memory.hpp"
#endif

namespace tessera::device {

#if TESSERA_HAVE_CUDA

namespace {

namespace kc = kernels::cuda;

std::size_t count_of(long long a, long long b = 1, long long c = 1) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c);
}

// A matrix's ITER from the state its refinement ended in (refinement.hpp's BatchedRefinementState).
int iter_of(int state, int steps) {
  switch (state) {
    case kc::kBatchConverged:
      return steps;
    case kc::kBatchOverflowed:
      return detail::kNarrowingOverflowed;
    case kc::kBatchSingleFailed:
      return detail::kSingleFactorizationFailed;
    default:
      return detail::kNotConverged;
  }
}

template <class T>
std::vector<T> to_host(const T* device, std::size_t count, cudaStream_t stream) {
  std::vector<T> host(count);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

// The refinement of every matrix in single precision; returns each matrix's ITER (A is not written).
template <class T>
std::vector<int> refine(char uplo, int n, int nrhs, const T* A, int lda, long long strideA, const T* B, int ldb,
                        long long strideB, T* X, int ldx, long long strideX, int batch, cudaStream_t stream) {
  using S = SingleOf<T>;
  kc::StreamBuffer<double> scale(count_of(n, batch), stream);
  kc::StreamBuffer<S> single(count_of(n, n, batch), stream);  // S A S, then its factor (lower)
  kc::StreamBuffer<S> rhs(count_of(n, nrhs, batch), stream);  // S B or S R, then the solves
  kc::StreamBuffer<T> residual(count_of(n, nrhs, batch), stream);
  kc::StreamBuffer<double> bound(count_of(batch), stream);
  kc::StreamBuffer<int> state(count_of(batch), stream);
  kc::StreamBuffer<int> steps(count_of(batch), stream);
  kc::StreamBuffer<int> single_info(count_of(batch), stream);
  kc::StreamBuffer<int> refining(1, stream);
  const long long single_stride = static_cast<long long>(n) * n, rhs_stride = static_cast<long long>(n) * nrhs;

  kc::batched_scale_and_narrow(uplo, n, A, lda, strideA, scale.data(), single.data(), bound.data(), state.data(), batch,
                               stream);
  kc::potrf_batched<S>(kc::BatchUplo::lower, n, single.data(), n, single_stride, batch, single_info.data(), stream);
  kc::batched_stop_failed_factorizations(single_info.data(), state.data(), batch, stream);
  // X := S (S A S)^{-1} S B, then corrections from the residuals until every matrix has stopped.
  const auto correct = [&](const T* from, long long ld, long long stride, bool add) {
    kc::batched_narrow_scaled(n, nrhs, scale.data(), from, ld, stride, rhs.data(), state.data(), batch, stream);
    kc::potrs_batched<S>(kc::BatchUplo::lower, n, nrhs, single.data(), n, single_stride, rhs.data(), n, rhs_stride,
                         batch, single_info.data(), stream);
    kc::batched_widen_scaled(add, n, nrhs, scale.data(), rhs.data(), X, ldx, strideX, state.data(), batch, stream);
  };
  // Without right-hand sides LAPACK's test passes at once: ITER 0 where the factorization worked.
  for (int iteration = 0; nrhs > 0; ++iteration) {
    if (iteration == 0) correct(B, ldb, strideB, false);
    const bool last = iteration == detail::kMostIterations;
    kc::batched_residual_test(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, residual.data(),
                              bound.data(), iteration, last, state.data(), steps.data(), refining.data(), batch,
                              stream);
    if (last || to_host(refining.data(), 1, stream)[0] == 0) break;
    correct(residual.data(), n, rhs_stride, true);
  }
  const std::vector<int> states = to_host(state.data(), count_of(batch), stream);
  const std::vector<int> converged_steps = to_host(steps.data(), count_of(batch), stream);
  std::vector<int> iter(count_of(batch));
  for (std::size_t k = 0; k < iter.size(); ++k)
    iter[k] = nrhs == 0 && states[k] == kc::kBatchRefining ? 0 : iter_of(states[k], converged_steps[k]);
  return iter;
}

// The matrices `which` (host indices) factored and solved in double precision: A_k := its factor,
// X_k := A_k^{-1} B_k; each one's INFO into info.
template <class T>
void solve_in_double(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, const T* B, int ldb,
                     long long strideB, T* X, int ldx, long long strideX, const std::vector<int>& which,
                     std::vector<int>& info, cudaStream_t stream) {
  const int count = static_cast<int>(which.size());
  std::vector<T*> matrices(which.size()), solutions(which.size());
  for (std::size_t m = 0; m < which.size(); ++m) {
    matrices[m] = A + which[m] * strideA;
    solutions[m] = X + which[m] * strideX;
  }
  kc::StreamBuffer<int> indices(which.size(), stream);
  kc::StreamBuffer<T*> matrix_array(which.size(), stream), solution_array(which.size(), stream);
  kc::StreamBuffer<int> double_info(which.size(), stream);
  TESSERA_CUDA_CHECK(
      cudaMemcpyAsync(indices.data(), which.data(), which.size() * sizeof(int), cudaMemcpyHostToDevice, stream));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(matrix_array.data(), matrices.data(), matrices.size() * sizeof(T*),
                                     cudaMemcpyHostToDevice, stream));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(solution_array.data(), solutions.data(), solutions.size() * sizeof(T*),
                                     cudaMemcpyHostToDevice, stream));
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, matrix_array.data(), lda, count, double_info.data(), stream);
  // X_k is not computed where A_k is not positive definite (LAPACK's DSPOSV returns first).
  kc::batched_copy_selected(n, nrhs, B, ldb, strideB, X, ldx, strideX, indices.data(), double_info.data(), count,
                            stream);
  if (nrhs > 0)
    kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, matrix_array.data(), lda, solution_array.data(), ldx, count,
                         double_info.data(), stream);
  // The host vectors stay alive until the copies out of them are done: to_host waits.
  const std::vector<int> failed = to_host(double_info.data(), which.size(), stream);
  for (std::size_t m = 0; m < which.size(); ++m) info[static_cast<std::size_t>(which[m])] = failed[m];
}

// Every matrix factored and solved in double precision, as posv_batched_ex solves them, X_k := B_k
// first where A_k is positive definite; each one's INFO into info.
template <class T>
void solve_all_in_double(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, const T* B, int ldb,
                         long long strideB, T* X, int ldx, long long strideX, int batch, std::vector<int>& info,
                         cudaStream_t stream) {
  // Tessera's pool: this call waits for its INFO, after which the default pool would give the
  // buffer back to the driver.
  kc::KeptPoolBuffer<int> double_info(count_of(batch), stream);
  kc::potrf_batched<T>(kc::batch_uplo(uplo), n, A, lda, strideA, batch, double_info.data(), stream);
  kc::batched_copy_selected(n, nrhs, B, ldb, strideB, X, ldx, strideX, nullptr, double_info.data(), batch, stream);
  if (nrhs > 0)
    kc::potrs_batched<T>(kc::batch_uplo(uplo), n, nrhs, A, lda, strideA, X, ldx, strideX, batch, double_info.data(),
                         stream);
  info = to_host(double_info.data(), count_of(batch), stream);
}

template <class T>
void check_arguments(Uplo uplo, int n, int nrhs, const T* A, int lda, long long strideA, const T* B, int ldb,
                     long long strideB, const T* X, int ldx, long long strideX, int batch) {
  detail::throw_if_invalid("device::posv_refined_batched",
                           posv_refined_batched_argument_error<T>(detail::uplo_letter(uplo), n, nrhs, A, lda, strideA,
                                                                  B, ldb, strideB, X, ldx, strideX, batch));
}

}  // namespace

}  // namespace tessera::device

namespace tessera::detail {

BatchedRefinedPath batched_refined_path() {
  int device = 0, ratio = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, device));
  return batched_refinement_in_single(ratio) ? BatchedRefinedPath::refine_in_single
                                             : BatchedRefinedPath::double_at_once;
}

template <class T>
int posv_refined_batched(BatchedRefinedPath path, Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA,
                         const T* B, int ldb, long long strideB, T* X, int ldx, long long strideX, int batch,
                         int* host_info, int* host_iter, device::Stream stream) {
  device::check_arguments(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, batch);
  const char letter = uplo_letter(uplo);
  std::vector<int> info(device::count_of(batch), 0), iter(device::count_of(batch), 0);
  if (n > 0 && batch > 0 && path == BatchedRefinedPath::double_at_once) {
    device::solve_all_in_double(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, batch, info, stream);
    std::fill(iter.begin(), iter.end(), kDoubleChosen);
  } else if (n > 0 && batch > 0) {
    iter = device::refine(letter, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, batch, stream);
    std::vector<int> in_double;
    for (int k = 0; k < batch; ++k)
      if (iter[static_cast<std::size_t>(k)] < 0) in_double.push_back(k);
    if (!in_double.empty())
      device::solve_in_double(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, in_double, info,
                              stream);
  }
  if (host_info) std::copy(info.begin(), info.end(), host_info);
  if (host_iter) std::copy(iter.begin(), iter.end(), host_iter);
  return static_cast<int>(std::count_if(info.begin(), info.end(), [](int v) { return v != 0; }));
}

template int posv_refined_batched<double>(BatchedRefinedPath, Uplo, int, int, double*, int, long long, const double*,
                                          int, long long, double*, int, long long, int, int*, int*, device::Stream);
template int posv_refined_batched<std::complex<double>>(BatchedRefinedPath, Uplo, int, int, std::complex<double>*, int,
                                                        long long, const std::complex<double>*, int, long long,
                                                        std::complex<double>*, int, long long, int, int*, int*,
                                                        device::Stream);

}  // namespace tessera::detail

namespace tessera::device {

template <class T>
int posv_refined_batched(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, const T* B, int ldb,
                         long long strideB, T* X, int ldx, long long strideX, int batch, int* host_info, int* host_iter,
                         Stream stream) {
  // Misuse is refused before the GPU is asked anything.
  check_arguments(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, batch);
  const detail::BatchedRefinedPath path =
      n > 0 && batch > 0 ? detail::batched_refined_path() : detail::BatchedRefinedPath::double_at_once;
  return detail::posv_refined_batched(path, uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, X, ldx, strideX, batch,
                                      host_info, host_iter, stream);
}

#else

template <class T>
int posv_refined_batched(Uplo, int, int, T*, int, long long, const T*, int, long long, T*, int, long long, int, int*,
                         int*, Stream) {
  throw RuntimeError("tessera::device::posv_refined_batched: Tessera was built without CUDA");
}

#endif

template int posv_refined_batched<double>(Uplo, int, int, double*, int, long long, const double*, int, long long,
                                          double*, int, long long, int, int*, int*, Stream);
template int posv_refined_batched<std::complex<double>>(Uplo, int, int, std::complex<double>*, int, long long,
                                                        const std::complex<double>*, int, long long,
                                                        std::complex<double>*, int, long long, int, int*, int*, Stream);

}  // namespace tessera::device
