// Starting the runtime where StarPU would abort the process or take over what belongs to the
// program: a calibration directory it cannot use, bus calibration files damaged in every way,
// and the program's signal handlers. Each TEST runs in its own process (CTest).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <starpu.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "reliability_support.hpp"
#include "address_space.hpp"
#include "environment.hpp"
#include "perfmodel_files.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

namespace fs = std::filesystem;

// Sets (or, with a null value, unsets) a variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int factor_small(Runtime& runtime) {
  const int n = 70;
  std::vector<double> A = random_spd<double>(n, n, 5);
  return potrf(runtime, n, A.data(), n, cpu_tiles(32));
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

// A private directory for the test's calibration files, removed at the end.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& name)
      : path_(fs::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// ---- a calibration directory StarPU cannot use ----------------------------------------------

// StarPU aborted the process (SIGABRT in _starpu_mkpath_and_check, or on the first file it could
// not open): the runtime is refused with the reason, the C API reports a failure, and once the
// environment is fixed the same process starts and factors.
void expect_refused_then_usable(const std::string& expected_in_message) {
  try {
    Runtime runtime(two_cpu_workers());
    ADD_FAILURE() << "the runtime started";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(expected_in_message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("STARPU_PERF_MODEL_DIR"), std::string::npos) << e.what();
  }
  // Small work needs no runtime and runs; work that needs tasks is refused.
  const ScopedEnv mode("TESSERA_MODE", "cpu");
  std::vector<double> A(4, 0.0);
  A[0] = A[3] = 4;
  EXPECT_EQ(tessera_dpotrf('L', 2, A.data(), 2), 0);
  EXPECT_EQ(A[0], 2.0);
  const int n = kOrderThatRunsTasks;
  std::vector<double> B(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) B[i + std::size_t(i) * n] = 4;
  EXPECT_EQ(tessera_dpotrf('L', n, B.data(), n), TESSERA_RUNTIME_FAILURE);
}

TEST(PerfModelLocation, HomeThatIsNotADirectoryIsRefusedNotAnAbort) {
  const ScopedEnv dir("STARPU_PERF_MODEL_DIR", nullptr), xdg("XDG_CACHE_HOME", nullptr),
      starpu_home("STARPU_HOME", nullptr);
  {
    const ScopedEnv home("HOME", "/dev/null");
    expect_refused_then_usable("/dev/null");
  }
  {
    const ScopedEnv home("HOME", nullptr), tmp("TMPDIR", "/dev/null");
    expect_refused_then_usable("/dev/null");
  }
  ScratchDirectory scratch("tessera-perfmodels-home");
  const ScopedEnv home("HOME", scratch.path().c_str());
  Runtime runtime(two_cpu_workers());
  EXPECT_EQ(factor_small(runtime), 0);
  EXPECT_TRUE(fs::is_directory(scratch.path() / ".starpu" / "sampling" / "bus"));
}

TEST(PerfModelLocation, PathsStarpuCannotUseAreRefused) {
  ScratchDirectory scratch("tessera-perfmodels-paths");
  const fs::path file = scratch.path() / "a-file";
  write_text(file, "not a directory\n");
  {
    const ScopedEnv dir("STARPU_PERF_MODEL_DIR", (file / "models").c_str());
    expect_refused_then_usable("a-file");
  }
  {
    // A file where StarPU's bus directory would be.
    const fs::path models = scratch.path() / "models";
    fs::create_directories(models);
    write_text(models / "bus", "");
    const ScopedEnv dir("STARPU_PERF_MODEL_DIR", models.c_str());
    expect_refused_then_usable("bus");
  }
  {
    // Longer than StarPU's buffers: it would write its files under a path cut short.
    const std::string deep = (scratch.path() / std::string(240, 'd')).string();
    const ScopedEnv dir("STARPU_PERF_MODEL_DIR", deep.c_str());
    expect_refused_then_usable("too long");
  }
  const ScopedEnv dir("STARPU_PERF_MODEL_DIR", (scratch.path() / "usable").c_str());
  Runtime runtime(two_cpu_workers());
  EXPECT_EQ(factor_small(runtime), 0);
}

// ---- bus calibration files damaged in every way ---------------------------------------------

class BusFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<ScratchDirectory>("tessera-bus-files");
    dir_ = std::make_unique<ScopedEnv>("STARPU_PERF_MODEL_DIR", scratch_->path().c_str());
    host_ = std::make_unique<ScopedEnv>("STARPU_HOSTNAME", "tessera-bus-host");
    {
      Runtime runtime(two_cpu_workers());  // StarPU calibrates the bus and writes its files
    }
    for (const char* kind : {".config", ".latency", ".bandwidth", ".affinity"}) {
      const fs::path file = bus_file(kind);
      if (fs::exists(file)) written_.emplace_back(file, read_text(file));
    }
    ASSERT_GE(written_.size(), 3u) << "StarPU wrote no bus files in " << scratch_->path();
  }
  void TearDown() override {
    host_.reset();
    dir_.reset();
    scratch_.reset();
  }

  fs::path bus_file(const char* kind) const { return scratch_->path() / "bus" / (std::string("tessera-bus-host") + kind); }
  void restore_all() const {
    for (const auto& [file, text] : written_) {
      std::error_code ec;
      fs::remove_all(file, ec);
      fs::remove(file.string() + ".corrupt", ec);
      write_text(file, text);
    }
  }
  // True when the checker sets `file` aside (and only it) with the others as StarPU wrote them.
  bool set_aside_alone(const fs::path& file) const {
    const std::vector<std::string> bad = detail::set_aside_corrupt_perf_models(detail::perf_model_location());
    return bad.size() == 1 && bad[0] == file.string() && !fs::exists(file);
  }

  std::unique_ptr<ScratchDirectory> scratch_;
  std::unique_ptr<ScopedEnv> dir_, host_;
  std::vector<std::pair<fs::path, std::string>> written_;
};

std::vector<std::size_t> line_ends(const std::string& text) {
  std::vector<std::size_t> ends;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') ends.push_back(i + 1);
  return ends;
}

TEST_F(BusFiles, AsWrittenTheyAreKept) {
  EXPECT_TRUE(detail::set_aside_corrupt_perf_models(detail::perf_model_location()).empty());
}

TEST_F(BusFiles, EveryTruncationAndDamageIsSetAside) {
  for (const auto& [file, text] : written_) {
    std::vector<std::string> damaged;
    for (std::size_t keep = 0; keep < text.size(); ++keep) damaged.push_back(text.substr(0, keep));
    const std::vector<std::size_t> ends = line_ends(text);
    // A line removed, a line repeated, a field made a word, a field more, CR LF line ends.
    for (std::size_t l = 0; l + 1 < ends.size(); ++l) {
      const std::size_t start = l == 0 ? 0 : ends[l - 1];
      if (text[start] == '#') continue;  // comments are free
      damaged.push_back(text.substr(0, start) + text.substr(ends[l]));
      damaged.push_back(text.substr(0, ends[l]) + text.substr(start));
      const std::string line = text.substr(start, ends[l] - start);
      damaged.push_back(text.substr(0, start) + "x" + line.substr(1) + text.substr(ends[l]));
      damaged.push_back(text.substr(0, start) + "1\t" + text.substr(start));
    }
    std::string crlf;
    for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    damaged.push_back(crlf);
    for (std::size_t d = 0; d < damaged.size(); ++d) {
      restore_all();
      write_text(file, damaged[d]);
      ASSERT_TRUE(set_aside_alone(file)) << file.filename() << ", damaged form " << d << ":\n" << damaged[d];
    }
    // Not a regular file: a directory where the file should be.
    restore_all();
    fs::remove(file);
    fs::create_directories(file);
    EXPECT_TRUE(set_aside_alone(file)) << file.filename() << " as a directory";
  }
  restore_all();
  EXPECT_TRUE(detail::set_aside_corrupt_perf_models(detail::perf_model_location()).empty());
}

// StarPU itself, started on each file cut at each line boundary (the configuration cut after its
// first two lines aborted the process in check_bus_config_file): set aside, recalibrated, and the
// runtime factors.
TEST_F(BusFiles, RuntimesStartOnEveryFileCutAtALineBoundary) {
  for (const auto& [file, text] : written_) {
    const std::vector<std::size_t> ends = line_ends(text);
    for (std::size_t l = 0; l + 1 < ends.size(); ++l) {
      restore_all();
      write_text(file, text.substr(0, ends[l]));
      Runtime runtime(two_cpu_workers());
      EXPECT_EQ(factor_small(runtime), 0) << file.filename() << " cut after line " << l + 1;
      const std::vector<std::string> notices = runtime.notices();
      ASSERT_EQ(notices.size(), 1u) << file.filename() << " cut after line " << l + 1;
      EXPECT_NE(notices[0].find(file.string()), std::string::npos) << notices[0];
    }
  }
}

// ---- the program's signal handlers ----------------------------------------------------------

volatile sig_atomic_t sigint_with_info = 0;
void on_sigint(int sig, siginfo_t* info, void*) {
  sigint_with_info = sig == SIGINT && info && info->si_signo == SIGINT && info->si_pid == getpid();
}

// A signal's action as the program set it (or found it: a sanitizer installs its own).
struct SignalAction {
  void (*handler)(int) = nullptr;
  int flags = 0;
};

SignalAction action_of(int sig) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return {now.sa_handler, now.sa_flags & SA_SIGINFO};
}

bool same_action(const SignalAction& a, const SignalAction& b) { return a.handler == b.handler && a.flags == b.flags; }

TEST(Signals, TheProgramsHandlersAreLeftAlone) {
  struct sigaction handler {};
  handler.sa_sigaction = on_sigint;
  handler.sa_flags = SA_SIGINFO;
  sigemptyset(&handler.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &handler, nullptr), 0);
  const SignalAction segv = action_of(SIGSEGV), trap = action_of(SIGTRAP);
  {
    Runtime runtime(two_cpu_workers());
    EXPECT_EQ(factor_small(runtime), 0);
    struct sigaction now {};
    ASSERT_EQ(sigaction(SIGINT, nullptr, &now), 0);
    EXPECT_TRUE((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigint) << "SIGINT's handler was replaced";
    EXPECT_TRUE(same_action(action_of(SIGSEGV), segv)) << "SIGSEGV's action was replaced";
    EXPECT_TRUE(same_action(action_of(SIGTRAP), trap)) << "SIGTRAP's action was replaced";
    raise(SIGINT);
    EXPECT_EQ(sigint_with_info, 1) << "the program's SIGINT handler did not get its siginfo";
  }
  // Asked for, StarPU installs its own (the check above can fail).
  const ScopedEnv catch_signals("STARPU_CATCH_SIGNALS", "1");
  Runtime runtime(two_cpu_workers());
  struct sigaction now {};
  ASSERT_EQ(sigaction(SIGINT, nullptr, &now), 0);
  EXPECT_FALSE((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigint);
}

// ---- an address-space limit (ulimit -v) -----------------------------------------------------

std::size_t address_space_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) << 10;
  return 0;
}

void limit_address_space(std::size_t bytes) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  limit.rlim_cur = bytes;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limit), 0);
}

// A factorization on `runtime` that must end: OpenBLAS retries for ever a buffer it cannot map,
// and the request then never finishes.
void expect_factors_in_time(Runtime& runtime) {
  const int n = 300;
  std::vector<double> A = random_spd<double>(n, n, 21);
  Request request = potrf_async(runtime, n, A.data(), n, cpu_tiles(64));
  if (!request.wait_for(std::chrono::seconds(60))) {
    ADD_FAILURE() << "the factorization hung under the address-space limit";
    std::_Exit(1);  // its worker never returns
  }
  EXPECT_EQ(request.wait(), 0);
}

// The thread keys this process can still create (POSIX allows it PTHREAD_KEYS_MAX in all), counted
// by creating them all and deleting them again.
int free_thread_keys() {
  std::vector<pthread_key_t> keys;
  pthread_key_t key;
  while (pthread_key_create(&key, nullptr) == 0) keys.push_back(key);
  for (const pthread_key_t k : keys) pthread_key_delete(k);
  return static_cast<int>(keys.size());
}

TEST(FailedStarts, NoWorkerSaysWhy) {
  // A start with no worker names what left none, rather than pointing at StarPU's variables.
  RuntimeOptions no_worker;
  no_worker.ncpus = 0;
  no_worker.ncuda = 0;
  try {
    Runtime runtime(no_worker);
    FAIL() << "a runtime with no worker started";
  } catch (const RuntimeError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("0 CPU workers were asked for"), std::string::npos) << what;
    EXPECT_NE(what.find("no CUDA worker was to start"), std::string::npos) << what;
  }
}

TEST(FailedStarts, LeaveTheProcessItsThreadKeys) {
  // StarPU 1.3 created a thread key at each start and deleted it only at shutdown, so a start it
  // refused (no worker) kept one: a program that retried used them all up after about a thousand
  // attempts, and the next start aborted it.
  RuntimeOptions no_worker;
  no_worker.ncpus = 0;
  no_worker.ncuda = 0;
  EXPECT_THROW(Runtime runtime(no_worker), RuntimeError);  // what the first start sets up once
  const int before = free_thread_keys();
  for (int attempt = 0; attempt < 20; ++attempt)
    EXPECT_THROW(Runtime runtime(no_worker), RuntimeError) << "attempt " << attempt;
  EXPECT_EQ(free_thread_keys(), before) << "failed starts kept thread keys";
  Runtime runtime(two_cpu_workers());
  EXPECT_EQ(factor_small(runtime), 0);
}

// Under `ulimit -v`, a worker without room for OpenBLAS's buffer hung in its first task (and the
// program with it). StarPU starts again with the workers that fit, whose buffers are mapped at
// once; a fixed worker count that does not fit, or none fitting, is a ResourceError.
TEST(AddressSpaceLimit, CpuWorkersAreThoseWhoseBuffersFit) {
  if (under_address_sanitizer()) GTEST_SKIP() << "AddressSanitizer needs terabytes of address space";
  // What a running runtime with two workers maps before its first task (stacks, arenas, StarPU),
  // measured on a second start: the first one also maps what the process then keeps.
  std::size_t started_bytes = 0;
  for (int start = 0; start < 2; ++start) {
    const std::size_t before = address_space_bytes();
    Runtime runtime(two_cpu_workers());
    started_bytes = address_space_bytes() - before;
  }
  // A worker as Tessera counts it (its stack, BLAS buffer and arena), and StarPU's other threads.
  const std::size_t stack = detail::worker_thread_stack_bytes();
  const std::size_t worker = stack + detail::blas_buffer_bytes_per_worker();
  const std::size_t others = 4 * stack + detail::program_blas_bytes();
  const std::size_t base = address_space_bytes();
  {
    RuntimeOptions options;  // the number of workers left to Tessera (two here)
    options.ncuda = 0;
    limit_address_space(base + started_bytes + others + worker + worker / 2);
    Runtime runtime(options);
    EXPECT_EQ(runtime.cpu_workers(), 1);
    ASSERT_EQ(runtime.notices().size(), 1u);
    EXPECT_NE(runtime.notices()[0].find("address-space limit"), std::string::npos) << runtime.notices()[0];
    expect_factors_in_time(runtime);
  }
  EXPECT_THROW(Runtime runtime(two_cpu_workers()), ResourceError);  // two asked for, one fits
  limit_address_space(base + started_bytes + worker / 4);
  EXPECT_THROW(Runtime runtime(two_cpu_workers()), ResourceError);
  limit_address_space(RLIM_INFINITY);
  Runtime runtime(two_cpu_workers());
  expect_factors_in_time(runtime);
}

// ---- a small stack limit (ulimit -s) ---------------------------------------------------------

std::size_t default_thread_stack() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

void set_default_thread_stack(std::size_t bytes) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_getattr_default_np(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  ASSERT_EQ(pthread_setattr_default_np(&attr), 0);
  pthread_attr_destroy(&attr);
}

// Under `ulimit -s 256` threads start with 256 KiB of stack, and a worker overflowed it in
// OpenBLAS's gemm kernel (SIGSEGV). The workers get a stack of their own size; the program keeps
// its default.
TEST(StackLimit, WorkersHaveRoomForBlasUnderASmallDefaultStack) {
  const std::size_t small = std::size_t(256) << 10;
  set_default_thread_stack(small);
  Runtime runtime(two_cpu_workers());
  EXPECT_EQ(default_thread_stack(), small) << "the program's default thread stack was changed";
  const int n = 600;
  const std::vector<double> A = random_spd<double>(n, n, 31);
  std::vector<double> F = A;
  EXPECT_EQ(potrf(runtime, n, F.data(), n, cpu_tiles(200)), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
}

}  // namespace
}  // namespace tessera::test
