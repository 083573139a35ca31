// Tessera inside an application that runs StarPU itself: the application starts StarPU before any
// Tessera call and shuts it down at the end; Tessera attaches and never shuts it down.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>

#include "../application_tasks.hpp"
#include "../test_support.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

// An application task, submitted by the application itself.
void run_application_task() {
  static starpu_codelet codelet = make_application_codelet();
  ASSERT_EQ(starpu_task_insert(&codelet, 0), 0);
  starpu_task_wait_for_all();
}

TEST(Attach, RuntimeAttachesAndLeavesStarpuRunning) {
  {
    Runtime attached;
    EXPECT_TRUE(attached.attached());
    EXPECT_EQ(attached.cpu_workers(), 2);
    const std::vector<double> A = random_spd<double>(100, 100, 1);
    std::vector<double> F = A;
    FactorOptions options;
    options.nb = 16;
    ASSERT_EQ(potrf(attached, 100, F.data(), 100, options), 0);
    EXPECT_LT(factor_backward_error(Uplo::lower, 100, A, F, 100), 1.0);
  }
  EXPECT_TRUE(starpu_is_initialized());
  const int before = application_tasks_run.load();
  run_application_task();
  EXPECT_EQ(application_tasks_run.load(), before + 1);
}

TEST(Attach, CApiUsesTheApplicationsStarpu) {
  const int before = application_tasks_run.load();
  run_application_task();
  const std::vector<double> A = random_spd<double>(77, 77, 2);
  std::vector<double> F = A;
  ASSERT_EQ(tessera_dpotrf('L', 77, F.data(), 77), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, 77, A, F, 77), 1.0);
  EXPECT_TRUE(Runtime::shared().attached());
  run_application_task();
  EXPECT_EQ(application_tasks_run.load(), before + 2);
}

}  // namespace
}  // namespace tessera::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = 2;
  conf.ncuda = 0;
  if (starpu_init(&conf) != 0) return 1;
  const int result = RUN_ALL_TESTS();
  starpu_shutdown();
  return result;
}
