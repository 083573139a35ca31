// The OpenBLAS kernel check of tessera::blas_info: which kernels count as using the CPU's vector
// units, and what is suggested instead of one that does not.
#include <gtest/gtest.h>

#include "blas_kernel.hpp"
#include "tessera/tools/machine.hpp"

namespace tessera::test {
namespace {

using detail::CpuVectorUnits;
using detail::faster_openblas_kernel;

constexpr CpuVectorUnits kAvx512{true, true};
constexpr CpuVectorUnits kAvx2{true, false};
constexpr CpuVectorUnits kNeither{false, false};

TEST(BlasKernel, KernelsWithoutTheCpusVectorUnitsGetOneThatHasThem) {
  // The H100 host's Xeon (family 6, model 207) under OpenBLAS 0.3.21.
  EXPECT_EQ(faster_openblas_kernel("Prescott", kAvx512), "SkylakeX");
  EXPECT_EQ(faster_openblas_kernel("Prescott", kAvx2), "Haswell");
  for (const char* old : {"Core2", "Nehalem", "Sandybridge", "Atom", "Barcelona", "Bulldozer"}) {
    EXPECT_EQ(faster_openblas_kernel(old, kAvx512), "SkylakeX") << old;
    EXPECT_EQ(faster_openblas_kernel(old, kAvx2), "Haswell") << old;
  }
}

TEST(BlasKernel, VectorKernelsAndOlderCpusAreLeftAlone) {
  for (const char* fine : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator"}) {
    EXPECT_EQ(faster_openblas_kernel(fine, kAvx512), "") << fine;
    EXPECT_EQ(faster_openblas_kernel(fine, kAvx2), "") << fine;
  }
  EXPECT_EQ(faster_openblas_kernel("Prescott", kNeither), "");
  EXPECT_EQ(faster_openblas_kernel("", kAvx512), "") << "a BLAS that is not OpenBLAS";
}

TEST(BlasKernel, InfoNamesTheLoadedKernel) {
  const BlasInfo info = blas_info();
#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
  EXPECT_NE(info.library.find("OpenBLAS"), std::string::npos) << info.library;
  EXPECT_FALSE(info.kernel.empty());
  EXPECT_NE(info.library.find(info.kernel), std::string::npos) << "the configuration line names the kernel";
#endif
  EXPECT_EQ(info.faster_kernel, faster_openblas_kernel(info.kernel, detail::cpu_vector_units()));
}

}  // namespace
}  // namespace tessera::test
