// Batched Cholesky of complex Hermitian matrices: Tessera's batched kernels (lower and upper
// storage) against cuSOLVER's cusolverDn{Z,C}potrfBatched (lower; it takes arrays of pointers), and
// the solves (one right-hand side, as cuSOLVER's potrsBatched takes) against cusolverDn{Z,C}potrsBatched,
// on the same matrices in GPU memory, in one run. Each time is the median of --reps calls, each
// on freshly copied matrices with the L2 cache flushed first; rates count 4 n^3 / 3 flops per
// factorization (8 n^2 per solve). Every factor is checked: info 0 for all, and max|A - L L^H| /
// max|A| on the first matrices (in double on the host) below 100 n eps.
//
//   bench_batched_complex [--sizes 8,16,...] [--batch N] [--reps R] [--precision z|c|both] [--json out.json]
//                         [--tune] [--widths 16,32,64] [--blocked-shapes]
// --tune times, for each size, every register-kernel block size (n <= 32) or every panel shape
// compiled for complex matrices (n > 32) in lower storage, and prints the fastest. From n = 33 the
// factorization in blocks of columns (potrf_batched_blocked: cuBLAS's batched products update each
// block, the panel kernel factors it) is timed too, both triangles ("B lower", "B upper"), with
// its rate over cuSOLVER's, and again with each block in the whole kernel's shape for its rows
// (BatchedOptions::columns_shape_table off; a line after the order's row); --widths times the lower
// triangle in blocks of each width given too (one line per order), and --blocked-shapes the lower triangle in blocks with
// every block's panel kernel in each shape compiled for complex matrices.
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#include "device_support.hpp"

namespace tk = tessera::kernels::cuda;
using tessera::bench::Device;
using tessera::bench::Timer;

namespace {

struct Options {
  std::vector<int> sizes = {8, 16, 32, 64, 128, 256, 512};
  int batch = 10000;
  int reps = 10;
  std::vector<char> precisions = {'z', 'c'};
  std::string json_path;
  bool tune = false;
  std::vector<int> widths;  // potrf_batched_blocked's block widths to time besides the built-in one
  bool blocked_shapes = false;
};

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = text.find(',', start);
    out.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") o.sizes = parse_sizes(value());
    else if (a == "--batch") o.batch = std::stoi(value());
    else if (a == "--reps") o.reps = std::stoi(value());
    else if (a == "--json") o.json_path = value();
    else if (a == "--tune") o.tune = true;
    else if (a == "--widths") o.widths = parse_sizes(value());
    else if (a == "--blocked-shapes") o.blocked_shapes = true;
    else if (a == "--precision") {
      const std::string p = value();
      o.precisions = p == "both" ? std::vector<char>{'z', 'c'} : std::vector<char>{p.at(0)};
    } else {
      throw std::runtime_error("unknown argument " + a);
    }
  }
  return o;
}

// cuSOLVER's batched calls per type.
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, std::complex<double>** A, int lda, int* info, int batch) {
  return cusolverDnZpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex**>(A), lda, info, batch);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, std::complex<float>** A, int lda, int* info, int batch) {
  return cusolverDnCpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex**>(A), lda, info, batch);
}
cusolverStatus_t vendor_potrs(cusolverDnHandle_t h, int n, std::complex<double>** A, int lda, std::complex<double>** B,
                              int ldb, int* info, int batch) {
  return cusolverDnZpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, reinterpret_cast<cuDoubleComplex**>(A), lda,
                                 reinterpret_cast<cuDoubleComplex**>(B), ldb, info, batch);
}
cusolverStatus_t vendor_potrs(cusolverDnHandle_t h, int n, std::complex<float>** A, int lda, std::complex<float>** B,
                              int ldb, int* info, int batch) {
  return cusolverDnCpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, reinterpret_cast<cuComplex**>(A), lda,
                                 reinterpret_cast<cuComplex**>(B), ldb, info, batch);
}

// Hermitian, diagonally dominant matrices (both triangles), made on the host for one matrix and
// varied per matrix by a cheap rotation of the values.
template <class T>
std::vector<T> make_batch(int n, int batch, unsigned seed) {
  using R = typename T::value_type;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  const long long nn = static_cast<long long>(n) * n;
  std::vector<T> pool(static_cast<std::size_t>(nn) * 4);
  for (int m = 0; m < 4; ++m)
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        const std::complex<double> v = i == j ? std::complex<double>(n + 1.5 + 0.5 * dist(gen), 0)
                                              : std::complex<double>(dist(gen), dist(gen));
        pool[m * nn + i + static_cast<long long>(j) * n] = T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
        pool[m * nn + j + static_cast<long long>(i) * n] = T(static_cast<R>(v.real()), static_cast<R>(-v.imag()));
      }
  std::vector<T> all(static_cast<std::size_t>(nn) * batch);
  for (int k = 0; k < batch; ++k) std::copy(pool.begin() + (k % 4) * nn, pool.begin() + (k % 4 + 1) * nn, all.begin() + k * nn);
  return all;
}

// max|A - L L^H| / max|A| over the first `count` matrices, L in the triangle `upper` of F (U = L^H).
template <class T>
double factor_error(const std::vector<T>& A, const std::vector<T>& F, int n, int count, bool upper) {
  const long long nn = static_cast<long long>(n) * n;
  double worst = 0;
  for (int k = 0; k < count; ++k) {
    const auto L = [&](int i, int c) {
      const T v = upper ? std::conj(F[k * nn + c + static_cast<long long>(i) * n]) : F[k * nn + i + static_cast<long long>(c) * n];
      return std::complex<double>(v.real(), v.imag());
    };
    double amax = 0, err = 0;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        std::complex<double> s = 0;
        for (int c = 0; c <= j; ++c) s += L(i, c) * std::conj(L(j, c));
        const T a = A[k * nn + i + static_cast<long long>(j) * n];
        const std::complex<double> aij(a.real(), a.imag());
        err = std::max(err, std::abs(s - aij));
        amax = std::max(amax, std::abs(aij));
      }
    worst = std::max(worst, err / amax);
  }
  return worst;
}

int failures(const Device<int>& info, int batch) {
  std::vector<int> h(batch);
  TESSERA_CUDA_CHECK(cudaMemcpy(h.data(), info.get(), sizeof(int) * batch, cudaMemcpyDeviceToHost));
  return static_cast<int>(std::count_if(h.begin(), h.end(), [](int v) { return v != 0; }));
}

__global__ void pointers_kernel(void* base, long long stride_bytes, int batch, void** out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < batch) out[k] = static_cast<char*>(base) + k * stride_bytes;
}

template <class T>
nlohmann::json run_size(int n, int batch, int reps, Timer& timer, cusolverDnHandle_t solver, cublasHandle_t blas,
                        const std::vector<int>& widths, bool blocked_shapes, char letter) {
  using R = typename T::value_type;
  const long long nn = static_cast<long long>(n) * n;
  const std::vector<T> host = make_batch<T>(n, batch, 1234 + n);
  Device<T> original(host.size()), work(host.size()), rhs0(static_cast<std::size_t>(n) * batch),
      rhs(static_cast<std::size_t>(n) * batch);
  Device<int> info(batch);
  Device<T*> pointers(batch), rhs_pointers(batch);
  TESSERA_CUDA_CHECK(cudaMemcpy(original.get(), host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  {
    std::vector<T> b(static_cast<std::size_t>(n) * batch);
    std::mt19937 gen(7);
    std::uniform_real_distribution<R> dist(-1, 1);
    for (T& x : b) x = T(dist(gen), dist(gen));
    TESSERA_CUDA_CHECK(cudaMemcpy(rhs0.get(), b.data(), sizeof(T) * b.size(), cudaMemcpyHostToDevice));
  }
  pointers_kernel<<<(batch + 255) / 256, 256>>>(work.get(), sizeof(T) * nn, batch, reinterpret_cast<void**>(pointers.get()));
  pointers_kernel<<<(batch + 255) / 256, 256>>>(rhs.get(), sizeof(T) * n, batch,
                                                reinterpret_cast<void**>(rhs_pointers.get()));
  TESSERA_CUDA_CHECK_LAUNCH();
  const auto restore = [&] {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(work.get(), original.get(), original.bytes(), cudaMemcpyDeviceToDevice));
  };
  const auto restore_rhs = [&] {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(rhs.get(), rhs0.get(), rhs0.bytes(), cudaMemcpyDeviceToDevice));
  };
  const auto check = [&](bool upper) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> f(host.size());
    TESSERA_CUDA_CHECK(cudaMemcpy(f.data(), work.get(), sizeof(T) * f.size(), cudaMemcpyDeviceToHost));
    const int count = std::min(batch, n <= 64 ? 8 : 2);
    return std::make_pair(failures(info, batch), factor_error(host, f, n, count, upper));
  };
  const double flops = 4.0 * n * n * n / 3.0 * batch, solve_flops = 8.0 * n * n * batch;
  nlohmann::json row = {{"precision", std::string(1, letter)}, {"n", n}, {"batch", batch}};
  const double tolerance = 100.0 * n * std::numeric_limits<R>::epsilon();

  for (bool upper : {false, true}) {
    const tk::BatchUplo uplo = upper ? tk::BatchUplo::upper : tk::BatchUplo::lower;
    const double ms = timer.median_ms(reps, restore, [&] {
      tk::potrf_batched<T>(uplo, n, work.get(), n, nn, batch, info.get(), nullptr);
    });
    const auto [failed, error] = check(upper);
    row[upper ? "tessera_upper" : "tessera_lower"] = {
        {"ms", ms}, {"tflops", flops / ms * 1e-9}, {"failed", failed}, {"error", error}, {"ok", failed == 0 && error < tolerance}};
  }
  if (n > 32)
    for (bool upper : {false, true}) {
      const tk::BatchUplo uplo = upper ? tk::BatchUplo::upper : tk::BatchUplo::lower;
      const double ms = timer.median_ms(reps, restore, [&] {
        tk::potrf_batched_blocked<T>(blas, uplo, n, work.get(), n, nn, batch, info.get(), nullptr);
      });
      const auto [failed, error] = check(upper);
      row[upper ? "blocked_upper" : "blocked_lower"] = {{"ms", ms},
                                                        {"tflops", flops / ms * 1e-9},
                                                        {"failed", failed},
                                                        {"error", error},
                                                        {"ok", failed == 0 && error < tolerance}};
    }
  const double solve_ms = timer.median_ms(reps, restore_rhs, [&] {
    tk::potrs_batched<T>(tk::BatchUplo::lower, n, 1, work.get(), n, nn, rhs.get(), n, n, batch, nullptr, nullptr);
  });
  // cuSOLVER: the same factorization from the same matrices.
  const double vendor_ms = timer.median_ms(reps, restore, [&] {
    TESSERA_CUSOLVER_CHECK(vendor_potrf(solver, n, pointers.get(), n, info.get(), batch));
  });
  const auto [vendor_failed, vendor_error] = check(false);
  const double vendor_solve_ms = timer.median_ms(reps, restore_rhs, [&] {
    TESSERA_CUSOLVER_CHECK(vendor_potrs(solver, n, pointers.get(), n, rhs_pointers.get(), n, info.get(), batch));
  });
  row["cusolver"] = {{"ms", vendor_ms}, {"tflops", flops / vendor_ms * 1e-9}, {"failed", vendor_failed},
                     {"error", vendor_error}, {"ok", vendor_failed == 0 && vendor_error < tolerance}};
  row["solve"] = {{"tessera_ms", solve_ms}, {"cusolver_ms", vendor_solve_ms},
                  {"tessera_gflops", solve_flops / solve_ms * 1e-6}, {"cusolver_gflops", solve_flops / vendor_solve_ms * 1e-6}};
  const double lower_ratio = vendor_ms / row["tessera_lower"]["ms"].get<double>();
  const double upper_ratio = vendor_ms / row["tessera_upper"]["ms"].get<double>();
  row["ratio_lower"] = lower_ratio;
  row["ratio_upper"] = upper_ratio;
  std::string blocked = " |";
  for (const char* key : {"blocked_lower", "blocked_upper"})
    blocked += row.contains(key) ? fmt::format(" {:>9.3f}{}", row[key]["tflops"].get<double>(), row[key]["ok"].get<bool>() ? ' ' : '*')
                                 : fmt::format(" {:>10}", "-");
  for (const char* key : {"blocked_lower", "blocked_upper"})
    blocked += row.contains(key) ? fmt::format(" {:>7.2f}", vendor_ms / row[key]["ms"].get<double>()) : fmt::format(" {:>7}", "-");
  std::string whole_shapes;  // each block in the whole kernel's shape for its rows, for comparison
  if (n > 32) {
    tk::BatchedOptions o;
    o.columns_shape_table = false;
    for (bool upper : {false, true}) {
      const double ms = timer.median_ms(reps, restore, [&] {
        tk::potrf_batched_blocked<T>(blas, upper ? tk::BatchUplo::upper : tk::BatchUplo::lower, n, work.get(), n, nn,
                                     batch, info.get(), nullptr, o);
      });
      const auto [failed, error] = check(upper);
      const char* key = upper ? "blocked_upper" : "blocked_lower";
      row[key]["whole_shapes_ms"] = ms;
      whole_shapes += fmt::format("  {} {:.3f} TFLOP/s ({:.2f}x cuSOLVER; the table {:.3f}x faster){}", upper ? "upper" : "lower",
                                  flops / ms * 1e-9, vendor_ms / ms, ms / row[key]["ms"].get<double>(),
                                  failed == 0 && error < tolerance ? "" : "*");
    }
    whole_shapes = fmt::format("\n{:>2} {:>5} blocks in the whole kernel's shapes:{}", letter, n, whole_shapes);
  }
  std::string by_width;
  for (int width : widths) {
    if (n <= 32 || width >= n) continue;
    tk::BatchedOptions o;
    o.blocked_width = width;
    const double ms = timer.median_ms(reps, restore, [&] {
      tk::potrf_batched_blocked<T>(blas, tk::BatchUplo::lower, n, work.get(), n, nn, batch, info.get(), nullptr, o);
    });
    const auto [failed, error] = check(false);
    row["blocked_width_tflops"][std::to_string(width)] = flops / ms * 1e-9;
    by_width += fmt::format("  {}: {:.3f}{}", width, flops / ms * 1e-9, failed == 0 && error < tolerance ? "" : "*");
  }
  std::string by_shape;
  if (blocked_shapes && n > 32)
    for (tk::BatchedOptions o : tessera::bench::batched_kernel_shapes(n)) {
      const std::string shape = fmt::format("({},{},{},{})", o.panel_width, o.threads, o.rows_per_thread, o.update_width);
      double ms = 0;
      try {
        ms = timer.median_ms(reps, restore, [&] {
          tk::potrf_batched_blocked<T>(blas, tk::BatchUplo::lower, n, work.get(), n, nn, batch, info.get(), nullptr, o);
        });
      } catch (const tessera::InvalidArgument&) {  // not compiled for complex matrices
        continue;
      }
      const auto [failed, error] = check(false);
      row["blocked_shape_tflops"][shape] = flops / ms * 1e-9;
      by_shape += fmt::format("  {}: {:.3f}{}", shape, flops / ms * 1e-9, failed == 0 && error < tolerance ? "" : "*");
    }
  if (!by_shape.empty()) by_shape = fmt::format("\n{:>2} {:>5} blocks with each panel shape (lower, TFLOP/s):{}", letter, n, by_shape);
  if (!by_width.empty()) {
    int sm_count = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
    by_width = fmt::format("\n{:>2} {:>5} blocks of (lower, TFLOP/s; built-in {}):{}", letter, n,
                           tk::potrf_batched_blocked_width(n, batch, sm_count), by_width);
  }
  fmt::print("{:>2} {:>5} {:>7} | {:>9.3f}{} {:>9.3f}{} {:>9.3f}{} | {:>7.2f} {:>7.2f} | {:>9.1f} {:>9.1f} {:>7.2f}{}{}\n", letter, n,
             batch, row["tessera_lower"]["tflops"].get<double>(), row["tessera_lower"]["ok"].get<bool>() ? ' ' : '*',
             row["tessera_upper"]["tflops"].get<double>(), row["tessera_upper"]["ok"].get<bool>() ? ' ' : '*',
             flops / vendor_ms * 1e-9, row["cusolver"]["ok"].get<bool>() ? ' ' : '*', lower_ratio, upper_ratio,
             solve_flops / solve_ms * 1e-6, solve_flops / vendor_solve_ms * 1e-6, vendor_solve_ms / solve_ms, blocked,
             whole_shapes + by_width + by_shape);
  std::fflush(stdout);
  return row;
}

// Every kernel shape for order n (lower storage): one line per shape, the fastest marked.
template <class T>
void tune_size(int n, int batch, int reps, Timer& timer, char letter) {
  const long long nn = static_cast<long long>(n) * n;
  const std::vector<T> host = make_batch<T>(n, batch, 99 + n);
  Device<T> original(host.size()), work(host.size());
  Device<int> info(batch);
  TESSERA_CUDA_CHECK(cudaMemcpy(original.get(), host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  const auto restore = [&] {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(work.get(), original.get(), original.bytes(), cudaMemcpyDeviceToDevice));
  };
  const std::vector<tk::BatchedOptions> candidates = tessera::bench::batched_kernel_shapes(n);
  const double flops = 4.0 * n * n * n / 3.0 * batch;
  double best = 0;
  std::string best_name;
  for (const tk::BatchedOptions& o : candidates) {
    const std::string name = n <= 32 ? fmt::format("threads {}", o.threads)
                                     : fmt::format("({}, {}, {}, {})", o.panel_width, o.threads, o.rows_per_thread,
                                                   o.update_width);
    double ms = 0;
    try {
      ms = timer.median_ms(reps, restore, [&] {
        tk::potrf_batched<T>(tk::BatchUplo::lower, n, work.get(), n, nn, batch, info.get(), nullptr, o);
      });
    } catch (const tessera::InvalidArgument&) {
      fmt::print("tune {} n={:>4} {:<20} not compiled for complex matrices\n", letter, n, name);
      continue;
    }
    const bool ok = failures(info, batch) == 0;
    const double tflops = flops / ms * 1e-9;
    fmt::print("tune {} n={:>4} {:<20} {:>8.3f} TFLOP/s{}\n", letter, n, name, tflops, ok ? "" : " (info != 0)");
    if (ok && tflops > best) {
      best = tflops;
      best_name = name;
    }
  }
  fmt::print("tune {} n={:>4} fastest {} at {:.3f} TFLOP/s\n", letter, n, best_name, best);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (!tessera::bench::cuda_device_present()) {
      fmt::print("no CUDA device: nothing to measure\n");
      return 0;
    }
    cudaDeviceProp prop{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    fmt::print("GPU: {}\nbatched complex Cholesky, matrices in GPU memory, median of {} calls (L2 flushed), TFLOP/s "
               "counting 4n^3/3 per matrix; '*': check failed\n",
               prop.name, o.reps);
    fmt::print("{:>2} {:>5} {:>7} | {:>10} {:>10} {:>10} | {:>7} {:>7} | {:>9} {:>9} {:>7} | {:>10} {:>10} {:>7} {:>7}\n",
               "p", "n", "batch", "T lower", "T upper", "cuSOLVER", "lower/c", "upper/c", "T potrs", "c potrs", "potrs/c",
               "B lower", "B upper", "Bl/c", "Bu/c");
    fmt::print("{:>2} {:>5} {:>7} | {:>10} {:>10} {:>10} | {:>7} {:>7} | {:>9} {:>9} {:>7} | {:>10} {:>10} {:>7} {:>7}\n",
               "", "", "", "TFLOP/s", "TFLOP/s", "TFLOP/s", "x", "x", "GFLOP/s", "GFLOP/s", "x", "TFLOP/s", "TFLOP/s", "x",
               "x");
    if (o.tune) {
      Timer timer;
      for (char p : o.precisions)
        for (int n : o.sizes) {
          const int batch = n >= 256 ? std::min(o.batch, 2000) : o.batch;
          if (p == 'z')
            tune_size<std::complex<double>>(n, batch, o.reps, timer, p);
          else
            tune_size<std::complex<float>>(n, batch, o.reps, timer, p);
        }
      return 0;
    }
    cusolverDnHandle_t solver = nullptr;
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    cublasHandle_t blas = nullptr;
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    Timer timer;
    nlohmann::json rows = nlohmann::json::array();
    for (char p : o.precisions)
      for (int n : o.sizes) {
        const int batch = n >= 256 ? std::min(o.batch, 2000) : o.batch;
        rows.push_back(p == 'z' ? run_size<std::complex<double>>(n, batch, o.reps, timer, solver, blas, o.widths, o.blocked_shapes, p)
                                : run_size<std::complex<float>>(n, batch, o.reps, timer, solver, blas, o.widths, o.blocked_shapes, p));
      }
    cublasDestroy(blas);
    cusolverDnDestroy(solver);
    if (!o.json_path.empty()) std::ofstream(o.json_path) << nlohmann::json{{"gpu", prop.name}, {"rows", rows}}.dump(2);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_batched_complex: %s\n", e.what());
    return 1;
  }
}
