// The benchmarks' energy meter on a RAPL tree written here: which zones count, the counters' wrap,
// a reading from begin() to end(), and the energy per call with the preparation taken off. The GPU
// counters are asked for a PCI address no GPU has, so that they are absent on every machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "energy_meter.hpp"

namespace {

namespace fs = std::filesystem;
using tessera::bench::EnergyMeter;
using tessera::bench::HostEnergyCounters;

class FakePowercap : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tessera-powercap-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    zone("intel-rapl:0", 1000, 10000);
    zone("intel-rapl:0:0", 400, 10000);  // a part of package 0: not counted again
    zone("intel-rapl:1", 500, 1000000);
  }
  void TearDown() override { fs::remove_all(root_); }

  void zone(const std::string& name, std::uint64_t energy_uj, std::uint64_t range_uj) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "max_energy_range_uj") << range_uj << "\n";
    set(name, energy_uj);
  }
  void set(const std::string& name, std::uint64_t energy_uj) { std::ofstream(root_ / name / "energy_uj") << energy_uj << "\n"; }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST_F(FakePowercap, PackagesSummedAndWrapsCorrected) {
  HostEnergyCounters host(root());
  ASSERT_TRUE(host.available()) << host.unavailable_reason();
  EXPECT_EQ(host.zones(), 2u);
  EXPECT_EQ(host.joules(), 0.0);
  set("intel-rapl:0", 3000);
  set("intel-rapl:0:0", 9000);
  EXPECT_NEAR(host.joules(), 2000e-6, 1e-12);
  set("intel-rapl:0", 500);  // wrapped at 10000: 7000 + 500 more
  set("intel-rapl:1", 600);
  EXPECT_NEAR(host.joules(), (2000 + 7500 + 100) * 1e-6, 1e-12);
}

TEST_F(FakePowercap, UnreadableCountersMakeTheHostUnavailable) {
  fs::remove(root_ / "intel-rapl:1" / "energy_uj");
  HostEnergyCounters host(root());
  EXPECT_FALSE(host.available());
  EXPECT_NE(host.unavailable_reason().find("intel-rapl:1/energy_uj"), std::string::npos) << host.unavailable_reason();
  HostEnergyCounters missing(root() + "/absent");
  EXPECT_FALSE(missing.available());
  EXPECT_NE(missing.unavailable_reason().find("absent"), std::string::npos);
}

TEST_F(FakePowercap, ReadingCoversTheWorkBetweenBeginAndEnd) {
  EnergyMeter meter({"0000:ff:1f.7"}, root());
  EXPECT_FALSE(meter.gpu_available());
  ASSERT_TRUE(meter.host_available());
  EXPECT_NE(meter.description().find("host energy: RAPL, 2 package zone(s)"), std::string::npos) << meter.description();
  meter.begin();
  set("intel-rapl:1", 2500);
  const tessera::bench::EnergyReading r = meter.end();
  EXPECT_NEAR(r.host_joules, 2000e-6, 1e-12);
  EXPECT_TRUE(std::isnan(r.gpu_joules));
  EXPECT_GE(r.seconds, 0.0);
  EXPECT_GE(r.cpu_seconds, 0.0);
}

TEST_F(FakePowercap, PerCallTakesThePreparationOff) {
  EnergyMeter meter({"0000:ff:1f.7"}, root());
  std::uint64_t counter = 500;
  int prepared = 0, worked = 0;
  const auto add = [&](std::uint64_t uj) {
    counter += uj;
    set("intel-rapl:1", counter);
  };
  const EnergyMeter::PerCall per = meter.per_call(
      0.0, 5, [&] { ++prepared; add(100); }, [&] { ++worked; add(1000); }, [] {});
  EXPECT_EQ(per.calls, 5);
  EXPECT_EQ(worked, 1 + 5);        // a warm-up call, then the measured ones
  EXPECT_EQ(prepared, 1 + 5 + 5);  // and the preparation alone, as many times
  EXPECT_NEAR(per.energy.host_joules, 1000e-6, 1e-12);
  EXPECT_TRUE(std::isnan(per.energy.gpu_joules));
}

}  // namespace
