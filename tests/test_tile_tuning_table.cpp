// The tile kernels' tuning table (src/runtime/cuda/tile_tuning_table.hpp): JSON, nearest-nb lookup,
// the faster implementation per tile size, the table compiled into the library, and the tuning
// request's checks. No GPU needed.
#include <gtest/gtest.h>

#ifdef TESSERA_HAVE_CUDA
#include <cstdio>
#include <fstream>
#include <string>

#include "tessera/error.hpp"
#include "tessera/tools/tuning.hpp"
#include "tile_tuning_table.hpp"

namespace tessera::detail {
const char* default_tile_tuning_json();  // generated from src/runtime/cuda/tuning/sm_90.json
}

namespace {

using tessera::detail::FasterKernel;
using tessera::detail::FasterKernels;
using tessera::detail::TileTuningTable;
using tessera::kernels::cuda::TileKernelConfig;
constexpr tessera::Precision kDouble = tessera::Precision::double_real;
constexpr tessera::Precision kSingle = tessera::Precision::single_real;

TEST(TileTuningTable, JsonRoundTripAndNearestLookup) {
  TileTuningTable t;
  TileKernelConfig a;
  a.tile = 64, a.tile_n = 32, a.threads = 128;
  TileKernelConfig b;
  b.ib = 32, b.threads = 256, b.crossover = 128;
  t.set({"GPU X", kDouble, "gemm", 256, a, 10.5});
  t.set({"GPU X", kDouble, "gemm", 1024, b, 99.0});
  t.set({"GPU X", kSingle, "gemm", 256, b, 1.0});
  const TileTuningTable u = TileTuningTable::from_json(t.to_json());
  ASSERT_EQ(u.entries().size(), 3u);
  EXPECT_EQ(*u.lookup("GPU X", kDouble, "gemm", 300), a);
  EXPECT_EQ(*u.lookup("GPU X", kDouble, "gemm", 700), b);  // log-nearest: 700 is closer to 1024
  EXPECT_EQ(*u.lookup("GPU X", kDouble, "gemm", 512), a);  // tie: the smaller nb
  EXPECT_EQ(*u.lookup("GPU X", kSingle, "gemm", 4096), b);
  EXPECT_FALSE(u.lookup("GPU Y", kDouble, "gemm", 256).has_value());
  EXPECT_FALSE(u.lookup("GPU X", kDouble, "syrk", 256).has_value());
}

TEST(TileTuningTable, SetReplacesTheEntryOfTheSameKey) {
  TileTuningTable t;
  TileKernelConfig a, b;
  a.threads = 128;
  b.threads = 256;
  t.set({"GPU X", kDouble, "trsm", 512, a, 10.0});
  t.set({"GPU X", kDouble, "trsm", 512, b, 8.0});
  ASSERT_EQ(t.entries().size(), 1u);
  EXPECT_EQ(*t.lookup("GPU X", kDouble, "trsm", 512), b);
}

TEST(TileTuningTable, MalformedTextIsAnInvalidArgument) {
  for (const char* text : {"{\"entries\": [{\"gpu\": 1}]}", "not json", "{}",
                           "{\"entries\": [{\"gpu\": \"G\", \"precision\": \"z\", \"op\": \"gemm\", \"nb\": 64}]}",
                           "{\"entries\": [{\"gpu\": \"G\", \"precision\": \"d\", \"op\": \"lu\", \"nb\": 64}]}"})
    EXPECT_THROW(TileTuningTable::from_json(text), tessera::InvalidArgument) << text;
  EXPECT_THROW(TileTuningTable::load("/nonexistent/tuning.json"), tessera::InvalidArgument);
}

TEST(TileTuningTable, SavedFileLoadsBack) {
  TileTuningTable t;
  TileKernelConfig a;
  a.variant = 3, a.tile = 96, a.threads = 128, a.crossover = 132;
  t.set({"GPU X", kDouble, "potf2", 512, a, 300.0, 250.0});
  const std::string path = ::testing::TempDir() + "tessera_tuning_table_test.json";
  t.save(path);
  const TileTuningTable u = TileTuningTable::load(path);
  std::remove(path.c_str());
  ASSERT_EQ(u.entries().size(), 1u);
  EXPECT_EQ(u.entries()[0].cfg, a);
  EXPECT_EQ(u.entries()[0].time_us, 300.0);
  EXPECT_EQ(u.entries()[0].vendor_time_us, 250.0);
}

// The table's rule for GpuKernels::any.
TEST(TileTuningTable, FasterKernelFromBothTimings) {
  TileTuningTable t;
  t.set({"GPU X", kDouble, "potf2", 512, {}, 300.0, 200.0});    // the vendor's faster
  t.set({"GPU X", kDouble, "potf2", 2048, {}, 900.0, 1000.0});  // Tessera's faster
  t.set({"GPU X", kDouble, "trsm", 512, {}, 100.0, 0.0});       // vendor not timed
  t.set({"GPU X", kSingle, "potf2", 512, {}, 100.0, 200.0});
  const TileTuningTable u = TileTuningTable::from_json(t.to_json());
  EXPECT_EQ(u.entries()[0].vendor_time_us, 200.0);
  for (const TileTuningTable& table : {t, u}) {
    const FasterKernels gpu_x(table, "GPU X"), gpu_y(table, "GPU Y");
    for (int nb : {256, 512, 1000, 1024}) {  // 1024 ties between 512 and 2048: the smaller
      EXPECT_EQ(table.faster("GPU X", kDouble, "potf2", nb), FasterKernel::vendor) << nb;
      EXPECT_EQ(gpu_x.at(kDouble, "potf2", nb), FasterKernel::vendor) << nb;
    }
    for (int nb : {1100, 2048, 8192}) {
      EXPECT_EQ(table.faster("GPU X", kDouble, "potf2", nb), FasterKernel::custom) << nb;
      EXPECT_EQ(gpu_x.at(kDouble, "potf2", nb), FasterKernel::custom) << nb;
    }
    EXPECT_EQ(gpu_x.at(kSingle, "potf2", 512), FasterKernel::custom);
    EXPECT_EQ(table.faster("GPU X", kDouble, "trsm", 512), FasterKernel::unknown);
    EXPECT_EQ(gpu_x.at(kDouble, "trsm", 512), FasterKernel::unknown);
    EXPECT_EQ(gpu_x.at(kDouble, "gemm", 512), FasterKernel::unknown);
    EXPECT_EQ(gpu_y.at(kDouble, "potf2", 512), FasterKernel::unknown);
  }
}

// The table the library runs with when no tuning file is named.
TEST(TileTuningTable, CompiledInTableCoversEveryOperation) {
  const TileTuningTable t = TileTuningTable::from_json(tessera::detail::default_tile_tuning_json());
  for (const tessera::Precision p : tessera::kRealPrecisions)
    for (const std::string& op : tessera::tile_operations()) {
      bool found = false;
      for (const auto& e : t.entries()) found |= e.precision == p && e.op == op;
      EXPECT_TRUE(found) << tessera::lapack_letter(p) << ' ' << op;
    }
  // Every entry says which implementation is faster (GpuKernels::any runs that one only).
  for (const auto& e : t.entries())
    EXPECT_GT(e.vendor_time_us, 0.0) << tessera::lapack_letter(e.precision) << ' ' << e.op << ' ' << e.nb;
}

// An operation that is not a tile operation is refused before any GPU is looked for, and no file
// is written.
TEST(TileTuningRequest, UnknownOperationIsRefused) {
  tessera::TuningRequest request;
  request.operations = {"gemm", "lu"};
  const std::string path = ::testing::TempDir() + "tessera_tuning_request_test.json";
  std::remove(path.c_str());
  EXPECT_THROW(tessera::tune_tile_kernels(request, path, nullptr), tessera::InvalidArgument);
  EXPECT_FALSE(std::ifstream(path).good());
}

}  // namespace
#endif  // TESSERA_HAVE_CUDA
