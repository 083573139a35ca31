// Fuzz target: the environment a process hands Tessera. Each input sets a few of StarPU's and
// Tessera's variables to values built from its bytes (numbers of every sign and size, trailing
// junk, empty strings, policy names real and not), then starts a runtime and factors a small
// matrix. Invariants: StarPU never aborts the process (a value it would abort on is refused
// first, with InvalidArgument naming it); a runtime that starts factors correctly; every
// variable is restored afterwards.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::fuzz::ByteReader;

const char* const kVariables[] = {
    "STARPU_NCPU",       "STARPU_NCUDA",    "STARPU_CALIBRATE", "STARPU_NWORKER_PER_CUDA", "STARPU_SCHED",
    "STARPU_LIMIT_CPU_MEM", "STARPU_PREFETCH", "STARPU_SCHED_ALPHA", "STARPU_SCHED_BETA", "STARPU_BUS_STATS",
    "STARPU_WORKERS_NOBIND", "STARPU_MIN_PRIO", "STARPU_MAX_PRIO", "TESSERA_NCPU", "TESSERA_NB", "TESSERA_MODE",
    "TESSERA_POLICY", "TESSERA_VERBOSE", "TESSERA_GPU_KERNELS", "TESSERA_TASK_GRAIN", "TESSERA_URGENT_STREAMS",
    "TESSERA_PAUSE_WHEN_IDLE", "TESSERA_BACKGROUND_WRITE_BACK"};

const char* const kWords[] = {"", "0", "1", "2", "-1", "-5", "abc", "1e3", "0x10", " 1", "1 ", "2147483648",
                              "99999999999999999999", "eager", "dmdas", "lws", "bogus", "graph_test", "cpu",
                              "hybrid", "gpu", "nan", "0.5", "+3", "007", "tiles", "block-columns", "whole-matrix"};

std::string value_from(ByteReader& in) {
  const std::uint8_t kind = in.byte() % 4;
  if (kind == 0) return kWords[in.byte() % (sizeof kWords / sizeof *kWords)];
  if (kind == 1) return std::to_string(static_cast<std::int32_t>(in.u32()) % 5);  // small, maybe negative
  if (kind == 2) return std::to_string(static_cast<std::int32_t>(in.u32()));
  std::string raw;
  for (std::uint8_t n = in.byte() % 6; n > 0; --n) raw += static_cast<char>(in.byte() % 94 + 33);
  return raw;
}

struct Saved {
  const char* name;
  bool was_set;
  std::string value;
};

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_environment: invariant violated: %s\n", what);
  std::abort();
}

void factor_small(tessera::Runtime& runtime) {
  const int n = 24;
  std::vector<double> A(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A[i + static_cast<std::size_t>(j) * n] = i == j ? n : 1.0 / (1 + i + j);
  tessera::FactorOptions options = tessera::FactorOptions::from_environment();
  options.mode = tessera::Mode::cpu;
  if (tessera::potrf(runtime, n, A.data(), n, options) != 0) violated("an SPD matrix failed to factor");
  if (!(std::fabs(A[0] - std::sqrt(double(n))) < 1e-12)) violated("wrong factor");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  std::vector<Saved> saved;
  for (std::uint8_t count = in.byte() % 4 + 1; count > 0; --count) {
    const char* name = kVariables[in.byte() % (sizeof kVariables / sizeof *kVariables)];
    const char* old = std::getenv(name);
    saved.push_back({name, old != nullptr, old ? old : ""});
    setenv(name, value_from(in).c_str(), 1);
  }
  // Keep each start cheap: StarPU lets STARPU_NCPU override the runtime's own worker count, and a
  // valid but large value starts hundreds of threads (seconds per input, a timeout on a slow
  // machine). Values StarPU would abort on stay as they are: those are what is fuzzed.
  if (const char* ncpu = std::getenv("STARPU_NCPU")) {
    char* end = nullptr;
    const long workers = std::strtol(ncpu, &end, 10);
    if (*ncpu && *end == '\0' && workers > 2 && workers <= INT_MAX) setenv("STARPU_NCPU", "2", 1);
  }
  try {
    tessera::RuntimeOptions options = tessera::RuntimeOptions::from_environment();
    options.ncuda = 0;
    if (options.ncpus < 0 || options.ncpus > 2) options.ncpus = 1;  // keep each start cheap
    tessera::Runtime runtime(options);
    factor_small(runtime);
  } catch (const tessera::Error&) {
    // refused with a reason: the process goes on
  }
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->was_set)
      setenv(it->name, it->value.c_str(), 1);
    else
      unsetenv(it->name);
  }
  return 0;
}
