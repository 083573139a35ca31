#include "distributed_command.hpp"

#include <fmt/core.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "tessera/distributed.hpp"
#include "tessera/tessera.hpp"
#include "testkit/residuals.hpp"

namespace tessera::cli {

using testkit::kBackwardErrorThreshold;

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// MPI for the command's lifetime; StarPU-MPI's thread and the command both call MPI.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

distributed::Grid parse_grid(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  const auto number = [&](const std::string& part) {
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || value < 1)
      throw InvalidArgument("--grid " + text + ": expected PxQ with positive P and Q (e.g. 2x2)");
    return value;
  };
  if (x == std::string::npos) throw InvalidArgument("--grid " + text + ": expected PxQ (e.g. 2x2)");
  return {number(text.substr(0, x)), number(text.substr(x + 1))};
}

// Entry (i, j) of the matrix `tessera potrf --grid` factors: symmetric, off-diagonal entries
// uniform in (-1, 1) from a hash of (seed, i, j), diagonal n, so strictly diagonally dominant;
// each rank computes its own entries.
template <class T>
T distributed_entry(int n, unsigned seed, int i, int j) {
  if (i == j) return T(n);
  const auto low = static_cast<std::uint64_t>(std::min(i, j));
  const auto high = static_cast<std::uint64_t>(std::max(i, j));
  std::uint64_t z = (static_cast<std::uint64_t>(seed) << 42) ^ (high << 21) ^ low;
  // splitmix64's finalizer
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return T(double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

struct WorkerCount {
  int cpu = 0;
  int cuda = 0;
};

// Bytes every rank sent in the last operation, and the most one rank sent.
std::pair<std::int64_t, std::int64_t> bytes_between_ranks(const distributed::Context& context) {
  const std::int64_t sent = context.last_traffic().bytes_sent;
  std::int64_t total = 0;
  std::int64_t largest = 0;
  MPI_Allreduce(&sent, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&sent, &largest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return {total, largest};
}

WorkerCount total_workers(const Runtime& runtime) {
  int local[2] = {runtime.cpu_workers(), runtime.cuda_workers()};
  int total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return {total[0], total[1]};
}

// What rank 0 reports of one factorization.
struct RowFacts {
  int n;
  int nb;
  Mode mode;
  distributed::Grid grid;
  int ranks;
  std::string policy;
  WorkerCount workers;
  int repetition;
  double seconds;
  std::int64_t bytes_between_ranks;  // every rank's sends
  std::int64_t largest_rank_bytes;   // the rank that sent most
  std::optional<double> error;
  int info;
  bool ok;
};

template <class T>
void print_row(const PotrfCommand& cmd, const RowFacts& r) {
  const double gflops = r.seconds > 0 ? (double(r.n) * r.n * r.n / 3.0) / r.seconds * 1e-9 : 0.0;
  const std::string grid_text = fmt::format("{}x{}", r.grid.rows, r.grid.cols);
  if (cmd.json) {
    json row = {{"n", r.n}, {"nb", r.nb}, {"uplo", cmd.uplo}, {"precision", cmd.precision}, {"mode", to_string(r.mode)},
                {"grid", grid_text}, {"ranks", r.ranks}, {"policy", r.policy},
                {"workers", {{"cpu", r.workers.cpu}, {"cuda", r.workers.cuda}}}, {"repetition", r.repetition},
                {"seconds", r.seconds}, {"gflops", gflops}, {"bytes_between_ranks", r.bytes_between_ranks},
                {"largest_rank_bytes_sent", r.largest_rank_bytes}, {"info", r.info}, {"ok", r.ok}};
    row["backward_error"] = r.error ? json(*r.error) : json(nullptr);
    fmt::print("{}\n", row.dump());
  } else {
    if (r.repetition == 1)
      fmt::print("{:>7} {:>5} {:>4} {:>6} {:>5} {:>8} {:>9} {:>4} {:>9} {:>10} {:>8} {:>10} {:>5} {}\n", "n", "nb",
                 "prec", "mode", "grid", "policy", "workers", "rep", "seconds", "GFLOP/s", "GB sent", "error", "info", "ok");
    fmt::print("{:>7} {:>5} {:>4} {:>6} {:>5} {:>8} {:>4}+{:<4} {:>4} {:>9.4f} {:>10.2f} {:>8.3f} {:>10} {:>5} {}\n", r.n,
               r.nb, cmd.precision, to_string(r.mode), grid_text, r.policy, r.workers.cpu, r.workers.cuda, r.repetition,
               r.seconds, gflops, double(r.bytes_between_ranks) * 1e-9, r.error ? fmt::format("{:.3g}", *r.error) : "-",
               r.info, r.ok ? "ok" : "FAILED");
  }
  std::fflush(stdout);
  if (r.info > 0)
    std::fprintf(stderr, "tessera: the matrix is not positive definite: the leading minor of order %d is not "
                         "positive definite\n", r.info);
}

// Rank R's trace file: FILE.rankR.json for FILE.json (FILE.rankR.svg likewise).
std::string rank_trace_path(const std::string& path, int rank) {
  const std::size_t dot = path.find_last_of('.');
  const std::size_t slash = path.find_last_of('/');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string stem = has_extension ? path.substr(0, dot) : path;
  const std::string extension = has_extension ? path.substr(dot) : "";
  return fmt::format("{}.rank{}{}", stem, rank, extension);
}

template <class T>
int factor(const PotrfCommand& cmd, int rank) {
  const distributed::Grid grid = parse_grid(cmd.grid);
  FactorOptions options = FactorOptions::from_environment();
  if (!cmd.mode.empty()) options.mode = parse_mode(cmd.mode);
  if (!cmd.gpu_kernels.empty()) options.gpu_kernels = parse_gpu_kernels(cmd.gpu_kernels);
  RuntimeOptions startup = runtime_options(cmd.runtime);
  if (!cmd.policy.empty()) startup.scheduler = cmd.policy;
  Runtime runtime(startup);
  const Mode mode = runtime.resolve(options.mode);
  const int n = cmd.n;
  const int nb = cmd.nb > 0 ? cmd.nb : options.nb > 0 ? options.nb : default_tile_size(n, precision_of<T>(), mode);
  const Uplo uplo = parse_uplo(cmd.uplo);
  distributed::Context context(runtime, MPI_COMM_WORLD, grid);
  const WorkerCount workers = total_workers(runtime);
  const auto entry = [&](int i, int j) { return distributed_entry<T>(n, cmd.seed, i, j); };

  if (!cmd.trace.empty()) {
    Trace::check_file_name(cmd.trace);
    require_writable("--trace", rank_trace_path(cmd.trace, rank));
  }
  distributed::Matrix<T> A(context, n, nb, uplo);
  int info = 0;
  for (int repetition = 1; repetition <= cmd.repetitions; ++repetition) {
    // The trace holds the last factorization's schedule.
    if (repetition == cmd.repetitions && !cmd.trace.empty()) options.trace = std::make_shared<Trace>();
    A.fill(entry);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    info = distributed::potrf(A, options);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const auto [sent, largest_sent] = bytes_between_ranks(context);
    std::optional<double> error;
    const bool last = repetition == cmd.repetitions;
    if (last && cmd.check && info == 0 && n > 0) {
      distributed::Matrix<T> original(context, n, nb, uplo);
      original.fill(entry);
      error = distributed::backward_error(original, A, mode);
    }
    const bool ok = info == 0 && (!error || *error < kBackwardErrorThreshold);
    if (rank == 0) print_row<T>(cmd, RowFacts{n, nb, mode, grid, context.size(), runtime.scheduler(), workers, repetition,
                                              seconds, sent, largest_sent, error, info, ok});
    if (last && options.trace) options.trace->write(rank_trace_path(cmd.trace, rank));
    if (info > 0 || !ok) {
      if (info > 0) return 2;
      return 3;
    }
  }
  return 0;
}


// One rank's line of `tessera info`, or its JSON object.
json rank_info(const Runtime& runtime, int rank) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return {{"rank", rank}, {"host", host}, {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
          {"cuda_devices_used", runtime.cuda_devices()}, {"scheduler", runtime.scheduler()}};
}

// Every rank's text on rank 0, in rank order.
std::vector<std::string> gather_on_rank_0(const std::string& mine, int rank, int size) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += rank == 0 ? lengths[static_cast<std::size_t>(r)] : 0;
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> texts;
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      texts.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                 static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return texts;
}

// Runs `body` on every rank; an error is printed by the rank that met it (with its rank) and
// ends that rank with exit status 1, which makes mpirun end the others.
template <class Body>
int on_every_rank(const MpiSession& mpi, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    if (mpi.size() > 1)
      std::fprintf(stderr, "tessera: rank %d: %s\n", mpi.rank(), e.what());
    else
      std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int run_distributed_potrf(const PotrfCommand& cmd, int& argc, char**& argv) {
  const MpiSession mpi(argc, argv);
  return on_every_rank(mpi, [&] { return cmd.precision == "d" ? factor<double>(cmd, mpi.rank()) : factor<float>(cmd, mpi.rank()); });
}

int run_distributed_info(const RuntimeFlags& flags, const std::string& policy, bool as_json, int& argc, char**& argv) {
  const MpiSession mpi(argc, argv);
  return on_every_rank(mpi, [&] {
    RuntimeOptions options = runtime_options(flags);
    if (!policy.empty()) options.scheduler = policy;
    const Runtime runtime(options);
    const std::vector<std::string> ranks = gather_on_rank_0(rank_info(runtime, mpi.rank()).dump(), mpi.rank(), mpi.size());
    if (mpi.rank() != 0) return 0;
    json all = json::array();
    for (const std::string& text : ranks) all.push_back(json::parse(text));
    if (as_json) {
      fmt::print("{}\n", json({{"tessera", version()}, {"starpu", starpu_version()}, {"ranks", all}}).dump(2));
      return 0;
    }
    fmt::print("Tessera {} on StarPU {} with StarPU-MPI, {} rank(s)\n", version(), starpu_version(), mpi.size());
    for (const json& r : all)
      fmt::print("rank {} on {}: {} CPU, {} CUDA worker(s) (on {} GPU(s)); scheduler {}\n", r["rank"].get<int>(),
                 r["host"].get<std::string>(), r["workers"]["cpu"].get<int>(), r["workers"]["cuda"].get<int>(),
                 r["cuda_devices_used"].get<int>(), r["scheduler"].get<std::string>());
    return 0;
  });
}

}  // namespace tessera::cli
