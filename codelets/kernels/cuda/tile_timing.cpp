#include "tile_timing.hpp"

#include <algorithm>
#include <memory>
#include <random>

#include "check.hpp"
#include "tile_potf2_dataflow.cuh"
#include "tile_potf2_warp.cuh"
#include "vendor.hpp"

namespace tessera::kernels::cuda {

namespace {

// Calls f with the real scalar type of `precision`: Tessera's tile kernels take real scalars
// only, and complex tile tasks run the vendor's.
template <class F>
decltype(auto) with_kernel_scalar_type(Precision precision, F&& f) {
  if (is_complex(precision))
    throw InvalidArgument(std::string("Tessera's tile kernels take real scalars, not ") + scalar_name(precision));
  return precision == Precision::single_real ? f(float{}) : f(double{});
}

}  // namespace

std::string current_gpu_name() {
  int dev = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return prop.name;
}

// ---- candidates ----------------------------------------------------------------------------

std::vector<TileKernelConfig> tile_kernel_candidates(Precision precision, const std::string& op, int nb) {
  std::vector<TileKernelConfig> out;
  const auto cfg = [](int ib, int threads, int tile, int tile_n, int variant, int crossover) {
    TileKernelConfig c;
    c.ib = ib, c.threads = threads, c.tile = tile, c.tile_n = tile_n, c.variant = variant, c.crossover = crossover;
    return c;
  };
  if (op == "gemm") {
    out = {cfg(0, 128, 32, 32, 0, 0),  cfg(0, 128, 32, 64, 0, 0),
           cfg(0, 128, 64, 32, 0, 0),  cfg(0, 128, 64, 64, 0, 0),
           cfg(0, 256, 64, 64, 0, 0),  cfg(0, precision == Precision::double_real ? 128 : 256, 128, 64, 0, 0),
           cfg(0, 256, 128, 128, 0, 0)};
  } else if (op == "syrk") {
    out = {cfg(0, 128, 32, 32, 0, 0), cfg(0, 128, 64, 64, 0, 0), cfg(0, 256, 64, 64, 0, 0),
           cfg(0, 256, 128, 128, 0, 0)};
  } else if (op == "trsm") {
    for (int ib : {32, 64}) {
      for (int tile : {32, 64}) out.push_back(cfg(ib, 0, tile, 0, 2, 0));
      for (int threads : {64, 128}) out.push_back(cfg(ib, threads, 0, 0, 1, 0));
    }
  } else if (op == "potf2") {
    for (int ib : {16, 32}) {
      const int max_fused =
          with_kernel_scalar_type(precision, [&](auto x) { return potf2_fused_max_n<decltype(x)>(ib); });
      for (int threads : {128, 256}) {
        if (nb <= max_fused) out.push_back(cfg(ib, threads, 0, 0, 0, nb));  // one fused kernel
        for (int cross : {64, 96, 128, 160, 192, 256}) {
          if (cross < nb && cross <= max_fused) out.push_back(cfg(ib, threads, 0, 0, 0, cross));
        }
      }
    }
    // Variant 2, the diagonal block in one warp: every instantiated row count.
    for (const detail::WarpPanelShape& s : detail::kWarpPanelShapes)
      out.push_back(cfg(s.width, s.width + s.rows, s.rows, 0, 2, 0));
    // Variant 3, the whole tile in one persistent kernel: every shape, up to nb = 1024. At 2048 it
    // was barely faster than cuSOLVER alone and slower in the task graph, where its cooperative
    // launch waits for SMs that the trailing update holds (docs/kernels-tile.md, section "potf2").
    if (nb <= 1024 && detail::cooperative_launch_supported())
      for (const detail::DataflowShape& s : detail::kDataflowShapes)
        out.push_back(cfg(32, 32 + s.rows, s.rows, 0, 3, s.blocks));
  } else {
    throw InvalidArgument("tile_kernel_candidates: unknown op " + op);
  }
  return out;
}

// ---- timing --------------------------------------------------------------------------------

namespace {

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(std::size_t count) {
    if (count) TESSERA_CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    TESSERA_CUDA_CHECK(cudaEventCreate(&start));
    TESSERA_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

template <class T>
std::vector<T> random_general(int rows, int cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(rows) * cols);
  for (T& x : a) x = static_cast<T>(u(rng));
  return a;
}

// Lower triangle with a dominant diagonal in [1, 2] (upper part zero): well conditioned.
template <class T>
std::vector<T> random_lower(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(n) * n, T(0));
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r)
      a[r + static_cast<std::size_t>(c) * n] = static_cast<T>(r == c ? 1.5 + 0.5 * u(rng) : u(rng) / n);
  return a;
}

// Symmetric, diagonally dominant: SPD.
template <class T>
std::vector<T> random_spd(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(n) * n);
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r) {
      const double v = r == c ? n + 1.0 + u(rng) : u(rng);
      a[r + static_cast<std::size_t>(c) * n] = static_cast<T>(v);
      a[c + static_cast<std::size_t>(r) * n] = static_cast<T>(v);
    }
  return a;
}

// The vendor handles on one stream, for timing the vendor calls.
struct VendorHandles {
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  explicit VendorHandles(cudaStream_t stream) {
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas, stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
  }
  ~VendorHandles() {
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
  }
  VendorHandles(const VendorHandles&) = delete;
  VendorHandles& operator=(const VendorHandles&) = delete;
};

// Median time of op at order nb: Tessera's kernel with cfg, or the vendor call when `vendor`.
template <class T>
double time_op(const std::string& op, int nb, const TileKernelConfig& cfg, bool vendor, int repetitions,
               std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t elems = static_cast<std::size_t>(nb) * nb;
  // Enough copies of the operand the call overwrites that a batch lasts well above the event
  // resolution, bounded by memory.
  const int copies =
      static_cast<int>(std::clamp<std::size_t>((std::size_t{64} << 20) / (elems * sizeof(T) + 1), 2, 16));
  std::vector<T> in = op == "potf2" ? random_spd<T>(nb, rng) : random_general<T>(nb, nb, rng);
  std::vector<T> a = op == "trsm" ? random_lower<T>(nb, rng) : random_general<T>(nb, nb, rng);
  std::vector<T> b = random_general<T>(nb, nb, rng);

  DeviceBuffer<T> pristine(elems), work(elems * copies), dA(elems), dB(elems);
  DeviceBuffer<int> info(copies);
  TESSERA_CUDA_CHECK(cudaMemcpy(pristine.ptr, in.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(dA.ptr, a.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(dB.ptr, b.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamCreate(&stream));
  std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> stream_guard(stream,
                                                                    [](cudaStream_t s) { cudaStreamDestroy(s); });
  std::unique_ptr<VendorHandles> handles = vendor ? std::make_unique<VendorHandles>(stream) : nullptr;
  std::size_t ws_bytes = 0;
  int lwork = 0;
  if (vendor && op == "potf2") {
    lwork = vendor::potrf_workspace(handles->solver, 'L', nb, work.ptr, nb);
    ws_bytes = static_cast<std::size_t>(lwork) * sizeof(T);
  } else if (!vendor && op == "trsm") {
    ws_bytes = trsm_rlt_workspace_bytes<T>(nb, nb, cfg);
  } else if (!vendor && op == "potf2") {
    ws_bytes = potf2_workspace_bytes<T>(nb, cfg);
  }
  DeviceBuffer<unsigned char> ws(ws_bytes);
  Events ev;

  const auto run_vendor = [&](T* x, int i) {
    if (op == "potf2")
      vendor::potrf(handles->solver, 'L', nb, x, nb, reinterpret_cast<T*>(ws.ptr), lwork, info.ptr + i);
    else if (op == "trsm")
      vendor::trsm(handles->blas, false, 'L', Trans::conjugate_transpose, nb, nb, T(1), dA.ptr, nb, x, nb);
    else if (op == "syrk")
      vendor::syrk(handles->blas, 'L', Trans::no, nb, nb, T(-1), dA.ptr, nb, T(1), x, nb);
    else
      vendor::gemm(handles->blas, Trans::no, Trans::conjugate_transpose, nb, nb, nb, T(-1), dA.ptr, nb, dB.ptr, nb,
                   T(1), x, nb);
  };
  const auto run_one = [&](int i) {
    T* x = work.ptr + elems * i;
    if (vendor)
      run_vendor(x, i);
    else if (op == "potf2")
      potf2<T>(nb, x, nb, info.ptr + i, ws.ptr, ws_bytes, stream, cfg);
    else if (op == "trsm")
      trsm_rlt<T>(nb, nb, dA.ptr, nb, x, nb, ws.ptr, ws_bytes, stream, cfg);
    else if (op == "syrk")
      syrk_ln<T>(nb, nb, dA.ptr, nb, x, nb, stream, cfg);
    else
      gemm_nt<T>(nb, nb, nb, dA.ptr, nb, dB.ptr, nb, x, nb, stream, cfg);
  };
  std::vector<double> samples;
  for (int rep = -1; rep < repetitions; ++rep) {  // rep -1: warm-up
    for (int i = 0; i < copies; ++i)
      TESSERA_CUDA_CHECK(
          cudaMemcpyAsync(work.ptr + elems * i, pristine.ptr, elems * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    for (int i = 0; i < copies; ++i) run_one(i);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    if (rep >= 0) samples.push_back(1000.0 * ms / copies);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

double time_tile_kernel(Precision precision, const std::string& op, int nb, const TileKernelConfig& cfg,
                        int repetitions, std::uint64_t seed) {
  if (nb <= 0 || repetitions <= 0) throw InvalidArgument("time_tile_kernel: nb and repetitions must be positive");
  return with_kernel_scalar_type(precision,
                                 [&](auto x) { return time_op<decltype(x)>(op, nb, cfg, false, repetitions, seed); });
}

double time_vendor_tile_kernel(Precision precision, const std::string& op, int nb, int repetitions,
                               std::uint64_t seed) {
  if (nb <= 0 || repetitions <= 0)
    throw InvalidArgument("time_vendor_tile_kernel: nb and repetitions must be positive");
  return with_kernel_scalar_type(precision,
                                 [&](auto x) { return time_op<decltype(x)>(op, nb, {}, true, repetitions, seed); });
}

}  // namespace tessera::kernels::cuda
