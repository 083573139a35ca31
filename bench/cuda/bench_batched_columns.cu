// One block of columns of the batched factorization in blocks (potrf_batched_columns: the first
// `count` columns of each matrix's factor, as potrf_batched_blocked's panel kernel factors each
// block) with every compiled panel shape, against the shape potrf_batched_columns_shape picks.
// How the blocked path's per-block table was chosen.
//
//   bench_batched_columns [--types d,s,z,c] [--uplo lower|upper|both] [--rows 32,64,...]
//                         [--counts 32,64] [--batches 1000,10000] [--reps R] [--max-gib G]
//                         [--json out.json]
//
// For each type, triangle, batch, order (rows) and count (<= rows): the median time of R calls
// (L2 flushed, the columns restored before each, untimed) for each shape that runs for that type
// (the complex types have two compiled), the fastest, and the built-in pick's time over the
// fastest's. Diagonally dominant matrices: every call factors (a failure marks the row '*').
// Cases whose two copies of the batch exceed --max-gib GiB are skipped.
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/batched_kernels.hpp"
#include "cuda/check.hpp"
#include "device_support.hpp"
#include "tessera/error.hpp"

namespace tk = tessera::kernels::cuda;
using json = nlohmann::json;
using tessera::bench::Device;
using tessera::bench::Timer;

namespace {

struct Options {
  std::string types = "d,s";
  bool lower = true, upper = true;
  std::vector<int> rows, counts = {32, 64}, batches = {1000, 10000};
  int reps = 7;
  double max_gib = 24;
  std::string json_path;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int r = 32; r <= 1024; r += 32) o.rows.push_back(r);
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    const std::string a = args.option();
    if (a == "--types") o.types = args.value();
    else if (a == "--uplo") {
      const std::string u = args.value();
      if (u != "lower" && u != "upper" && u != "both") throw std::runtime_error("--uplo: lower, upper or both");
      o.lower = u != "upper";
      o.upper = u != "lower";
    } else if (a == "--rows") o.rows = tessera::bench::parse_int_list(args.value());
    else if (a == "--counts") o.counts = tessera::bench::parse_int_list(args.value());
    else if (a == "--batches") o.batches = tessera::bench::parse_int_list(args.value());
    else if (a == "--reps") o.reps = std::stoi(args.value());
    else if (a == "--max-gib") o.max_gib = std::stod(args.value());
    else if (a == "--json") o.json_path = args.value();
    else throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};

// The diagonal of every matrix set to `value` (its imaginary part to zero): with entries in
// [-1, 1] elsewhere, every Hermitian matrix either triangle defines is diagonally dominant.
template <class R>
__global__ void set_diagonal_kernel(R* a, int n, int batch, int parts, R value) {
  const long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long long>(n) * batch) return;
  const long long k = e / n, i = e % n;
  R* d = a + (k * n * n + i * n + i) * parts;
  d[0] = value;
  if (parts == 2) d[1] = R(0);
}

std::string shape_name(const tk::PanelShape& s) {
  return fmt::format("({},{},{},{})", s.panel_width, s.threads, s.rows_per_thread, s.update_width);
}

template <class T>
json run_case(bool upper, int rows, int count, int batch, int reps, Timer& timer, int sm_count) {
  using R = typename RealOf<T>::type;
  constexpr bool complex = !std::is_same_v<T, R>;
  constexpr int parts = complex ? 2 : 1;
  const std::size_t nn = static_cast<std::size_t>(rows) * rows;
  Device<T> orig(nn * batch), work(nn * batch);
  Device<int> info(batch);
  tessera::bench::fill_uniform(reinterpret_cast<R*>(orig.get()), nn * batch * parts, 20261206u + rows);
  set_diagonal_kernel<R><<<static_cast<unsigned>((static_cast<long long>(rows) * batch + 255) / 256), 256>>>(
      reinterpret_cast<R*>(orig.get()), rows, batch, parts, R(2 * rows));
  TESSERA_CUDA_CHECK_LAUNCH();
  const auto uplo = upper ? tk::BatchUplo::upper : tk::BatchUplo::lower;
  // The columns the call reads and writes: L's first `count` columns of each matrix (lower), U's
  // first `count` rows (upper: `count` elements of each of the batch's columns).
  const auto restore = [&] {
    if (upper)
      TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(work.get(), rows * sizeof(T), orig.get(), rows * sizeof(T), count * sizeof(T),
                                           static_cast<std::size_t>(rows) * batch, cudaMemcpyDeviceToDevice));
    else
      TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(work.get(), nn * sizeof(T), orig.get(), nn * sizeof(T),
                                           static_cast<std::size_t>(count) * rows * sizeof(T), batch,
                                           cudaMemcpyDeviceToDevice));
  };
  const auto failed = [&] {
    std::vector<int> h(batch);
    TESSERA_CUDA_CHECK(cudaMemcpy(h.data(), info.get(), sizeof(int) * batch, cudaMemcpyDeviceToHost));
    return std::count_if(h.begin(), h.end(), [](int v) { return v != 0; });
  };
  const tk::PanelShape built_in =
      tk::potrf_batched_columns_shape(rows, count, sizeof(R), complex, upper, batch, sm_count);
  json r;
  r["rows"] = rows;
  r["count"] = count;
  r["batch"] = batch;
  r["upper"] = upper;
  r["built_in"] = shape_name(built_in);
  const tk::PanelShape* shapes = nullptr;
  const int shape_count = tk::potrf_batched_panel_shapes(&shapes);
  double best = std::numeric_limits<double>::infinity(), built_in_ms = 0;
  std::string best_name;
  long long failures = 0;
  for (int i = 0; i < shape_count; ++i) {
    tk::BatchedOptions o;
    o.panel_width = shapes[i].panel_width;
    o.threads = shapes[i].threads;
    o.rows_per_thread = shapes[i].rows_per_thread;
    o.update_width = shapes[i].update_width;
    double ms = 0;
    try {
      ms = timer.median_ms(reps, restore, [&] {
        tk::potrf_batched_columns<T>(uplo, rows, count, work.get(), rows, nn, batch, info.get(), nullptr, o);
      });
    } catch (const tessera::InvalidArgument&) {  // not compiled for this type
      continue;
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    failures += failed();
    const std::string name = shape_name(shapes[i]);
    r["ms"][name] = ms;
    if (ms < best) best = ms, best_name = name;
    if (name == r["built_in"].get<std::string>()) built_in_ms = ms;
  }
  r["best"] = best_name;
  r["best_ms"] = best;
  r["built_in_ms"] = built_in_ms;
  r["failed"] = failures;
  return r;
}

template <class T>
void run_type(const std::string& name, const Options& o, Timer& timer, int sm_count, json& rows_out) {
  for (bool upper : {false, true}) {
    if ((upper && !o.upper) || (!upper && !o.lower)) continue;
    for (int batch : o.batches)
      for (int rows : o.rows) {
        if (2.0 * batch * rows * rows * sizeof(T) > o.max_gib * (1ull << 30)) continue;
        for (int count : o.counts) {
          if (count > rows) continue;
          json r = run_case<T>(upper, rows, count, batch, o.reps, timer, sm_count);
          r["type"] = name;
          std::string all;
          for (const auto& [shape, ms] : r["ms"].items()) all += fmt::format(" {}:{:.4f}", shape, ms.get<double>());
          fmt::print("{} {:5} {:6} {:5} {:3} | built-in {:>12} {:9.4f} | best {:>12} {:9.4f} {:5.3f}x{} |{}\n", name,
                     upper ? "upper" : "lower", r["batch"].get<int>(), rows, count, r["built_in"].get<std::string>(),
                     r["built_in_ms"].get<double>(), r["best"].get<std::string>(), r["best_ms"].get<double>(),
                     r["built_in_ms"].get<double>() / r["best_ms"].get<double>(),
                     r["failed"].get<long long>() ? " *" : "", all);
          std::fflush(stdout);
          rows_out.push_back(std::move(r));
        }
      }
  }
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
    fmt::print("GPU: {} ({} SMs)\none block of columns (potrf_batched_columns), median of {} calls (L2 flushed), "
               "ms; built-in / best\n",
               prop.name, prop.multiProcessorCount, o.reps);
    fmt::print("type uplo   batch  rows cnt | built-in shape and ms | fastest shape and ms, built-in over it | all\n");
    Timer timer;
    json rows = json::array();
    for (const std::string& t : {"d", "s", "z", "c"}) {
      if (("," + o.types + ",").find("," + t + ",") == std::string::npos) continue;
      if (t == "d") run_type<double>(t, o, timer, prop.multiProcessorCount, rows);
      if (t == "s") run_type<float>(t, o, timer, prop.multiProcessorCount, rows);
      if (t == "z") run_type<std::complex<double>>(t, o, timer, prop.multiProcessorCount, rows);
      if (t == "c") run_type<std::complex<float>>(t, o, timer, prop.multiProcessorCount, rows);
    }
    if (!o.json_path.empty()) std::ofstream(o.json_path) << json{{"gpu", prop.name}, {"rows", rows}}.dump(1);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_batched_columns: %s\n", e.what());
    return 1;
  }
}
