// Whether OpenBLAS runs a CPU kernel below this CPU's vector units (tessera::blas_info).
#pragma once

#include <string>

namespace tessera::detail {

struct CpuVectorUnits {
  bool avx2_fma = false;  // AVX2 and FMA3
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL, enabled by the OS
};

CpuVectorUnits cpu_vector_units();

// The OpenBLAS kernel to ask for (OPENBLAS_CORETYPE) on a CPU with `cpu`'s vector units when
// OpenBLAS chose `chosen`: SkylakeX or Haswell where `chosen` uses neither AVX2 nor AVX-512 (a
// model OpenBLAS did not recognise), empty where `chosen` does or the CPU has neither.
std::string faster_openblas_kernel(const std::string& chosen, const CpuVectorUnits& cpu);

}  // namespace tessera::detail
