// Mixed-precision solves of matrices resident in GPU memory (tessera::device::posv_refined), in
// one warm process against the FP64 solves in the same run: cuSOLVER's dpotrf + dpotrs and
// Tessera's device::posv. The refined solve factors in FP32 as stored and with its trailing
// updates on the tensor cores (TF32, BF16 or FP16 operands, FP32 accumulation).
//
// A = G G^T / n + delta I with G standard normal (cuRAND), delta = 4 / cond: its spectrum lies in
// about [delta, 4 + delta], so cond is about the condition number asked for. Lower storage; B
// standard normal. Every figure is the median of --repetitions calls after one warm-up, each call
// on a fresh copy of A (not timed) and timed from the call to the solution complete in GPU memory.
// "berr" is the normwise backward error max_j ||b_j - A x_j||_inf / (||A||_inf ||x_j||_inf +
// ||b_j||_inf) in units of n eps (a double-precision solve: about 1 or less).
// With --trace, one more factorization per order is traced (arithmetic --trace-cores, fp16 by
// default): its plan, and per task kind the count and time on the workers, against the span; then
// one refined solve with the same arithmetic, its whole time beside its factorization's trace.
// With --complex, Hermitian matrices instead (A = G G^H / n + delta I, G complex normal; ZCPOSV
// against cuSOLVER's zpotrf + zpotrs and Tessera's complex device::posv; the factor in complex
// FP32, no tensor cores); "berr" then measures magnitudes as |re| + |im| (as IZAMAX does).
// With --batched COUNTxN,..., strided batches of small matrices instead (device::posv_refined_batched)
// against the FP64 batched solves in the same run: cuSOLVER's potrfBatched + potrsBatched (one
// right-hand side: its only form) and Tessera's device::posv_batched_ex; A_k = G_k G_k^T / n + delta I
// as above, each matrix its own G_k; "berr" the largest over the first 16 matrices, "it" the
// largest ITER and "fb" how many matrices fell back to double precision. Two refined columns: the
// public function, along the path the plan takes on this GPU (T plan: ITER -1 where it solves in
// double precision at once), and the refinement in single precision asked for (T single).
// With --tile-dag, each tensor-core refined solve and factorization once more through the tile DAG
// (grain tiles, "/t": the plan's path below the table's order for the recursive factorization on
// the stream, and the one it takes there measured against it). With --gmres, each refined solve
// once more with GMRES-IR where LAPACK's steps stall (Refinement::classical_then_gmres, "+g"; "kr"
// its Krylov steps). --arithmetics takes a subset of off, tf32, bf16, fp16 (all by default).
//   bench_gpu_refined_solve [--sizes 8192,16384,30000] [--conds 1e2,1e6] [--nrhs 1,16]
//                           [--repetitions 3] [--nb 0] [--trace] [--trace-cores fp16] [--complex]
//                           [--tile-dag] [--gmres] [--arithmetics off,fp16] [--batched 10000x32,1000x256]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "batched_refined_solve.hpp"
#include "bench_support.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/refinement.hpp"
#include "kernels/cuda/vendor.hpp"
#include "tessera/device.hpp"
#include "tessera/tessera.hpp"
#include "thresholds.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
class Buffer {
 public:
  explicit Buffer(std::size_t count) : count_(count) {
    TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(count, 1) * sizeof(T)));
  }
  ~Buffer() { cudaFree(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* get() const { return data_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  std::size_t count_;
  T* data_ = nullptr;
};

struct Handles {
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  curandGenerator_t random;
  Handles() {
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    if (curandCreateGenerator(&random, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS)
      throw std::runtime_error("curandCreateGenerator failed");
    curandSetPseudoRandomGeneratorSeed(random, 2026);
  }
  ~Handles() {
    curandDestroyGenerator(random);
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
  }
};

void normal(Handles& h, double* x, std::size_t count) {
  if (curandGenerateNormalDouble(h.random, x, count + (count & 1), 0.0, 1.0) != CURAND_STATUS_SUCCESS)
    throw std::runtime_error("curandGenerateNormalDouble failed");
}

// A (lower triangle) := G G^T / n + (4 / cond) I.
void make_matrix(Handles& h, int n, double cond, double* A) {
  const std::size_t nn = std::size_t(n) * n;
  Buffer<double> G(nn + 1);
  normal(h, G.get(), nn);
  const double alpha = 1.0 / n, beta = 0;
  TESSERA_CUBLAS_CHECK(cublasDsyrk(h.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &alpha, G.get(), n, &beta, A, n));
  std::vector<double> diagonal(n);
  TESSERA_CUBLAS_CHECK(cublasGetVector(n, sizeof(double), A, n + 1, diagonal.data(), 1));
  for (double& d : diagonal) d += 4.0 / cond;
  TESSERA_CUBLAS_CHECK(cublasSetVector(n, sizeof(double), diagonal.data(), 1, A, n + 1));
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

// The normwise backward error of X in units of n eps (A's lower triangle).
double backward_error(Handles& h, int n, int nrhs, const double* A, const double* B, const double* X) {
  Buffer<double> R(std::size_t(n) * nrhs), sums(n), largest(3 * std::size_t(nrhs) + 1);
  TESSERA_CUDA_CHECK(cudaMemcpy(R.get(), B, R.bytes(), cudaMemcpyDeviceToDevice));
  const double minus_one = -1, one = 1;
  TESSERA_CUBLAS_CHECK(cublasDsymm(h.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, nrhs, &minus_one, A, n, X, n,
                                   &one, R.get(), n));
  tessera::kernels::cuda::symmetric_row_sums('L', n, A, n, sums.get(), nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, 1, sums.get(), n, largest.get(), nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, R.get(), n, largest.get() + 1, nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, X, n, largest.get() + 1 + nrhs, nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, B, n, largest.get() + 1 + 2 * nrhs, nullptr);
  std::vector<double> host(3 * std::size_t(nrhs) + 1);
  TESSERA_CUDA_CHECK(cudaMemcpy(host.data(), largest.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int j = 0; j < nrhs; ++j)
    worst = std::max(worst, host[1 + j] / (host[0] * host[1 + nrhs + j] + host[1 + 2 * nrhs + j]));
  return worst / (n * DBL_EPSILON);
}

using zdouble = std::complex<double>;
using tessera::kernels::cuda::vendor::cu;

// A (both triangles) := G G^H / n + (4 / cond) I, G complex normal.
void make_hermitian(Handles& h, int n, double cond, zdouble* A) {
  const std::size_t nn = std::size_t(n) * n;
  Buffer<zdouble> G(nn + 1);
  normal(h, reinterpret_cast<double*>(G.get()), 2 * nn);
  const cuDoubleComplex alpha = make_cuDoubleComplex(1.0 / n, 0), beta = make_cuDoubleComplex(0, 0);
  TESSERA_CUBLAS_CHECK(cublasZgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_C, n, n, n, &alpha, cu(G.get()), n, cu(G.get()), n,
                                   &beta, cu(A), n));
  std::vector<zdouble> diagonal(n);
  TESSERA_CUBLAS_CHECK(cublasGetVector(n, sizeof(zdouble), A, n + 1, diagonal.data(), 1));
  for (zdouble& d : diagonal) d = zdouble(d.real() + 4.0 / cond, 0);
  TESSERA_CUBLAS_CHECK(cublasSetVector(n, sizeof(zdouble), diagonal.data(), 1, A, n + 1));
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

// The normwise backward error of X in units of n eps, as backward_error's with |re| + |im| for the
// magnitudes (A full, Hermitian: the largest column sum is its infinity norm).
double backward_error(Handles& h, int n, int nrhs, const zdouble* A, const zdouble* B, const zdouble* X) {
  Buffer<zdouble> R(std::size_t(n) * nrhs);
  Buffer<double> largest(3 * std::size_t(nrhs));
  TESSERA_CUDA_CHECK(cudaMemcpy(R.get(), B, R.bytes(), cudaMemcpyDeviceToDevice));
  const cuDoubleComplex minus_one = make_cuDoubleComplex(-1, 0), one = make_cuDoubleComplex(1, 0);
  TESSERA_CUBLAS_CHECK(cublasZhemm(h.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, nrhs, &minus_one, cu(A), n,
                                   cu(X), n, &one, cu(R.get()), n));
  double norm_a = 0;
  for (int j = 0; j < n; ++j) {
    double column = 0;
    TESSERA_CUBLAS_CHECK(cublasDzasum(h.blas, n, cu(A) + std::size_t(j) * n, 1, &column));
    norm_a = std::max(norm_a, column);
  }
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, R.get(), n, largest.get(), nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, X, n, largest.get() + nrhs, nullptr);
  tessera::kernels::cuda::largest_magnitudes(n, nrhs, B, n, largest.get() + 2 * nrhs, nullptr);
  std::vector<double> host(3 * std::size_t(nrhs));
  TESSERA_CUDA_CHECK(cudaMemcpy(host.data(), largest.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int j = 0; j < nrhs; ++j) worst = std::max(worst, host[j] / (norm_a * host[nrhs + j] + host[2 * nrhs + j]));
  return worst / (n * DBL_EPSILON);
}

struct Outcome {
  double seconds = 0;
  int iter = 0;
  double berr = 0;
};

// Median over `repetitions` (after one warm-up) of factor(copy): the factorization alone of S A S
// in single precision (the refined solve's first step), on a fresh copy each time.
template <class Factor>
double time_single_factor(int repetitions, int n, const double* A, Factor&& factor) {
  Buffer<float> single(std::size_t(n) * n), work(std::size_t(n) * n);
  Buffer<double> scale(n), sums(n);
  Buffer<int> flags(1);
  TESSERA_CUDA_CHECK(cudaMemset(flags.get(), 0, sizeof(int)));
  tessera::kernels::cuda::scale_and_narrow('L', n, A, n, scale.get(), single.get(), n, sums.get(), flags.get(), nullptr);
  std::vector<double> times;
  for (int r = 0; r <= repetitions; ++r) {
    TESSERA_CUDA_CHECK(cudaMemcpy(work.get(), single.get(), work.bytes(), cudaMemcpyDeviceToDevice));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const Clock::time_point start = Clock::now();
    factor(work.get());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    if (r > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Median over `repetitions` (after one warm-up) of solve(A_work, X): A_work a fresh copy of A.
template <class T, class Solve>
Outcome time_solve(Handles& h, int repetitions, int n, int nrhs, const T* A, const T* B, Solve&& solve) {
  Buffer<T> work(std::size_t(n) * n), X(std::size_t(n) * nrhs);
  std::vector<double> times;
  Outcome outcome;
  for (int r = 0; r <= repetitions; ++r) {
    TESSERA_CUDA_CHECK(cudaMemcpy(work.get(), A, work.bytes(), cudaMemcpyDeviceToDevice));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const Clock::time_point start = Clock::now();
    outcome.iter = solve(work.get(), X.get());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    if (r > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  outcome.seconds = times[times.size() / 2];
  outcome.berr = backward_error(h, n, nrhs, A, B, X.get());
  return outcome;
}

void print_trace_summary(const tessera::Trace& trace) {
  for (const auto& plan : trace.plans())
    for (const std::string& line : plan) fmt::print("    plan: {}\n", line);
  struct Totals {
    int count = 0;
    double us = 0;
  };
  std::map<std::string, Totals> kinds;
  double first = 1e300, last = 0, busy = 0;
  for (const tessera::TraceEvent& e : trace.events()) {
    Totals& t = kinds[std::string(tessera::to_string(e.kind)) + " on " + e.worker_name];
    ++t.count;
    t.us += e.end_us - e.start_us;
    busy += e.end_us - e.start_us;
    first = std::min(first, e.start_us);
    last = std::max(last, e.end_us);
  }
  fmt::print("    span {:.2f} ms, tasks' time {:.2f} ms\n", (last - first) / 1e3, busy / 1e3);
  for (const auto& [name, t] : kinds)
    fmt::print("    {:<24} {:>6} tasks {:>9.2f} ms {:>9.1f} us each\n", name, t.count, t.us / 1e3, t.us / t.count);
}

void run_complex(tessera::Runtime& runtime, Handles& h, const std::vector<int>& sizes,
                 const std::vector<std::string>& conds, const std::vector<int>& rhs_counts, int repetitions, int nb) {
  using namespace tessera;
  fmt::print("Hermitian matrices: cuSOLVER zpotrf + zpotrs (cuS zp), Tessera's complex device::posv (T zposv), "
             "Tessera's ZCPOSV in GPU memory (T zcposv; x/cuS: cuSOLVER's time over it)\n");
  fmt::print("{:>6} {:>5} {:>4} | {:>8} {:>6} | {:>8} {:>6} | {:>8} {:>3} {:>6} {:>6}\n", "n", "cond", "nrhs", "cuS zp",
             "berr", "T zposv", "berr", "T zcposv", "it", "berr", "x/cuS");
  for (int n : sizes)
    for (const std::string& cond_text : conds) {
      Buffer<zdouble> A(std::size_t(n) * n);
      make_hermitian(h, n, std::stod(cond_text), A.get());
      for (int nrhs : rhs_counts) {
        const std::size_t rhs = std::size_t(n) * nrhs;
        Buffer<zdouble> B(rhs + 1);
        normal(h, reinterpret_cast<double*>(B.get()), 2 * rhs);
        int lwork = 0;
        TESSERA_CUSOLVER_CHECK(
            cusolverDnZpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, n, cu(A.get()), n, &lwork));
        Buffer<zdouble> work(lwork);
        Buffer<int> info(1);
        const auto timed = [&](auto&& solve) {
          return time_solve(h, repetitions, n, nrhs, A.get(), B.get(), solve);
        };
        const Outcome cusolver = timed([&](zdouble* a, zdouble* x) {
          TESSERA_CUSOLVER_CHECK(
              cusolverDnZpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, n, cu(a), n, cu(work.get()), lwork, info.get()));
          TESSERA_CUDA_CHECK(cudaMemcpy(x, B.get(), rhs * sizeof(zdouble), cudaMemcpyDeviceToDevice));
          TESSERA_CUSOLVER_CHECK(
              cusolverDnZpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, cu(a), n, cu(x), n, info.get()));
          return 0;
        });
        FactorOptions options;
        options.mode = Mode::gpu;
        options.nb = nb;
        const Outcome fp64 = timed([&](zdouble* a, zdouble* x) {
          TESSERA_CUDA_CHECK(cudaMemcpy(x, B.get(), rhs * sizeof(zdouble), cudaMemcpyDeviceToDevice));
          return device::posv(runtime, n, nrhs, a, n, x, n, nullptr, options);
        });
        const Outcome refined = timed([&](zdouble* a, zdouble* x) {
          return device::posv_refined(runtime, n, nrhs, a, n, B.get(), n, x, n, nullptr, options).iter;
        });
        fmt::print("{:>6} {:>5} {:>4} | {:>8.4f} {:>6.2f} | {:>8.4f} {:>6.2f} | {:>8.4f} {:>3} {:>6.2f} {:>5.2f}x\n", n,
                   cond_text, nrhs, cusolver.seconds, cusolver.berr, fp64.seconds, fp64.berr, refined.seconds,
                   refined.iter, refined.berr, cusolver.seconds / refined.seconds);
        std::fflush(stdout);
      }
    }
}

// ---- batches of small matrices --------------------------------------------------------------------

// A_k (full storage, n x n at k n^2) := G_k G_k^T / n + (4 / cond) I for count matrices.
void make_batch(Handles& h, int n, int count, double cond, double* A) {
  const std::size_t nn = std::size_t(n) * n;
  Buffer<double> G(nn * count + 1);
  normal(h, G.get(), nn * count);
  const double alpha = 1.0 / n, beta = 0;
  TESSERA_CUBLAS_CHECK(cublasDgemmStridedBatched(h.blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, G.get(), n, nn,
                                                 G.get(), n, nn, &beta, A, n, nn, count));
  std::vector<double> host(nn * count);
  TESSERA_CUDA_CHECK(cudaMemcpy(host.data(), A, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) host[k * nn + i + std::size_t(i) * n] += 4.0 / cond;
  TESSERA_CUDA_CHECK(cudaMemcpy(A, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
}

// The largest normwise backward error (n eps) over the first matrices of the batch, on the host.
double batch_backward_error(int n, int nrhs, int count, const double* A, const double* B, const double* X) {
  const int checked = std::min(count, 16);
  const std::size_t nn = std::size_t(n) * n, nb = std::size_t(n) * nrhs;
  std::vector<double> a(nn * checked), b(nb * checked), x(nb * checked);
  TESSERA_CUDA_CHECK(cudaMemcpy(a.data(), A, a.size() * sizeof(double), cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaMemcpy(b.data(), B, b.size() * sizeof(double), cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaMemcpy(x.data(), X, x.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int k = 0; k < checked; ++k) {
    double norm_a = 0;
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int j = 0; j < n; ++j) row += std::abs(a[k * nn + i + std::size_t(j) * n]);
      norm_a = std::max(norm_a, row);
    }
    for (int c = 0; c < nrhs; ++c) {
      double r = 0, xm = 0, bm = 0;
      for (int i = 0; i < n; ++i) {
        double ax = 0;
        for (int j = 0; j < n; ++j) ax += a[k * nn + i + std::size_t(j) * n] * x[k * nb + j + std::size_t(c) * n];
        r = std::max(r, std::abs(b[k * nb + i + std::size_t(c) * n] - ax));
        xm = std::max(xm, std::abs(x[k * nb + i + std::size_t(c) * n]));
        bm = std::max(bm, std::abs(b[k * nb + i + std::size_t(c) * n]));
      }
      worst = std::max(worst, r / (norm_a * xm + bm));
    }
  }
  return worst / (n * DBL_EPSILON);
}

struct BatchOutcome {
  double seconds = 0;
  double berr = 0;
  int most_iterations = -100;  // below every ITER
  int fallen_back = 0;
};

// Median over `repetitions` (after one warm-up) of solve(A_work, X, iter): A_work a fresh copy.
template <class Solve>
BatchOutcome time_batch(int repetitions, int n, int nrhs, int count, const double* A, const double* B, Solve&& solve) {
  const std::size_t nn = std::size_t(n) * n * count, nb = std::size_t(n) * nrhs * count;
  Buffer<double> work(nn), X(nb);
  std::vector<int> iter(count, 0);
  std::vector<double> times;
  for (int r = 0; r <= repetitions; ++r) {
    TESSERA_CUDA_CHECK(cudaMemcpy(work.get(), A, work.bytes(), cudaMemcpyDeviceToDevice));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const Clock::time_point start = Clock::now();
    solve(work.get(), X.get(), iter.data());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    if (r > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  BatchOutcome outcome;
  outcome.seconds = times[times.size() / 2];
  outcome.berr = batch_backward_error(n, nrhs, count, A, B, X.get());
  for (int it : iter) {
    outcome.most_iterations = std::max(outcome.most_iterations, it);
    outcome.fallen_back += it < 0;
  }
  return outcome;
}

void run_batched(Handles& h, const std::vector<std::pair<int, int>>& shapes, const std::vector<std::string>& conds,
                 const std::vector<int>& rhs_counts, int repetitions) {
  using namespace tessera;
  fmt::print(
      "strided batches: cuSOLVER potrfBatched + potrsBatched (cuS, one right-hand side), Tessera's "
      "device::posv_batched_ex (T posv), device::posv_refined_batched on the plan's path (T plan) and refining in "
      "single precision (T single); x/cuS, x/T: their time over T single's, plan/T: T posv's over T plan's\n");
  fmt::print(
      "{:>6} {:>5} {:>5} {:>4} | {:>9} {:>6} | {:>9} {:>6} | {:>9} {:>3} {:>7} | {:>9} {:>3} {:>5} {:>6} {:>6} "
      "{:>6}\n",
      "count", "n", "cond", "nrhs", "cuS", "berr", "T posv", "berr", "T plan", "it", "plan/T", "T single", "it", "fb",
      "berr", "x/cuS", "x/T");
  for (const auto& shape : shapes)
    for (const std::string& cond_text : conds) {
      const int count = shape.first, n = shape.second;
      const std::size_t nn = std::size_t(n) * n;
      Buffer<double> A(nn * count);
      make_batch(h, n, count, std::stod(cond_text), A.get());
      for (int nrhs : rhs_counts) {
        const std::size_t nb = std::size_t(n) * nrhs;
        Buffer<double> B(nb * count + 1);
        normal(h, B.get(), nb * count);
        Buffer<int> info(count);
        std::string row = fmt::format("{:>6} {:>5} {:>5} {:>4}", count, n, cond_text, nrhs);
        BatchOutcome cusolver;
        if (nrhs == 1) {
          Buffer<double*> a_array(count), x_array(count);
          cusolver = time_batch(repetitions, n, nrhs, count, A.get(), B.get(), [&](double* a, double* x, int*) {
            std::vector<double*> as(count), xs(count);
            for (int k = 0; k < count; ++k) {
              as[k] = a + k * nn;
              xs[k] = x + k * nb;
            }
            TESSERA_CUDA_CHECK(cudaMemcpy(a_array.get(), as.data(), count * sizeof(double*), cudaMemcpyHostToDevice));
            TESSERA_CUDA_CHECK(cudaMemcpy(x_array.get(), xs.data(), count * sizeof(double*), cudaMemcpyHostToDevice));
            TESSERA_CUDA_CHECK(cudaMemcpy(x, B.get(), nb * count * sizeof(double), cudaMemcpyDeviceToDevice));
            TESSERA_CUSOLVER_CHECK(
                cusolverDnDpotrfBatched(h.solver, CUBLAS_FILL_MODE_LOWER, n, a_array.get(), n, info.get(), count));
            TESSERA_CUSOLVER_CHECK(cusolverDnDpotrsBatched(h.solver, CUBLAS_FILL_MODE_LOWER, n, 1, a_array.get(), n,
                                                           x_array.get(), n, info.get(), count));
          });
          row += fmt::format(" | {:>9.5f} {:>6.2f}", cusolver.seconds, cusolver.berr);
        } else {
          row += fmt::format(" | {:>9} {:>6}", "-", "-");
        }
        const BatchOutcome fp64 =
            time_batch(repetitions, n, nrhs, count, A.get(), B.get(), [&](double* a, double* x, int*) {
              TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, B.get(), nb * count * sizeof(double), cudaMemcpyDeviceToDevice));
              device::posv_batched_ex(Uplo::lower, n, nrhs, a, n, static_cast<long long>(nn), x, n,
                                      static_cast<long long>(nb), count, info.get(), nullptr);
            });
        const BatchOutcome planned =
            time_batch(repetitions, n, nrhs, count, A.get(), B.get(), [&](double* a, double* x, int* iter) {
              device::posv_refined_batched(Uplo::lower, n, nrhs, a, n, static_cast<long long>(nn), B.get(), n,
                                           static_cast<long long>(nb), x, n, static_cast<long long>(nb), count, nullptr,
                                           iter, nullptr);
            });
        const BatchOutcome refined =
            time_batch(repetitions, n, nrhs, count, A.get(), B.get(), [&](double* a, double* x, int* iter) {
              detail::posv_refined_batched(detail::BatchedRefinedPath::refine_in_single, Uplo::lower, n, nrhs, a, n,
                                           static_cast<long long>(nn), B.get(), n, static_cast<long long>(nb), x, n,
                                           static_cast<long long>(nb), count, nullptr, iter, nullptr);
            });
        row +=
            fmt::format(" | {:>9.5f} {:>6.2f} | {:>9.5f} {:>3} {:>6.2f}x | {:>9.5f} {:>3} {:>5} {:>6.2f}", fp64.seconds,
                        fp64.berr, planned.seconds, planned.most_iterations, fp64.seconds / planned.seconds,
                        refined.seconds, refined.most_iterations, refined.fallen_back, refined.berr);
        row += nrhs == 1 ? fmt::format(" {:>5.2f}x", cusolver.seconds / refined.seconds) : fmt::format(" {:>6}", "-");
        row += fmt::format(" {:>5.2f}x", fp64.seconds / refined.seconds);
        fmt::print("{}\n", row);
        std::fflush(stdout);
      }
    }
}
}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  std::vector<int> sizes = {8192, 16384, 30000}, rhs_counts = {1, 16};
  std::vector<std::string> conds = {"1e2", "1e6"};
  int repetitions = 3, nb = 0;
  bool trace = false, hermitian = false, tile_dag = false, with_gmres = false;
  std::vector<TensorCores> factor_arithmetics = {TensorCores::off, TensorCores::tf32, TensorCores::bf16,
                                                 TensorCores::fp16};
  std::vector<std::pair<int, int>> batched;  // (count, n)
  TensorCores trace_cores = TensorCores::fp16;
  for (bench::Arguments args(argc, argv); args.next();) {
    const std::string option = args.option();
    if (option == "--sizes") sizes = bench::parse_int_list(args.value());
    else if (option == "--conds") conds = bench::split_commas(args.value());
    else if (option == "--nrhs") rhs_counts = bench::parse_int_list(args.value());
    else if (option == "--repetitions") repetitions = std::stoi(args.value());
    else if (option == "--nb") nb = std::stoi(args.value());
    else if (option == "--trace") trace = true;
    else if (option == "--tile-dag") tile_dag = true;
    else if (option == "--gmres") with_gmres = true;
    else if (option == "--arithmetics") {
      factor_arithmetics.clear();
      for (const std::string& name : bench::split_commas(args.value()))
        factor_arithmetics.push_back(parse_tensor_cores(name));
    }
    else if (option == "--trace-cores") trace_cores = parse_tensor_cores(args.value());
    else if (option == "--complex") hermitian = true;
    else if (option == "--batched") {
      for (const std::string& shape : bench::split_commas(args.value())) {
        const std::size_t x = shape.find('x');
        if (x == std::string::npos) throw std::runtime_error("--batched takes COUNTxN, not " + shape);
        batched.emplace_back(std::stoi(shape.substr(0, x)), std::stoi(shape.substr(x + 1)));
      }
    } else
      throw std::runtime_error("unknown option " + option);
  }
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    fmt::print("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  RuntimeOptions runtime_options = RuntimeOptions::from_environment();
  Runtime runtime(runtime_options);
  Handles h;
  fmt::print("{}; warm process, matrices resident in GPU memory; seconds (median of {}), iterations, backward error "
             "in n eps\n",
             prop.name, repetitions);
  if (!batched.empty()) {
    run_batched(h, batched, conds, rhs_counts, repetitions);
    return 0;
  }
  if (hermitian) {
    run_complex(runtime, h, sizes, conds, rhs_counts, repetitions, nb);
    return 0;
  }
  // Each arithmetic as the plan runs it; with --tile-dag, the tensor cores' through the tile DAG as
  // well ("/t").
  struct Arithmetic {
    TensorCores cores;
    TaskGrain grain;
    Refinement refinement = Refinement::lapack;
    std::string name() const {
      return std::string(to_string(cores)) + (grain == TaskGrain::tiles ? "/t" : "") +
             (refinement == Refinement::classical_then_gmres ? "+g" : "");
    }
  };
  std::vector<Arithmetic> arithmetics;
  for (TensorCores cores : factor_arithmetics) arithmetics.push_back({cores, TaskGrain::automatic});
  if (tile_dag)
    for (TensorCores cores : factor_arithmetics)
      if (cores != TensorCores::off) arithmetics.push_back({cores, TaskGrain::tiles});
  // The solves' columns: each arithmetic, and with --gmres each once more with GMRES-IR (the
  // factorizations' columns are the same).
  std::vector<Arithmetic> solves = arithmetics;
  if (with_gmres)
    for (Arithmetic a : arithmetics) {
      a.refinement = Refinement::classical_then_gmres;
      solves.push_back(a);
    }
  fmt::print("refined solves by the factor's product arithmetic (off: FP32; then the tensor cores with TF32, "
             "BF16 or FP16 operands); x/cuS: cuSOLVER's FP64 time over the refined solve's\n");
  fmt::print("factorizations alone of S A S in single precision: cuSOLVER spotrf, Tessera by arithmetic (the plan's "
             "path: with 16-bit tensor-core operands recursive on the stream from n = {}, the tile DAG otherwise and "
             "for /t)\n",
             tessera::detail::kThresholds.tensor_core_recursive_min_n);
  std::string header = fmt::format("{:>6} {:>5} {:>4} | {:>8} {:>6} | {:>8} {:>6}", "n", "cond", "nrhs", "cuS dp",
                                   "berr", "T posv", "berr");
  for (const Arithmetic& a : solves)
    header += fmt::format(" | {:>8} {:>3}{} {:>6} {:>6}", "T " + a.name(), "it",
                          a.refinement == Refinement::classical_then_gmres ? fmt::format(" {:>4}", "kr") : "", "berr",
                          "x/cuS");
  header += fmt::format(" | {:>8}", "cuS sp");
  for (const Arithmetic& a : arithmetics) header += fmt::format(" {:>8}", "sp " + a.name());
  fmt::print("{}\n", header);
  for (int n : sizes)
    for (const std::string& cond_text : conds) {
      Buffer<double> A(std::size_t(n) * n);
      make_matrix(h, n, std::stod(cond_text), A.get());
      for (int nrhs : rhs_counts) {
        Buffer<double> B(std::size_t(n) * nrhs + 1);
        normal(h, B.get(), std::size_t(n) * nrhs);
        int lwork = 0;
        TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, n, A.get(), n, &lwork));
        Buffer<double> work(lwork);
        Buffer<int> info(1);
        const Outcome cusolver = time_solve(h, repetitions, n, nrhs, A.get(), B.get(), [&](double* a, double* x) {
          TESSERA_CUSOLVER_CHECK(
              cusolverDnDpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, n, a, n, work.get(), lwork, info.get()));
          TESSERA_CUDA_CHECK(cudaMemcpy(x, B.get(), std::size_t(n) * nrhs * sizeof(double), cudaMemcpyDeviceToDevice));
          TESSERA_CUSOLVER_CHECK(cusolverDnDpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, a, n, x, n, info.get()));
          return 0;
        });
        FactorOptions options;
        options.mode = Mode::gpu;
        options.nb = nb;
        const Outcome fp64 = time_solve(h, repetitions, n, nrhs, A.get(), B.get(), [&](double* a, double* x) {
          TESSERA_CUDA_CHECK(cudaMemcpy(x, B.get(), std::size_t(n) * nrhs * sizeof(double), cudaMemcpyDeviceToDevice));
          return device::posv(runtime, n, nrhs, a, n, x, n, nullptr, options);
        });
        std::string row = fmt::format("{:>6} {:>5} {:>4} | {:>8.4f} {:>6.2f} | {:>8.4f} {:>6.2f}", n, cond_text, nrhs,
                                      cusolver.seconds, cusolver.berr, fp64.seconds, fp64.berr);
        for (const Arithmetic& a : solves) {
          FactorOptions o = options;
          o.tensor_cores = a.cores;
          o.grain = a.grain;
          o.refinement = a.refinement;
          int krylov = 0;
          const Outcome refined = time_solve(h, repetitions, n, nrhs, A.get(), B.get(), [&](double* a, double* x) {
            const RefinedSolve solved = device::posv_refined(runtime, n, nrhs, a, n, B.get(), n, x, n, nullptr, o);
            krylov = solved.krylov_iterations;
            return solved.iter;
          });
          row += fmt::format(" | {:>8.4f} {:>3}{} {:>6.2f} {:>5.2f}x", refined.seconds, refined.iter,
                             a.refinement == Refinement::classical_then_gmres ? fmt::format(" {:>4}", krylov) : "",
                             refined.berr, cusolver.seconds / refined.seconds);
        }
        row += fmt::format(" | {:>8.4f}", time_single_factor(repetitions, n, A.get(), [&](float* a) {
          int swork = 0;
          TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, n, a, n, &swork));
          Buffer<float> w(swork);
          TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, n, a, n, w.get(), swork, info.get()));
        }));
        for (const Arithmetic& a : arithmetics) {
          FactorOptions o = options;
          o.tensor_cores = a.cores;
          o.grain = a.grain;
          row += fmt::format(" {:>8.4f}", time_single_factor(repetitions, n, A.get(), [&](float* a) {
            device::potrf(runtime, n, a, n, nullptr, o);
          }));
        }
        fmt::print("{}\n", row);
        if (trace) {
          FactorOptions o = options;
          o.tensor_cores = trace_cores;
          o.trace = std::make_shared<Trace>();
          time_single_factor(0, n, A.get(), [&](float* a) { device::potrf(runtime, n, a, n, nullptr, o); });
          print_trace_summary(*o.trace);
          // The same factorization inside one refined solve, beside the solve's whole time.
          o.trace = std::make_shared<Trace>();
          Buffer<double> a(std::size_t(n) * n), x(std::size_t(n) * nrhs);
          TESSERA_CUDA_CHECK(cudaMemcpy(a.get(), A.get(), a.bytes(), cudaMemcpyDeviceToDevice));
          TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
          const Clock::time_point start = Clock::now();
          const int iter = device::posv_refined(runtime, n, nrhs, a.get(), n, B.get(), n, x.get(), n, nullptr, o).iter;
          TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
          fmt::print("    one traced refined solve: {:.2f} ms, {} iterations; its factorization:\n",
                     std::chrono::duration<double, std::milli>(Clock::now() - start).count(), iter);
          print_trace_summary(*o.trace);
        }
        std::fflush(stdout);
      }
    }
  return 0;
}
