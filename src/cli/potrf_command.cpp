#include "potrf_command.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <vector>

#include "checks.hpp"
#include "memory_budget.hpp"
#include "progress_line.hpp"
#include "tessera/tessera.hpp"
#include "tessera/tools/machine.hpp"
#include "tessera/tools/matrix_market.hpp"
#include "tessera/trace.hpp"
#include "testkit/residuals.hpp"
#include "testkit/spd_matrices.hpp"

namespace tessera::cli {

using testkit::kBackwardErrorThreshold;
using testkit::potrf_input_matrix;

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

template <class T>
constexpr bool kDouble = std::is_same_v<T, double>;

// The tile size the run will use, or the largest Tessera may choose before the mode is known.
template <class T>
int largest_tile_size(int n, const FactorOptions& options) {
  if (options.nb > 0) return options.nb;
  return std::max(default_tile_size(n, precision_of<T>(), Mode::cpu), default_tile_size(n, precision_of<T>(), Mode::gpu));
}

template <class T>
void require_memory_for(const PotrfCommand& cmd, const FactorOptions& options, int n) {
  const PotrfFootprint run{n, largest_tile_size<T>(n, options), sizeof(T), cmd.check, !cmd.input.empty(), !cmd.output.empty()};
  std::string what = fmt::format("potrf of order {} in {} precision", n, kDouble<T> ? "double" : "single");
  if (!cmd.input.empty()) what = cmd.input + ": " + what;
  std::string held = cmd.check ? "the matrix, its copy for the check, the tiles of the factorization and of the check"
                               : "the matrix and its tiles";
  if (cmd.check) {
    PotrfFootprint unchecked = run;
    unchecked.check = false;
    held += fmt::format("; {:.1f} GiB with --no-check", bytes_needed(unchecked) / kGiB);
  }
  require_memory(bytes_needed(run), what, held);
}

// potrf reads one triangle: a matrix that is not exactly symmetric would get a verdict that
// depends on --uplo. Exact equality (NaN matching NaN): a symmetric matrix written out entry by
// entry is exactly symmetric, and a tolerance would let --uplo matter again inside it.
void require_symmetric(const DenseMatrix& M, const std::string& path) {
  for (int j = 0; j < M.cols; ++j)
    for (int i = j + 1; i < M.rows; ++i) {
      const double lower = M(i, j), upper = M(j, i);
      if (lower == upper || (std::isnan(lower) && std::isnan(upper))) continue;
      throw InvalidArgument(fmt::format("{}: the matrix is not symmetric: entry ({}, {}) is {} but entry ({}, {}) is {}; "
                                        "potrf reads one triangle, so a general file must hold a symmetric matrix",
                                        path, i + 1, j + 1, lower, j + 1, i + 1, upper));
    }
}

// A finite value beyond single precision's range has no float: the conversion is undefined (in
// practice an infinity, which the run would then report as a failed check of a matrix the file
// does not hold).
void require_single_precision_range(const DenseMatrix& M, const std::string& path) {
  for (int j = 0; j < M.cols; ++j)
    for (int i = 0; i < M.rows; ++i) {
      const double value = M(i, j);
      if (!std::isfinite(value) || std::abs(value) <= std::numeric_limits<float>::max()) continue;
      throw InvalidArgument(fmt::format("{}: entry ({}, {}) is {}, beyond single precision's range (--precision d reads it)",
                                        path, i + 1, j + 1, value));
    }
}

template <class T>
std::vector<T> matrix_from_file(const PotrfCommand& cmd, const FactorOptions& options, int& n) {
  const auto affordable = [&](int rows, int cols) {
    if (rows != cols) throw InvalidArgument(fmt::format("the matrix is {} x {}, not square", rows, cols));
    require_memory_for<T>(cmd, options, rows);
  };
  const auto max_elements = static_cast<std::size_t>(physical_memory_bytes() / sizeof(double));
  DenseMatrix M = read_matrix_market_file(cmd.input, max_elements, affordable);
  require_symmetric(M, cmd.input);
  n = M.rows;
  if constexpr (kDouble<T>) {
    return std::move(M.values);
  } else {
    require_single_precision_range(M, cmd.input);
    return std::vector<T>(M.values.begin(), M.values.end());
  }
}

// The input: read from the file (its order known once its header is read), or generated (its
// memory checked before the runtime starts, in run()).
template <class T>
std::vector<T> input_matrix(const PotrfCommand& cmd, const FactorOptions& options, int& n) {
  if (!cmd.input.empty()) return matrix_from_file<T>(cmd, options, n);
  n = cmd.n;
  return potrf_input_matrix<T>(n, cmd.seed);
}

// The environment's options with the command's flags applied; output files checked first.
FactorOptions factor_options(const PotrfCommand& cmd) {
  FactorOptions options = FactorOptions::from_environment();
  options.uplo = parse_uplo(cmd.uplo);
  options.mode = requested_mode(cmd);
  if (!cmd.gpu_kernels.empty()) options.gpu_kernels = parse_gpu_kernels(cmd.gpu_kernels);
  if (cmd.nb > 0) options.nb = cmd.nb;
  if (cmd.accuracy > 0 && cmd.precision != "d")
    throw InvalidArgument("--accuracy: adaptive precision factors double-precision matrices (--precision d)");
  options.accuracy = cmd.accuracy;
  if (!cmd.input.empty()) require_readable("--input", cmd.input);
  if (!cmd.output.empty()) require_writable("--output", cmd.output);
  if (!cmd.tile_map.empty()) require_writable("--tile-map", cmd.tile_map);
  if (!cmd.trace.empty()) {
    Trace::check_file_name(cmd.trace);
    require_writable("--trace", cmd.trace);
    options.trace = std::make_shared<Trace>();
  }
  return options;
}

struct Factorization {
  int info = 0;
  TileArithmeticMap tiles;  // with an accuracy: the arithmetic each tile took
  bool non_finite_input = false;
  double seconds = 0;
  double startup_seconds = 0;  // starting the runtime (StarPU, its calibration, the CUDA contexts)
};

// The request ends here, so its tiles are released before the check allocates its own.
template <class T>
Factorization factor(Runtime& runtime, std::vector<T>& A, int n, FactorOptions options, bool show_progress) {
  Factorization result;
  if (options.accuracy > 0) options.tile_arithmetic = &result.tiles;
  const auto start = Clock::now();
  Request request = potrf_async(runtime, n, A.data(), std::max(1, n), options);
  {
    const ProgressLine line(show_progress, fmt::format("factoring n = {}", n),
                            [&request] { return request.progress().fraction(); });
    result.info = request.wait();
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.non_finite_input = request.non_finite_input();
  return result;
}

template <class T>
double residual(Runtime& runtime, const std::vector<T>& original, const std::vector<T>& factor, int n,
                const FactorOptions& options, Mode mode) {
  TileMatrix<T> a(runtime, n, options.nb), l(runtime, n, options.nb);
  load_async(a, options.uplo, original.data(), n).wait();
  load_async(l, options.uplo, factor.data(), n).wait();
  return backward_error(a, l, mode);
}

// Writes L (U^T for an upper factorization) as a general matrix with zeros above the diagonal:
// under a symmetric header every reader would mirror L into the upper triangle. The factor is
// made lower triangular in place, then written (through a double copy in single precision).
template <class T>
void write_factor(const std::string& path, std::vector<T>& A, int n, Uplo uplo) {
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i) {
      T& lower = A[i + static_cast<std::size_t>(j) * n];
      T& upper = A[j + static_cast<std::size_t>(i) * n];
      if (uplo == Uplo::upper) lower = upper;
      upper = T(0);
    }
  if constexpr (kDouble<T>) {
    write_matrix_market_file(path, n, n, A.data(), std::max(1, n), false);
  } else {
    const std::vector<double> widened(A.begin(), A.end());
    write_matrix_market_file(path, n, n, widened.data(), std::max(1, n), false);
  }
}

// The bound the check holds the scaled backward error to: LAPACK's, or for an adaptive factor the
// accuracy asked for in the same units where that is larger.
template <class T>
double backward_error_bound(const PotrfCommand& cmd, int n) {
  const double unit = std::max(n, 1) * double(std::numeric_limits<T>::epsilon());
  return std::max(kBackwardErrorThreshold, kBackwardErrorThreshold * cmd.accuracy / unit);
}

json tile_counts(const TileArithmeticMap& tiles) {
  return {{"fp16", tiles.count(TileArithmetic::fp16)},
          {"fp32", tiles.count(TileArithmetic::fp32)},
          {"fp64", tiles.count(TileArithmetic::fp64)}};
}

void print_row(const PotrfCommand& cmd, const Runtime& runtime, const FactorOptions& options, Mode mode, int n,
               const Factorization& f, const std::optional<double>& error, bool ok) {
  const double gflops = f.seconds > 0 ? (double(n) * n * n / 3.0) / f.seconds * 1e-9 : 0.0;
  if (cmd.json) {
    json row = {{"n", n}, {"nb", options.nb}, {"uplo", cmd.uplo}, {"precision", cmd.precision},
                {"mode", to_string(mode)}, {"policy", runtime.scheduler()},
                {"gpu_kernels", to_string(options.gpu_kernels)},
                {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
                {"seconds", f.seconds}, {"startup_seconds", f.startup_seconds}, {"gflops", gflops}, {"info", f.info},
                {"ok", ok}};
    row["backward_error"] = error ? json(*error) : json(nullptr);
    row["blas_kernel"] = blas_info().kernel;  // OpenBLAS's CPU kernel ("" for another BLAS)
    if (f.non_finite_input) row["non_finite_input"] = true;
    if (cmd.accuracy > 0) {
      row["accuracy"] = cmd.accuracy;
      row["tiles"] = tile_counts(f.tiles);
    }
    fmt::print("{}\n", row.dump());
    return;
  }
  fmt::print("{:>7} {:>5} {:>4} {:>6} {:>8} {:>9} {:>9} {:>10} {:>10} {:>5} {}\n", "n", "nb", "prec", "mode", "policy",
             "workers", "seconds", "GFLOP/s", "error", "info", "ok");
  fmt::print("{:>7} {:>5} {:>4} {:>6} {:>8} {:>4}+{:<4} {:>9.4f} {:>10.2f} {:>10} {:>5} {}\n", n, options.nb,
             cmd.precision, to_string(mode), runtime.scheduler(), runtime.cpu_workers(), runtime.cuda_workers(),
             f.seconds, gflops, error ? fmt::format("{:.3g}", *error) : "-", f.info, ok ? "ok" : "FAILED");
  if (cmd.accuracy > 0)
    fmt::print("accuracy {:g}: tiles below the diagonal in fp16 {}, fp32 {}, fp64 {}\n", cmd.accuracy,
               f.tiles.count(TileArithmetic::fp16), f.tiles.count(TileArithmetic::fp32), f.tiles.count(TileArithmetic::fp64));
}

template <class T>
int run(const PotrfCommand& cmd) {
  FactorOptions options = factor_options(cmd);
  RuntimeOptions startup = runtime_options(cmd.runtime, options.mode);
  if (!cmd.policy.empty()) startup.scheduler = cmd.policy;

  if (cmd.input.empty()) require_memory_for<T>(cmd, options, cmd.n);
  // The runtime starts before the input is made: the CUDA driver's initialization takes much
  // longer in a process that has touched a few GB (docs/user-guide.md, section "Command-line tool").
  const auto startup_begin = Clock::now();
  Runtime runtime(startup);
  const double startup_seconds = std::chrono::duration<double>(Clock::now() - startup_begin).count();
  const bool show_progress = !cmd.json && isatty(STDERR_FILENO);
  int n = 0;
  std::vector<T> A;
  {
    const ProgressLine line(show_progress, cmd.input.empty() ? fmt::format("making a matrix of order {}", cmd.n)
                                                             : "reading " + cmd.input);
    A = input_matrix<T>(cmd, options, n);
  }
  const Mode mode = runtime.resolve(options.mode);
  options.nb = options.nb > 0 ? options.nb : default_tile_size(runtime, n, precision_of<T>(), options.mode);
  std::vector<T> original = cmd.check ? A : std::vector<T>();

  Factorization f = factor(runtime, A, n, options, show_progress);
  f.startup_seconds = startup_seconds;
  if (!cmd.trace.empty()) {
    options.trace->write(cmd.trace);
    if (!cmd.json)
      std::fprintf(stderr, "tessera: schedule of %zu tasks written to %s\n", options.trace->events().size(), cmd.trace.c_str());
  }
  if (!cmd.tile_map.empty() && f.info == 0) write_text_file("--tile-map", cmd.tile_map, f.tiles.svg());
  std::optional<double> error;
  if (cmd.check && f.info == 0 && n > 0) {
    const ProgressLine line(show_progress, "checking the factor (backward error)");
    error = residual(runtime, original, A, n, options, mode);
  }
  std::vector<T>().swap(original);
  if (!cmd.output.empty() && f.info == 0) write_factor(cmd.output, A, n, options.uplo);

  const double bound = backward_error_bound<T>(cmd, n);
  const bool ok = f.info == 0 && (!error || *error < bound);
  print_row(cmd, runtime, options, mode, n, f, error, ok);
  // A NaN or an infinity need not make the factorization fail (LAPACK takes the square root of
  // +inf on the diagonal), nor be where it fails (an earlier pivot may): said beside either.
  const char* non_finite = f.non_finite_input ? " (the matrix holds a NaN or an infinity)" : "";
  if (f.info > 0) {
    std::fprintf(stderr, "tessera: the matrix is not positive definite: its leading minor of order %d is the first that is not%s\n",
                 f.info, non_finite);
    return 2;
  }
  if (!ok)
    std::fprintf(stderr, "tessera: the backward error %s is not below %g%s\n",
                 fmt::format("{:.3g}", error.value_or(0.0)).c_str(), bound, non_finite);
  return ok ? 0 : 3;
}

}  // namespace

Mode requested_mode(const PotrfCommand& cmd) {
  return cmd.mode.empty() ? FactorOptions::from_environment().mode : parse_mode(cmd.mode);
}

int run_potrf(const PotrfCommand& cmd) { return cmd.precision == "d" ? run<double>(cmd) : run<float>(cmd); }

}  // namespace tessera::cli
