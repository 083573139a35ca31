#include "blas_kernel.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>

#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
#include <cblas.h>
#endif

#include "cuda_context.hpp"
#include "environment.hpp"
#include "tessera/blas.hpp"

namespace tessera {

namespace detail {

CpuVectorUnits cpu_vector_units() {
  CpuVectorUnits cpu;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's CPU model checks XGETBV too: a unit the OS does not save is reported absent.
  cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
#endif
  return cpu;
}

std::string faster_openblas_kernel(const std::string& chosen, const CpuVectorUnits& cpu) {
  // OpenBLAS's x86-64 kernels (its DYNAMIC_ARCH names) that use AVX2 and FMA or AVX-512.
  static constexpr std::array<const char*, 6> kVectorKernels = {"Haswell",    "Zen",       "SkylakeX",
                                                                "Cooperlake", "SapphireRapids", "Excavator"};
  const bool vectorized = std::any_of(kVectorKernels.begin(), kVectorKernels.end(),
                                      [&](const char* name) { return chosen == name; });
  if (chosen.empty() || vectorized) return {};
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return {};
}

}  // namespace detail

BlasInfo blas_info() {
  BlasInfo info;
#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
  if (const char* config = openblas_get_config()) info.library = config;
  if (const char* kernel = openblas_get_corename()) info.kernel = kernel;
#endif
  info.kernel_from_environment = detail::openblas_coretype_from_environment().value_or("");
  info.faster_kernel = detail::faster_openblas_kernel(info.kernel, detail::cpu_vector_units());
  return info;
}

void restart_with_faster_blas_kernel(char** argv, Mode mode) {
  const bool cpu_blas =
      mode == Mode::cpu || mode == Mode::hybrid || (mode == Mode::automatic && detail::nvidia_device_nodes() == 0);
  if (!cpu_blas) return;
  const BlasInfo blas = blas_info();
  if (blas.faster_kernel.empty() || !blas.kernel_from_environment.empty()) return;
  if (!detail::set_openblas_coretype(blas.faster_kernel)) return;
  execv("/proc/self/exe", argv);
  detail::unset_openblas_coretype();  // not restarted: go on with the kernel loaded
}

}  // namespace tessera
