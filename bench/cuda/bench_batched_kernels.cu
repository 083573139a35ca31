// Batched Cholesky benchmark: Tessera's batched kernels against cuSOLVER's potrfBatched /
// potrsBatched on the same random SPD data, double and float.
//
// For every n: factorization alone (standard layout; interleaved layout for n <= 32; the fast-math
// variant), solve alone (nrhs = 1) and factor + solve. Times are CUDA-event medians after a
// warm-up, with the inputs restored and the L2 cache flushed (untimed) before every repetition.
// GFLOP/s counts n^3/3 per factorization and 2 n^2 per solve. For n <= 64 the factorization is
// also compared with its memory floor: each matrix read and written once (2 n^2 sizeof(T) bytes)
// at the device-to-device copy bandwidth measured here. Backward errors are maxima over the
// whole batch: |A - L L^T|_max / |A|_max and |A x - b|_inf / (|A|_inf |x|_inf + |b|_inf).
//
//   bench_batched_kernels [--json out.json] [--batch N] [--reps R] [--sizes 5,8,...]
//                         [--precision double|float|both] [--tune] [--no-main] [--solves]
//                         [--solve-counts 8,...] [--solve-nrhs 1,...] [--solve-types real|complex|both]
//                         [--blocked-shapes]
// --tune measures every compiled panel shape (n > 32) and register-kernel block size (n <= 32)
// and prints the fastest per n (how the built-in table was chosen). --blocked-shapes times the
// factorization in blocks of columns (lower) with every block's panel kernel in each compiled shape.
// In blocks of columns, each block's panel shape from potrf_batched_columns_shape's table and, for
// comparison, from the whole kernel's choice for its rows (BatchedOptions::columns_shape_table off).
// Variable orders: a batch of the same count with orders drawn in [n/2, 3n/2] (fixed seed), each
// the leading block of an SPD matrix of order 3n/2 (lda = 3n/2), through potrf_vbatched; its
// GFLOP/s (the sum of n_k^3/3) against the fixed-order batch's, and its time with the orders left in
// one class (BatchedOptions::order_classes off).
// Solves by count (--solves): for each order in --sizes, --solve-counts matrices and --solve-nrhs
// right-hand sides, both triangles: the solve kernels with the factor streamed, staged in shared
// memory and staged with a lane per right-hand side (BatchedSolveOptions), the one the automatic
// choice runs, and cuBLAS's batched trsm twice (the vendor's solves), milliseconds; the staged and
// lane solutions' largest difference from the streamed one relative to its largest entry.
// --solve-types complex (or both) times the solves in complex double and float (complex single with
// --precision float) instead of (or beside) the real types: Hermitian factors, cuBLAS's trsm with
// the conjugate transpose.
// Energy (--energy-seconds S, 0 for none): the GPU's energy per batched factorization for Tessera
// (both triangles) and cuSOLVER, from the calls repeated for S seconds less the input restores
// alone (bench/energy/energy_meter.hpp), and GFLOP/s per watt.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#include "device_support.hpp"
#include "energy_meter.hpp"

namespace tk = tessera::kernels::cuda;
using tessera::bench::EnergyMeter;
using json = nlohmann::json;

namespace {

// ---- options --------------------------------------------------------------------------------

struct Options {
  std::string json_path;
  int batch = 10000;
  int big_batch = 1000;  // n >= 256 (the reference numbers for those sizes use batch 1000)
  int reps = 15;
  std::vector<int> sizes = {5, 8, 16, 24, 32, 48, 64, 100, 128, 256, 512};
  bool do_double = true, do_float = true;
  bool tune = false;
  bool blocked_shapes = false;
  bool main_run = true;
  bool solves = false;
  bool real_solves = true, complex_solves = false;
  std::vector<int> solve_counts = {1, 8, 64, 512, 4096};
  std::vector<int> solve_nrhs = {1, 2, 8, 32};
  double energy_seconds = 1.0;
};

using tessera::bench::parse_int_list;

Options parse_options(int argc, char** argv) {
  Options o;
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    const std::string a = args.option();
    if (a == "--json") o.json_path = args.value();
    else if (a == "--batch") o.batch = std::stoi(args.value());
    else if (a == "--big-batch") o.big_batch = std::stoi(args.value());
    else if (a == "--reps") o.reps = std::stoi(args.value());
    else if (a == "--sizes") o.sizes = parse_int_list(args.value());
    else if (a == "--tune") o.tune = true;
    else if (a == "--blocked-shapes") o.blocked_shapes = true;
    else if (a == "--no-main") o.main_run = false;
    else if (a == "--solves") o.solves = true;
    else if (a == "--solve-counts") o.solve_counts = parse_int_list(args.value());
    else if (a == "--solve-nrhs") o.solve_nrhs = parse_int_list(args.value());
    else if (a == "--energy-seconds") o.energy_seconds = std::stod(args.value());
    else if (a == "--solve-types") {
      const std::string t = args.value();
      if (t != "real" && t != "complex" && t != "both")
        throw std::runtime_error("--solve-types: real, complex or both");
      o.real_solves = t != "complex";
      o.complex_solves = t != "real";
    } else if (a == "--precision") {
      const std::string p = args.value();
      o.do_double = p == "double" || p == "both";
      o.do_float = p == "float" || p == "both";
    } else {
      throw std::runtime_error("unknown argument " + a);
    }
  }
  return o;
}

// ---- device helpers -------------------------------------------------------------------------

using tessera::bench::Device;
using tessera::bench::Timer;

__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), never exactly zero.
__device__ __forceinline__ double uniform_pm1(std::uint64_t key) {
  const double u = static_cast<double>(mix64(key) >> 11) * (1.0 / 9007199254740992.0);
  const double v = 2.0 * u - 1.0;
  return v == 0.0 ? 0.5 : v;
}

// Symmetric (Parts = 1) or Hermitian (Parts = 2: pairs of R in std::complex<R>'s layout, imaginary
// parts below the diagonal and their negatives above it) diagonally dominant, hence positive
// definite, random matrices, both triangles stored.
template <class R, int Parts = 1>
__global__ void make_spd_kernel(R* A, int n, long long stride, int batch, std::uint64_t seed) {
  const long long nn = static_cast<long long>(n) * n;
  const long long total = nn * batch;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long k = e / nn;
    const int r = static_cast<int>(e % nn);
    const int i = r % n, j = r / n;
    const int lo = min(i, j), hi = max(i, j);
    const std::uint64_t key = seed ^ (static_cast<std::uint64_t>(k) << 32) ^ (lo * 65537u + hi);
    double v = uniform_pm1(key);
    if (i == j) v = n + 1.5 + 0.5 * v;
    const long long at = Parts * (k * stride + static_cast<long long>(j) * n + i);
    A[at] = static_cast<R>(v);
    if constexpr (Parts == 2) {
      const double im = i == j ? 0.0 : uniform_pm1(~key);
      A[at + 1] = static_cast<R>(i < j ? -im : im);
    }
  }
}

template <class T>
__global__ void make_rhs_kernel(T* B, long long count, std::uint64_t seed) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x)
    B[e] = static_cast<T>(uniform_pm1(seed ^ (static_cast<std::uint64_t>(e) * 0x100000001ULL)));
}

// Per matrix: max |A - L L^T| over the referenced triangle / max |A|.
template <class T>
__global__ void factor_error_kernel(const T* A, const T* F, int n, long long stride, bool upper,
                                    const int* info, double* err) {
  const long long k = blockIdx.x;
  const T* a = A + k * stride;
  const T* f = F + k * stride;
  const auto l = [&](int i, int c) -> double {  // L(i, c), c <= i
    return upper ? static_cast<double>(f[c + static_cast<long long>(i) * n])
                 : static_cast<double>(f[i + static_cast<long long>(c) * n]);
  };
  double worst = 0, amax = 0;
  const long long pairs = static_cast<long long>(n) * n;
  for (long long p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int i = static_cast<int>(p % n), j = static_cast<int>(p / n);
    if (i < j) continue;
    double s = 0;
    for (int c = 0; c <= j; ++c) s += l(i, c) * l(j, c);
    worst = fmax(worst, fabs(s - static_cast<double>(a[i + static_cast<long long>(j) * n])));
    amax = fmax(amax, fabs(static_cast<double>(a[i + static_cast<long long>(j) * n])));
  }
  __shared__ double sw[256], sa[256];
  sw[threadIdx.x] = worst;
  sa[threadIdx.x] = amax;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sw[threadIdx.x] = fmax(sw[threadIdx.x], sw[threadIdx.x + s]);
      sa[threadIdx.x] = fmax(sa[threadIdx.x], sa[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const bool failed = info && info[k] != 0;
    err[k] = failed ? INFINITY : sw[0] / sa[0];
  }
}

// Per system: |A x - b|_inf / (|A|_inf |x|_inf + |b|_inf), one block per matrix (nrhs = 1).
template <class T>
__global__ void solve_error_kernel(const T* A, const T* X, const T* B, int n, long long strideA,
                                   long long strideB, double* err) {
  const long long k = blockIdx.x;
  const T* a = A + k * strideA;
  const T* x = X + k * strideB;
  const T* b = B + k * strideB;
  double rmax = 0, anorm = 0, xmax = 0, bmax = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    double ax = 0, arow = 0;
    for (int j = 0; j < n; ++j) {
      const double aij = a[i + static_cast<long long>(j) * n];
      ax += aij * static_cast<double>(x[j]);
      arow += fabs(aij);
    }
    rmax = fmax(rmax, fabs(ax - static_cast<double>(b[i])));
    anorm = fmax(anorm, arow);
    xmax = fmax(xmax, fabs(static_cast<double>(x[i])));
    bmax = fmax(bmax, fabs(static_cast<double>(b[i])));
  }
  __shared__ double s[4][256];
  s[0][threadIdx.x] = rmax;
  s[1][threadIdx.x] = anorm;
  s[2][threadIdx.x] = xmax;
  s[3][threadIdx.x] = bmax;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h)
      for (int q = 0; q < 4; ++q) s[q][threadIdx.x] = fmax(s[q][threadIdx.x], s[q][threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x == 0) err[k] = s[0][0] / (s[1][0] * s[2][0] + s[3][0]);
}

template <class T>
__global__ void pointer_array_kernel(T* base, long long stride, int batch, T** out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < batch) out[k] = base + k * stride;
}

unsigned grid_for(long long work, int threads) {
  return static_cast<unsigned>(std::min<long long>((work + threads - 1) / threads, 65535LL * 16));
}

// ---- timing ---------------------------------------------------------------------------------

// Device-to-device copy bandwidth (bytes read + bytes written per second).
double measure_copy_bandwidth(Timer& timer) {
  const std::size_t bytes = std::size_t(1) << 30;
  Device<char> a(bytes), b(bytes);
  TESSERA_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
  const double ms = timer.median_ms(
      9, [] {}, [&] { TESSERA_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice)); });
  return 2.0 * bytes / (ms * 1e-3);
}

double max_on_device(const Device<double>& v, int count) {
  std::vector<double> h(count);
  TESSERA_CUDA_CHECK(cudaMemcpy(h.data(), v.get(), count * sizeof(double), cudaMemcpyDeviceToHost));
  double m = 0;
  for (double x : h) m = std::max(m, std::isnan(x) ? std::numeric_limits<double>::infinity() : x);
  return m;
}

int nonzero_info(const Device<int>& info, int count) {
  std::vector<int> h(count);
  TESSERA_CUDA_CHECK(cudaMemcpy(h.data(), info.get(), count * sizeof(int), cudaMemcpyDeviceToHost));
  return static_cast<int>(std::count_if(h.begin(), h.end(), [](int v) { return v != 0; }));
}

// ---- cuSOLVER -------------------------------------------------------------------------------

struct Solver {
  cusolverDnHandle_t handle = nullptr;
  cublasHandle_t blas = nullptr;  // Tessera's blocked factorization's products
  Solver() {
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
  }
  ~Solver() {
    cublasDestroy(blas);
    cusolverDnDestroy(handle);
  }
};

cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, double** A, int lda, int* info, int batch) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, float** A, int lda, int* info, int batch) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch);
}
cusolverStatus_t vendor_potrs(cusolverDnHandle_t h, int n, double** A, int lda, double** B, int ldb,
                              int* info, int batch) {
  return cusolverDnDpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, A, lda, B, ldb, info, batch);
}
cusolverStatus_t vendor_potrs(cusolverDnHandle_t h, int n, float** A, int lda, float** B, int ldb,
                              int* info, int batch) {
  return cusolverDnSpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, A, lda, B, ldb, info, batch);
}

// ---- one size ------------------------------------------------------------------------------

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<std::complex<R>> : std::true_type {};

template <class T>
const char* precision_name() {
  if constexpr (IsComplex<T>::value)
    return sizeof(T) == 16 ? "zdouble" : "cfloat";
  else
    return sizeof(T) == 8 ? "double" : "float";
}

double gflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e9; }

template <class T>
struct Problem {
  int n, batch;
  long long nn;
  Device<T> orig, work, rhs, x;
  Device<int> info;
  Device<double> err;
  Problem(int n_, int batch_)
      : n(n_), batch(batch_), nn(static_cast<long long>(n_) * n_), orig(nn * batch_),
        work(nn * batch_), rhs(static_cast<std::size_t>(n_) * batch_),
        x(static_cast<std::size_t>(n_) * batch_), info(batch_), err(batch_) {
    make_spd_kernel<T><<<grid_for(nn * batch, 256), 256>>>(orig.get(), n, nn, batch, 0x5eed + n);
    TESSERA_CUDA_CHECK_LAUNCH();
    make_rhs_kernel<T><<<grid_for(n * static_cast<long long>(batch), 256), 256>>>(
        rhs.get(), static_cast<long long>(n) * batch, 0xb0b + n);
    TESSERA_CUDA_CHECK_LAUNCH();
  }
  void restore_A() {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(work.get(), orig.get(), orig.bytes(), cudaMemcpyDeviceToDevice));
  }
  void restore_B() {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(x.get(), rhs.get(), rhs.bytes(), cudaMemcpyDeviceToDevice));
  }
  double factor_error(const T* factored, bool upper, const int* inf) {
    factor_error_kernel<T><<<batch, 256>>>(orig.get(), factored, n, nn, upper, inf, err.get());
    TESSERA_CUDA_CHECK_LAUNCH();
    return max_on_device(err, batch);
  }
  double solve_error() {
    solve_error_kernel<T><<<batch, 256>>>(orig.get(), x.get(), rhs.get(), n, nn, n, err.get());
    TESSERA_CUDA_CHECK_LAUNCH();
    return max_on_device(err, batch);
  }
};

// ---- solves by count ------------------------------------------------------------------------

cublasStatus_t vendor_trsm(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int nrhs,
                           const double* const* A, double* const* B, int batch) {
  const double one = 1;
  return cublasDtrsmBatched(h, CUBLAS_SIDE_LEFT, fill, op, CUBLAS_DIAG_NON_UNIT, n, nrhs, &one, A, n, B, n, batch);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int nrhs,
                           const float* const* A, float* const* B, int batch) {
  const float one = 1;
  return cublasStrsmBatched(h, CUBLAS_SIDE_LEFT, fill, op, CUBLAS_DIAG_NON_UNIT, n, nrhs, &one, A, n, B, n, batch);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int nrhs,
                           const std::complex<double>* const* A, std::complex<double>* const* B, int batch) {
  const cuDoubleComplex one{1, 0};
  return cublasZtrsmBatched(h, CUBLAS_SIDE_LEFT, fill, op, CUBLAS_DIAG_NON_UNIT, n, nrhs, &one,
                            reinterpret_cast<const cuDoubleComplex* const*>(A), n,
                            reinterpret_cast<cuDoubleComplex* const*>(B), n, batch);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int nrhs,
                           const std::complex<float>* const* A, std::complex<float>* const* B, int batch) {
  const cuComplex one{1, 0};
  return cublasCtrsmBatched(h, CUBLAS_SIDE_LEFT, fill, op, CUBLAS_DIAG_NON_UNIT, n, nrhs, &one,
                            reinterpret_cast<const cuComplex* const*>(A), n, reinterpret_cast<cuComplex* const*>(B), n,
                            batch);
}

// Random positive definite matrices (Hermitian for complex T) and right-hand sides.
template <class T>
void fill_positive_definite(T* A, int n, long long stride, int batch, std::uint64_t seed) {
  const long long elements = static_cast<long long>(n) * n * batch;
  if constexpr (IsComplex<T>::value)
    make_spd_kernel<typename T::value_type, 2>
        <<<grid_for(elements, 256), 256>>>(reinterpret_cast<typename T::value_type*>(A), n, stride, batch, seed);
  else
    make_spd_kernel<T><<<grid_for(elements, 256), 256>>>(A, n, stride, batch, seed);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
void fill_right_hand_sides(T* B, long long count, std::uint64_t seed) {
  if constexpr (IsComplex<T>::value)
    make_rhs_kernel<<<grid_for(2 * count, 256), 256>>>(reinterpret_cast<typename T::value_type*>(B), 2 * count, seed);
  else
    make_rhs_kernel<T><<<grid_for(count, 256), 256>>>(B, count, seed);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
double largest_difference(const Device<T>& a, const Device<T>& b) {
  std::vector<T> x(a.count()), y(b.count());
  TESSERA_CUDA_CHECK(cudaMemcpy(x.data(), a.get(), a.bytes(), cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaMemcpy(y.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
  double diff = 0, largest = 0;
  for (std::size_t e = 0; e < x.size(); ++e) {
    diff = std::max(diff, std::abs(std::complex<double>(x[e]) - std::complex<double>(y[e])));
    largest = std::max(largest, std::abs(std::complex<double>(x[e])));
  }
  return largest > 0 ? diff / largest : diff;
}

template <class T>
json bench_solves(int n, int batch, int nrhs, tk::BatchUplo uplo, int reps, Timer& timer, Solver& solver) {
  const long long nn = static_cast<long long>(n) * n, nb = static_cast<long long>(n) * nrhs;
  Device<T> A(nn * batch), rhs(nb * batch), x(nb * batch), x_staged(nb * batch), x_lanes(nb * batch);
  Device<int> info(batch);
  fill_positive_definite(A.get(), n, nn, batch, 0x5eed + n);
  fill_right_hand_sides(rhs.get(), nb * batch, 0xb0b + n);
  tk::potrf_batched<T>(uplo, n, A.get(), n, nn, batch, info.get(), nullptr);
  std::vector<const T*> a_ptrs(batch);
  std::vector<T*> x_ptrs(batch);
  for (int k = 0; k < batch; ++k) {
    a_ptrs[k] = A.get() + k * nn;
    x_ptrs[k] = x.get() + k * nb;
  }
  Device<const T*> a_array(batch);
  Device<T*> x_array(batch);
  TESSERA_CUDA_CHECK(cudaMemcpy(a_array.get(), a_ptrs.data(), batch * sizeof(T*), cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(x_array.get(), x_ptrs.data(), batch * sizeof(T*), cudaMemcpyHostToDevice));
  const auto restore = [&](Device<T>& to) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(to.get(), rhs.get(), rhs.bytes(), cudaMemcpyDeviceToDevice));
  };
  const auto solve_with = [&](Device<T>& to, tk::SolveKernel kernel) {
    return [&A, &info, uplo, n, nrhs, nn, nb, batch, out = to.get(), kernel] {
      tk::BatchedSolveOptions opts;
      opts.kernel = kernel;
      tk::potrs_batched<T>(uplo, n, nrhs, A.get(), n, nn, out, n, nb, batch, info.get(), nullptr, opts);
    };
  };
  json r;
  r["precision"] = precision_name<T>();
  r["n"] = n;
  r["batch"] = batch;
  r["nrhs"] = nrhs;
  r["uplo"] = uplo == tk::BatchUplo::lower ? "lower" : "upper";
  r["streamed_ms"] = timer.median_ms(
      reps, [&] { restore(x); }, solve_with(x, tk::SolveKernel::streamed));
  r["staged_ms"] = timer.median_ms(
      reps, [&] { restore(x_staged); }, solve_with(x_staged, tk::SolveKernel::staged));
  r["lanes_ms"] = timer.median_ms(
      reps, [&] { restore(x_lanes); }, solve_with(x_lanes, tk::SolveKernel::lanes));
  r["automatic_ms"] = timer.median_ms(
      reps, [&] { restore(x_staged); }, solve_with(x_staged, tk::SolveKernel::automatic));
  restore(x);
  solve_with(x, tk::SolveKernel::streamed)();
  restore(x_staged);
  solve_with(x_staged, tk::SolveKernel::staged)();
  restore(x_lanes);
  solve_with(x_lanes, tk::SolveKernel::lanes)();
  r["staged_difference"] = largest_difference(x_staged, x);
  r["lanes_difference"] = largest_difference(x_lanes, x);
  const bool lower = uplo == tk::BatchUplo::lower;
  const cublasFillMode_t fill = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  r["cublas_trsm_ms"] = timer.median_ms(
      reps, [&] { restore(x); },
      [&] {
        TESSERA_CUBLAS_CHECK(vendor_trsm(solver.blas, fill, lower ? CUBLAS_OP_N : CUBLAS_OP_C, n, nrhs, a_array.get(),
                                         x_array.get(), batch));
        TESSERA_CUBLAS_CHECK(vendor_trsm(solver.blas, fill, lower ? CUBLAS_OP_C : CUBLAS_OP_N, n, nrhs, a_array.get(),
                                         x_array.get(), batch));
      });
  return r;
}

void print_solves(const json& rows) {
  fmt::print(
      "\nSolves by count (ms; str/stg: the streamed kernel's time over the staged one's; diff: the largest "
      "difference from the streamed kernel's solution, staged / lanes)\n");
  fmt::print("{:>7} {:>5} {:>5} {:>5} {:>5} | {:>8} {:>8} {:>8} {:>8} {:>8} | {:>8} {:>8} {:>8} | {:>8} {:>8}\n",
             "prec", "uplo", "n", "batch", "nrhs", "streamed", "staged", "lanes", "auto", "cuBLAS", "str/stg",
             "cuB/lns", "cuB/auto", "diff stg", "diff lns");
  for (const json& r : rows) {
    const double streamed = r["streamed_ms"], staged = r["staged_ms"], lanes = r["lanes_ms"],
                 automatic = r["automatic_ms"], vendor = r["cublas_trsm_ms"];
    fmt::print(
        "{:>7} {:>5} {:>5} {:>5} {:>5} | {:8.4f} {:8.4f} {:8.4f} {:8.4f} {:8.4f} | {:7.2f}x {:7.2f}x {:7.2f}x | "
        "{:8.1e} {:8.1e}\n",
        r["precision"].get<std::string>(), r["uplo"].get<std::string>(), r["n"].get<int>(), r["batch"].get<int>(),
        r["nrhs"].get<int>(), streamed, staged, lanes, automatic, vendor, streamed / staged, vendor / lanes,
        vendor / automatic, r["staged_difference"].get<double>(), r["lanes_difference"].get<double>());
  }
}

// ---- variable orders ------------------------------------------------------------------------

template <class T>
void bench_variable(json& r, int n, int batch, int reps, Timer& timer) {
  if (n < 8) return;
  const int lo = n / 2, hi = n + n / 2;
  std::mt19937 gen(0x7a7u + static_cast<unsigned>(n));
  std::uniform_int_distribution<int> pick(lo, hi);
  const long long slot = static_cast<long long>(hi) * hi;
  std::vector<int> orders(batch), ldas(batch, hi);
  std::vector<long long> offsets(batch);
  double flops = 0;
  for (int k = 0; k < batch; ++k) {
    orders[k] = pick(gen);
    offsets[k] = k * slot;
    flops += std::pow(static_cast<double>(orders[k]), 3) / 3.0;
  }
  Device<T> orig(slot * batch), work(slot * batch);
  make_spd_kernel<T><<<grid_for(slot * batch, 256), 256>>>(orig.get(), hi, slot, batch, 0xfade + n);
  TESSERA_CUDA_CHECK_LAUNCH();
  Device<int> dn(batch), dlda(batch), info(batch);
  Device<long long> doff(batch);
  TESSERA_CUDA_CHECK(cudaMemcpy(dn.get(), orders.data(), dn.bytes(), cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(dlda.get(), ldas.data(), dlda.bytes(), cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(doff.get(), offsets.data(), doff.bytes(), cudaMemcpyHostToDevice));
  const auto time_variable = [&](bool order_classes) {
    tk::BatchedOptions opts;
    opts.order_classes = order_classes;
    const auto restore = [&] {
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(work.get(), orig.get(), orig.bytes(), cudaMemcpyDeviceToDevice));
    };
    return timer.median_ms(
        reps, restore,
        [&] {
          tk::potrf_vbatched<T>(tk::BatchUplo::lower, dn.get(), hi, work.get(), doff.get(), dlda.get(), batch,
                                info.get(), nullptr, opts);
        });
  };
  r["variable_unclassified_ms"] = time_variable(false);
  const double ms = time_variable(true);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["variable_orders"] = {lo, hi};
  r["variable_ms"] = ms;
  r["variable_gflops"] = gflops(flops, ms);
  r["variable_failed"] = nonzero_info(info, batch);
  r["variable_over_fixed"] = r["variable_gflops"].get<double>() / r["tessera_gflops"].get<double>();
}

// The energy of one call of work() (restore() before each, its energy taken off) into r under
// `name`: joules, watts and GFLOP/s per watt; nothing without a meter.
void measure_energy(json& r, const std::string& name, double flops, EnergyMeter* meter, double seconds,
                    const std::function<void()>& restore, const std::function<void()>& work) {
  if (!meter) return;
  const EnergyMeter::PerCall per =
      meter->per_call(seconds, 3, restore, work, [] { TESSERA_CUDA_CHECK(cudaDeviceSynchronize()); });
  r[name + "_energy_j"] = per.energy.gpu_joules;
  r[name + "_watts"] = per.energy.gpu_joules / per.energy.seconds;
  r[name + "_gflops_per_watt"] = tessera::bench::gflops_per_watt(flops, per.energy.gpu_joules);
}

template <class T>
json bench_size(int n, int batch, int reps, double copy_bw, Timer& timer, Solver& solver, EnergyMeter* meter,
                double energy_seconds, bool blocked_shapes) {
  Problem<T> p(n, batch);
  const double f_flops = static_cast<double>(batch) * n * n * n / 3.0;
  const double s_flops = static_cast<double>(batch) * 2.0 * n * n;
  const double floor_ms = 2.0 * batch * p.nn * sizeof(T) / copy_bw * 1e3;
  json r;
  r["precision"] = precision_name<T>();
  r["n"] = n;
  r["batch"] = batch;
  r["memory_floor_ms"] = floor_ms;

  const auto lower = tk::BatchUplo::lower;
  // Tessera, standard layout.
  const auto factor = [&](const tk::BatchedOptions& o) {
    tk::potrf_batched<T>(lower, n, p.work.get(), n, p.nn, batch, p.info.get(), nullptr, o);
  };
  double ms = timer.median_ms(reps, [&] { p.restore_A(); }, [&] { factor({}); });
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["tessera_ms"] = ms;
  r["tessera_gflops"] = gflops(f_flops, ms);
  r["tessera_failed"] = nonzero_info(p.info, batch);
  r["tessera_backward_error"] = p.factor_error(p.work.get(), false, p.info.get());
  r["tessera_floor_fraction"] = floor_ms / ms;
  measure_energy(r, "tessera", f_flops, meter, energy_seconds, [&] { p.restore_A(); }, [&] { factor({}); });

  tk::BatchedOptions fast;
  fast.fast_math = true;
  ms = timer.median_ms(reps, [&] { p.restore_A(); }, [&] { factor(fast); });
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["fast_ms"] = ms;
  r["fast_gflops"] = gflops(f_flops, ms);
  r["fast_backward_error"] = p.factor_error(p.work.get(), false, p.info.get());

  // Upper storage (same data, read as U = L^T), for the record.
  const auto factor_upper = [&] {
    tk::potrf_batched<T>(tk::BatchUplo::upper, n, p.work.get(), n, p.nn, batch, p.info.get(), nullptr);
  };
  ms = timer.median_ms(reps, [&] { p.restore_A(); }, factor_upper);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["upper_ms"] = ms;
  r["upper_gflops"] = gflops(f_flops, ms);
  r["upper_over_lower"] = ms / r["tessera_ms"].get<double>();
  r["upper_backward_error"] = p.factor_error(p.work.get(), true, p.info.get());
  measure_energy(r, "upper", f_flops, meter, energy_seconds, [&] { p.restore_A(); }, factor_upper);
  if (n > 32) {  // the panel kernels that read upper storage as lower storage is read, for comparison
    tk::BatchedOptions plain;
    plain.upper_rows = false;
    ms = timer.median_ms(reps, [&] { p.restore_A(); }, [&] {
      tk::potrf_batched<T>(tk::BatchUplo::upper, n, p.work.get(), n, p.nn, batch, p.info.get(), nullptr, plain);
    });
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    r["upper_plain_ms"] = ms;
    r["upper_plain_backward_error"] = p.factor_error(p.work.get(), true, p.info.get());
  }

  // In blocks of columns, the blocks' updates by cuBLAS's products (n > 32): the built-in width in
  // both triangles, then each width in the lower one.
  if (n > 32) {
    const auto blocked = [&](tk::BatchUplo uplo, int width, tk::BatchedOptions o = {}) {
      o.blocked_width = width;
      const double t = timer.median_ms(
          reps, [&] { p.restore_A(); },
          [&] {
            tk::potrf_batched_blocked<T>(solver.blas, uplo, n, p.work.get(), n, p.nn, batch, p.info.get(), nullptr, o);
          });
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      return t;
    };
    int sm_count = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
    r["blocked_width"] = tk::potrf_batched_blocked_width(n, batch, sm_count);
    r["blocked_ms"] = blocked(tk::BatchUplo::lower, 0);
    r["blocked_backward_error"] = p.factor_error(p.work.get(), false, p.info.get());
    r["blocked_failed"] = nonzero_info(p.info, batch);
    r["blocked_upper_ms"] = blocked(tk::BatchUplo::upper, 0);
    r["blocked_upper_backward_error"] = p.factor_error(p.work.get(), true, p.info.get());
    tk::BatchedOptions whole_kernel_shapes;  // each block in the whole kernel's shape for its rows
    whole_kernel_shapes.columns_shape_table = false;
    r["blocked_whole_shapes_ms"] = blocked(tk::BatchUplo::lower, 0, whole_kernel_shapes);
    r["blocked_upper_whole_shapes_ms"] = blocked(tk::BatchUplo::upper, 0, whole_kernel_shapes);
    for (int width : {32, 64, 128, 256})
      if (width < n) r["blocked_width_ms"][std::to_string(width)] = blocked(tk::BatchUplo::lower, width);
    if (blocked_shapes)
      for (const tk::BatchedOptions& o : tessera::bench::batched_kernel_shapes(n)) {
        const std::string shape =
            fmt::format("({},{},{},{})", o.panel_width, o.threads, o.rows_per_thread, o.update_width);
        try {
          r["blocked_shape_ms"][shape] = blocked(tk::BatchUplo::lower, 0, o);
        } catch (const tessera::InvalidArgument&) {  // not compiled for this type
        }
      }
  }

  // Interleaved layout (n <= 32).
  if (n <= 32) {
    const long long ni = tk::interleaved_elements(n, batch);
    Device<T> iorig(ni), iwork(ni);
    tk::interleave_batched<T>(n, p.orig.get(), n, p.nn, batch, iorig.get(), nullptr);
    ms = timer.median_ms(
        reps,
        [&] { TESSERA_CUDA_CHECK(cudaMemcpyAsync(iwork.get(), iorig.get(), iorig.bytes(), cudaMemcpyDeviceToDevice)); },
        [&] { tk::potrf_batched_interleaved<T>(lower, n, iwork.get(), batch, p.info.get(), nullptr); });
    tk::deinterleave_batched<T>(n, iwork.get(), batch, p.work.get(), n, p.nn, nullptr);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    r["interleaved_ms"] = ms;
    r["interleaved_gflops"] = gflops(f_flops, ms);
    r["interleaved_floor_fraction"] = floor_ms / ms;
    r["interleaved_backward_error"] = p.factor_error(p.work.get(), false, p.info.get());
  }

  // cuSOLVER on the same data (array of pointers).
  Device<T*> aptr(batch), bptr(batch);
  Device<int> vinfo(1);
  pointer_array_kernel<T><<<(batch + 255) / 256, 256>>>(p.work.get(), p.nn, batch, aptr.get());
  pointer_array_kernel<T><<<(batch + 255) / 256, 256>>>(p.x.get(), n, batch, bptr.get());
  TESSERA_CUDA_CHECK_LAUNCH();
  const auto vendor_factor = [&] {
    TESSERA_CUSOLVER_CHECK(vendor_potrf(solver.handle, n, aptr.get(), n, p.info.get(), batch));
  };
  const auto vendor_solve = [&] {
    TESSERA_CUSOLVER_CHECK(vendor_potrs(solver.handle, n, aptr.get(), n, bptr.get(), n, vinfo.get(), batch));
  };
  ms = timer.median_ms(reps, [&] { p.restore_A(); }, vendor_factor);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["cusolver_ms"] = ms;
  r["cusolver_gflops"] = gflops(f_flops, ms);
  r["cusolver_backward_error"] = p.factor_error(p.work.get(), false, p.info.get());
  r["speedup_vs_cusolver"] = ms / r["tessera_ms"].get<double>();
  measure_energy(r, "cusolver", f_flops, meter, energy_seconds, [&] { p.restore_A(); }, vendor_factor);
  if (meter)
    r["energy_efficiency_vs_cusolver"] =
        r["tessera_gflops_per_watt"].get<double>() / r["cusolver_gflops_per_watt"].get<double>();

  // Solves (nrhs = 1) with each library's own factor.
  p.restore_A();
  vendor_factor();
  ms = timer.median_ms(reps, [&] { p.restore_B(); }, vendor_solve);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["cusolver_solve_ms"] = ms;
  r["cusolver_solve_gflops"] = gflops(s_flops, ms);
  r["cusolver_solve_error"] = p.solve_error();

  p.restore_A();
  factor({});
  ms = timer.median_ms(reps, [&] { p.restore_B(); }, [&] {
    tk::potrs_batched<T>(lower, n, 1, p.work.get(), n, p.nn, p.x.get(), n, n, batch, p.info.get(), nullptr);
  });
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["tessera_solve_ms"] = ms;
  r["tessera_solve_gflops"] = gflops(s_flops, ms);
  r["tessera_solve_error"] = p.solve_error();
  r["solve_speedup_vs_cusolver"] = r["cusolver_solve_ms"].get<double>() / ms;

  // Factor + solve.
  ms = timer.median_ms(reps, [&] { p.restore_A(); p.restore_B(); }, [&] { vendor_factor(); vendor_solve(); });
  r["cusolver_factor_solve_ms"] = ms;
  ms = timer.median_ms(reps, [&] { p.restore_A(); p.restore_B(); }, [&] {
    factor({});
    tk::potrs_batched<T>(lower, n, 1, p.work.get(), n, p.nn, p.x.get(), n, n, batch, p.info.get(), nullptr);
  });
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  r["tessera_factor_solve_ms"] = ms;
  r["factor_solve_gflops"] = gflops(f_flops + s_flops, ms);
  r["factor_solve_speedup_vs_cusolver"] = r["cusolver_factor_solve_ms"].get<double>() / ms;
  r["tessera_factor_solve_error"] = p.solve_error();
  bench_variable<T>(r, n, batch, reps, timer);
  return r;
}

// ---- tuning sweep ---------------------------------------------------------------------------

template <class T>
json tune_size(int n, int batch, int reps, Timer& timer) {
  Problem<T> p(n, batch);
  const double f_flops = static_cast<double>(batch) * n * n * n / 3.0;
  json rows = json::array();
  const std::vector<tk::BatchedOptions> candidates = tessera::bench::batched_kernel_shapes(n);
  double best = 1e30;
  json best_row;
  for (const tk::BatchedOptions& o : candidates) {
    const double ms = timer.median_ms(reps, [&] { p.restore_A(); }, [&] {
      tk::potrf_batched<T>(tk::BatchUplo::lower, n, p.work.get(), n, p.nn, batch, p.info.get(), nullptr, o);
    });
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const double errv = p.factor_error(p.work.get(), false, p.info.get());
    json row = {{"precision", precision_name<T>()}, {"n", n}, {"batch", batch},
                {"panel_width", o.panel_width}, {"threads", o.threads},
                {"rows_per_thread", o.rows_per_thread}, {"update_width", o.update_width},
                {"ms", ms},
                {"gflops", gflops(f_flops, ms)}, {"backward_error", errv}};
    if (ms < best) {
      best = ms;
      best_row = row;
    }
    rows.push_back(row);
  }
  int device = 0, sms = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const tk::PanelShape def = tk::potrf_batched_default_shape(n, static_cast<int>(sizeof(T)), false, batch, sms);
  fmt::print("tune {:6s} n={:4d}  best: nb={:2d} threads={:3d} rows={:d} kb={:2d}  {:8.3f} ms {:8.1f} GF/s"
             "   (built-in nb={} threads={} rows={} kb={})\n",
             precision_name<T>(), n, best_row["panel_width"].get<int>(),
             best_row["threads"].get<int>(), best_row["rows_per_thread"].get<int>(),
             best_row["update_width"].get<int>(), best, best_row["gflops"].get<double>(),
             n > 32 ? def.panel_width : 0, n > 32 ? def.threads : 128,
             n > 32 ? def.rows_per_thread : 0, n > 32 ? def.update_width : 0);
  return rows;
}

void print_tables(const json& results, double copy_bw) {
  fmt::print("\nD2D copy bandwidth: {:.0f} GB/s (read + write)\n", copy_bw / 1e9);
  fmt::print("\nFactorization (lower, GFLOP/s with n^3/3; floor%% = memory floor / time, n <= 64)\n");
  fmt::print("{:6s} {:>4s} {:>6s} | {:>8s} {:>8s} {:>6s} | {:>8s} {:>8s} {:>6s} | {:>8s} {:>8s} | {:>6s} | {:>8s} {:>8s} | {:>8s} {:>8s} {:>8s}\n",
             "prec", "n", "batch", "ours ms", "GF/s", "floor%", "intl ms", "GF/s", "floor%",
             "cuS ms", "GF/s", "speed", "fast ms", "fast err", "err", "cuS err", "upper ms");
  for (const json& r : results) {
    const bool small = r["n"].get<int>() <= 64;
    const bool inter = r.contains("interleaved_ms");
    fmt::print("{:6s} {:4d} {:6d} | {:8.4f} {:8.1f} {:>6s} | {:>8s} {:>8s} {:>6s} | {:8.4f} {:8.1f} | {:5.2f}x | {:8.4f} {:8.1e} | {:8.1e} {:8.1e} {:8.4f}\n",
               r["precision"].get<std::string>(), r["n"].get<int>(), r["batch"].get<int>(),
               r["tessera_ms"].get<double>(), r["tessera_gflops"].get<double>(),
               small ? fmt::format("{:.0f}%", 100 * r["tessera_floor_fraction"].get<double>()) : "-",
               inter ? fmt::format("{:.4f}", r["interleaved_ms"].get<double>()) : "-",
               inter ? fmt::format("{:.1f}", r["interleaved_gflops"].get<double>()) : "-",
               inter ? fmt::format("{:.0f}%", 100 * r["interleaved_floor_fraction"].get<double>()) : "-",
               r["cusolver_ms"].get<double>(), r["cusolver_gflops"].get<double>(),
               r["speedup_vs_cusolver"].get<double>(), r["fast_ms"].get<double>(),
               r["fast_backward_error"].get<double>(), r["tessera_backward_error"].get<double>(),
               r["cusolver_backward_error"].get<double>(), r["upper_ms"].get<double>());
  }
  fmt::print(
      "\nIn blocks of columns (potrf_batched_blocked, n > 32): ms, and the speed against the panel kernel alone "
      "and cuSOLVER's batched potrf; then the lower triangle at each block width\n");
  fmt::print("{:6s} {:>4s} {:>6s} {:>5s} | {:>8s} {:>6s} {:>6s} {:>8s} | {:>8s} {:>6s} {:>8s} | {}\n", "prec", "n",
             "batch", "width", "lower ms", "/panel", "/cuS", "err", "upper ms", "/panel", "err", "width: ms");
  for (const json& r : results) {
    if (!r.contains("blocked_ms")) continue;
    std::string widths;
    for (const auto& [w, t] : r["blocked_width_ms"].items()) widths += fmt::format("{}: {:.4f}  ", w, t.get<double>());
    const double lower = r["blocked_ms"].get<double>(), upper = r["blocked_upper_ms"].get<double>();
    fmt::print("{:6s} {:4d} {:6d} {:5d} | {:8.4f} {:5.2f}x {:5.2f}x {:8.1e} | {:8.4f} {:5.2f}x {:8.1e} | {}{}\n",
               r["precision"].get<std::string>(), r["n"].get<int>(), r["batch"].get<int>(),
               r["blocked_width"].get<int>(), lower, r["tessera_ms"].get<double>() / lower,
               r["cusolver_ms"].get<double>() / lower, r["blocked_backward_error"].get<double>(), upper,
               r["upper_ms"].get<double>() / upper, r["blocked_upper_backward_error"].get<double>(), widths,
               r["blocked_failed"].get<int>() ? " (failures!)" : "");
    const double whole = r["blocked_whole_shapes_ms"].get<double>(),
                 whole_upper = r["blocked_upper_whole_shapes_ms"].get<double>();
    fmt::print("{:6s} {:4d} every block in the whole kernel's shape: lower {:.4f} ms ({:.2f}x the table's time), "
               "upper {:.4f} ms ({:.2f}x); upper over lower {:.2f}x with the table, {:.2f}x without\n",
               r["precision"].get<std::string>(), r["n"].get<int>(), whole, whole / lower, whole_upper,
               whole_upper / upper, upper / lower, whole_upper / whole);
    if (r.contains("blocked_shape_ms")) {
      std::string shapes;
      for (const auto& [shape, t] : r["blocked_shape_ms"].items()) shapes += fmt::format("  {}: {:.4f}", shape, t.get<double>());
      fmt::print("{:6s} {:4d} lower ms with each panel shape (nb,threads,rows,kb):{}\n", r["precision"].get<std::string>(),
                 r["n"].get<int>(), shapes);
    }
  }
  fmt::print("\nSolve (nrhs = 1, GFLOP/s with 2 n^2) and factor + solve\n");
  fmt::print("{:6s} {:>4s} | {:>9s} {:>8s} {:>9s} {:>8s} {:>6s} {:>8s} {:>8s} | {:>9s} {:>9s} {:>6s}\n",
             "prec", "n", "ours ms", "GF/s", "cuS ms", "GF/s", "speed", "err", "cuS err",
             "ours f+s", "cuS f+s", "speed");
  for (const json& r : results)
    fmt::print("{:6s} {:4d} | {:9.4f} {:8.1f} {:9.4f} {:8.1f} {:5.2f}x {:8.1e} {:8.1e} | {:9.4f} {:9.4f} {:5.2f}x\n",
               r["precision"].get<std::string>(), r["n"].get<int>(),
               r["tessera_solve_ms"].get<double>(), r["tessera_solve_gflops"].get<double>(),
               r["cusolver_solve_ms"].get<double>(), r["cusolver_solve_gflops"].get<double>(),
               r["solve_speedup_vs_cusolver"].get<double>(), r["tessera_solve_error"].get<double>(),
               r["cusolver_solve_error"].get<double>(), r["tessera_factor_solve_ms"].get<double>(),
               r["cusolver_factor_solve_ms"].get<double>(),
               r["factor_solve_speedup_vs_cusolver"].get<double>());
  fmt::print("\nVariable orders (n/2 to 3n/2, lda = 3n/2, potrf_vbatched, lower): GFLOP/s against the fixed batch of order n\n");
  fmt::print("(one class: every matrix in one launch of the register kernel, in groups of 8, 16 or 32 threads as the "
             "largest order needs)\n");
  fmt::print("{:6s} {:>4s} {:>6s} | {:>9s} {:>8s} {:>8s} {:>6s} | {:>12s}\n", "prec", "n", "batch", "var ms", "GF/s",
             "fixed", "ratio", "one class ms");
  for (const json& r : results)
    if (r.contains("variable_ms"))
      fmt::print("{:6s} {:4d} {:6d} | {:9.4f} {:8.1f} {:8.1f} {:5.2f}x | {:12.4f}{}\n",
                 r["precision"].get<std::string>(), r["n"].get<int>(), r["batch"].get<int>(),
                 r["variable_ms"].get<double>(), r["variable_gflops"].get<double>(), r["tessera_gflops"].get<double>(),
                 r["variable_over_fixed"].get<double>(), r["variable_unclassified_ms"].get<double>(),
                 r["variable_failed"].get<int>() ? " (failures!)" : "");
  if (results.empty() || !results[0].contains("tessera_energy_j")) return;
  fmt::print("\nEnergy of the GPU per batched factorization (mJ), mean power (W), GFLOP/s per watt; upper/lower: time\n");
  fmt::print("{:6s} {:>4s} {:>6s} | {:>9s} {:>6s} {:>8s} | {:>9s} {:>6s} {:>8s} | {:>9s} {:>6s} {:>8s} | {:>6s} | {:>7s} {:>8s}\n", "prec",
             "n", "batch", "ours mJ", "W", "GF/s/W", "upper mJ", "W", "GF/s/W", "cuS mJ", "W", "GF/s/W", "eff", "up/low",
             "plain/lo");
  for (const json& r : results)
    fmt::print("{:6s} {:4d} {:6d} | {:9.3f} {:6.0f} {:8.2f} | {:9.3f} {:6.0f} {:8.2f} | {:9.3f} {:6.0f} {:8.2f} | {:5.2f}x | {:6.2f}x {:>8s}\n",
               r["precision"].get<std::string>(), r["n"].get<int>(), r["batch"].get<int>(),
               1e3 * r["tessera_energy_j"].get<double>(), r["tessera_watts"].get<double>(),
               r["tessera_gflops_per_watt"].get<double>(), 1e3 * r["upper_energy_j"].get<double>(),
               r["upper_watts"].get<double>(), r["upper_gflops_per_watt"].get<double>(),
               1e3 * r["cusolver_energy_j"].get<double>(), r["cusolver_watts"].get<double>(),
               r["cusolver_gflops_per_watt"].get<double>(), r["energy_efficiency_vs_cusolver"].get<double>(),
               r["upper_over_lower"].get<double>(),
               r.contains("upper_plain_ms")
                   ? fmt::format("{:.2f}x", r["upper_plain_ms"].get<double>() / r["tessera_ms"].get<double>())
                   : "-");
  fmt::print("(eff: Tessera's GFLOP/s per watt against cuSOLVER's, the GPU's counter only; up/low: the upper triangle's "
             "time over the lower's; plain/lo: the same with the panel kernels that read upper storage as lower "
             "storage is read)\n");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options opt = parse_options(argc, argv);
    if (!tessera::bench::cuda_device_present()) {
      fmt::print(stderr, "bench_batched_kernels: no CUDA device\n");
      return 2;
    }
    cudaDeviceProp prop{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    Timer timer;
    Solver solver;
    const double copy_bw = measure_copy_bandwidth(timer);
    fmt::print("device: {} ({} SMs, L2 {} MiB), copy bandwidth {:.0f} GB/s\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20, copy_bw / 1e9);
    std::unique_ptr<EnergyMeter> meter;
    if (opt.energy_seconds > 0) {
      meter = std::make_unique<EnergyMeter>(std::vector<std::string>{tessera::bench::pci_bus_id(0)});
      meter->measure_idle(1.0);
      fmt::print("{}; idle GPU {:.0f} W\n", meter->description(), meter->idle_gpu_watts());
      if (!meter->gpu_available()) meter.reset();
    }

    json out;
    out["device"] = prop.name;
    if (meter) out["idle_gpu_watts"] = meter->idle_gpu_watts();
    out["copy_bandwidth_gbs"] = copy_bw / 1e9;
    json results = json::array(), tuning = json::array();
    const auto batch_for = [&](int n) { return n >= 256 ? opt.big_batch : opt.batch; };
    const auto run_precision = [&](auto tag) {
      using T = decltype(tag);
      if (opt.tune) {
        for (int n : {5, 8, 16, 24, 32, 33, 48, 64, 80, 100, 128, 160, 200, 256, 384, 512}) {
          const json rows = tune_size<T>(n, batch_for(n), std::max(3, opt.reps / 3), timer);
          for (const json& row : rows) tuning.push_back(row);
        }
      }
      if (opt.main_run)
        for (int n : opt.sizes) {
          results.push_back(bench_size<T>(n, batch_for(n), opt.reps, copy_bw, timer, solver, meter.get(),
                                          opt.energy_seconds, opt.blocked_shapes));
          fmt::print("done {} n={}\n", precision_name<T>(), n);
        }
    };
    json solves = json::array();
    const auto run_solves = [&](auto tag) {
      using T = decltype(tag);
      for (int n : opt.sizes) {
        for (int batch : opt.solve_counts)
          for (int nrhs : opt.solve_nrhs)
            for (tk::BatchUplo uplo : {tk::BatchUplo::lower, tk::BatchUplo::upper})
              solves.push_back(bench_solves<T>(n, batch, nrhs, uplo, opt.reps, timer, solver));
        fmt::print("done solves {} n={}\n", precision_name<T>(), n);
      }
    };
    if (opt.do_double) run_precision(double{});
    if (opt.do_float) run_precision(float{});
    if (opt.solves && opt.real_solves && opt.do_double) run_solves(double{});
    if (opt.solves && opt.real_solves && opt.do_float) run_solves(float{});
    if (opt.solves && opt.complex_solves && opt.do_double) run_solves(std::complex<double>{});
    if (opt.solves && opt.complex_solves && opt.do_float) run_solves(std::complex<float>{});
    out["results"] = results;
    out["solves"] = solves;
    out["tuning"] = tuning;
    if (!opt.json_path.empty()) {
      std::ofstream f(opt.json_path);
      f << out.dump(2) << "\n";
    }
    if (opt.main_run) print_tables(results, copy_bw);
    if (opt.solves) print_solves(solves);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_batched_kernels: {}\n", e.what());
    return 1;
  }
}
