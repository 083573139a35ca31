// The `tessera` command-line tool: machine information, and factorizations of generated or
// Matrix Market matrices reported as one result row (or one JSON object).
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "batched_command.hpp"
#include "checks.hpp"
#include "distributed_command.hpp"
#include "potrf_command.hpp"
#include "runtime_flags.hpp"
#include "tessera/policies.hpp"
#include "tessera/tessera.hpp"
#include "tessera/tools/machine.hpp"
#include "tessera/tools/tuning.hpp"
#include "testkit/residuals.hpp"
#ifdef TESSERA_CLI_HAVE_MPI
#include "tessera/distributed.hpp"
#endif

namespace {

using nlohmann::json;

// More than any command prints (the longest, `policies --json` and `potrf --help`, are a few KiB).
constexpr std::size_t kOutputBufferBytes = std::size_t(1) << 16;

// The one line for output that could not be written; returns the exit status, 1.
int report_write_error(int cause) {
  if (cause != 0)
    std::fprintf(stderr, "tessera: cannot write the output: %s\n", std::strerror(cause));
  else
    std::fprintf(stderr, "tessera: cannot write the output\n");
  return 1;
}

// The request `tessera info --explain N` plans: an N x N potrf.
struct ExplainRequest {
  int n = -1;  // none asked for
  std::string mode;
  std::string precision = "d";
  int nb = 0;
  bool on_device = false;
};

tessera::PlanExplanation explain(const tessera::Runtime& runtime, const ExplainRequest& request) {
  tessera::FactorOptions options;
  options.mode = request.mode.empty() ? tessera::FactorOptions::from_environment().mode : tessera::parse_mode(request.mode);
  options.nb = request.nb;
  const tessera::MatrixIn where = request.on_device ? tessera::MatrixIn::device : tessera::MatrixIn::host;
  return request.precision == "s" ? tessera::explain_potrf<float>(runtime, request.n, options, where)
                                  : tessera::explain_potrf<double>(runtime, request.n, options, where);
}

json plan_json(const tessera::PlanExplanation& plan) {
  return {{"mode", tessera::to_string(plan.mode)}, {"nb", plan.nb}, {"path", plan.path}, {"reasons", plan.reasons}};
}

void print_plan(const ExplainRequest& request, const tessera::PlanExplanation& plan) {
  fmt::print("plan of a {} potrf of order {} ({}): mode {}, tile size {}, path: {}\n",
             request.precision == "s" ? "single-precision" : "double-precision", request.n,
             request.on_device ? "in GPU memory" : "in host memory", tessera::to_string(plan.mode), plan.nb, plan.path);
  for (const std::string& reason : plan.reasons) fmt::print("  {}\n", reason);
}

int run_info(const tessera::cli::RuntimeFlags& flags, const std::string& policy, bool as_json,
             const ExplainRequest& request) {
  const tessera::MachineInfo machine = tessera::machine_info();
  tessera::RuntimeOptions options = tessera::cli::runtime_options(flags);
  if (!policy.empty()) options.scheduler = policy;
  tessera::Runtime runtime(options);
  const tessera::ModeChoice automatic = runtime.automatic_mode();
  const tessera::BlasInfo blas = tessera::blas_info();
  json gpus = json::array();
  for (const auto& g : machine.gpus)
    gpus.push_back({{"index", g.index}, {"name", g.name}, {"pci_bus_id", g.pci_bus_id}, {"memory_gib", g.memory_gib},
                    {"compute_capability", g.compute_capability}, {"numa_nodes", g.numa_nodes}});
  const json info = {{"tessera", tessera::version()}, {"starpu", tessera::starpu_version()},
                     {"packages", machine.packages}, {"cores", machine.cores},
                     {"processing_units", machine.processing_units}, {"numa_nodes", machine.numa_nodes},
                     {"cuda_built", machine.cuda_built}, {"cuda_status", machine.cuda_status}, {"gpus", gpus},
                     {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
                     {"cuda_devices_used", runtime.cuda_devices()}, {"scheduler", runtime.scheduler()},
                     {"gpu_placement", tessera::to_string(options.gpu_placement)},
                     {"objective", tessera::to_string(options.objective)},
                     {"auto_mode", {{"mode", tessera::to_string(automatic.mode)}, {"reason", automatic.reason}}},
                     {"blas", {{"library", blas.library}, {"kernel", blas.kernel},
                               {"kernel_from_environment", blas.kernel_from_environment},
                               {"faster_kernel", blas.faster_kernel}}}};
  std::optional<tessera::PlanExplanation> plan;
  if (request.n >= 0) plan = explain(runtime, request);
  if (as_json) {
    if (plan) {
      json with_plan = info;
      with_plan["plan"] = plan_json(*plan);
      fmt::print("{}\n", with_plan.dump(2));
      return 0;
    }
    fmt::print("{}\n", info.dump(2));
    return 0;
  }
  fmt::print("Tessera {} on StarPU {}\n", tessera::version(), tessera::starpu_version());
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
  fmt::print("objective {}; auto mode runs {}: {}\n", tessera::to_string(options.objective),
             tessera::to_string(automatic.mode), automatic.reason);
  if (!blas.library.empty())
    fmt::print("BLAS: OpenBLAS's {} kernel{} ({})\n", blas.kernel,
               blas.kernel_from_environment.empty() ? "" : " (OPENBLAS_CORETYPE)", blas.library);
  if (!blas.faster_kernel.empty())
    fmt::print("  this CPU runs OpenBLAS's {} kernel: set OPENBLAS_CORETYPE={} before the program starts\n",
               blas.faster_kernel, blas.faster_kernel);
  if (runtime.cuda_devices() > 1)
    fmt::print("GPU placement {}: {}\n", tessera::to_string(options.gpu_placement),
               options.gpu_placement == tessera::GpuPlacement::block_cyclic
                   ? "each tile task on the GPU owning its tile (2-D block-cyclic over the GPUs)"
                   : "the scheduler places every task");
  if (plan) print_plan(request, *plan);
  return 0;
}

int run_policies(bool as_json) {
  const std::vector<tessera::PolicyInfo> policies = tessera::scheduling_policies();
  json rows = json::array();
  for (const auto& p : policies) {
    std::string modes;
    for (tessera::Mode m : p.modes) modes += (modes.empty() ? "" : ",") + std::string(tessera::to_string(m));
    if (as_json)
      rows.push_back({{"name", p.name}, {"description", p.description}, {"tessera", p.tessera}, {"modes", modes},
                      {"uses_perf_models", p.uses_perf_models}});
    else
      fmt::print("{:<32} {:<8} {:<15} {}\n", p.name, p.tessera ? "tessera" : "starpu", modes, p.description);
  }
  if (as_json) fmt::print("{}\n", rows.dump(2));
  return 0;
}

struct InfoCommand {
  tessera::cli::RuntimeFlags runtime;
  std::string policy;
  bool json = false;
  ExplainRequest explain;
};

struct TuneCommand {
  tessera::TuningRequest request;
  std::string output = "tessera-tuning.json";
  std::vector<std::string> precisions = {"d", "s"};
};

int run_tune(TuneCommand& tune) {
  tessera::cli::require_writable("--output", tune.output);
  tune.request.precisions.clear();
  for (const auto& letter : tune.precisions) {
    tessera::Precision p{};
    if (letter.size() == 1 && tessera::precision_from_letter(letter[0], &p)) tune.request.precisions.push_back(p);
  }
  tessera::tune_tile_kernels(tune.request, tune.output, &std::cerr);
  fmt::print("tuning written to {} (use it with TESSERA_TUNING_FILE={})\n", tune.output, tune.output);
  return 0;
}

const std::vector<std::string> kUplos = {"L", "U", "l", "u"};
const std::vector<std::string> kPrecisions = {"d", "s"};
const std::vector<std::string> kModes = {"cpu", "gpu", "hybrid", "auto"};

CLI::App* add_potrf_command(CLI::App& app, tessera::cli::PotrfCommand& potrf) {
  using namespace tessera::cli;
  CLI::App* cmd = app.add_subcommand("potrf", "factor a random SPD matrix or a Matrix Market file");
  CLI::Option* n = cmd->add_option("--n", potrf.n, "order of the random matrix")->check(non_negative_int())->capture_default_str();
  cmd->add_option("--nb", potrf.nb, "tile size (default: TESSERA_NB, else chosen per n, precision and mode)")->check(positive_int());
  cmd->add_option("--uplo", potrf.uplo, "triangle: L or U")->check(CLI::IsMember(kUplos))->capture_default_str();
  cmd->add_option("--precision", potrf.precision, "d (double) or s (single)")->check(CLI::IsMember(kPrecisions))->capture_default_str();
  cmd->add_option("--mode", potrf.mode, "cpu, gpu, hybrid or auto (default: TESSERA_MODE, else auto; `tessera info` says what auto runs)")->check(CLI::IsMember(kModes));
  cmd->add_option("--policy", potrf.policy, "scheduling policy (default: TESSERA_POLICY, else dmdas; `tessera policies` lists them)");
  cmd->add_option("--gpu-kernels", potrf.gpu_kernels, "vendor, custom or any (default: TESSERA_GPU_KERNELS, else any)")
      ->check(CLI::IsMember({"vendor", "custom", "any"}));
  CLI::Option* input = cmd->add_option("--input", potrf.input, "Matrix Market file to factor instead of a random matrix (real or integer, "
                                                              "array or coordinate, general files exactly symmetric)")
                           ->check(non_empty_path());
  CLI::Option* output = cmd->add_option("--output", potrf.output, "write the factor L as a Matrix Market file (array, general, zeros above the diagonal)")
                            ->check(non_empty_path());
  cmd->add_option("--trace", potrf.trace, "write the executed schedule: FILE.json (Chrome trace events) or FILE.svg (Gantt chart); "
                                                  "with --grid each rank R writes its own, FILE.rankR.json or .svg")
      ->check(non_empty_path());
  CLI::Option* grid = cmd->add_option("--grid", potrf.grid, "PxQ: factor a random matrix distributed over the P x Q ranks of mpirun "
                                                            "(2-D block-cyclic; one result row on rank 0; default: none, one process)");
  grid->excludes(input)->excludes(output);
  CLI::Option* accuracy = cmd->add_option("--accuracy", potrf.accuracy, "adaptive precision (double, one process): each tile's updates in the lowest "
                                                "arithmetic (fp16, fp32, fp64) its norm allows for a backward error of about "
                                                "this, in (0, 1); the row gives the tiles per arithmetic (default: none, FP64 throughout)")
      ->check(open_unit_interval())
      ->excludes(grid);
  cmd->add_option("--tile-map", potrf.tile_map, "with --accuracy: write the arithmetic each tile took as an SVG image")
      ->check(non_empty_path())
      ->needs(accuracy);
  cmd->add_option("--repetitions", potrf.repetitions, "with --grid: factorizations in the same ranks (the first one "
                                                      "cold, the others warm), the matrix filled again before each")
      ->check(positive_int())
      ->needs(grid)
      ->capture_default_str();
  CLI::Option* seed = cmd->add_option("--seed", potrf.seed, "seed of the random matrix")
                          ->check(integer_in(0, std::numeric_limits<unsigned>::max(), "non-negative"))
                          ->capture_default_str();
  n->excludes(input);
  seed->excludes(input);
  cmd->add_flag("--json", potrf.json, "print one JSON object");
  cmd->add_flag("!--no-check", potrf.check, "skip the backward-error check");
  add_runtime_flags(cmd, potrf.runtime);
  cmd->footer(
      fmt::format("Exit status: 0; 1 on bad input or when the output cannot be written; 2 when the matrix is not "
                  "positive definite; 3 when the check fails: the backward error ||A - L L^T||_1 / (n ||A||_1 eps) "
                  "is not below {:g} (LAPACK's test-suite threshold), or with --accuracy U not below {:g} U / (n eps)",
                  tessera::testkit::kBackwardErrorThreshold, tessera::testkit::kBackwardErrorThreshold));
  return cmd;
}

CLI::App* add_info_command(CLI::App& app, InfoCommand& info) {
  CLI::App* cmd = app.add_subcommand("info", "the machine, the GPUs and the workers Tessera would start");
  tessera::cli::add_runtime_flags(cmd, info.runtime);
  cmd->add_option("--policy", info.policy, "scheduling policy (default: TESSERA_POLICY, else dmdas)");
  cmd->add_flag("--json", info.json, "print JSON");
  cmd->add_option("--explain", info.explain.n, "N: the plan of an N x N potrf on this runtime, and why")
      ->check(tessera::cli::non_negative_int());
  cmd->add_option("--mode", info.explain.mode, "with --explain: cpu, gpu, hybrid or auto (default: TESSERA_MODE, else auto)")
      ->check(CLI::IsMember(kModes));
  cmd->add_option("--precision", info.explain.precision, "with --explain: d or s")
      ->check(CLI::IsMember({"d", "s"}))
      ->capture_default_str();
  cmd->add_option("--nb", info.explain.nb, "with --explain: tile size (0: Tessera's choice)")
      ->check(tessera::cli::non_negative_int());
  cmd->add_flag("--on-device", info.explain.on_device, "with --explain: the matrix in GPU memory (the device API)");
  return cmd;
}

CLI::App* add_batched_command(CLI::App& app, tessera::cli::BatchedCommand& batched) {
  using namespace tessera::cli;
  CLI::App* cmd = app.add_subcommand("batched", "factor (and solve) a batch of small random SPD matrices");
  cmd->add_option("--n", batched.n, "order of each matrix")->check(non_negative_int())->capture_default_str();
  cmd->add_option("--count", batched.count, "matrices in the batch")->check(non_negative_int())->capture_default_str();
  cmd->add_option("--nrhs", batched.nrhs, "right-hand sides per matrix (0: factor only)")->check(non_negative_int())->capture_default_str();
  cmd->add_option("--precision", batched.precision, "d (double) or s (single)")->check(CLI::IsMember(kPrecisions))->capture_default_str();
  cmd->add_option("--mode", batched.mode, "cpu, gpu, hybrid or auto")->check(CLI::IsMember(kModes))->capture_default_str();
  cmd->add_option("--uplo", batched.uplo, "triangle: L or U")->check(CLI::IsMember(kUplos))->capture_default_str();
  cmd->add_option("--chunk", batched.chunk, "matrices per task (default 0: chosen from the batch and the workers)")->check(non_negative_int());
  cmd->add_option("--seed", batched.seed, "seed of the random matrices")
      ->check(integer_in(0, std::numeric_limits<unsigned>::max(), "non-negative"))
      ->capture_default_str();
  cmd->add_flag("--fast-math", batched.fast_math, "approximate square roots on the GPU");
  cmd->add_flag("--json", batched.json, "print one JSON object");
  add_runtime_flags(cmd, batched.runtime);
  cmd->footer(
      fmt::format("Exit status: 0; 1 on bad input or when the output cannot be written; 3 when a matrix is not "
                  "positive definite or the largest backward error is not below {:g} (LAPACK's test-suite "
                  "threshold): ||A - L L^T||_1 / (n ||A||_1 eps) for a factorization, ||A X - B||_1 / "
                  "(||A||_1 ||X||_1 n eps) for a solve (--nrhs)",
                  tessera::testkit::kBackwardErrorThreshold));
  return cmd;
}

CLI::App* add_tune_command(CLI::App& app, TuneCommand& tune) {
  using namespace tessera::cli;
  CLI::App* cmd = app.add_subcommand("tune", "tune the CUDA tile kernels on this GPU and write a tuning file");
  cmd->add_option("--output", tune.output, "tuning file to write (merged when it exists)")->capture_default_str();
  cmd->add_option("--nb", tune.request.tile_sizes, "tile sizes to tune")
      ->check(positive_int())
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--precision", tune.precisions, "precisions: d, s")
      ->check(CLI::IsMember(kPrecisions))
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--ops", tune.request.operations, "tile operations to tune (default: all)")
      ->check(CLI::IsMember(tessera::tile_operations()))
      ->delimiter(',');
  cmd->add_option("--repetitions", tune.request.repetitions, "timed repetitions per configuration (median)")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_option("--seed", tune.request.seed, "seed of the random inputs")
      ->check(integer_in(0, std::numeric_limits<long long>::max(), "non-negative"))
      ->capture_default_str();
  cmd->add_option("--device", tune.request.device, "CUDA device")->check(non_negative_int())->capture_default_str();
  return cmd;
}

// Parses the command line. Returns the exit status when the program is done: 0 after --help
// or --version, 1 after a parse error (CLI11's one-line message on stderr).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // Through stdout's buffer like every output, not std::cout's std::endl, whose flush would
    // lose the cause of a failed write.
    std::ostringstream text;
    const int status = app.exit(e, text, text);
    std::fputs(text.str().c_str(), stdout);
    return status;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  }
  return std::nullopt;
}

// Runs the command line; returns the exit status.
int run_command_line(int argc, char** argv) {
  CLI::App app{"Tessera: tile Cholesky factorization of symmetric positive definite matrices on CPUs and GPUs"};
  app.set_version_flag("--version", std::string("tessera ") + tessera::version());
  app.require_subcommand(1);

  tessera::cli::PotrfCommand potrf;
  CLI::App* potrf_cmd = add_potrf_command(app, potrf);
  InfoCommand info;
  CLI::App* info_cmd = add_info_command(app, info);
  bool policies_json = false;
  CLI::App* policies_cmd = app.add_subcommand("policies", "the scheduling policies --policy accepts, Tessera's first");
  policies_cmd->add_flag("--json", policies_json, "print JSON");
  tessera::cli::BatchedCommand batched;
  CLI::App* batched_cmd = add_batched_command(app, batched);
  TuneCommand tune;
  CLI::App* tune_cmd = add_tune_command(app, tune);

  if (const std::optional<int> status = parse(app, argc, argv)) return *status;
  try {
#ifdef TESSERA_CLI_HAVE_MPI
    if (*info_cmd && tessera::distributed::launched_by_mpi())
      return tessera::cli::run_distributed_info(info.runtime, info.policy, info.json, argc, argv);
    if (*potrf_cmd && !potrf.grid.empty()) return tessera::cli::run_distributed_potrf(potrf, argc, argv);
#else
    if (*potrf_cmd && !potrf.grid.empty())
      throw tessera::InvalidArgument("--grid: this tessera was built without StarPU-MPI (distributed matrices)");
#endif
    // OpenBLAS chose its CPU kernel when the process loaded it; where this run's CPU tasks call
    // BLAS and that kernel leaves the CPU's vector units unused, start again with a faster one
    // (docs/performance.md has the difference it makes).
    if (*potrf_cmd) tessera::restart_with_faster_blas_kernel(argv, tessera::cli::requested_mode(potrf));
    if (*batched_cmd) tessera::restart_with_faster_blas_kernel(argv, tessera::parse_mode(batched.mode));
    if (*info_cmd) return run_info(info.runtime, info.policy, info.json, info.explain);
    if (*batched_cmd) return tessera::cli::run_batched(batched);
    if (*policies_cmd) return run_policies(policies_json);
    if (*tune_cmd) return run_tune(tune);
    if (*potrf_cmd) return tessera::cli::run_potrf(potrf);
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  } catch (const std::system_error& e) {
    // fmt::print throws when a write to stdout fails (more output than stdout's buffer holds,
    // or a buffer that could not be set because something wrote before main).
    return report_write_error(e.code().value());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Writes what stdout still holds and closes it. Output that cannot be written (a full disk, a
// pipe closed with SIGPIPE ignored) fails the run: exit 1 with one line, unless the run failed
// already (its status kept) or its failure was this write (reported once).
int with_output_written(int status) {
  const bool reported = status != 0 && std::ferror(stdout);
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int flush_errno = errno;
  errno = 0;
  const bool closed = std::fclose(stdout) == 0;
  if (flushed && closed) return status;
  if (!reported) report_write_error(!flushed ? flush_errno : errno);
  return status != 0 ? status : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Into a file or a pipe, everything printed is held until the end, where one flush writes it
  // and a failure is reported with its cause. A terminal keeps its line buffering.
  if (!isatty(STDOUT_FILENO)) std::setvbuf(stdout, nullptr, _IOFBF, kOutputBufferBytes);
  return with_output_written(run_command_line(argc, argv));
}
