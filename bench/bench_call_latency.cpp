// The time of one device-API call, call by call, against cuSOLVER's potrf on the same matrix in
// GPU memory, in one process: what a program that factors matrices already on the GPU in a loop
// sees (a Gaussian process's hyperparameter search, a Kalman filter). For each order, --repetitions
// calls of each, alternating, the matrix copied back before every call (not timed). Prints the
// 10th, 50th and 90th percentiles and the largest time of each, in microseconds. Tessera's call
// runs three ways: as Tessera chooses (one vendor call on the caller's stream, no task), as one task
// of the runtime (TaskGrain::whole_matrix: what the default was before), and traced (a trace asks
// for the runtime's task; its median is cut into three: from the call to the task's start, the
// task, and from the task's end to the call's return; a trace costs a little, so these are not the
// untraced times).
// The matrix is copied back from host memory (--restore host: 10 ms and more at n = 4096, so the
// runtime's idle workers have gone to sleep before each call) or from a copy in GPU memory
// (--restore device: well under a millisecond, calls nearly back to back, as a loop over matrices
// already on the GPU makes them).
//   bench_call_latency [--sizes N,...] [--repetitions R] [--restore host|device]
//   (default 1024,4096, 60 and host)
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>
#include <starpu.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "kernels/cuda/check.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

// Microseconds on StarPU's clock, the one its task profiling (and so Tessera's traces) uses.
double now_us() { return starpu_timing_now(); }

std::string percentiles(std::vector<double> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  return fmt::format("{:.0f}/{:.0f}/{:.0f}/{:.0f}", v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

struct Samples {
  std::vector<double> cusolver, tessera, runtime_task, to_start, task, to_return;
};

enum class Restore { host, device };

Samples measure(tessera::Runtime& runtime, cusolverDnHandle_t solver, int n, int repetitions, Restore restore) {
  const std::vector<double> A = tessera::testkit::dominant_spd<double>(n, [](int j) { return 17ull + j; });
  const std::size_t bytes = sizeof(double) * A.size();
  double* dA = nullptr;
  double* pristine = nullptr;  // the matrix again in GPU memory, for --restore device
  int* dinfo = nullptr;
  double* work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  if (restore == Restore::device) {
    TESSERA_CUDA_CHECK(cudaMalloc(&pristine, bytes));
    TESSERA_CUDA_CHECK(cudaMemcpy(pristine, A.data(), bytes, cudaMemcpyHostToDevice));
  }
  auto restore_matrix = [&] {
    if (pristine)
      TESSERA_CUDA_CHECK(cudaMemcpy(dA, pristine, bytes, cudaMemcpyDeviceToDevice));
    else
      TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  };
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, n, dA, n, &lwork));
  TESSERA_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * std::max(lwork, 1)));
  Samples s;
  for (int r = 0; r <= repetitions; ++r) {  // the first round warms up
    restore_matrix();
    double start = now_us();
    TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, n, dA, n, work, lwork, dinfo));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    if (r > 0) s.cusolver.push_back(now_us() - start);

    restore_matrix();
    start = now_us();
    if (tessera::device::potrf(runtime, n, dA, n, nullptr, tessera::FactorOptions{}) != 0)
      throw std::runtime_error("device::potrf failed");
    if (r > 0) s.tessera.push_back(now_us() - start);

    restore_matrix();
    tessera::FactorOptions one_task;
    one_task.grain = tessera::TaskGrain::whole_matrix;
    start = now_us();
    if (tessera::device::potrf(runtime, n, dA, n, nullptr, one_task) != 0)
      throw std::runtime_error("device::potrf as one task failed");
    if (r > 0) s.runtime_task.push_back(now_us() - start);

    restore_matrix();
    tessera::FactorOptions traced;
    traced.trace = std::make_shared<tessera::Trace>();
    start = now_us();
    tessera::device::potrf(runtime, n, dA, n, nullptr, traced);
    const double end = now_us();
    const std::vector<tessera::TraceEvent> events = traced.trace->events();
    if (r > 0 && events.size() == 1) {  // one task: the whole matrix (orders up to 16384 on one GPU)
      s.to_start.push_back(events[0].start_us - start);
      s.task.push_back(events[0].end_us - events[0].start_us);
      s.to_return.push_back(end - events[0].end_us);
    }
  }
  cudaFree(work);
  cudaFree(dinfo);
  cudaFree(pristine);
  cudaFree(dA);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{1024, 4096};
  int repetitions = 60;
  Restore restore = Restore::host;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--sizes")
      sizes = tessera::bench::parse_int_list(argv[i + 1]);
    else if (flag == "--repetitions")
      repetitions = std::max(1, std::stoi(argv[i + 1]));
    else if (flag == "--restore" && (std::string(argv[i + 1]) == "host" || std::string(argv[i + 1]) == "device"))
      restore = std::string(argv[i + 1]) == "host" ? Restore::host : Restore::device;
    else {
      fmt::print(stderr, "usage: {} [--sizes N,...] [--repetitions R] [--restore host|device]\n", argv[0]);
      return 2;
    }
  }
  tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
  if (runtime.cuda_workers() == 0) {
    fmt::print(stderr, "bench_call_latency: no CUDA worker\n");
    return 1;
  }
  cusolverDnHandle_t solver = nullptr;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
  fmt::print(
      "{} CPU + {} CUDA workers, scheduler {}; microseconds per call, p10/p50/p90/max over {} calls; matrix restored "
      "from {} memory\n",
      runtime.cpu_workers(), runtime.cuda_workers(), runtime.scheduler(), repetitions,
      restore == Restore::host ? "host" : "GPU");
  fmt::print("{:>6} | {:>22} | {:>22} | {:>8} | {:>22} | {:>8} | {:>27}\n", "n", "cuSOLVER", "Tessera device::potrf",
             "p50 c/T", "as a task of the runtime", "p50 c/R", "traced p50: to start/task/back");
  for (const int n : sizes) {
    const Samples s = measure(runtime, solver, n, repetitions, restore);
    fmt::print("{:>6} | {:>22} | {:>22} | {:>8.2f} | {:>22} | {:>8.2f} | {:>9.0f} {:>8.0f} {:>8.0f}\n", n,
               percentiles(s.cusolver), percentiles(s.tessera), median(s.cusolver) / median(s.tessera),
               percentiles(s.runtime_task), median(s.cusolver) / median(s.runtime_task), median(s.to_start),
               median(s.task), median(s.to_return));
  }
  cusolverDnDestroy(solver);
  return 0;
}
