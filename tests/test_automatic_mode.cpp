// Mode::automatic: the estimate behind the choice, and what a runtime resolves it to.
#include <gtest/gtest.h>

#include "machine.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using detail::GpuThroughput;

const GpuThroughput h100{132, 1.98, 90};        // H100 SXM: 67 TFLOP/s FP64 on its tensor cores
const GpuThroughput consumer{128, 2.52, 89};    // an RTX 4090: FP64 at 1/64 of FP32

TEST(AutomaticMode, EstimatesMatchPublishedPeaks) {
  EXPECT_NEAR(detail::estimated_gpu_gflops(h100), 66900, 200);
  EXPECT_NEAR(detail::estimated_gpu_gflops(consumer), 1290, 10);
  EXPECT_DOUBLE_EQ(detail::estimated_cpu_gflops(16), 640);
}

TEST(AutomaticMode, GpuWhereTheGpusDominate) {
  const ModeChoice choice = detail::choose_automatic_mode(15, {h100});
  EXPECT_EQ(choice.mode, Mode::gpu);
  EXPECT_NE(choice.reason.find("99."), std::string::npos) << choice.reason;
}

TEST(AutomaticMode, HybridWhereTheCpusMatter) {
  EXPECT_EQ(detail::choose_automatic_mode(16, {consumer}).mode, Mode::hybrid);
  // An H100 beside 128 cores: the CPUs hold about 7%, under the 10% worth scheduling onto.
  EXPECT_EQ(detail::choose_automatic_mode(128, {h100}).mode, Mode::gpu);
  EXPECT_EQ(detail::choose_automatic_mode(256, {h100}).mode, Mode::hybrid);
  // A GPU whose attributes could not be read counts as present but adds nothing.
  EXPECT_EQ(detail::choose_automatic_mode(2, {GpuThroughput{}}).mode, Mode::hybrid);
}

TEST(AutomaticMode, EnergyObjectiveRunsOnTheGpusWheneverThereAreAny) {
  const ModeChoice choice = detail::choose_automatic_mode(16, {consumer}, Objective::energy);
  EXPECT_EQ(choice.mode, Mode::gpu);
  EXPECT_NE(choice.reason.find("objective energy"), std::string::npos) << choice.reason;
  EXPECT_EQ(detail::choose_automatic_mode(256, {h100}, Objective::energy).mode, Mode::gpu);
  EXPECT_EQ(detail::choose_automatic_mode(2, {}, Objective::energy).mode, Mode::cpu);
  EXPECT_EQ(detail::choose_automatic_mode(16, {consumer}, Objective::time).mode, Mode::hybrid);
}

TEST(AutomaticMode, ObjectiveNames) {
  EXPECT_EQ(parse_objective("Energy"), Objective::energy);
  EXPECT_EQ(parse_objective("time"), Objective::time);
  EXPECT_STREQ(to_string(Objective::energy), "energy");
  EXPECT_STREQ(to_string(Objective::time), "time");
  EXPECT_THROW(parse_objective("power"), InvalidArgument);
}

TEST(AutomaticMode, CpuWithoutGpus) {
  const ModeChoice choice = detail::choose_automatic_mode(2, {});
  EXPECT_EQ(choice.mode, Mode::cpu);
  EXPECT_EQ(choice.reason, "no CUDA worker");
}

TEST(AutomaticMode, RuntimeResolvesAutoToItsChoice) {
  Runtime& rt = test::runtime();
  const ModeChoice choice = rt.automatic_mode();
  EXPECT_FALSE(choice.reason.empty());
  EXPECT_EQ(rt.resolve(Mode::automatic), choice.mode);
  if (rt.cuda_workers() == 0) EXPECT_EQ(choice.mode, Mode::cpu);
  EXPECT_EQ(parse_mode("auto"), Mode::automatic);
  EXPECT_STREQ(to_string(Mode::automatic), "auto");
  EXPECT_EQ(FactorOptions{}.mode, Mode::automatic);
}

// Where auto runs gpu mode (the GPUs dominate) hybrid takes gpu mode's tiles; elsewhere every
// mode keeps its own (without a GPU, hybrid runs on the CPUs and takes cpu mode's).
TEST(AutomaticMode, HybridTakesGpuTilesWhereTheGpusDominate) {
  Runtime& rt = test::runtime();
  const int cpus = rt.cpu_workers();
  for (const int n : {1, 700, 8192, 16384, 30000})
    for (const Precision dp : {Precision::double_real, Precision::single_real}) {
      SCOPED_TRACE(std::to_string(n) + " " + scalar_name(dp));
      EXPECT_EQ(default_tile_size(rt, n, dp, Mode::cpu), default_tile_size(n, dp, Mode::cpu, cpus));
      EXPECT_EQ(default_tile_size(rt, n, dp, Mode::automatic), default_tile_size(n, dp, rt.automatic_mode().mode, cpus));
      const Mode hybrid_tiles = rt.automatic_mode().mode == Mode::gpu ? Mode::gpu : rt.resolve(Mode::hybrid);
      EXPECT_EQ(default_tile_size(rt, n, dp, Mode::hybrid), default_tile_size(n, dp, hybrid_tiles, cpus));
      if (rt.cuda_workers() > 0)  // gpu mode without a GPU is refused
        EXPECT_EQ(default_tile_size(rt, n, dp, Mode::gpu), default_tile_size(n, dp, Mode::gpu, cpus));
    }
  // The rule's reason: the two modes' own choices differ at 16384.
  EXPECT_EQ(default_tile_size(16384, Precision::double_real, Mode::gpu), 2048);
  EXPECT_EQ(default_tile_size(16384, Precision::double_real, Mode::hybrid), 1024);
}

TEST(AutomaticMode, DefaultOptionsFactorCorrectly) {
  const int n = 97;
  std::vector<double> A = test::random_spd<double>(n, n, 5);
  const std::vector<double> original = A;
  ASSERT_EQ(potrf(test::runtime(), n, A.data(), n, FactorOptions{}), 0);
  EXPECT_LT(test::factor_backward_error(Uplo::lower, n, original, A, n), 10.0);
}

}  // namespace
}  // namespace tessera
