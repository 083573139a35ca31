// GPU Cholesky benchmark, one process and one run, in double and float, both triangles:
//   cuSOLVER potrf with the matrix on the GPU (resident), with copies from and to pinned host
//   memory, and with copies from and to pageable host memory (the caller's plain array);
//   cuBLAS GEMM (the roofline);
//   Tessera with the tiles already on the GPU (gpu mode), on a matrix in GPU memory through the
//   device API (tessera/device.hpp: in the grain it chooses, and in tile tasks), and
//   end to end from the caller's array in gpu, hybrid and auto modes.
// Each figure is the median of --repetitions runs after one warm-up run (whose time is kept in
// the JSON as "first": with an empty STARPU_PERF_MODEL_DIR it is the uncalibrated run). Prints a
// table with ratios against the peers measured in the same run; --json FILE writes the rows.
// T-dev: the device API in the task grain it chooses (up to an order, the whole matrix as one task);
// T-devt: its tile tasks. --grains adds rows: tiles on the GPU and the device API in each grain.
// Energy (--energy-seconds S, 0 for none; lower triangle): for cuSOLVER resident and pinned and
// for Tessera resident, device API and end to end in each mode, the GPUs' energy per
// factorization (and the host's where RAPL is readable) from calls repeated back to back for S
// seconds, each on an input made beforehand (bench/energy/energy_meter.hpp), with GFLOP/s per
// watt and the process's CPU seconds per factorization (the cores a mode keeps busy).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"
#include "energy_meter.hpp"
#include "kernels/cuda/check.hpp"
#include "resident_tiles.hpp"
#include "tessera/starpu_interop.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using tessera::bench::EnergyMeter;
using tessera::bench::EnergyReading;
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
double tflops(int n, double seconds) { return double(n) * n * n / 3.0 / seconds * 1e-12; }

// Symmetric (both triangles), strictly diagonally dominant: SPD. Each column from its own seed.
template <class T>
std::vector<T> spd(int n, unsigned seed) {
  return tessera::testkit::dominant_spd<T>(
      n, [seed](int j) { return seed * 7919ull + static_cast<unsigned long long>(j); });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? nan_value : v[v.size() / 2];
}

// One warm-up call of `run` (returned as first), then the median of `repetitions` calls (each
// kept in runs, for the JSON: a median hides whether one call or several were slow).
struct Timing {
  double first = nan_value;
  double median = nan_value;
  std::vector<double> runs;
};
template <class Run>
Timing time_runs(int repetitions, Run&& run) {
  Timing t;
  t.first = run();
  for (int rep = 0; rep < repetitions; ++rep) t.runs.push_back(run());
  t.median = median(t.runs);
  return t;
}

// How many calls of `seconds_each` make an energy reading of `window` seconds (2 to 16).
int calls_for(double window, double seconds_each) {
  if (!(seconds_each > 0)) return 2;
  return static_cast<int>(std::clamp(std::ceil(window / seconds_each), 2.0, 16.0));
}

// The energy of one call: `calls` calls of call(i), back to back between the meter's begin() and
// end(), each on its input made beforehand by prepare(i).
template <class Prepare, class Call>
EnergyReading energy_per_call(EnergyMeter& meter, int calls, Prepare&& prepare, Call&& call) {
  for (int i = 0; i < calls; ++i) prepare(i);
  meter.begin();
  for (int i = 0; i < calls; ++i) call(i);
  return meter.end().per_call(calls);
}

// ---- cuSOLVER -------------------------------------------------------------------------------

cublasFillMode_t fill(tessera::Uplo uplo) {
  return uplo == tessera::Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
}
cusolverStatus_t potrf_workspace(cusolverDnHandle_t h, cublasFillMode_t f, int n, double* a, int& lwork) {
  return cusolverDnDpotrf_bufferSize(h, f, n, a, n, &lwork);
}
cusolverStatus_t potrf_workspace(cusolverDnHandle_t h, cublasFillMode_t f, int n, float* a, int& lwork) {
  return cusolverDnSpotrf_bufferSize(h, f, n, a, n, &lwork);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, cublasFillMode_t f, int n, double* a, double* w, int lw, int* info) {
  return cusolverDnDpotrf(h, f, n, a, n, w, lw, info);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, cublasFillMode_t f, int n, float* a, float* w, int lw, int* info) {
  return cusolverDnSpotrf(h, f, n, a, n, w, lw, info);
}

struct CusolverTimes {
  Timing resident;  // potrf alone, matrix on the device
  Timing pinned;    // H2D from pinned memory + potrf + D2H to pinned memory
  Timing pageable;  // the same from and to the caller's pageable array
  EnergyReading resident_energy, pinned_energy;  // per call, with a meter
};

template <class T>
CusolverTimes time_cusolver(int n, tessera::Uplo uplo, const std::vector<T>& A, int repetitions, bool resident_only,
                            EnergyMeter* meter, double energy_seconds) {
  cusolverDnHandle_t handle;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  const std::size_t bytes = sizeof(T) * A.size();
  T* dA = nullptr;
  int* dinfo = nullptr;
  T* pinned = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  if (!resident_only) {
    TESSERA_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::copy(A.begin(), A.end(), pinned);
  }
  std::vector<T> out(resident_only ? 0 : A.size());
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(potrf_workspace(handle, fill(uplo), n, dA, lwork));
  T* work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&work, sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1))));
  auto factor_at = [&](T* a) {
    TESSERA_CUSOLVER_CHECK(vendor_potrf(handle, fill(uplo), n, a, work, lwork, dinfo));
    int info = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));  // synchronizes
    if (info != 0) throw std::runtime_error("cuSOLVER potrf info " + std::to_string(info));
  };
  auto factor = [&] { factor_at(dA); };
  auto round_trip = [&](const T* from, T* to) {
    const auto start = Clock::now();
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, from, bytes, cudaMemcpyHostToDevice));
    factor();
    TESSERA_CUDA_CHECK(cudaMemcpy(to, dA, bytes, cudaMemcpyDeviceToHost));
    return seconds_since(start);
  };
  CusolverTimes times;
  if (!resident_only) {
    times.pageable = time_runs(repetitions, [&] { return round_trip(A.data(), out.data()); });
    times.pinned = time_runs(repetitions, [&] { return round_trip(pinned, pinned); });
  }
  times.resident = time_runs(repetitions, [&] {
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
    const auto start = Clock::now();
    factor();
    return seconds_since(start);
  });
  if (meter) {
    std::vector<T*> copies(static_cast<std::size_t>(calls_for(energy_seconds, times.resident.median)));
    for (T*& c : copies) TESSERA_CUDA_CHECK(cudaMalloc(&c, bytes));
    times.resident_energy = energy_per_call(
        *meter, static_cast<int>(copies.size()),
        [&](int i) { TESSERA_CUDA_CHECK(cudaMemcpy(copies[i], A.data(), bytes, cudaMemcpyHostToDevice)); },
        [&](int i) { factor_at(copies[i]); });
    for (T* c : copies) cudaFree(c);
    if (!resident_only)
      times.pinned_energy = energy_per_call(*meter, calls_for(energy_seconds, times.pinned.median), [](int) {},
                                            [&](int) { round_trip(pinned, pinned); });
  }
  cudaFree(work);
  if (pinned) cudaFreeHost(pinned);
  cudaFree(dinfo);
  cudaFree(dA);
  cusolverDnDestroy(handle);
  return times;
}

cublasStatus_t vendor_gemm(cublasHandle_t h, int n, const double* a, const double* b, double* c) {
  const double one = 1.0;
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, b, n, &one, c, n);
}
cublasStatus_t vendor_gemm(cublasHandle_t h, int n, const float* a, const float* b, float* c) {
  const float one = 1.0f;
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, b, n, &one, c, n);
}

// cuBLAS GEMM (N, T) at n = 8192, TFLOP/s: the roofline.
template <class T>
double gemm_tflops() {
  const int n = 8192;
  cublasHandle_t handle;
  TESSERA_CUBLAS_CHECK(cublasCreate(&handle));
  T *a, *b, *c;
  const std::size_t bytes = sizeof(T) * n * n;
  TESSERA_CUDA_CHECK(cudaMalloc(&a, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&b, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&c, bytes));
  std::vector<T> h(static_cast<std::size_t>(n) * n);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (T& x : h) x = static_cast<T>(dist(gen));
  for (T* d : {a, b, c}) TESSERA_CUDA_CHECK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
  const Timing t = time_runs(3, [&] {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = Clock::now();
    TESSERA_CUBLAS_CHECK(vendor_gemm(handle, n, a, b, c));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    return seconds_since(start);
  });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasDestroy(handle);
  return 2.0 * n * n * n / t.median * 1e-12;
}

// ---- Tessera --------------------------------------------------------------------------------

// The device API on the matrix in GPU memory (lda = n), in the options' mode and task grain; the
// copy of A to the GPU before each run is not timed.
template <class T>
double time_device(tessera::Runtime& runtime, int n, const std::vector<T>& A, const tessera::FactorOptions& options,
                   T* dA) {
  TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(T) * A.size(), cudaMemcpyHostToDevice));
  const auto start = Clock::now();
  const int info = tessera::device::potrf(runtime, n, dA, n, nullptr, options);
  const double seconds = seconds_since(start);
  if (info != 0) throw std::runtime_error("device factorization info " + std::to_string(info));
  return seconds;
}

// End to end from the caller's array, in the options' mode; the backward error of the last run.
template <class T>
Timing time_end_to_end(tessera::Runtime& runtime, int n, const std::vector<T>& A, const tessera::FactorOptions& options,
                       int repetitions, double* backward_error) {
  std::vector<T> work;
  const Timing t = time_runs(repetitions, [&] {
    work = A;
    const auto start = Clock::now();
    const int info = tessera::potrf(runtime, n, work.data(), n, options);
    const double seconds = seconds_since(start);
    if (info != 0) throw std::runtime_error("Tessera potrf info " + std::to_string(info));
    return seconds;
  });
  if (backward_error) {
    const int nb = tessera::default_tile_size(n, tessera::precision_of<T>(), tessera::Mode::gpu);
    tessera::TileMatrix<T> a(runtime, n, nb), l(runtime, n, nb);
    tessera::load_async(a, options.uplo, A.data(), n).wait();
    tessera::load_async(l, options.uplo, work.data(), n).wait();
    *backward_error = tessera::backward_error(a, l, tessera::Mode::gpu);
  }
  return t;
}

// Each row is printed and saved as soon as it is measured: a run stopped by a time limit keeps
// every row it finished.
void save(const json& rows, const std::string& path) {
  std::fflush(stdout);
  if (!path.empty()) std::ofstream(path) << rows.dump(2) << "\n";
}

struct Settings {
  std::vector<int> sizes = {4096, 8192, 16384, 30000, 40000};
  std::vector<int> tile_sizes;  // 0: Tessera's default per n
  std::vector<std::string> precisions = {"d", "s"};
  std::vector<tessera::Uplo> uplos = {tessera::Uplo::lower, tessera::Uplo::upper};
  std::string modes = "resident,device,gpu,hybrid,auto";
  std::vector<tessera::GpuKernels> kernel_choices;  // compared with tiles resident
  std::vector<tessera::TaskGrain> grains;  // tiles resident and the device API in each grain, against cuSOLVER resident
  int repetitions = 2;
  double energy_seconds = 1.0;  // 0: no energy readings
  // --peers: cusolver (resident, pinned and pageable), resident (the matrix on the GPU only: no
  // pinned copy of a matrix of tens of GB to allocate), none (Tessera alone).
  std::string peers = "cusolver";
  std::string json_path;
  // The backward error of the gpu-mode run is computed up to this order: it loads the matrix and
  // its factor into two more tile matrices (at n = 90000, 130 GB of host memory beside the 130 GB
  // of the input and its working copy).
  int backward_error_max_n = std::numeric_limits<int>::max();
  bool wanted(const char* mode) const { return split_has(modes, mode); }
  static bool split_has(const std::string& list, const std::string& item) {
    for (const std::string& s : tessera::bench::split_commas(list))
      if (s == item) return true;
    return false;
  }
};

// The GPU's (and host's) energy per call, mean power and GFLOP/s per watt of one variant.
json energy_cell(const EnergyReading& e, int n) {
  const double flops = double(n) * n * n / 3.0;
  const double joules = e.gpu_joules + (std::isnan(e.host_joules) ? 0.0 : e.host_joules);
  return {{"seconds", e.seconds}, {"gpu_joules", e.gpu_joules}, {"host_joules", e.host_joules},
          {"process_cpu_seconds", e.cpu_seconds},
          {"gpu_watts", e.gpu_joules / e.seconds}, {"gflops_per_watt", tessera::bench::gflops_per_watt(flops, joules)}};
}

// Tessera's energy per factorization of A: tiles resident, the device API in the grain it chooses,
// and end to end in each mode the settings ask for; `times` gives each one's median seconds.
template <class T>
json tessera_energy(tessera::Runtime& runtime, EnergyMeter& meter, const Settings& s, int n, int nb,
                    const std::vector<T>& A, const tessera::FactorOptions& options, const std::map<std::string, double>& times) {
  json cells;
  const auto calls = [&](const char* variant) { return calls_for(s.energy_seconds, times.at(variant)); };
  if (times.count("resident")) {
    std::vector<std::unique_ptr<tessera::TileMatrix<T>>> tiles(static_cast<std::size_t>(calls("resident")));
    tessera::FactorOptions gpu = options;
    gpu.mode = tessera::Mode::gpu;
    cells["resident"] = energy_cell(
        energy_per_call(
            meter, static_cast<int>(tiles.size()),
            [&](int i) { tiles[i] = tessera::bench::resident_tiles(runtime, n, nb, A); },
            [&](int i) { tessera::bench::factor_resident(*tiles[i], gpu); }),
        n);
  }
  if (times.count("device")) {
    std::vector<T*> copies(static_cast<std::size_t>(calls("device")));
    for (T*& c : copies) TESSERA_CUDA_CHECK(cudaMalloc(&c, sizeof(T) * A.size()));
    tessera::FactorOptions device_options = options;
    device_options.mode = tessera::Mode::gpu;
    cells["device"] = energy_cell(
        energy_per_call(
            meter, static_cast<int>(copies.size()),
            [&](int i) { TESSERA_CUDA_CHECK(cudaMemcpy(copies[i], A.data(), sizeof(T) * A.size(), cudaMemcpyHostToDevice)); },
            [&](int i) {
              const int info = tessera::device::potrf(runtime, n, copies[i], n, nullptr, device_options);
              if (info != 0) throw std::runtime_error("device factorization info " + std::to_string(info));
            }),
        n);
    for (T* c : copies) cudaFree(c);
  }
  for (tessera::Mode mode : {tessera::Mode::gpu, tessera::Mode::hybrid, tessera::Mode::automatic}) {
    const std::string name = tessera::to_string(mode);
    if (!times.count(name)) continue;
    std::vector<std::vector<T>> copies(static_cast<std::size_t>(calls(name.c_str())));
    tessera::FactorOptions in_mode = options;
    in_mode.mode = mode;
    cells[name] = energy_cell(energy_per_call(
                                  meter, static_cast<int>(copies.size()), [&](int i) { copies[i] = A; },
                                  [&](int i) {
                                    const int info = tessera::potrf(runtime, n, copies[i].data(), n, in_mode);
                                    if (info != 0) throw std::runtime_error("Tessera potrf info " + std::to_string(info));
                                  }),
                              n);
  }
  return cells;
}

void print_energy(int n, const json& cells) {
  static const char* const order[] = {"cusolver_resident", "cusolver_pinned", "resident", "device", "gpu", "hybrid", "auto"};
  std::string line = fmt::format("{:>6}  L energy |", n);
  for (const char* name : order) {
    if (!cells.contains(name)) continue;
    const json& c = cells[name];
    line += fmt::format(" {} {:.2f} J {:.0f} W {:.1f} GF/s/W {:.1f} CPU-s |", name,
                        c["gpu_joules"].get<double>() + (std::isnan(c["host_joules"].get<double>()) ? 0.0 : c["host_joules"].get<double>()),
                        c["gpu_watts"].get<double>(), c["gflops_per_watt"].get<double>(),
                        c["process_cpu_seconds"].get<double>());
  }
  const auto ratio = [&](const char* a, const char* b) {
    return cells.contains(a) && cells.contains(b)
               ? cells[a]["gflops_per_watt"].get<double>() / cells[b]["gflops_per_watt"].get<double>()
               : nan_value;
  };
  fmt::print("{}\n{:>6}  L energy efficiency: resident/cus-res {:.2f}x, gpu/cus-pin {:.2f}x, gpu/hybrid {:.2f}x, "
             "auto/gpu {:.2f}x\n",
             line, n, ratio("resident", "cusolver_resident"), ratio("gpu", "cusolver_pinned"), ratio("gpu", "hybrid"),
             ratio("auto", "gpu"));
}

template <class T>
void run_precision(tessera::Runtime& runtime, const Settings& s, json& rows, EnergyMeter* meter) {
  const char letter = tessera::ScalarTraits<T>::letter;
  const double roofline = gemm_tflops<T>();
  fmt::print("\n{} precision. cuBLAS {}GEMM (8192, N/T): {:.1f} TFLOP/s\n", letter == 'd' ? "Double" : "Single",
             letter == 'd' ? 'D' : 'S', roofline);
  std::fflush(stdout);
  fmt::print("{:>6} {:>2} {:>5} | {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7} | {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}\n",
             "n", "ul", "nb", "cus-res", "cus-pin", "cus-pag", "T-res", "T-dev", "T-devt", "T-gpu", "T-hyb", "T-auto",
             "res/cus", "dev/cus", "gpu/cusR", "gpu/cusP", "auto/cusP", "hyb/gpu", "auto/gpu");
  for (int n : s.sizes) {
    const std::vector<T> A = spd<T>(n, 11u + static_cast<unsigned>(n));
    for (tessera::Uplo uplo : s.uplos) {
      EnergyMeter* energy = uplo == tessera::Uplo::lower ? meter : nullptr;
      const CusolverTimes cus = s.peers == "none" ? CusolverTimes{}
                                                  : time_cusolver(n, uplo, A, s.repetitions, s.peers == "resident", energy,
                                                                  s.energy_seconds);
      const std::vector<int> nbs = s.tile_sizes.empty() ? std::vector<int>{0} : s.tile_sizes;
      for (int nb_choice : nbs) {
        const int nb =
            nb_choice > 0 ? nb_choice : tessera::default_tile_size(n, tessera::precision_of<T>(), tessera::Mode::gpu);
        // TESSERA_GPU_KERNELS and TESSERA_TRACE apply (the environment's other settings are the table's).
        tessera::FactorOptions options = tessera::FactorOptions::from_environment();
        options.grain = tessera::TaskGrain::automatic;
        options.uplo = uplo;
        options.nb = nb_choice;
        options.mode = tessera::Mode::gpu;
        Timing resident, device_chosen, device_tiles;
        if (s.wanted("resident") && uplo == tessera::Uplo::lower)  // the tiles are the same for either triangle
          resident = time_runs(s.repetitions, [&] { return tessera::bench::time_resident_potrf(runtime, n, nb, A, options); });
        if (s.wanted("device")) {
          T* dA = nullptr;
          TESSERA_CUDA_CHECK(cudaMalloc(&dA, sizeof(T) * A.size()));
          tessera::FactorOptions device_options = options;
          device_options.grain = tessera::TaskGrain::tiles;
          device_tiles = time_runs(s.repetitions, [&] { return time_device(runtime, n, A, device_options, dA); });
          device_options.grain = tessera::TaskGrain::automatic;
          device_chosen = time_runs(s.repetitions, [&] { return time_device(runtime, n, A, device_options, dA); });
          TESSERA_CUDA_CHECK(cudaFree(dA));
        }
        std::map<std::string, Timing> e2e;
        double error_gpu = nan_value;
        for (tessera::Mode mode : {tessera::Mode::gpu, tessera::Mode::hybrid, tessera::Mode::automatic}) {
          if (!s.wanted(tessera::to_string(mode))) continue;
          options.mode = mode;
          e2e[tessera::to_string(mode)] =
              time_end_to_end(runtime, n, A, options, s.repetitions,
                              mode == tessera::Mode::gpu && n <= s.backward_error_max_n ? &error_gpu : nullptr);
        }
        auto med = [&](const char* m) { return e2e.count(m) ? e2e[m].median : nan_value; };
        auto first = [&](const char* m) { return e2e.count(m) ? e2e[m].first : nan_value; };
        fmt::print(
            "{:>6} {:>2} {:>5} | {:>7.2f} {:>7.2f} {:>7.2f} | {:>7.2f} {:>7.2f} {:>7.2f} | {:>7.2f} {:>7.2f} {:>7.2f} | "
            "{:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>8.2f} {:>8.2f}\n",
            n, uplo == tessera::Uplo::lower ? "L" : "U", nb, tflops(n, cus.resident.median), tflops(n, cus.pinned.median),
            tflops(n, cus.pageable.median), tflops(n, resident.median), tflops(n, device_chosen.median),
            tflops(n, device_tiles.median), tflops(n, med("gpu")), tflops(n, med("hybrid")), tflops(n, med("auto")),
            cus.resident.median / resident.median, cus.resident.median / device_chosen.median,
            cus.resident.median / med("gpu"),
            cus.pinned.median / med("gpu"), cus.pinned.median / med("auto"), med("gpu") / med("hybrid"),
            med("gpu") / med("auto"));
        rows.push_back({{"precision", std::string(1, letter)}, {"n", n}, {"uplo", uplo == tessera::Uplo::lower ? "L" : "U"},
                        {"nb", nb}, {"gemm_tflops", roofline},
                        {"cusolver_resident_s", cus.resident.median}, {"cusolver_pinned_s", cus.pinned.median},
                        {"cusolver_pageable_s", cus.pageable.median}, {"tessera_resident_s", resident.median},
                        {"tessera_resident_first_s", resident.first},
                        {"tessera_device_s", device_chosen.median},
                        {"tessera_device_first_s", device_chosen.first},
                        {"tessera_device_tiles_s", device_tiles.median}, {"tessera_gpu_s", med("gpu")},
                        {"tessera_gpu_first_s", first("gpu")}, {"tessera_hybrid_s", med("hybrid")},
                        {"tessera_hybrid_first_s", first("hybrid")}, {"tessera_auto_s", med("auto")},
                        {"tessera_auto_first_s", first("auto")}, {"backward_error_gpu", error_gpu}});
        for (const auto& [mode, timing] : e2e) rows.back()["tessera_" + mode + "_runs_s"] = timing.runs;
        if (energy) {
          std::map<std::string, double> medians;
          if (!std::isnan(resident.median)) medians["resident"] = resident.median;
          if (!std::isnan(device_chosen.median)) medians["device"] = device_chosen.median;
          for (const auto& [mode, timing] : e2e) medians[mode] = timing.median;
          json cells = tessera_energy<T>(runtime, *energy, s, n, nb, A, options, medians);
          if (s.peers != "none") cells["cusolver_resident"] = energy_cell(cus.resident_energy, n);
          if (s.peers == "cusolver") cells["cusolver_pinned"] = energy_cell(cus.pinned_energy, n);
          print_energy(n, cells);
          rows.back()["energy"] = cells;
        }
        save(rows, s.json_path);
        for (tessera::TaskGrain grain : s.grains) {
          if (uplo != tessera::Uplo::lower) break;
          tessera::FactorOptions in_grain = options;
          in_grain.mode = tessera::Mode::gpu;
          in_grain.grain = grain;
          Timing resident_in_grain, device_in_grain;
          if (s.wanted("resident"))
            resident_in_grain = time_runs(s.repetitions, [&] { return tessera::bench::time_resident_potrf(runtime, n, nb, A, in_grain); });
          if (s.wanted("device")) {
            T* dA = nullptr;
            TESSERA_CUDA_CHECK(cudaMalloc(&dA, sizeof(T) * A.size()));
            device_in_grain = time_runs(s.repetitions, [&] { return time_device(runtime, n, A, in_grain, dA); });
            TESSERA_CUDA_CHECK(cudaFree(dA));
          }
          fmt::print("{:>6} {:>2} {:>5} | grain {:<13}: tiles on GPU {:>7.2f} TFLOP/s ({:.3f}x cus-res), device API {:>7.2f} "
                     "TFLOP/s ({:.3f}x cus-res)\n",
                     n, "L", nb, tessera::to_string(grain), tflops(n, resident_in_grain.median),
                     cus.resident.median / resident_in_grain.median, tflops(n, device_in_grain.median),
                     cus.resident.median / device_in_grain.median);
          rows.push_back({{"precision", std::string(1, letter)}, {"n", n}, {"nb", nb}, {"grain", tessera::to_string(grain)},
                          {"cusolver_resident_s", cus.resident.median}, {"tessera_resident_s", resident_in_grain.median},
                          {"tessera_device_s", device_in_grain.median}});
          save(rows, s.json_path);
        }
        double first_choice = nan_value;  // the resident factorization with each choice of GPU kernels
        for (tessera::GpuKernels kernels : s.kernel_choices) {
          if (uplo != tessera::Uplo::lower) break;
          tessera::FactorOptions choice;
          choice.mode = tessera::Mode::gpu;
          choice.gpu_kernels = kernels;
          const double t = time_runs(s.repetitions, [&] { return tessera::bench::time_resident_potrf(runtime, n, nb, A, choice); }).median;
          if (std::isnan(first_choice)) first_choice = t;
          fmt::print("{:>6} {:>2} {:>5} | tiles on GPU, gpu kernels {:<6}: {:>7.2f} TFLOP/s, {:.3f}x {}\n", n, "L", nb,
                     tessera::to_string(kernels), tflops(n, t), first_choice / t,
                     tessera::to_string(s.kernel_choices.front()));
          rows.push_back({{"precision", std::string(1, letter)}, {"n", n}, {"nb", nb},
                          {"gpu_kernels", tessera::to_string(kernels)}, {"tessera_resident_s", t}});
          save(rows, s.json_path);
        }
      }
    }
  }
}

using tessera::bench::parse_int_list;
using tessera::bench::split_commas;

// The PCI addresses of the CUDA devices this process sees, by which NVML finds the same GPUs.
std::vector<std::string> cuda_pci_bus_ids() {
  int count = 0;
  TESSERA_CUDA_CHECK(cudaGetDeviceCount(&count));
  std::vector<std::string> ids;
  for (int d = 0; d < count; ++d) {
    char id[32] = {};
    TESSERA_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, d));
    ids.emplace_back(id);
  }
  return ids;
}

int usage(const char* program) {
  fmt::print(stderr,
             "usage: {} [--sizes N,...] [--precisions d,s] [--uplos L,U] [--nb NB,...] [--repetitions R]\n"
             "       [--modes resident,device,gpu,hybrid,auto] [--gpu-kernels vendor,custom,any] [--peers cusolver|resident|none]\n"
             "       [--grains tiles,block-columns,whole-matrix,auto] [--backward-error-max-n N]\n"
             "       [--energy-seconds S] [--json FILE]\n",
             program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) return usage(argv[0]);
      const std::string value = argv[++i];
      if (arg == "--sizes") s.sizes = parse_int_list(value);
      else if (arg == "--nb") s.tile_sizes = parse_int_list(value);
      else if (arg == "--precisions") s.precisions = split_commas(value);
      else if (arg == "--repetitions") s.repetitions = std::stoi(value);
      else if (arg == "--json") s.json_path = value;
      else if (arg == "--backward-error-max-n") s.backward_error_max_n = std::stoi(value);
      else if (arg == "--modes") s.modes = value;
      else if (arg == "--energy-seconds") s.energy_seconds = std::stod(value);
      else if (arg == "--peers") {
        if (value != "cusolver" && value != "resident" && value != "none") return usage(argv[0]);
        s.peers = value;
      }
      else if (arg == "--uplos") {
        s.uplos.clear();
        for (const std::string& u : split_commas(value)) s.uplos.push_back(tessera::parse_uplo(u));
      } else if (arg == "--grains") {
        for (const std::string& g : split_commas(value)) s.grains.push_back(tessera::parse_task_grain(g));
      } else if (arg == "--gpu-kernels") {
        for (const std::string& name : split_commas(value)) s.kernel_choices.push_back(tessera::parse_gpu_kernels(name));
      } else return usage(argv[0]);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_potrf: {}\n", e.what());
    return 2;
  }
  try {
    tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
    if (runtime.cuda_workers() == 0) throw std::runtime_error("no CUDA worker: this benchmark needs a GPU");
    cudaDeviceProp props{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    const tessera::ModeChoice automatic = runtime.automatic_mode();
    fmt::print("{}; Tessera runtime: {} CPU + {} CUDA workers on {} GPU(s), scheduler {}; auto runs {} ({})\n",
               props.name, runtime.cpu_workers(), runtime.cuda_workers(), runtime.cuda_devices(), runtime.scheduler(),
               tessera::to_string(automatic.mode), automatic.reason);
    std::unique_ptr<EnergyMeter> meter;
    if (s.energy_seconds > 0) {
      meter = std::make_unique<EnergyMeter>(cuda_pci_bus_ids());
      meter->measure_idle(1.0);
      fmt::print("{}; idle: GPUs {:.0f} W, host {:.0f} W\n", meter->description(), meter->idle_gpu_watts(),
                 meter->idle_host_watts());
      if (!meter->gpu_available()) meter.reset();
    }
    std::fflush(stdout);
    json rows = json::array();
    for (const std::string& p : s.precisions) {
      if (p == "d") run_precision<double>(runtime, s, rows, meter.get());
      else if (p == "s") run_precision<float>(runtime, s, rows, meter.get());
      else throw std::runtime_error("unknown precision '" + p + "' (d or s)");
    }
    fmt::print(
        "(TFLOP/s with n^3/3 flops, medians of {} runs after a warm-up. cus-res: cuSOLVER, matrix on the GPU; cus-pin, "
        "cus-pag: with copies from and to pinned / pageable memory. T-res: Tessera gpu mode, tiles on the GPU; T-dev, "
        "T-devt: Tessera's device API on the matrix in GPU memory, in the grain it chooses and in tile tasks (dev/cus: T-dev against "
        "cus-res); T-gpu, "
        "T-hyb, T-auto: Tessera end to end from the caller's array. gpu/cusR: T-gpu against cus-res; gpu/cusP, auto/cusP: "
        "against cus-pin)\n",
        s.repetitions);
    save(rows, s.json_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_potrf: {}\n", e.what());
    return 1;
  }
  return 0;
}
