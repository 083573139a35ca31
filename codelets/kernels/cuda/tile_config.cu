// Host-side support of the tile kernels: device properties, the shared-memory opt-in, the
// workspace pool, the gemm block shapes and the built-in default configurations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "tile_common.cuh"

namespace tessera::kernels::cuda::detail {

namespace {

int current_device() {
  int dev = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

struct DeviceInfo {
  std::size_t smem_optin = 0;
  int cc = 0;
  int sms = 0;
  cudaMemPool_t pool = nullptr;
};

std::mutex g_mutex;
std::map<int, DeviceInfo> g_devices;
std::map<std::pair<const void*, int>, std::size_t> g_smem_limits;

DeviceInfo& device_info_locked(int dev) {
  auto it = g_devices.find(dev);
  if (it != g_devices.end()) return it->second;
  DeviceInfo info;
  int v = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  info.smem_optin = static_cast<std::size_t>(v);
  int major = 0, minor = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  info.cc = major * 10 + minor;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&info.sms, cudaDevAttrMultiProcessorCount, dev));
  return g_devices.emplace(dev, info).first->second;
}

}  // namespace

void ensure_dynamic_smem(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(g_mutex);
  std::size_t& set = g_smem_limits[{kernel, dev}];
  if (set >= bytes) return;
  if (bytes > device_info_locked(dev).smem_optin)
    invalid_config("kernel needs " + std::to_string(bytes) +
                   " bytes of shared memory, more than this device offers");
  TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  set = bytes;
}

std::size_t max_dynamic_smem() {
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(g_mutex);
  return device_info_locked(dev).smem_optin;
}

int device_cc() {
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(g_mutex);
  return device_info_locked(dev).cc;
}

int device_sm_count() {
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(g_mutex);
  return device_info_locked(dev).sms;
}

void* pool_alloc(std::size_t bytes, cudaStream_t stream) {
  const int dev = current_device();
  cudaMemPool_t pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceInfo& info = device_info_locked(dev);
    if (!info.pool) {
      cudaMemPoolProps props;
      std::memset(&props, 0, sizeof(props));
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      TESSERA_CUDA_CHECK(cudaMemPoolCreate(&info.pool, &props));
      // Keep freed blocks for reuse instead of returning them at every synchronization.
      std::uint64_t keep = ~std::uint64_t{0};
      TESSERA_CUDA_CHECK(cudaMemPoolSetAttribute(info.pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }
    pool = info.pool;
  }
  void* p = nullptr;
  TESSERA_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool, stream));
  return p;
}

void pool_free(void* p, cudaStream_t stream) {
  if (p) TESSERA_CUDA_CHECK(cudaFreeAsync(p, stream));
}

void invalid_config(const std::string& what) {
  throw InvalidArgument("tile kernels: " + what);
}

// ---- gemm block shapes -------------------------------------------------------------------

const std::vector<GemmShape>& gemm_shapes(Precision precision) {
  static const std::vector<GemmShape> dmma = {{32, 32, 128},  {32, 64, 128},  {64, 32, 128},
                                              {64, 64, 128},  {64, 64, 256},  {128, 64, 128},
                                              {128, 128, 256}};
  static const std::vector<GemmShape> ffma = {{32, 32, 128},  {32, 64, 128},  {64, 32, 128},
                                              {64, 64, 128},  {64, 64, 256},  {128, 64, 256},
                                              {128, 128, 256}};
  return precision == Precision::double_real ? dmma : ffma;
}

GemmShape pick_gemm_shape(Precision precision, GemmMode mode, int m, int n,
                          const TileKernelConfig& cfg) {
  TileKernelConfig c = cfg;
  if (c.tile == 0) {
    const int nb = mode == GemmMode::lower_update
                       ? n
                       : static_cast<int>(std::lround(std::sqrt(double(m) * double(n))));
    c = default_tile_config(precision, mode == GemmMode::lower_update ? "syrk" : "gemm", nb);
  }
  const int bm = c.tile;
  int bn = c.tile_n ? c.tile_n : c.tile;
  if (mode == GemmMode::lower_update) bn = bm;  // syrk tiles are square
  for (const GemmShape& s : gemm_shapes(precision))
    if (s.bm == bm && s.bn == bn && (c.threads == 0 || c.threads == s.threads)) return s;
  if (cfg.tile != 0)
    invalid_config("no gemm block shape " + std::to_string(bm) + "x" + std::to_string(bn) +
                   " with " + std::to_string(c.threads) + " threads");
  return gemm_shapes(precision).front();
}

// ---- built-in defaults -------------------------------------------------------------------

namespace {

struct DefaultEntry {
  char precision;  // LAPACK's letter, as in the JSON tables
  const char* op;
  int nb;
  TileKernelConfig cfg;
};

// Best configurations of the sweep on the H100 (src/runtime/cuda/tuning/sm_90.json); nearest nb applies.
// Fields: ib, threads, tile, tile_n, variant, crossover.
const DefaultEntry kDefaults[] = {
#include "tile_defaults.cuh"
};

}  // namespace

TileKernelConfig default_tile_config(Precision precision, const char* op, int nb) {
  // log(nb) of every entry, computed once.
  static const std::vector<double> log_nb = [] {
    std::vector<double> v;
    for (const DefaultEntry& e : kDefaults) v.push_back(std::log(double(e.nb)));
    return v;
  }();
  const double target = std::log(double(std::max(nb, 1)));
  const DefaultEntry* best = nullptr;
  double best_dist = 0;
  for (std::size_t i = 0; i < std::size(kDefaults); ++i) {
    const DefaultEntry& e = kDefaults[i];
    if (e.precision != lapack_letter(precision) || e.op[0] != op[0] || e.op[1] != op[1]) continue;
    const double dist = std::fabs(log_nb[i] - target);
    if (!best || dist < best_dist) best = &e, best_dist = dist;
  }
  return best ? best->cfg : TileKernelConfig{};
}

}  // namespace tessera::kernels::cuda::detail
