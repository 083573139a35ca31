// Every policy `tessera policies` lists completes factorizations in each mode it claims and this
// machine can run, each in a process of its own (StarPU starts one policy per process) and
// under a CTest timeout, so a policy that spins fails instead of hanging the suite. Policies that
// cannot complete are not listed, and are refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support.hpp"
#include "reliability_support.hpp"
#include "tessera/policies.hpp"

namespace tessera::test {
namespace {

std::vector<std::string> listed_policy_names() {
  std::vector<std::string> names;
  for (const PolicyInfo& p : scheduling_policies()) names.push_back(p.name);
  return names;
}

PolicyInfo listed(const std::string& name) {
  for (const PolicyInfo& p : scheduling_policies())
    if (p.name == name) return p;
  throw InvalidArgument("not listed: " + name);
}

class ListedPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(ListedPolicy, CompletesFactorizationsInEveryModeItClaims) {
  RuntimeOptions options = RuntimeOptions::from_environment();
  options.scheduler = GetParam();
  if (options.ncpus < 0) options.ncpus = 2;
  Runtime rt(options);
  int ran = 0;
  for (const Mode mode : listed(GetParam()).modes) {
    if (mode != Mode::cpu && rt.cuda_workers() == 0) continue;  // needs a GPU
    for (const auto& [n, nb] : {std::pair{1, 8}, {97, 32}, {260, 64}}) {
      SCOPED_TRACE(std::string(to_string(mode)) + " n=" + std::to_string(n));
      const std::vector<double> A = random_spd<double>(n, n, 11u + n);
      std::vector<double> F = A;
      FactorOptions factor;
      factor.mode = mode;
      factor.nb = nb;
      ASSERT_EQ(potrf(rt, n, F.data(), n, factor), 0);
      EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), kResidualThreshold);
      ++ran;
    }
  }
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, ListedPolicy, ::testing::ValuesIn(listed_policy_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Under these a factorization spun for ever (graph_test) or never started (modular-heteroprio-heft).
TEST(UnlistedPolicy, PoliciesThatNeverCompleteAreRefusedByName) {
  for (const std::string never : {"graph_test", "modular-heteroprio-heft"}) {
    for (const std::string& name : listed_policy_names()) EXPECT_NE(name, never);
    RuntimeOptions options;
    options.ncpus = 1;
    options.scheduler = never;
    EXPECT_THROW(Runtime rt(options), InvalidArgument) << never;
  }
}

}  // namespace
}  // namespace tessera::test
