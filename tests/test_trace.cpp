// Schedule traces: one event per executed task with its kind, tile, worker and times; Chrome
// trace-event JSON that parses; an SVG that is well-formed XML with one task rectangle per task;
// the file format chosen by extension; TESSERA_TRACE; concurrent requests traced apart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#ifdef TESSERA_TEST_HAVE_EXPAT
#include <expat.h>
#endif

#include "policy_modes.hpp"
#include "tessera/trace.hpp"
#include "test_support.hpp"

namespace tessera::test {
namespace {

// Tasks of a LAPACK-layout potrf on nt x nt tiles: copies in and out, and the factorization.
std::size_t potrf_task_count(int nt) {
  const std::size_t tiles = static_cast<std::size_t>(nt) * (nt + 1) / 2;
  const std::size_t off_diagonal = static_cast<std::size_t>(nt) * (nt - 1) / 2;
  const std::size_t gemms = static_cast<std::size_t>(nt) * (nt - 1) * (nt - 2) / 6;
  return 2 * tiles + nt + 2 * off_diagonal + gemms;
}

std::shared_ptr<Trace> traced_potrf(int n, int nb) {
  std::vector<double> A = random_spd<double>(n, n, 77);
  FactorOptions options;
  options.nb = nb;
  options.mode = a_mode_the_policy_runs();
  options.trace = std::make_shared<Trace>();
  EXPECT_EQ(potrf(runtime(), n, A.data(), n, options), 0);
  return options.trace;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/tessera_test_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Trace, RecordsOneEventPerTaskWithItsTileWorkerAndTimes) {
  const auto trace = traced_potrf(300, 64);  // 5 x 5 tiles
  const std::vector<TraceEvent> events = trace->events();
  EXPECT_EQ(events.size(), potrf_task_count(5));
  std::map<TaskKind, int> per_kind;
  for (const TraceEvent& e : events) {
    ++per_kind[e.kind];
    EXPECT_GE(e.worker, 0);
    EXPECT_FALSE(e.worker_name.empty());
    EXPECT_LE(e.start_us, e.end_us);
    EXPECT_GE(e.i, e.j) << "lower tiles only";
    EXPECT_LT(e.i, 5);
    if (e.kind == TaskKind::potrf) EXPECT_TRUE(e.i == e.step && e.j == e.step);
    if (e.kind == TaskKind::trsm) EXPECT_EQ(e.j, e.step);
    if (e.kind == TaskKind::gemm || e.kind == TaskKind::syrk) EXPECT_GT(e.j, e.step);
  }
  EXPECT_EQ(per_kind[TaskKind::potrf], 5);
  EXPECT_EQ(per_kind[TaskKind::trsm], 10);
  EXPECT_EQ(per_kind[TaskKind::syrk], 10);
  EXPECT_EQ(per_kind[TaskKind::gemm], 10);
  EXPECT_EQ(per_kind[TaskKind::copy_in], 15);
  EXPECT_EQ(per_kind[TaskKind::copy_out], 15);
  for (std::size_t n = 1; n < events.size(); ++n) EXPECT_LE(events[n - 1].start_us, events[n].start_us) << "by start time";
}

TEST(Trace, ChromeJsonParsesWithOneCompleteEventPerTask) {
  const auto trace = traced_potrf(300, 64);
  const nlohmann::json doc = nlohmann::json::parse(trace->chrome_json());
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::set<int> named_threads, used_threads;
  std::size_t tasks = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") {
      EXPECT_EQ(e["name"], "thread_name");
      named_threads.insert(e["tid"].get<int>());
      continue;
    }
    ASSERT_EQ(e["ph"], "X");
    ++tasks;
    const std::string name = e["name"];
    EXPECT_TRUE(name == "potrf" || name == "trsm" || name == "syrk" || name == "gemm" || name == "copy_in" ||
                name == "copy_out")
        << name;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    used_threads.insert(e["tid"].get<int>());
    for (const char* field : {"step", "i", "j", "worker"}) EXPECT_TRUE(e["args"].contains(field)) << field;
  }
  EXPECT_EQ(tasks, potrf_task_count(5));
  EXPECT_EQ(named_threads, used_threads) << "every worker row is named";
}

#ifdef TESSERA_TEST_HAVE_EXPAT
struct SvgCounts {
  int task_rects = 0;
  int titles = 0;
  bool root_is_svg = false;
  int depth = 0;
};

void XMLCALL start_element(void* data, const XML_Char* name, const XML_Char** attributes) {
  auto& counts = *static_cast<SvgCounts*>(data);
  if (counts.depth++ == 0) counts.root_is_svg = std::string(name) == "svg";
  if (std::string(name) == "title") ++counts.titles;
  if (std::string(name) != "rect") return;
  for (int a = 0; attributes[a]; a += 2)
    if (std::string(attributes[a]) == "class" && std::string(attributes[a + 1]) == "task") ++counts.task_rects;
}

void XMLCALL end_element(void* data, const XML_Char*) { --static_cast<SvgCounts*>(data)->depth; }
#endif

// Each traced request carries its plan: in the trace, the JSON and the SVG's description.
TEST(Trace, CarriesThePlanOfEachRequest) {
  const auto trace = traced_potrf(300, 64);
  const std::vector<std::vector<std::string>> plans = trace->plans();
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_GE(plans[0].size(), 2u);
  EXPECT_EQ(plans[0][0].rfind("mode ", 0), 0u) << plans[0][0];
  const std::string tile_size = "tile size 64 (asked for)";
  EXPECT_NE(std::find(plans[0].begin(), plans[0].end(), tile_size), plans[0].end());
  const nlohmann::json doc = nlohmann::json::parse(trace->chrome_json());
  EXPECT_EQ(doc["otherData"]["plans"][0], nlohmann::json(plans[0]));
  EXPECT_NE(trace->svg().find("<desc>plan: mode "), std::string::npos);
  trace->clear();
  EXPECT_TRUE(trace->plans().empty());
}

TEST(Trace, SvgIsWellFormedWithOneRectanglePerTask) {
#ifndef TESSERA_TEST_HAVE_EXPAT
  GTEST_SKIP() << "no XML parser: install libexpat1-dev to check the SVG";
#else
  const auto trace = traced_potrf(300, 64);
  const std::string svg = trace->svg();
  SvgCounts counts;
  XML_Parser parser = XML_ParserCreate(nullptr);
  XML_SetUserData(parser, &counts);
  XML_SetElementHandler(parser, start_element, end_element);
  const bool well_formed = XML_Parse(parser, svg.data(), static_cast<int>(svg.size()), 1) == XML_STATUS_OK;
  const std::string error = well_formed ? "" : XML_ErrorString(XML_GetErrorCode(parser));
  XML_ParserFree(parser);
  ASSERT_TRUE(well_formed) << error;
  EXPECT_TRUE(counts.root_is_svg);
  EXPECT_EQ(counts.task_rects, static_cast<int>(potrf_task_count(5)));
  EXPECT_EQ(counts.titles, counts.task_rects) << "each task carries its tooltip";
  for (const char* legend : {">potrf<", ">trsm<", ">syrk<", ">gemm<", "time (ms)"})
    EXPECT_NE(svg.find(legend), std::string::npos) << legend;
#endif
}

TEST(Trace, WritesTheFormatOfTheExtension) {
  const auto trace = traced_potrf(200, 64);
  const std::string json_path = temp_path("trace.json"), svg_path = temp_path("trace.svg");
  trace->write(json_path);
  trace->write(svg_path);
  EXPECT_EQ(read_file(json_path), trace->chrome_json());
  EXPECT_EQ(read_file(svg_path), trace->svg());
  std::remove(json_path.c_str());
  std::remove(svg_path.c_str());
  EXPECT_THROW(trace->write(temp_path("trace.txt")), InvalidArgument);
  EXPECT_THROW(Trace::check_file_name("trace"), InvalidArgument);
  EXPECT_THROW(trace->write("/nonexistent-directory/trace.json"), Error);
}

TEST(Trace, EnvironmentSwitchWritesEachRequestsTrace) {
  const std::string path = temp_path("env_trace.json");
  std::remove(path.c_str());
  setenv("TESSERA_TRACE", path.c_str(), 1);
  FactorOptions options = FactorOptions::from_environment();
  unsetenv("TESSERA_TRACE");
  ASSERT_NE(options.trace, nullptr);
  options.nb = 64;
  options.mode = a_mode_the_policy_runs();
  std::vector<double> A = random_spd<double>(200, 200, 8);
  EXPECT_EQ(potrf(runtime(), 200, A.data(), 200, options), 0);
  options.trace.reset();  // the request is done: the last reference writes the file
  const nlohmann::json doc = nlohmann::json::parse(read_file(path));
  std::size_t tasks = 0;
  for (const auto& e : doc["traceEvents"]) tasks += e["ph"] == "X";
  EXPECT_EQ(tasks, potrf_task_count(4));
  std::remove(path.c_str());

  setenv("TESSERA_TRACE", "trace.pdf", 1);
  EXPECT_THROW(FactorOptions::from_environment(), InvalidArgument);
  unsetenv("TESSERA_TRACE");
}

TEST(Trace, ConcurrentRequestsKeepTheirOwnTraces) {
  runtime();
  std::shared_ptr<Trace> small, large;
  std::thread a([&] { small = traced_potrf(128, 64); });  // 2 x 2 tiles
  std::thread b([&] { large = traced_potrf(384, 64); });  // 6 x 6 tiles
  a.join();
  b.join();
  EXPECT_EQ(small->events().size(), potrf_task_count(2));
  EXPECT_EQ(large->events().size(), potrf_task_count(6));
}

TEST(Trace, TransfersAddUpPerPairOfMemoryNodes) {
  Trace trace;
  trace.record(TraceTransfer{"NUMA 0", "CUDA 1", 100, 1});
  trace.record(TraceTransfer{"CUDA 0", "CUDA 1", 30, 2});
  trace.record(TraceTransfer{"NUMA 0", "CUDA 1", 50, 3});
  const std::vector<TraceTransfer> moved = trace.transfers();
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].from, "CUDA 0");
  EXPECT_EQ(moved[0].bytes, 30);
  EXPECT_EQ(moved[1].from, "NUMA 0");
  EXPECT_EQ(moved[1].bytes, 150);
  EXPECT_EQ(moved[1].count, 4);
  const nlohmann::json doc = nlohmann::json::parse(trace.chrome_json());
  ASSERT_EQ(doc["otherData"]["transfers"].size(), 2u);
  EXPECT_EQ(doc["otherData"]["transfers"][1]["bytes"], 150);
  EXPECT_NE(trace.svg().find("moved: CUDA 0 to CUDA 1"), std::string::npos);
  trace.clear();
  EXPECT_TRUE(trace.transfers().empty());
}

// In gpu mode the tiles go from host memory to the GPU and back: the trace counts both ways.
TEST(Trace, CountsTheTilesMovedToAndFromTheGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const int n = 512;
  std::vector<double> A = random_spd<double>(n, n, 78);
  FactorOptions options;
  options.nb = 128;
  options.mode = Mode::gpu;
  options.trace = std::make_shared<Trace>();
  ASSERT_EQ(potrf(runtime(), n, A.data(), n, options), 0);
  long long to_gpu = 0, from_gpu = 0;
  for (const TraceTransfer& t : options.trace->transfers()) {
    if (t.to.rfind("CUDA", 0) == 0 && t.from.rfind("CUDA", 0) != 0) to_gpu += t.bytes;
    if (t.from.rfind("CUDA", 0) == 0 && t.to.rfind("CUDA", 0) != 0) from_gpu += t.bytes;
  }
  // The 10 lower tiles of 128 x 128 doubles, each at least once each way.
  const long long lower_tiles = 10LL * 128 * 128 * static_cast<long long>(sizeof(double));
  EXPECT_GE(to_gpu, lower_tiles);
  EXPECT_GE(from_gpu, lower_tiles);
}

TEST(Trace, EmptyTraceStillWritesValidFiles) {
  Trace empty;
  EXPECT_NO_THROW(nlohmann::json::parse(empty.chrome_json()));
  EXPECT_NE(empty.svg().find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace tessera::test
