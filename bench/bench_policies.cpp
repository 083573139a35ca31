// Scheduling policies x modes x sizes: the time of a LAPACK-layout dpotrf (tiles in and out
// included) under each policy, one table (and JSON with --json FILE). StarPU fixes its policy at
// start, so the runtime is started once per policy and round; rounds interleave the policies (odd
// rounds in reverse order) so that a machine whose load drifts treats them alike. Before the
// rounds, factorizations under dmda calibrate the perf models of every size, mode and kind of
// worker (dmda runs a task wherever its model lacks measurements; StarPU keeps the models under
// STARPU_PERF_MODEL_DIR), so that no policy pays for calibration in its timed runs; every start
// warms up again (pinned memory, caches). Each cell reports the median of its timed runs.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/policies.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::vector<int> sizes = {2000, 4000, 6000};
  std::vector<std::string> modes = {"cpu"};
  std::vector<std::string> policies = {"panel-cpu", "critical-path-heft", "locality-ws", "dmda", "dmdas",
                                       "heteroprio", "lws", "eager", "prio"};
  int rounds = 2;
  int calibrate = 3;    // runs per mode and size under the calibration policy, before the rounds
  std::string calibration_policy = "dmda";
  int warmup = 1;       // warm-up runs per cell after each start
  int repetitions = 3;  // timed runs per cell and round
  int nb = 0;
  int ncpu = -1;
  int ncuda = -1;
  bool check = false;
  std::string json_path;
};

struct Cell {
  std::string policy;
  bool tessera = false;
  std::string mode;
  std::string resolved;  // the mode it ran in (hybrid without a GPU runs on the CPUs)
  int n = 0;
  int nb = 0;
  std::vector<double> seconds;
  std::string refused;  // why it did not run
  double backward_error = -1;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t p = 0; p <= list.size();) {
    const std::size_t q = std::min(list.find(',', p), list.size());
    if (q > p) items.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return items;
}

bool parse_arguments(int argc, char** argv, Config& c) {
  const std::map<std::string, int*> int_options = {
      {"--rounds", &c.rounds}, {"--calibrate", &c.calibrate}, {"--warmup", &c.warmup}, {"--repetitions", &c.repetitions},
      {"--nb", &c.nb},         {"--ncpu", &c.ncpu},           {"--ncuda", &c.ncuda}};
  const std::map<std::string, std::string*> string_options = {{"--calibration-policy", &c.calibration_policy},
                                                              {"--json", &c.json_path}};
  const std::map<std::string, std::vector<std::string>*> list_options = {{"--modes", &c.modes},
                                                                         {"--policies", &c.policies}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--check") {
      c.check = true;
    } else if (!has_value) {
      return false;
    } else if (arg == "--sizes") {
      c.sizes.clear();
      for (const auto& s : split(argv[++i])) c.sizes.push_back(std::stoi(s));
    } else if (const auto int_option = int_options.find(arg); int_option != int_options.end()) {
      *int_option->second = std::stoi(argv[++i]);
    } else if (const auto string_option = string_options.find(arg); string_option != string_options.end()) {
      *string_option->second = argv[++i];
    } else if (const auto list_option = list_options.find(arg); list_option != list_options.end()) {
      *list_option->second = split(argv[++i]);
    } else {
      return false;
    }
  }
  return !c.sizes.empty() && !c.modes.empty() && !c.policies.empty() && c.rounds > 0 && c.repetitions > 0;
}

// The matrix `tessera potrf --n N --seed N` factors.
std::vector<double> spd_matrix(int n) {
  return tessera::testkit::potrf_input_matrix<double>(n, static_cast<unsigned>(n));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double gflops(int n, double seconds) { return seconds > 0 ? double(n) * n * n / 3.0 / seconds * 1e-9 : 0.0; }

bool is_tessera_policy(const std::string& name) {
  for (const auto& p : tessera::scheduling_policies())
    if (p.name == name) return p.tessera;
  return false;
}

// One factorization of a fresh copy of A; returns seconds (throws if it fails).
double timed_potrf(tessera::Runtime& runtime, const std::vector<double>& A, std::vector<double>& work, int n,
                   const tessera::FactorOptions& options) {
  std::copy(A.begin(), A.end(), work.begin());
  const auto start = Clock::now();
  const int info = tessera::potrf(runtime, n, work.data(), n, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (info != 0) throw tessera::Error("potrf returned info " + std::to_string(info));
  return seconds;
}

double backward_error(tessera::Runtime& runtime, const std::vector<double>& A, const std::vector<double>& L, int n,
                      int nb, tessera::Mode mode) {
  tessera::TileMatrix<double> a(runtime, n, nb), l(runtime, n, nb);
  tessera::load_async(a, tessera::Uplo::lower, A.data(), n).wait();
  tessera::load_async(l, tessera::Uplo::lower, L.data(), n).wait();
  return tessera::backward_error(a, l, mode);
}

tessera::RuntimeOptions runtime_options(const Config& c, const std::string& policy) {
  tessera::RuntimeOptions ro;
  ro.scheduler = policy;
  ro.ncpus = c.ncpu;
  ro.ncuda = c.ncuda;
  return ro;
}

// Perf models for every mode and size, measured under the calibration policy.
void calibrate_models(const Config& c, const std::map<int, std::vector<double>>& matrices) {
  if (c.calibrate <= 0) return;
  tessera::Runtime runtime(runtime_options(c, c.calibration_policy));
  for (const auto& mode : c.modes)
    for (const auto& [n, A] : matrices) {
      tessera::FactorOptions options;
      options.mode = tessera::parse_mode(mode);
      try {
        options.nb = c.nb > 0 ? c.nb : tessera::default_tile_size(n, tessera::Precision::double_real, runtime.resolve(options.mode));
      } catch (const std::exception& e) {
        continue;  // a mode this machine cannot run: the cells say why
      }
      std::vector<double> work(A.size());
      const auto start = Clock::now();
      for (int r = 0; r < c.calibrate; ++r) timed_potrf(runtime, A, work, n, options);
      fmt::print(stderr, "  calibrated {} n={} under {} ({:.1f} s)\n", mode, n, c.calibration_policy,
                 std::chrono::duration<double>(Clock::now() - start).count());
    }
}

// One start of the runtime under `policy`: every mode and size, warm-ups then timed runs.
void run_policy(const Config& c, const std::string& policy, int round, const std::map<int, std::vector<double>>& matrices,
                std::vector<Cell>& cells, std::string& workers) {
  std::string start_error;
  std::unique_ptr<tessera::Runtime> runtime;
  try {
    runtime = std::make_unique<tessera::Runtime>(runtime_options(c, policy));
    workers = fmt::format("{} CPU + {} CUDA workers", runtime->cpu_workers(), runtime->cuda_workers());
  } catch (const std::exception& e) {
    start_error = e.what();
  }
  for (Cell& cell : cells) {
    if (cell.policy != policy) continue;
    if (!runtime) {
      cell.refused = start_error;
      continue;
    }
    tessera::FactorOptions options;
    options.mode = tessera::parse_mode(cell.mode);
    try {
      const tessera::Mode resolved = runtime->resolve(options.mode);
      cell.resolved = tessera::to_string(resolved);
      options.nb = c.nb > 0 ? c.nb : tessera::default_tile_size(cell.n, tessera::Precision::double_real, resolved);
      cell.nb = options.nb;
      const std::vector<double>& A = matrices.at(cell.n);
      std::vector<double> work(A.size());
      for (int w = 0; w < c.warmup; ++w) timed_potrf(*runtime, A, work, cell.n, options);
      for (int r = 0; r < c.repetitions; ++r) cell.seconds.push_back(timed_potrf(*runtime, A, work, cell.n, options));
      if (c.check && round == 0) cell.backward_error = backward_error(*runtime, A, work, cell.n, options.nb, resolved);
      fmt::print(stderr, "  {} {} n={}: median {:.4f} s so far\n", policy, cell.mode, cell.n, median(cell.seconds));
    } catch (const std::exception& e) {
      cell.refused = e.what();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  if (!parse_arguments(argc, argv, c)) {
    fmt::print(stderr,
               "usage: {} [--sizes N,...] [--modes cpu,gpu,hybrid] [--policies P,...] [--rounds R] [--calibrate C]\n"
               "          [--calibration-policy P] [--warmup W] [--repetitions K] [--nb NB] [--ncpu N] [--ncuda N]\n"
               "          [--check] [--json FILE]\n",
               argv[0]);
    return 2;
  }
  std::vector<Cell> cells;
  for (const auto& policy : c.policies)
    for (const auto& mode : c.modes)
      for (int n : c.sizes) cells.push_back(Cell{policy, is_tessera_policy(policy), mode, "", n, 0, {}, "", -1});
  std::map<int, std::vector<double>> matrices;
  for (int n : c.sizes) matrices[n] = spd_matrix(n);

  const char* model_dir = std::getenv("STARPU_PERF_MODEL_DIR");
  fmt::print("policies: {}\nmodes: {}; sizes: {}\n", fmt::join(c.policies, ", "), fmt::join(c.modes, ", "),
             fmt::join(c.sizes, ", "));
  fmt::print("{} rounds x {} timed runs per cell (median), {} warm-up run(s) per start; {} calibration run(s) per "
             "mode and size under {} first; perf models in {}\n",
             c.rounds, c.repetitions, c.warmup, c.calibrate, c.calibration_policy,
             model_dir ? model_dir : "StarPU's default directory");
  std::fflush(stdout);
  calibrate_models(c, matrices);
  std::string workers;
  for (int round = 0; round < c.rounds; ++round) {
    fmt::print(stderr, "round {} of {}\n", round + 1, c.rounds);
    // Odd rounds in reverse order, so that a load drifting during a round favours no policy.
    std::vector<std::string> order = c.policies;
    if (round % 2) std::reverse(order.begin(), order.end());
    for (const auto& policy : order) run_policy(c, policy, round, matrices, cells, workers);
  }

  // The table, and per mode and size the best of Tessera's policies against the best built-in.
  fmt::print("\ndouble precision, {}\n", workers);
  fmt::print("{:<20} {:>6} {:>6} {:>7} {:>5} {:>10} {:>10} {:>9} {:>8}\n", "policy", "mode", "ran", "n", "nb", "median s",
             "min s", "GFLOP/s", "runs");
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::pair<std::string, int>, std::pair<const Cell*, const Cell*>> best;  // (mode, n) -> (Tessera, built-in)
  for (const Cell& cell : cells) {
    nlohmann::json row = {{"policy", cell.policy}, {"tessera", cell.tessera}, {"mode", cell.mode}, {"n", cell.n}};
    if (!cell.refused.empty() || cell.seconds.empty()) {
      fmt::print("{:<20} {:>6} {:>6} {:>7}   refused: {}\n", cell.policy, cell.mode, "-", cell.n, cell.refused);
      row["refused"] = cell.refused;
      rows.push_back(row);
      continue;
    }
    const double med = median(cell.seconds), fastest = *std::min_element(cell.seconds.begin(), cell.seconds.end());
    fmt::print("{:<20} {:>6} {:>6} {:>7} {:>5} {:>10.4f} {:>10.4f} {:>9.2f} {:>8}\n", cell.policy, cell.mode,
               cell.resolved, cell.n, cell.nb, med, fastest, gflops(cell.n, med), cell.seconds.size());
    row.update({{"resolved_mode", cell.resolved}, {"nb", cell.nb}, {"median_seconds", med}, {"min_seconds", fastest},
                {"gflops", gflops(cell.n, med)}, {"seconds", cell.seconds}});
    if (cell.backward_error >= 0) row["backward_error"] = cell.backward_error;
    rows.push_back(row);
    auto& [ours, theirs] = best[{cell.mode, cell.n}];
    const Cell*& slot = cell.tessera ? ours : theirs;
    if (!slot || med < median(slot->seconds)) slot = &cell;
  }
  fmt::print("\n{:<7} {:>7} {:>22} {:>10} {:>22} {:>10} {:>9}\n", "mode", "n", "best Tessera policy", "median s",
             "best built-in", "median s", "speed-up");
  nlohmann::json summary = nlohmann::json::array();
  for (const auto& [key, pair] : best) {
    const auto& [ours, theirs] = pair;
    if (!ours || !theirs) continue;
    const double a = median(ours->seconds), b = median(theirs->seconds);
    fmt::print("{:<7} {:>7} {:>22} {:>10.4f} {:>22} {:>10.4f} {:>8.3f}x\n", key.first, key.second, ours->policy, a,
               theirs->policy, b, b / a);
    summary.push_back({{"mode", key.first}, {"n", key.second}, {"best_tessera", ours->policy}, {"tessera_seconds", a},
                       {"best_builtin", theirs->policy}, {"builtin_seconds", b}, {"speedup", b / a}});
  }
  if (!c.json_path.empty()) {
    std::ofstream(c.json_path) << nlohmann::json{{"workers", workers}, {"rounds", c.rounds},
                                                 {"repetitions", c.repetitions}, {"results", rows},
                                                 {"summary", summary}}
                                      .dump(2)
                               << "\n";
  }
  return 0;
}
