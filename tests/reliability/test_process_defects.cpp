// Defects that harmed the caller's process rather than a result: StarPU variables it would abort
// on, corrupt performance-model files, calls from inside a StarPU task or from a forked child,
// workers spinning between calls, a pinned-memory pool that grew on a repeated workload, and
// notes printed unasked. Each TEST runs in its own process (CTest), with no other runtime alive.
#include <cblas.h>
#include <gtest/gtest.h>
#include <starpu.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"
#include "caller_memory.hpp"
#include "cuda_warm_up.hpp"
#include "environment.hpp"
#include "perfmodel_files.hpp"
#include "reliability_support.hpp"
#include "runtime_resources.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

namespace fs = std::filesystem;

RuntimeOptions cpu_workers(int n) {
  RuntimeOptions options;
  options.ncpus = n;
  options.ncuda = 0;
  return options;
}

int factor_small(Runtime& runtime, int n = 96) {
  std::vector<double> A = random_spd<double>(n, n, 7);
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = 32;
  return potrf(runtime, n, A.data(), n, options);
}

// Sets a variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty())
      unsetenv(name_);
    else
      setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

// ---- StarPU variables StarPU would abort on -------------------------------------------------

// An order whose factorization needs tasks (more work than tessera::runs_on_calling_thread takes).
constexpr int kTaskOrder = kOrderThatRunsTasks;

struct BadVariable {
  const char* name;
  const char* value;
};

class BadStarpuVariable : public ::testing::TestWithParam<BadVariable> {};

TEST_P(BadStarpuVariable, IsRefusedBeforeStarpuStartsAndTheProcessGoesOn) {
  {
    const ScopedEnv bad(GetParam().name, GetParam().value);
    try {
      Runtime runtime(cpu_workers(2));
      FAIL() << "the runtime started with " << GetParam().name << "=" << GetParam().value;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(GetParam().value), std::string::npos) << e.what();
    }
    // The C API reports a failure instead of stopping the process, where it needs the runtime;
    // small work runs on the calling thread without one.
    std::vector<double> A = random_spd<double>(kTaskOrder, kTaskOrder, 1);
    EXPECT_EQ(tessera_dpotrf('L', kTaskOrder, A.data(), kTaskOrder), TESSERA_RUNTIME_FAILURE);
    std::vector<double> small = random_spd<double>(20, 20, 1);
    EXPECT_EQ(tessera_dpotrf('L', 20, small.data(), 20), 0);
  }
  // Once the variable is gone, the same process starts the runtime and factors.
  Runtime runtime(cpu_workers(2));
  EXPECT_EQ(factor_small(runtime), 0);
}

INSTANTIATE_TEST_SUITE_P(Variables, BadStarpuVariable,
                         ::testing::Values(BadVariable{"STARPU_NCPU", "-1"}, BadVariable{"STARPU_NCPU", "abc"},
                                           BadVariable{"STARPU_NCUDA", "-1"}, BadVariable{"STARPU_CALIBRATE", "abc"},
                                           BadVariable{"STARPU_NWORKER_PER_CUDA", "-5"},
                                           BadVariable{"STARPU_NWORKER_PER_CUDA", "0"},
                                           BadVariable{"STARPU_NWORKER_PER_CUDA", "100000"},
                                           BadVariable{"STARPU_SYNTHESIZE_ARITY_COMBINED_WORKER", "0"},
                                           BadVariable{"STARPU_LIMIT_CUDA_MEM", "1e3"},
                                           BadVariable{"STARPU_SCHED_ALPHA", "fast"},
                                           BadVariable{"STARPU_SCHED", "bogus"},
                                           BadVariable{"STARPU_SCHED", "graph_test"}),
                         [](const ::testing::TestParamInfo<BadVariable>& param) {
                           std::string name = std::string(param.param.name) + "_" + param.param.value;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name + "_" + std::to_string(param.index);
                         });

TEST(StarpuVariables, ThreadPerCudaWorkerWithThreadPerDeviceIsRefused) {
  const ScopedEnv per_worker("STARPU_CUDA_THREAD_PER_WORKER", "1");
  const ScopedEnv per_device("STARPU_CUDA_THREAD_PER_DEV", "1");
  try {
    Runtime runtime(cpu_workers(2));
    FAIL() << "the runtime started with both thread settings";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("STARPU_CUDA_THREAD_PER_DEV"), std::string::npos) << e.what();
  }
}

// Under dmdas, a runtime started with these priority bounds: refused with a message holding
// `refusal` (nullptr: started and factors).
void expect_priority_bounds(const char* min_prio, const char* max_prio, const char* refusal) {
  const ScopedEnv low("STARPU_MIN_PRIO", min_prio);
  const ScopedEnv high("STARPU_MAX_PRIO", max_prio);
  const ScopedEnv sched("STARPU_SCHED", "dmdas");
  const std::string bounds = std::string("STARPU_MIN_PRIO=") + min_prio + " STARPU_MAX_PRIO=" + max_prio;
  try {
    Runtime runtime(cpu_workers(2));
    if (refusal) ADD_FAILURE() << "the runtime started with " << bounds;
    else EXPECT_EQ(factor_small(runtime), 0) << bounds;
  } catch (const InvalidArgument& e) {
    if (!refusal) ADD_FAILURE() << bounds << " refused: " << e.what();
    else EXPECT_NE(std::string(e.what()).find(refusal), std::string::npos) << e.what();
  }
}

// A fuzzed environment (STARPU_MAX_PRIO empty, STARPU_MIN_PRIO=0) once killed the process with a
// division by zero in StarPU's dmda queues.
TEST(StarpuVariables, PriorityBoundsThatAreNotIncreasingAreRefused) {
  for (const auto& [min_prio, max_prio] : {std::pair{"0", ""}, {"3", "3"}, {"5", "2"}})
    expect_priority_bounds(min_prio, max_prio, "STARPU_MAX_PRIO");
  expect_priority_bounds("0", "4", nullptr);
}

// A fuzzed environment (STARPU_MIN_PRIO=0, STARPU_MAX_PRIO=1882153854) made StarPU's dmda queues
// ask for 17 GB per worker at the start.
TEST(StarpuVariables, PrioritySpansTooLargeToAllocateAreRefused) {
  for (const auto& [min_prio, max_prio] : {std::pair{"0", "1882153854"}, {"0", "2147483647"}, {"10", "65546"}})
    expect_priority_bounds(min_prio, max_prio, "priority levels");
  expect_priority_bounds("0", "65535", nullptr);  // the largest span taken
}

TEST(StarpuVariables, MoreWorkersPerCudaThanStarpuHoldsIsRefused) {
  RuntimeOptions options = cpu_workers(2);
  options.workers_per_cuda = 100000;
  EXPECT_THROW(Runtime runtime(options), InvalidArgument);
  Runtime runtime(cpu_workers(2));
  EXPECT_EQ(factor_small(runtime), 0);
}

TEST(StarpuVariables, ValidValuesStillStart) {
  const ScopedEnv ncpu("STARPU_NCPU", "1");
  const ScopedEnv calibrate("STARPU_CALIBRATE", "1");
  const ScopedEnv sched("STARPU_SCHED", "eager");
  RuntimeOptions options;
  options.ncuda = 0;
  Runtime runtime(options);
  EXPECT_EQ(runtime.cpu_workers(), 1);
  EXPECT_EQ(runtime.scheduler(), "eager");
  EXPECT_EQ(factor_small(runtime), 0);
}

// ---- corrupt performance-model files ------------------------------------------------------

class PerfModelDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera-perfmodels-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    model_dir_ = std::make_unique<ScopedEnv>("STARPU_PERF_MODEL_DIR", dir_.c_str());
    host_ = std::make_unique<ScopedEnv>("STARPU_HOSTNAME", "tessera-test-host");
  }
  void TearDown() override {
    host_.reset();
    model_dir_.reset();
    fs::remove_all(dir_);
  }
  fs::path model_file(const char* symbol) const {
    return dir_ / "codelets" / "45" / (std::string(symbol) + ".tessera-test-host");
  }

  fs::path dir_;
  std::unique_ptr<ScopedEnv> model_dir_, host_;
};

void truncate_file(const fs::path& file, std::uintmax_t keep) { fs::resize_file(file, keep); }

TEST_F(PerfModelDirectory, TruncatedModelIsSetAsideAndRecalibrated) {
  {
    Runtime runtime(cpu_workers(2));
    EXPECT_EQ(factor_small(runtime), 0);
    EXPECT_TRUE(runtime.notices().empty());
  }  // StarPU writes its models at shutdown
  const fs::path model = model_file("tessera_dpotrf");
  ASSERT_TRUE(fs::exists(model)) << "StarPU wrote no model at " << model;
  ASSERT_TRUE(detail::perf_model_file_is_sound(model.string()));
  truncate_file(model, fs::file_size(model) * 2 / 3);
  ASSERT_FALSE(detail::perf_model_file_is_sound(model.string()));
  {
    Runtime runtime(cpu_workers(2));  // StarPU 1.3 aborted here, in its model parser
    EXPECT_EQ(factor_small(runtime), 0);
    ASSERT_EQ(runtime.notices().size(), 1u);
    EXPECT_NE(runtime.notices()[0].find(model.string()), std::string::npos) << runtime.notices()[0];
  }
  EXPECT_TRUE(fs::exists(model.string() + ".corrupt"));
  EXPECT_TRUE(fs::exists(model) && detail::perf_model_file_is_sound(model.string())) << "not recalibrated";
  Runtime runtime(cpu_workers(2));  // said once: nothing to set aside any more
  EXPECT_TRUE(runtime.notices().empty());
}

TEST_F(PerfModelDirectory, EveryTruncationOfAModelIsSafe) {
  {
    Runtime runtime(cpu_workers(2));
    EXPECT_EQ(factor_small(runtime), 0);
  }
  const fs::path model = model_file("tessera_dgemm");
  ASSERT_TRUE(fs::exists(model));
  std::ifstream in(model, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path copy = dir_ / "copy";
  int sound = 0;
  for (std::size_t keep = 1; keep < bytes.size(); ++keep) {
    std::ofstream(copy, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(keep));
    sound += detail::perf_model_file_is_sound(copy.string());
  }
  // Only a cut right after a complete entry of the last history can still parse.
  EXPECT_LT(sound, 3) << "of " << bytes.size() << " truncations";
  std::string garbage = bytes;
  for (std::size_t i = garbage.size() / 3; i < garbage.size() / 2; ++i) garbage[i] = 'x';
  std::ofstream(copy, std::ios::binary | std::ios::trunc) << garbage;
  EXPECT_FALSE(detail::perf_model_file_is_sound(copy.string()));
}

TEST_F(PerfModelDirectory, TruncatedBusFileIsSetAside) {
  { Runtime runtime(cpu_workers(2)); }
  const fs::path latency = dir_ / "bus" / "tessera-test-host.latency";
  ASSERT_TRUE(fs::exists(latency));
  truncate_file(latency, fs::file_size(latency) / 2);
  Runtime runtime(cpu_workers(2));
  EXPECT_EQ(factor_small(runtime), 0);
  EXPECT_EQ(runtime.notices().size(), 1u);
  EXPECT_TRUE(fs::exists(latency.string() + ".corrupt"));
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `model` (a model file's text) with its first history line replaced by `line`.
std::string with_history_line(const std::string& model, const std::string& line) {
  const std::size_t header = model.find("\n# hash");
  const std::size_t first = model.find('\n', header + 1) + 1;
  const std::size_t end = model.find('\n', first);
  if (header == std::string::npos || end == std::string::npos) return {};
  return model.substr(0, first) + line + model.substr(end);
}

// Whether StarPU's own reader loads the model file at `path`, in a child process (it aborts on
// what it cannot read).
bool starpu_loads_model(const fs::path& path) {
  const pid_t child = fork();
  if (child == 0) {
    if (!std::freopen("/dev/null", "w", stderr)) _exit(4);
    // StarPU's paths are set again by its start (the parent stopped it, which freed them).
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 1;
    conf.ncuda = 0;
    if (starpu_init(&conf) != 0) _exit(5);
    starpu_perfmodel model;
    std::memset(&model, 0, sizeof model);
    model.type = STARPU_PERFMODEL_INVALID;
    _exit(starpu_perfmodel_load_file(path.c_str(), &model) == 0 ? 0 : 3);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Each history line replaces the first of a model StarPU wrote. The lines the check takes, StarPU
// reads; the lines StarPU asserts on, the check refuses (it may refuse more: a line that is not in
// the syntax StarPU writes). Lines are checked without sscanf, as the syntax StarPU writes.
TEST_F(PerfModelDirectory, HistoryLinesAreCheckedAsStarpuReadsThem) {
  {
    Runtime runtime(cpu_workers(2));
    EXPECT_EQ(factor_small(runtime), 0);
  }
  const fs::path model = model_file("tessera_dgemm");
  ASSERT_TRUE(fs::exists(model));
  const std::string text = file_bytes(model);
  const std::string fields = "\t1408           \t";  // footprint, size: then flops, mean, deviation, sum, sum2, n
  const std::vector<std::string> sound = {
      "cc1f57d8" + fields + "0.000000e+00   \t8.920000e-01   \t0.000000e+00   \t8.920000e-01   \t7.956640e-01   \t1",
      "cc1f57d8" + fields + "8.92e-01\t0\t8.92e-01\t7.95664e-01\t1",  // no flops (older files)
      "cc1f57d8" + fields + "nan\t8.92e-01\t0\t8.92e-01\t7.95664e-01\t1",
      "cc1f57d8" + fields + "-nan\t8.92e-01\t0\t8.92e-01\t7.95664e-01\t1",
      "cc1f57d8" + fields + "1e9\t-0.000000e+00\t0\t0\t0\t1",  // -0 is not below 0
      "cc1f57d8" + fields + "1.5E+09\tinf\t.5\t5.\t0\t12",
  };
  const std::vector<std::string> starpu_asserts = {
      "cc1f57d8" + fields + "0\t-8.92e-01\t0\t8.92e-01\t7.95664e-01\t1",  // negative mean
      "cc1f57d8" + fields + "-1\t8.92e-01\t0\t8.92e-01\t7.95664e-01\t1",  // negative flops
      "cc1f57d8" + fields + "0\tnan\t0\t8.92e-01\t7.95664e-01\t1",        // NaN mean
      "cc1f57d8" + fields + "0\t1\t0\t-inf\t7.95664e-01\t1",              // negative sum
      "cc1f57d8" + fields + "0\t1\t0" + std::string(300, ' ') + "\t1\t1\t1",  // longer than StarPU's line
      "cc1f57d8" + fields + "0\t1",                                            // fields missing
      "cc1f57d8\tx" + fields + "0\t1\t0\t1\t1\t1",                        // a field that is no number
  };
  const std::vector<std::string> refused = {
      "cc1f57d8" + fields + "0\t1\t0\t1\t1\t1\tx",   // trailing text
      "cc1f57d8" + fields + "0\t1e\t0\t1\t1\t1",      // exponent without digits
      "cc1g57d8" + fields + "0\t1\t0\t1\t1\t1",       // footprint not hexadecimal
      "cc1f57d8" + fields + "0\t1\t0\t1\t1\t1.5",     // fractional count
  };
  const fs::path copy = dir_ / "history-line";
  auto write = [&](const std::string& line) {
    const std::string bytes = with_history_line(text, line);
    ASSERT_FALSE(bytes.empty());
    std::ofstream(copy, std::ios::binary | std::ios::trunc) << bytes;
  };
  for (const std::string& line : sound) {
    write(line);
    EXPECT_TRUE(detail::perf_model_file_is_sound(copy.string())) << line;
    EXPECT_TRUE(starpu_loads_model(copy)) << line;
  }
  for (const std::string& line : starpu_asserts) {
    write(line);
    EXPECT_FALSE(detail::perf_model_file_is_sound(copy.string())) << line;
    EXPECT_FALSE(starpu_loads_model(copy)) << line;
  }
  for (const std::string& line : refused) {
    write(line);
    EXPECT_FALSE(detail::perf_model_file_is_sound(copy.string())) << line;
  }
}

// Another process rewriting its models at the end of its run, as StarPU does: under a write lock,
// truncated first, then written. A runtime starting meanwhile must wait for the lock instead of
// taking the half-written files for corrupt (processes side by side did, now and then).
TEST_F(PerfModelDirectory, FilesBeingRewrittenByAnotherProcessAreNotSetAside) {
  {
    Runtime runtime(cpu_workers(2));
    EXPECT_EQ(factor_small(runtime), 0);
  }
  const std::vector<fs::path> files = {model_file("tessera_dpotrf"), dir_ / "bus" / "tessera-test-host.latency"};
  std::vector<std::string> contents;
  for (const fs::path& file : files) {
    ASSERT_TRUE(fs::exists(file)) << file;
    contents.push_back(file_bytes(file));
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<FILE*> open_files;
    for (const fs::path& file : files) {
      FILE* f = std::fopen(file.c_str(), "a+");
      struct flock lock {};
      lock.l_type = F_WRLCK;
      lock.l_whence = SEEK_SET;
      if (!f || fcntl(fileno(f), F_SETLKW, &lock) != 0 || ftruncate(fileno(f), 0) != 0) _exit(2);
      open_files.push_back(f);
    }
    if (write(ready[1], "x", 1) != 1) _exit(3);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    for (std::size_t i = 0; i < files.size(); ++i) {
      std::fwrite(contents[i].data(), 1, contents[i].size(), open_files[i]);
      std::fclose(open_files[i]);  // flushes, then releases the lock
    }
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);  // the files are empty and locked now
  close(ready[0]);
  close(ready[1]);
  {
    Runtime runtime(cpu_workers(2));
    EXPECT_TRUE(runtime.notices().empty()) << runtime.notices().front();
    EXPECT_EQ(factor_small(runtime), 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (const fs::path& file : files) EXPECT_FALSE(fs::exists(file.string() + ".corrupt")) << file;
}

// ---- calls from places that cannot run a request ------------------------------------------

struct InTaskResult {
  Runtime* runtime;
  std::string cpp_error;
  int c_api_info = 0;        // a call that needs the runtime's tasks
  int c_api_small_info = -1;  // small work, which runs on the calling thread with no runtime
};

void call_tessera_from_task(void* /*buffers*/[], void* arg) {
  auto* result = static_cast<InTaskResult*>(arg);
  std::vector<double> A = random_spd<double>(40, 40, 3);
  try {
    FactorOptions options;
    options.mode = Mode::cpu;
    potrf(*result->runtime, 40, A.data(), 40, options);  // refused even for small work: a call on a runtime
  } catch (const RuntimeError& e) {
    result->cpp_error = e.what();
  }
  result->c_api_small_info = tessera_dpotrf('L', 40, A.data(), 40);
  std::vector<double> B = random_spd<double>(kTaskOrder, kTaskOrder, 3);
  result->c_api_info = tessera_dpotrf('L', kTaskOrder, B.data(), kTaskOrder);
}

class CallFromTask : public ::testing::TestWithParam<int> {};

// The embedding case: the application starts StarPU and calls Tessera from one of its tasks.
// With one worker the call waited for ever on its own worker; with two StarPU aborted.
TEST_P(CallFromTask, IsRefusedAtOnce) {
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = GetParam();
  conf.ncuda = 0;
  ASSERT_EQ(starpu_init(&conf), 0);
  {
    Runtime runtime;  // attaches
    InTaskResult result{&runtime, "", 0};
    starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = call_tessera_from_task;
    cl.nbuffers = 0;
    starpu_task* task = starpu_task_create();
    task->cl = &cl;
    task->cl_arg = &result;
    task->synchronous = 1;
    ASSERT_EQ(starpu_task_submit(task), 0);
    EXPECT_NE(result.cpp_error.find("inside a StarPU task"), std::string::npos) << result.cpp_error;
    EXPECT_EQ(result.c_api_info, TESSERA_RUNTIME_FAILURE);
    EXPECT_EQ(result.c_api_small_info, 0);
    EXPECT_EQ(factor_small(runtime), 0);  // from the application's thread it works
  }
  starpu_shutdown();
}

INSTANTIATE_TEST_SUITE_P(Workers, CallFromTask, ::testing::Values(1, 2));

TEST(ForkedChild, CApiCallIsRefusedAndTheChildExits) {
  std::vector<double> A = random_spd<double>(kTaskOrder, kTaskOrder, 5);
  setenv("TESSERA_MODE", "cpu", 1);
  // Work for tasks: the shared runtime runs in the parent.
  ASSERT_EQ(tessera_dpotrf('L', kTaskOrder, A.data(), kTaskOrder), 0);
  // StarPU frees a finished task after the call that waited for it returns: once every task is
  // freed, the child's copy of the heap holds nothing a leak check at its exit would report.
  starpu_task_wait_for_all();
  // The call gave the program its BLAS threads back, and OpenBLAS starts them asynchronously. A
  // thread still starting holds ASan's allocator for a moment, and GCC 12's ASan takes no lock
  // around fork(): the child could inherit the held lock and hang. A threaded BLAS call returns
  // only once every BLAS thread has run.
  {
    const int order = 512;
    std::vector<double> x(order * order, 1.0), y(order * order, 0.0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, order, order, order, 1.0, x.data(), order, x.data(),
                order, 0.0, y.data(), order);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang ends the child with SIGALRM
    // Small work needs no runtime: it runs; work that needs the parent's runtime is refused.
    std::vector<double> B = random_spd<double>(60, 60, 5);
    if (tessera_dpotrf('L', 60, B.data(), 60) != 0) std::exit(11);
    std::vector<double> C = random_spd<double>(kTaskOrder, kTaskOrder, 5);
    const int info = tessera_dpotrf('L', kTaskOrder, C.data(), kTaskOrder);
    std::exit(info == TESSERA_RUNTIME_FAILURE ? 0 : 10);  // exit() runs the static destructors too
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status);
  EXPECT_NE(WEXITSTATUS(status), 11) << "the child's small call failed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's call was not refused";
  EXPECT_EQ(tessera_dpotrf('L', 60, random_spd<double>(60, 60, 5).data(), 60), 0);  // the parent goes on
}

// ---- resources ----------------------------------------------------------------------------

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double cpu_seconds_while_sleeping(double seconds) {
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return process_cpu_seconds() - before;
}

// Workers that sleep as soon as they are idle (RuntimeOptions::pause_after_idle_us = 0).
RuntimeOptions cpu_workers_pausing_at_once(int n) {
  RuntimeOptions options = cpu_workers(n);
  options.pause_after_idle_us = 0;
  return options;
}

// Two workers polling for tasks burned two cores while the program slept.
TEST(IdleWorkers, SleepBetweenRequests) {
  Runtime runtime(cpu_workers_pausing_at_once(2));
  EXPECT_EQ(factor_small(runtime), 0);
  EXPECT_TRUE(runtime.workers_paused());
  EXPECT_LT(cpu_seconds_while_sleeping(1.0), 0.2);
  EXPECT_EQ(factor_small(runtime, 200), 0);  // woken for the next request
  // Explicit control: awake on demand, asleep again when asked.
  runtime.set_pause_when_idle(false);
  EXPECT_FALSE(runtime.workers_paused());
  runtime.pause_workers();
  EXPECT_TRUE(runtime.workers_paused());
  runtime.resume_workers();
  runtime.set_pause_when_idle(true);
  EXPECT_TRUE(runtime.workers_paused());
}

// By default idle workers keep polling for a short delay, so that a call right after another
// finds them awake, then sleep: the program gets its cores back.
TEST(IdleWorkers, SleepAfterTheDelay) {
  EXPECT_EQ(RuntimeOptions{}.pause_after_idle_us, 2000);
  RuntimeOptions options = cpu_workers(2);
  options.pause_after_idle_us = 3'000'000;  // long enough to see the workers awake after a call
  Runtime runtime(options);
  EXPECT_EQ(factor_small(runtime), 0);
  EXPECT_FALSE(runtime.workers_paused()) << "paused before the delay";
  EXPECT_EQ(factor_small(runtime, 150), 0);  // a request within the delay runs on the awake workers
  const auto waited_from = std::chrono::steady_clock::now();
  while (!runtime.workers_paused() && std::chrono::steady_clock::now() - waited_from < std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(runtime.workers_paused()) << "still awake 30 s after the last request";
  EXPECT_LT(cpu_seconds_while_sleeping(1.0), 0.2);
  EXPECT_EQ(factor_small(runtime), 0);  // woken for the next request
  // An explicit pause takes effect at once, whatever the delay.
  runtime.pause_workers();
  EXPECT_TRUE(runtime.workers_paused());
  runtime.resume_workers();
}

TEST(IdleWorkers, NegativeDelayIsRefused) {
  RuntimeOptions options = cpu_workers(1);
  options.pause_after_idle_us = -1;
  EXPECT_THROW(Runtime runtime(options), InvalidArgument);
}

TEST(IdleWorkers, TileMatrixKeepsItsDataAcrossSleeps) {
  Runtime runtime(cpu_workers_pausing_at_once(2));
  const int n = 150;
  const std::vector<double> A = random_spd<double>(n, n, 9);
  std::vector<double> F(A.size(), 0.0);
  TileMatrix<double> tiles(runtime, n, 40);
  ASSERT_EQ(load_async(tiles, Uplo::lower, A.data(), n).wait(), 0);
  EXPECT_TRUE(runtime.workers_paused());
  FactorOptions options;
  options.mode = Mode::cpu;
  ASSERT_EQ(potrf_async(tiles, options).wait(), 0);
  ASSERT_EQ(store_async(tiles, Uplo::lower, F.data(), n).wait(), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), kResidualThreshold);
}

// The same 60 sizes, largest first, 5 times: the pool must hold the same blocks after every
// round (a reused larger block used to come back recorded at the smaller size, so the next
// round could not reuse it and pinned new memory).
TEST(HostMemoryPool, RepeatedWorkloadIsFlat) {
  Runtime runtime(cpu_workers(2));
  std::vector<std::size_t> after_round;
  for (int round = 0; round < 5; ++round) {
    for (int k = 0; k < 60; ++k) {
      const int n = 400 - 3 * k;
      TileMatrix<double> tiles(runtime, n, n);  // one tile: the block is n^2 doubles
    }
    after_round.push_back(runtime.resources().host_memory().cached_bytes());
  }
  for (int round = 1; round < 5; ++round) EXPECT_EQ(after_round[round], after_round[0]) << "round " << round;
}

// A block is pinned once it is back in the pool (pin-on-reuse, in the background), at once
// (pinned) or never (pageable); only where a GPU's copies profit from it.
TEST(HostMemoryPool, PinsBlocksAsTheOptionsSay) {
  for (const HostTiles pinning : {HostTiles::pin_on_reuse, HostTiles::pinned, HostTiles::pageable}) {
    RuntimeOptions options;
    options.host_tiles = pinning;
    Runtime runtime(options);
    const bool gpu = runtime.cuda_workers() > 0;
    detail::HostMemoryPool& pool = runtime.resources().host_memory();
    const std::size_t bytes = std::size_t(8) << 20;
    void* first = pool.allocate(bytes);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(pool.pinned_bytes(), gpu && pinning == HostTiles::pinned ? bytes : 0) << to_string(pinning);
    pool.release(first);
    // pin-on-reuse: pinned in the background as soon as it is back in the pool
    pool.wait_for_pinning();
    EXPECT_EQ(pool.pinned_bytes(), gpu && pinning != HostTiles::pageable ? bytes : 0) << to_string(pinning);
    void* again = pool.allocate(bytes);
    EXPECT_EQ(again, first) << "the cached block is reused";
    EXPECT_EQ(pool.pinned_bytes(), gpu && pinning != HostTiles::pageable ? bytes : 0) << to_string(pinning);
    pool.release(again);
  }
  EXPECT_EQ(parse_host_tiles("Pin-On-Reuse"), HostTiles::pin_on_reuse);
  EXPECT_EQ(parse_host_tiles("auto"), HostTiles::automatic);
  EXPECT_EQ(parse_host_tiles("in-place"), HostTiles::in_place);
  EXPECT_STREQ(to_string(HostTiles::in_place), "in-place");
  EXPECT_EQ(parse_host_tiles("Staged"), HostTiles::staged);
  EXPECT_STREQ(to_string(HostTiles::staged), "staged");
  EXPECT_EQ(RuntimeOptions{}.host_tiles, HostTiles::automatic);
  EXPECT_THROW(parse_host_tiles("locked"), InvalidArgument);
}

// HostTiles::automatic gives the runtime's first host-array call in-place or staged tiles: one
// call claims it, once, whatever pool and thread it comes from; looking does not claim it.
TEST(HostMemoryPool, TheFirstCallIsClaimedOnce) {
  detail::HostMemoryPool pool(HostTiles::automatic);
  EXPECT_TRUE(pool.first_call_unclaimed());
  std::atomic<int> claims{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) callers.emplace_back([&] { claims += detail::claim_first_call(pool) ? 1 : 0; });
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(claims.load(), 1);
  EXPECT_FALSE(pool.first_call_unclaimed());
  EXPECT_FALSE(detail::claim_first_call(pool));
}

// The start's CUDA warm-up (cuda_warm_up.hpp) ends and is waited for whatever it is asked to
// warm: every GPU, the driver alone, one GPU, more GPUs than the machine has, and on a machine
// without a usable GPU (where the driver cannot start). A throw escaping its thread would end the
// process; a wait that never ends, the test's time limit.
TEST(CudaWarmUp, EndsWhateverItIsAskedToWarm) {
  for (const int devices : {-1, 0, 1, 1 << 20}) const detail::CudaWarmUp warm_up(devices);
  // The process's own work on the GPU afterwards is unaffected: a runtime starts and factors.
  EXPECT_EQ(factor_small(runtime()), 0);
}

// With the GPUs named by STARPU_WORKERS_CUDAID the warm-up leaves the contexts to StarPU (it
// initializes the driver only); the runtime still starts its CUDA workers there and factors on
// them in gpu mode, from the first call.
TEST(CudaWarmUp, GpusNamedForStarpuStillStartAndFactor) {
  const ScopedEnv ids("STARPU_WORKERS_CUDAID", "0");
  RuntimeOptions options = RuntimeOptions::from_environment().for_mode(Mode::gpu);
  options.ncpus = 2;
  Runtime named(options);
  if (named.cuda_workers() == 0) GTEST_SKIP() << "no CUDA worker: this machine has no usable GPU";
  const int n = 1031;
  const std::vector<double> A = random_spd<double>(n, n, 11);
  std::vector<double> F = A;
  FactorOptions factor;
  factor.mode = Mode::gpu;
  factor.nb = 256;
  ASSERT_EQ(potrf(named, n, F.data(), n, factor), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
}

// cpu mode starts no GPU unless one is asked for: RuntimeOptions::for_mode.
TEST(RuntimeOptionsForMode, CpuModeStartsNoGpuUnlessAskedFor) {
  if (std::getenv("STARPU_NCUDA")) GTEST_SKIP() << "STARPU_NCUDA is set, which decides the GPUs";
  RuntimeOptions options;
  EXPECT_EQ(options.for_mode(Mode::cpu).ncuda, 0);
  for (Mode mode : {Mode::gpu, Mode::hybrid, Mode::automatic}) EXPECT_EQ(options.for_mode(mode).ncuda, -1) << to_string(mode);
  options.ncuda = 1;  // asked for (the field, TESSERA_NCUDA or --ncuda)
  EXPECT_EQ(options.for_mode(Mode::cpu).ncuda, 1);
  const ScopedEnv starpu_ncuda("STARPU_NCUDA", "1");
  EXPECT_EQ(RuntimeOptions{}.for_mode(Mode::cpu).ncuda, -1);
}

// A process that hides its GPUs (the CLI in cpu mode) also keeps hwloc from looking for I/O
// devices, unless the user set HWLOC_COMPONENTS; a library's runtime (GPUs not hidden) sets
// neither variable.
TEST(RuntimeOptionsForMode, HiddenGpusAlsoSkipHwlocIoDevices) {
  const ScopedEnv cuda("CUDA_VISIBLE_DEVICES", "");  // both restored at the end
  const ScopedEnv hwloc("HWLOC_COMPONENTS", "");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("HWLOC_COMPONENTS");
  RuntimeOptions library;
  library.ncuda = 0;
  detail::set_starpu_environment_defaults(library);
  EXPECT_EQ(std::getenv("HWLOC_COMPONENTS"), nullptr);
  EXPECT_EQ(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);
  RuntimeOptions cli = library;
  cli.hide_gpus_from_process = true;
  detail::set_starpu_environment_defaults(cli);
  ASSERT_NE(std::getenv("HWLOC_COMPONENTS"), nullptr);
  EXPECT_STREQ(std::getenv("HWLOC_COMPONENTS"), "-pci,-linuxio");
  ASSERT_NE(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "");
  setenv("HWLOC_COMPONENTS", "linux", 1);
  detail::set_starpu_environment_defaults(cli);
  EXPECT_STREQ(std::getenv("HWLOC_COMPONENTS"), "linux");
}

// StarPU's background write-back of dirty GPU buffers is off unless asked for
// (RuntimeOptions::background_write_back, TESSERA_BACKGROUND_WRITE_BACK) or its threshold is set.
TEST(StarpuVariables, BackgroundWriteBackIsOffUnlessAskedFor) {
  const ScopedEnv clean("STARPU_MINIMUM_CLEAN_BUFFERS", "");  // both restored at the end
  const ScopedEnv asked("TESSERA_BACKGROUND_WRITE_BACK", "");
  unsetenv("STARPU_MINIMUM_CLEAN_BUFFERS");
  unsetenv("TESSERA_BACKGROUND_WRITE_BACK");
  EXPECT_FALSE(RuntimeOptions::from_environment().background_write_back);
  RuntimeOptions options;
  options.background_write_back = true;
  detail::set_starpu_environment_defaults(options);
  EXPECT_EQ(std::getenv("STARPU_MINIMUM_CLEAN_BUFFERS"), nullptr);  // StarPU's own default
  detail::set_starpu_environment_defaults(RuntimeOptions{});
  ASSERT_NE(std::getenv("STARPU_MINIMUM_CLEAN_BUFFERS"), nullptr);
  EXPECT_STREQ(std::getenv("STARPU_MINIMUM_CLEAN_BUFFERS"), "0");
  setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "5", 1);
  detail::set_starpu_environment_defaults(RuntimeOptions{});
  EXPECT_STREQ(std::getenv("STARPU_MINIMUM_CLEAN_BUFFERS"), "5");
  setenv("TESSERA_BACKGROUND_WRITE_BACK", "1", 1);
  EXPECT_TRUE(RuntimeOptions::from_environment().background_write_back);
}

// In cpu mode a few workers get larger tiles; the other modes and unknown worker counts do not
// change.
TEST(DefaultTileSize, FewCpuWorkersGetLargerTiles) {
  EXPECT_EQ(default_tile_size(4000, Precision::double_real, Mode::cpu), 256);
  EXPECT_EQ(default_tile_size(4000, Precision::double_real, Mode::cpu, 12), 256);
  EXPECT_EQ(default_tile_size(4000, Precision::double_real, Mode::cpu, 2), 384);
  EXPECT_EQ(default_tile_size(1000, Precision::double_real, Mode::cpu, 2), 128);
  EXPECT_EQ(default_tile_size(300, Precision::double_real, Mode::cpu, 2), 64);
  EXPECT_EQ(default_tile_size(4000, Precision::double_real, Mode::gpu, 2), default_tile_size(4000, Precision::double_real, Mode::gpu));
}

TEST(TaskGrainOption, NamesRoundTripAndTheEnvironmentSetsIt) {
  for (TaskGrain grain : {TaskGrain::tiles, TaskGrain::block_columns, TaskGrain::whole_matrix, TaskGrain::automatic})
    EXPECT_EQ(parse_task_grain(to_string(grain)), grain);
  EXPECT_EQ(parse_task_grain("Block-Columns"), TaskGrain::block_columns);
  EXPECT_EQ(parse_task_grain("whole-matrix"), TaskGrain::whole_matrix);
  EXPECT_THROW(parse_task_grain("columns"), InvalidArgument);
  EXPECT_EQ(FactorOptions{}.grain, TaskGrain::automatic);
  {
    const ScopedEnv grain("TESSERA_TASK_GRAIN", "block-columns");
    EXPECT_EQ(FactorOptions::from_environment().grain, TaskGrain::block_columns);
  }
  const ScopedEnv bad("TESSERA_TASK_GRAIN", "rows");
  EXPECT_THROW(FactorOptions::from_environment(), InvalidArgument);
}

TEST(PauseWhenIdleOption, TheEnvironmentSetsIt) {
  EXPECT_TRUE(RuntimeOptions{}.pause_when_idle);
  {
    const ScopedEnv awake("TESSERA_PAUSE_WHEN_IDLE", "0");
    EXPECT_FALSE(RuntimeOptions::from_environment().pause_when_idle);
  }
  const ScopedEnv asleep("TESSERA_PAUSE_WHEN_IDLE", "1");
  EXPECT_TRUE(RuntimeOptions::from_environment().pause_when_idle);
  {
    const ScopedEnv delay("TESSERA_PAUSE_AFTER_IDLE_US", "0");
    EXPECT_EQ(RuntimeOptions::from_environment().pause_after_idle_us, 0);
  }
  const ScopedEnv negative("TESSERA_PAUSE_AFTER_IDLE_US", "-5");
  EXPECT_THROW(RuntimeOptions::from_environment(), InvalidArgument);
}

TEST(OutOfCorePanelOption, TheEnvironmentSetsItAndOutOfRangeIsRefused) {
  EXPECT_EQ(FactorOptions{}.out_of_core_panel_percent, 30);
  {
    const ScopedEnv off("TESSERA_OUT_OF_CORE_PANEL_PERCENT", "0");
    EXPECT_EQ(FactorOptions::from_environment().out_of_core_panel_percent, 0);
  }
  {
    const ScopedEnv bad("TESSERA_OUT_OF_CORE_PANEL_PERCENT", "-3");
    EXPECT_THROW(FactorOptions::from_environment(), InvalidArgument);
  }
  Runtime runtime(cpu_workers(2));
  std::vector<double> A = random_spd<double>(40, 40, 3);
  for (int percent : {-1, 91}) {
    FactorOptions options;
    options.mode = Mode::cpu;
    options.out_of_core_panel_percent = percent;
    EXPECT_THROW(potrf(runtime, 40, A.data(), 40, options), InvalidArgument) << percent;
    TileMatrix<double> tiles(runtime, 40, 16);
    EXPECT_THROW(potrf_async(tiles, options).wait(), InvalidArgument) << percent;
  }
}

TEST(LocalRanks, EachRankOfANodeGetsItsOwnCores) {
  const std::vector<unsigned> all{0, 1, 2, 3, 4, 5, 6, 7};
  // Not bound by the launcher: a slice each.
  EXPECT_EQ(detail::cpus_for_local_rank(all, 8, {0, 4}), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(detail::cpus_for_local_rank(all, 8, {3, 4}), (std::vector<unsigned>{6, 7}));
  EXPECT_EQ(detail::cpus_for_local_rank(all, 8, {2, 3}), (std::vector<unsigned>{4, 5}));
  // Bound by the launcher: its cores; more ranks than cores: all of them.
  EXPECT_EQ(detail::cpus_for_local_rank({4, 5}, 8, {2, 4}), (std::vector<unsigned>{4, 5}));
  EXPECT_EQ(detail::cpus_for_local_rank({0, 1}, 2, {3, 4}), (std::vector<unsigned>{0, 1}));
  {
    const ScopedEnv rank("OMPI_COMM_WORLD_LOCAL_RANK", "1");
    const ScopedEnv size("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
    const std::optional<detail::LocalRank> local = detail::local_mpi_rank_from_environment();
    ASSERT_TRUE(local.has_value());
    EXPECT_EQ(local->rank, 1);
    EXPECT_EQ(local->size, 4);
  }
  const ScopedEnv nobind("STARPU_WORKERS_NOBIND", "1");
  EXPECT_TRUE(detail::starpu_binding_from_environment());
}

// StarPU's binding list says whether the user set it: the list Tessera sets for a rank's share
// (on every start of the runtime) is told apart from the user's.
TEST(LocalRanks, TheRanksOwnBindingIsNotTakenForTheUsers) {
  const ScopedEnv cpus("STARPU_WORKERS_CPUID", "4,5");
  EXPECT_FALSE(detail::starpu_binding_from_environment({4, 5}));
  EXPECT_TRUE(detail::starpu_binding_from_environment({4, 5, 6}));
  EXPECT_TRUE(detail::starpu_binding_from_environment());
  detail::bind_starpu_threads_to({6, 7, 8});
  EXPECT_STREQ(std::getenv("STARPU_WORKERS_CPUID"), "6,7,8");
  EXPECT_FALSE(detail::starpu_binding_from_environment({6, 7, 8}));
}

// Two ranks on a node, this one the second: every thread StarPU binds (CPU workers, and each GPU
// worker's driver thread) is on a CPU of the rank's half, and on one of its own while the half
// has enough of them. (StarPU's explicit bind array has an entry per possible worker, so a share
// repeated to fill it let StarPU put the GPU driver threads on the cores of CPU workers.) The
// same again on a second start, which finds the binding the first one set.
TEST(LocalRanks, EachThreadOfARanksWorkersHasACoreOfItsOwn) {
  const ScopedEnv rank("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  const ScopedEnv size("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  const ScopedEnv cpus("STARPU_WORKERS_CPUID", "");  // restored (or unset) at the end
  unsetenv("STARPU_WORKERS_CPUID");
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<unsigned> allowed;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) allowed.push_back(cpu);
  const auto online = static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_ONLN));
  const std::vector<unsigned> share = detail::cpus_for_local_rank(allowed, online, {1, 2});
  for (int start = 0; start < 2; ++start) {
    Runtime runtime(RuntimeOptions{});
    std::vector<unsigned> bound;
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
      bound.push_back(static_cast<unsigned>(starpu_worker_get_bindid(static_cast<int>(w))));
    for (unsigned cpu : bound)
      EXPECT_NE(std::find(share.begin(), share.end(), cpu), share.end()) << "start " << start << ": CPU " << cpu;
    if (bound.size() <= share.size()) {
      std::sort(bound.begin(), bound.end());
      EXPECT_EQ(std::adjacent_find(bound.begin(), bound.end()), bound.end())
          << "start " << start << ": two of " << bound.size() << " threads share a CPU (" << runtime.cuda_workers()
          << " CUDA workers)";
    }
  }
}

TEST(LocalRanks, TheGpusARankDrivesAreThoseCudaLetsItSee) {
  {
    const ScopedEnv one("CUDA_VISIBLE_DEVICES", "1");
    EXPECT_EQ(detail::cuda_visible_devices_from_environment(), 1);
  }
  {
    const ScopedEnv three("CUDA_VISIBLE_DEVICES", "0,2,3");
    EXPECT_EQ(detail::cuda_visible_devices_from_environment(), 3);
  }
  const ScopedEnv none("CUDA_VISIBLE_DEVICES", "");
  EXPECT_EQ(detail::cuda_visible_devices_from_environment(), 0);
}

// Under an MPI launch the tiles a rank receives stay in StarPU's allocation cache from one
// operation to the next: StarPU keeps freed host buffers only under a host-memory limit, which a
// rank gets as its share of the machine's memory unless the user set one.
TEST(LocalRanks, RanksKeepReceivedTilesInStarpusAllocationCache) {
  const ScopedEnv world("OMPI_COMM_WORLD_SIZE", "2");
  const ScopedEnv rank("OMPI_COMM_WORLD_LOCAL_RANK", "0");
  const ScopedEnv size("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  const ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "");  // restored (or unset) at the end
  unsetenv("STARPU_LIMIT_CPU_MEM");
  detail::set_starpu_environment_defaults(RuntimeOptions{});
  const char* value = std::getenv("STARPU_LIMIT_CPU_MEM");
  ASSERT_NE(value, nullptr);
  const double machine_mib = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) / (1 << 20);
  EXPECT_NEAR(std::atof(value), machine_mib / 2, 1.0);
  setenv("STARPU_LIMIT_CPU_MEM", "1234", 1);
  detail::set_starpu_environment_defaults(RuntimeOptions{});
  EXPECT_STREQ(std::getenv("STARPU_LIMIT_CPU_MEM"), "1234");
}

TEST(UrgentStreamsOption, TheEnvironmentTurnsItOff) {
  EXPECT_TRUE(RuntimeOptions{}.urgent_streams);
  {
    const ScopedEnv off("TESSERA_URGENT_STREAMS", "0");
    EXPECT_FALSE(RuntimeOptions::from_environment().urgent_streams);
  }
  const ScopedEnv on("TESSERA_URGENT_STREAMS", "1");
  EXPECT_TRUE(RuntimeOptions::from_environment().urgent_streams);
}

// ---- a library prints nothing unless asked ------------------------------------------------

// The C API's failures: the reason in tessera_last_error(), per thread, cleared by a call that
// succeeds, and printed only with TESSERA_VERBOSE=1.
TEST(Quiet, CApiFailuresAreInLastErrorAndPrintedOnlyWhenAsked) {
  double canary[4] = {1, 2, 3, 4};
  // (Before any call on a thread the reason is empty: the other thread below checks that, since
  // earlier tests of this binary may have left one on this thread.)
  for (const bool verbose : {false, true}) {
    const ScopedEnv env("TESSERA_VERBOSE", verbose ? "1" : "0");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(tessera_dpotrf('L', 2, canary, 1), -4);
    const std::string printed = ::testing::internal::GetCapturedStderr();
    const std::string reason = tessera_last_error();
    EXPECT_EQ(reason, "tessera_dpotrf: lda (argument 4) must be >= max(1, n)");
    if (verbose)
      EXPECT_EQ(printed, "tessera: " + reason + "\n");
    else
      EXPECT_EQ(printed, "");
  }
  EXPECT_EQ(tessera_dposv('L', 0, 1, nullptr, 1, nullptr, 1), 0);
  EXPECT_STREQ(tessera_last_error(), "") << "a call that succeeds clears the reason";
  EXPECT_EQ(tessera_spotrs('Q', 2, 1, nullptr, 2, nullptr, 2), -1);
  std::string on_another_thread = "not read";
  std::thread([&] { on_another_thread = tessera_last_error(); }).join();
  EXPECT_EQ(on_another_thread, "");
  EXPECT_EQ(std::string(tessera_last_error()).rfind("tessera_spotrs: uplo (argument 1)", 0), 0u) << tessera_last_error();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(canary[i], i + 1);
}

// LAPACK returns at once when there is nothing to do; so does the C API, before it reads a
// Tessera variable that would refuse a call with work (here an unusable tile size).
TEST(CApiQuickReturn, EmptyWorkSucceedsWhateverTheEnvironmentSays) {
  const ScopedEnv env("TESSERA_NB", "0");
  double A[4] = {4, 1, 1, 3}, B[2] = {1, 2};
  EXPECT_EQ(tessera_dpotrf('L', 0, nullptr, 1), 0) << tessera_last_error();
  EXPECT_EQ(tessera_dposv('U', 0, 2, nullptr, 1, nullptr, 1), 0) << tessera_last_error();
  EXPECT_EQ(tessera_dpotrs('L', 2, 0, A, 2, nullptr, 2), 0) << tessera_last_error();
  EXPECT_EQ(tessera_dpotrf('L', 2, A, 2), TESSERA_RUNTIME_FAILURE) << "work is refused with the variable's reason";
  EXPECT_NE(std::string(tessera_last_error()).find("TESSERA_NB"), std::string::npos) << tessera_last_error();
  EXPECT_EQ(A[0], 4);
  EXPECT_EQ(B[0], 1);
}

TEST(Quiet, HybridOnCpusIsANoticeNotAPrint) {
  for (const bool verbose : {false, true}) {
    RuntimeOptions options = cpu_workers(2);
    options.verbose = verbose;
    Runtime runtime(options);
    ::testing::internal::CaptureStderr();
    std::vector<double> A = random_spd<double>(64, 64, 2);
    FactorOptions factor;
    factor.mode = Mode::hybrid;
    EXPECT_EQ(potrf(runtime, 64, A.data(), 64, factor), 0);
    const std::string printed = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(runtime.notices().size(), 1u);
    EXPECT_NE(runtime.notices()[0].find("CPUs only"), std::string::npos);
    EXPECT_EQ(printed.empty(), !verbose) << printed;
  }
}

}  // namespace
}  // namespace tessera::test
