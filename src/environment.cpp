// The one place where Tessera reads its environment variables.
#include <cstdlib>
#include <string>

#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/trace.hpp"
#include "lapack/intercept_options.hpp"

namespace tessera {

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

int env_int(const char* name, int fallback, int min_value) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < min_value || parsed > 1 << 24)
    throw InvalidArgument(std::string(name) + "='" + value + "' is not an integer >= " + std::to_string(min_value));
  return static_cast<int>(parsed);
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

}  // namespace

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions options;
  options.ncpus = env_int("TESSERA_NCPU", options.ncpus, 0);
  options.ncuda = env_int("TESSERA_NCUDA", options.ncuda, 0);
  options.workers_per_cuda = env_int("TESSERA_WORKERS_PER_CUDA", options.workers_per_cuda, 1);
  if (const char* policy = env("TESSERA_POLICY")) options.scheduler = policy;
  if (const char* tuning = env("TESSERA_TUNING_FILE")) options.tuning_file = tuning;
  return options;
}

FactorOptions FactorOptions::from_environment() {
  FactorOptions options;
  options.nb = env_int("TESSERA_NB", options.nb, 1);
  if (const char* mode = env("TESSERA_MODE")) options.mode = parse_mode(mode);
  if (const char* kernels = env("TESSERA_GPU_KERNELS")) options.gpu_kernels = parse_gpu_kernels(kernels);
  if (const char* trace = env("TESSERA_TRACE")) options.trace = std::make_shared<Trace>(trace);
  return options;
}

LapackInterceptOptions LapackInterceptOptions::from_environment() {
  LapackInterceptOptions options;
  options.min_n = env_int("TESSERA_LAPACK_MIN_N", options.min_n, 0);
  options.verbose = env_int("TESSERA_LAPACK_VERBOSE", options.verbose ? 1 : 0, 0) != 0;
  return options;
}

Mode parse_mode(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "cpu") return Mode::cpu;
  if (s == "gpu") return Mode::gpu;
  if (s == "hybrid") return Mode::hybrid;
  throw InvalidArgument("unknown mode '" + name + "' (expected cpu, gpu or hybrid)");
}

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::cpu: return "cpu";
    case Mode::gpu: return "gpu";
    case Mode::hybrid: return "hybrid";
  }
  return "?";
}

Uplo parse_uplo(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "l" || s == "lower") return Uplo::lower;
  if (s == "u" || s == "upper") return Uplo::upper;
  throw InvalidArgument("unknown uplo '" + name + "' (expected L or U)");
}

const char* to_string(Uplo uplo) { return uplo == Uplo::lower ? "L" : "U"; }

GpuKernels parse_gpu_kernels(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "vendor") return GpuKernels::vendor;
  if (s == "custom") return GpuKernels::custom;
  if (s == "any" || s == "mixed") return GpuKernels::any;
  throw InvalidArgument("unknown GPU kernel choice '" + name + "' (expected vendor, custom or any)");
}

const char* to_string(GpuKernels kernels) {
  switch (kernels) {
    case GpuKernels::vendor: return "vendor";
    case GpuKernels::custom: return "custom";
    case GpuKernels::any: return "any";
  }
  return "?";
}

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::potrf: return "potrf";
    case TaskKind::trsm: return "trsm";
    case TaskKind::syrk: return "syrk";
    case TaskKind::gemm: return "gemm";
    case TaskKind::copy_in: return "copy_in";
    case TaskKind::copy_out: return "copy_out";
    case TaskKind::other: return "other";
  }
  return "?";
}

}  // namespace tessera
