// The `tessera` command-line tool: machine information, and factorizations of generated or
// Matrix Market matrices reported as one result row (or one JSON object).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batched_command.hpp"
#include "tessera/machine.hpp"
#include "tessera/matrix_market.hpp"
#include "tessera/policies.hpp"
#include "tessera/tessera.hpp"
#include "tessera/trace.hpp"
#include "tessera/tuning.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct PotrfCommand {
  int n = 1000;
  int nb = 0;
  std::string uplo = "L";
  std::string precision = "d";
  std::string mode = "hybrid";
  std::string policy;
  std::string gpu_kernels = "any";
  std::string input;
  std::string output;
  std::string trace;
  unsigned seed = 1;
  int ncpu = -1;
  int ncuda = -1;
  bool json = false;
  bool check = true;
};

// A random symmetric, strictly diagonally dominant matrix (hence SPD): off-diagonal entries
// uniform in (-1, 1), diagonal n. Columns are generated in parallel, each from its own seed, so
// the matrix depends on the seed alone.
template <class T>
std::vector<T> generate_spd(int n, unsigned seed) {
  std::vector<T> A(static_cast<std::size_t>(n) * n);
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int j = static_cast<int>(t); j < n; j += static_cast<int>(threads)) {
        std::mt19937_64 gen(seed * 1000003ull + static_cast<unsigned long long>(j));
        std::uniform_real_distribution<double> dist(-1.0, 1.0);
        T* column = A.data() + static_cast<std::size_t>(j) * n;
        for (int i = j + 1; i < n; ++i) column[i] = static_cast<T>(dist(gen));
        column[j] = static_cast<T>(n);
      }
    });
  for (auto& th : pool) th.join();
  for (int j = 0; j < n; ++j)  // mirror into the upper triangle
    for (int i = j + 1; i < n; ++i) A[j + static_cast<std::size_t>(i) * n] = A[i + static_cast<std::size_t>(j) * n];
  return A;
}

template <class T>
std::vector<T> matrix_from_file(const std::string& path, int& n) {
  const tessera::DenseMatrix M = tessera::read_matrix_market_file(path);
  if (M.rows != M.cols) throw tessera::InvalidArgument(fmt::format("{}: the matrix is {} x {}, not square", path, M.rows, M.cols));
  n = M.rows;
  return std::vector<T>(M.values.begin(), M.values.end());
}

// Waits for the request, printing a progress line on stderr once a second after the first.
int wait_with_progress(tessera::Request& request, int n, bool quiet) {
  const auto start = Clock::now();
  bool printed = false;
  while (!request.done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (!quiet && elapsed >= 1.0 && elapsed - static_cast<int>(elapsed) < 0.05) {
      std::fprintf(stderr, "\rtessera: factoring n = %d ... %.0f s", n, elapsed);
      printed = true;
    }
  }
  if (printed) std::fprintf(stderr, "\n");
  return request.wait();
}

template <class T>
int run_potrf(const PotrfCommand& cmd) {
  tessera::RuntimeOptions runtime_options = tessera::RuntimeOptions::from_environment();
  if (!cmd.policy.empty()) runtime_options.scheduler = cmd.policy;
  if (cmd.ncpu >= 0) runtime_options.ncpus = cmd.ncpu;
  if (cmd.ncuda >= 0) runtime_options.ncuda = cmd.ncuda;
  tessera::FactorOptions options = tessera::FactorOptions::from_environment();
  options.uplo = tessera::parse_uplo(cmd.uplo);
  options.mode = tessera::parse_mode(cmd.mode);
  options.gpu_kernels = tessera::parse_gpu_kernels(cmd.gpu_kernels);
  if (cmd.nb > 0) options.nb = cmd.nb;
  if (!cmd.trace.empty()) {
    tessera::Trace::check_file_name(cmd.trace);
    options.trace = std::make_shared<tessera::Trace>();
  }

  int n = cmd.n;
  std::vector<T> A = cmd.input.empty() ? generate_spd<T>(n, cmd.seed) : matrix_from_file<T>(cmd.input, n);
  tessera::Runtime runtime(runtime_options);
  const tessera::Mode mode = runtime.resolve(options.mode);
  options.nb = options.nb > 0 ? options.nb : tessera::default_tile_size(n, sizeof(T) == 8, mode);
  const std::vector<T> original = cmd.check ? A : std::vector<T>();

  const auto start = Clock::now();
  tessera::Request request = tessera::potrf_async(runtime, n, A.data(), std::max(1, n), options);
  const int info = wait_with_progress(request, n, cmd.json);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!cmd.trace.empty()) {
    options.trace->write(cmd.trace);
    if (!cmd.json)
      std::fprintf(stderr, "tessera: schedule of %zu tasks written to %s\n", options.trace->events().size(), cmd.trace.c_str());
  }

  std::optional<double> error;
  if (cmd.check && info == 0 && n > 0) {
    tessera::TileMatrix<T> a(runtime, n, options.nb), l(runtime, n, options.nb);
    tessera::load_async(a, options.uplo, original.data(), n).wait();
    tessera::load_async(l, options.uplo, A.data(), n).wait();
    error = tessera::backward_error(a, l, mode);
  }
  if (!cmd.output.empty() && info == 0) {
    std::vector<double> out(A.begin(), A.end());
    if (options.uplo == tessera::Uplo::upper)  // write the factor as the lower triangle L = U^T
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) out[i + static_cast<std::size_t>(j) * n] = out[j + static_cast<std::size_t>(i) * n];
    tessera::write_matrix_market_file(cmd.output, n, n, out.data(), std::max(1, n), true);
  }

  const double gflops = seconds > 0 ? (double(n) * n * n / 3.0) / seconds * 1e-9 : 0.0;
  const bool ok = info == 0 && (!error || *error < 1.0);
  if (cmd.json) {
    json row = {{"n", n}, {"nb", options.nb}, {"uplo", cmd.uplo}, {"precision", cmd.precision},
                {"mode", tessera::to_string(mode)}, {"policy", runtime.scheduler()},
                {"gpu_kernels", tessera::to_string(options.gpu_kernels)},
                {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
                {"seconds", seconds}, {"gflops", gflops}, {"info", info}, {"ok", ok}};
    row["backward_error"] = error ? json(*error) : json(nullptr);
    if (request.non_finite_input()) row["non_finite_input"] = true;
    fmt::print("{}\n", row.dump());
  } else {
    fmt::print("{:>7} {:>5} {:>4} {:>6} {:>8} {:>9} {:>9} {:>10} {:>10} {:>5} {}\n", "n", "nb", "prec", "mode", "policy",
               "workers", "seconds", "GFLOP/s", "error", "info", "ok");
    fmt::print("{:>7} {:>5} {:>4} {:>6} {:>8} {:>4}+{:<4} {:>9.4f} {:>10.2f} {:>10} {:>5} {}\n", n, options.nb,
               cmd.precision, tessera::to_string(mode), runtime.scheduler(), runtime.cpu_workers(),
               runtime.cuda_workers(), seconds, gflops, error ? fmt::format("{:.3g}", *error) : "-", info,
               ok ? "ok" : "FAILED");
  }
  if (info > 0) {
    std::fprintf(stderr, "tessera: the matrix is not positive definite: the leading minor of order %d %s\n", info,
                 request.non_finite_input() ? "holds a NaN or an infinity" : "is not positive definite");
    return 2;
  }
  return ok ? 0 : 3;
}

int run_info(int ncpu, int ncuda, const std::string& policy, bool as_json) {
  const tessera::MachineInfo machine = tessera::machine_info();
  tessera::RuntimeOptions options = tessera::RuntimeOptions::from_environment();
  if (ncpu >= 0) options.ncpus = ncpu;
  if (ncuda >= 0) options.ncuda = ncuda;
  if (!policy.empty()) options.scheduler = policy;
  tessera::Runtime runtime(options);
  json gpus = json::array();
  for (const auto& g : machine.gpus)
    gpus.push_back({{"index", g.index}, {"name", g.name}, {"pci_bus_id", g.pci_bus_id}, {"memory_gib", g.memory_gib},
                    {"compute_capability", g.compute_capability}, {"numa_nodes", g.numa_nodes}});
  const json info = {{"tessera", tessera::version()}, {"starpu", STARPU_MAJOR_VERSION * 100 + STARPU_MINOR_VERSION},
                     {"packages", machine.packages}, {"cores", machine.cores},
                     {"processing_units", machine.processing_units}, {"numa_nodes", machine.numa_nodes},
                     {"cuda_built", machine.cuda_built}, {"cuda_status", machine.cuda_status}, {"gpus", gpus},
                     {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
                     {"cuda_devices_used", runtime.cuda_devices()}, {"scheduler", runtime.scheduler()}};
  if (as_json) {
    fmt::print("{}\n", info.dump(2));
    return 0;
  }
  fmt::print("Tessera {} on StarPU {}.{}.{}\n", tessera::version(), STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
             STARPU_RELEASE_VERSION);
  fmt::print("machine: {} package(s), {} cores, {} hardware threads, {} NUMA node(s)\n", machine.packages,
             machine.cores, machine.processing_units, machine.numa_nodes);
  fmt::print("CUDA: {}{}\n", machine.cuda_built ? "built in" : "not built",
             machine.gpus.empty() ? " (" + machine.cuda_status + ")" : "");
  for (const auto& g : machine.gpus) {
    std::string nodes;
    for (int node : g.numa_nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(node);
    fmt::print("  GPU {}: {} (sm_{}, {:.1f} GiB, PCI {}, NUMA node {})\n", g.index, g.name, g.compute_capability,
               g.memory_gib, g.pci_bus_id, nodes.empty() ? "unknown" : nodes);
  }
  fmt::print("workers Tessera starts: {} CPU, {} CUDA (on {} GPU(s)); scheduler {}\n", runtime.cpu_workers(),
             runtime.cuda_workers(), runtime.cuda_devices(), runtime.scheduler());
  return 0;
}

int run_policies(bool as_json) {
  const std::vector<tessera::PolicyInfo> policies = tessera::scheduling_policies();
  json rows = json::array();
  for (const auto& p : policies) {
    std::string modes;
    for (tessera::Mode m : p.modes) modes += (modes.empty() ? "" : ",") + std::string(tessera::to_string(m));
    if (as_json)
      rows.push_back({{"name", p.name}, {"description", p.description}, {"tessera", p.tessera}, {"modes", modes}});
    else
      fmt::print("{:<32} {:<8} {:<15} {}\n", p.name, p.tessera ? "tessera" : "starpu", modes, p.description);
  }
  if (as_json) fmt::print("{}\n", rows.dump(2));
  return 0;
}

void add_runtime_flags(CLI::App* cmd, int& ncpu, int& ncuda) {
  cmd->add_option("--ncpu", ncpu, "CPU workers (default: StarPU's choice or TESSERA_NCPU)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--ncuda", ncuda, "GPUs to use (default: all or TESSERA_NCUDA)")->check(CLI::NonNegativeNumber);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera: tile Cholesky factorization of symmetric positive definite matrices on CPUs and GPUs"};
  app.set_version_flag("--version", std::string("tessera ") + tessera::version());
  app.require_subcommand(1);

  PotrfCommand potrf;
  CLI::App* potrf_cmd = app.add_subcommand("potrf", "factor a random SPD matrix or a Matrix Market file");
  potrf_cmd->add_option("--n", potrf.n, "matrix order (random matrix)")->check(CLI::NonNegativeNumber);
  potrf_cmd->add_option("--nb", potrf.nb, "tile size (default: chosen per n, precision and mode)")->check(CLI::PositiveNumber);
  potrf_cmd->add_option("--uplo", potrf.uplo, "triangle: L or U")->check(CLI::IsMember({"L", "U", "l", "u"}));
  potrf_cmd->add_option("--precision", potrf.precision, "d (double) or s (single)")->check(CLI::IsMember({"d", "s"}));
  potrf_cmd->add_option("--mode", potrf.mode, "cpu, gpu or hybrid")->check(CLI::IsMember({"cpu", "gpu", "hybrid"}));
  potrf_cmd->add_option("--policy", potrf.policy, "scheduling policy (default dmdas; `tessera policies` lists them)");
  potrf_cmd->add_option("--gpu-kernels", potrf.gpu_kernels, "vendor, custom or any")->check(CLI::IsMember({"vendor", "custom", "any"}));
  potrf_cmd->add_option("--input", potrf.input, "Matrix Market file (array or coordinate, real)");
  potrf_cmd->add_option("--output", potrf.output, "write the factor L as a Matrix Market file");
  potrf_cmd->add_option("--trace", potrf.trace, "write the executed schedule: FILE.json (Chrome trace events) or FILE.svg (Gantt chart)");
  potrf_cmd->add_option("--seed", potrf.seed, "seed of the random matrix");
  potrf_cmd->add_flag("--json", potrf.json, "print one JSON object");
  potrf_cmd->add_flag("!--no-check", potrf.check, "skip the backward-error check");
  add_runtime_flags(potrf_cmd, potrf.ncpu, potrf.ncuda);

  int info_ncpu = -1, info_ncuda = -1;
  std::string info_policy;
  bool info_json = false;
  CLI::App* info_cmd = app.add_subcommand("info", "the machine, the GPUs and the workers Tessera would start");
  add_runtime_flags(info_cmd, info_ncpu, info_ncuda);
  info_cmd->add_option("--policy", info_policy, "scheduling policy");
  info_cmd->add_flag("--json", info_json, "print JSON");

  bool policies_json = false;
  CLI::App* policies_cmd = app.add_subcommand("policies", "the scheduling policies --policy accepts, Tessera's first");
  policies_cmd->add_flag("--json", policies_json, "print JSON");

  tessera::cli::BatchedCommand batched;
  CLI::App* batched_cmd = app.add_subcommand("batched", "factor (and solve) a batch of small random SPD matrices");
  batched_cmd->add_option("--n", batched.n, "order of each matrix")->check(CLI::NonNegativeNumber);
  batched_cmd->add_option("--count", batched.count, "matrices in the batch")->check(CLI::NonNegativeNumber);
  batched_cmd->add_option("--nrhs", batched.nrhs, "right-hand sides per matrix (0: factor only)")->check(CLI::NonNegativeNumber);
  batched_cmd->add_option("--precision", batched.precision, "d (double) or s (single)")->check(CLI::IsMember({"d", "s"}));
  batched_cmd->add_option("--mode", batched.mode, "cpu, gpu or hybrid")->check(CLI::IsMember({"cpu", "gpu", "hybrid"}));
  batched_cmd->add_option("--uplo", batched.uplo, "triangle: L or U")->check(CLI::IsMember({"L", "U", "l", "u"}));
  batched_cmd->add_option("--chunk", batched.chunk, "matrices per task (default: chosen)")->check(CLI::NonNegativeNumber);
  batched_cmd->add_option("--seed", batched.seed, "seed of the random matrices");
  batched_cmd->add_flag("--fast-math", batched.fast_math, "approximate square roots on the GPU");
  batched_cmd->add_flag("--json", batched.json, "print one JSON object");
  add_runtime_flags(batched_cmd, batched.ncpu, batched.ncuda);

  tessera::TuningRequest tuning;
  std::string tuning_output = "tessera-tuning.json";
  std::vector<std::string> tuning_precisions = {"d", "s"};
  CLI::App* tune_cmd = app.add_subcommand("tune", "tune the CUDA tile kernels on this GPU and write a tuning file");
  tune_cmd->add_option("--output", tuning_output, "tuning file to write (merged when it exists)");
  tune_cmd->add_option("--nb", tuning.tile_sizes, "tile sizes to tune")->check(CLI::PositiveNumber);
  tune_cmd->add_option("--precision", tuning_precisions, "precisions: d, s")->check(CLI::IsMember({"d", "s"}));
  tune_cmd->add_option("--repetitions", tuning.repetitions, "timed repetitions per configuration (median)")->check(CLI::PositiveNumber);
  tune_cmd->add_option("--seed", tuning.seed, "seed of the random inputs");
  tune_cmd->add_option("--device", tuning.device, "CUDA device");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*info_cmd) return run_info(info_ncpu, info_ncuda, info_policy, info_json);
    if (*batched_cmd) return tessera::cli::run_batched(batched);
    if (*policies_cmd) return run_policies(policies_json);
    if (*tune_cmd) {
      tuning.precisions.clear();
      for (const auto& p : tuning_precisions) tuning.precisions.push_back(p[0]);
      tessera::tune_tile_kernels(tuning, tuning_output, &std::cerr);
      fmt::print("tuning written to {} (use it with TESSERA_TUNING_FILE={})\n", tuning_output, tuning_output);
      return 0;
    }
    if (*potrf_cmd) return potrf.precision == "d" ? run_potrf<double>(potrf) : run_potrf<float>(potrf);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  }
  return 0;
}
