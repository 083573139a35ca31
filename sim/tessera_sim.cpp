// Tessera's tile Cholesky under StarPU's simulation (SimGrid): the same task graph, codelets and
// performance-model names as the real build, inserted through the public API, on a machine that
// StarPU simulates from its calibrated performance models and platform description. No kernel
// runs and the tiles are folded memory (their contents are meaningless); times are simulated.
//
//   tessera-sim --n N --nb NB --mode gpu|cpu|hybrid [--host|--resident] [--policy P] [--json]
//       one node: tiles in host memory (TileMatrix), with --resident already on the first GPU
//       (bench_gpu_potrf's "resident"), or with --host the whole factorization from a
//       column-major host array (tiles made and written back);
//   starpu_smpirun ... libtessera-sim-mpi.so --n N --nb NB --grid PxQ --mode gpu [--json]
//       P x Q simulated nodes under SimGrid's SMPI: distributed::potrf on a 2-D block-cyclic
//       matrix, as `mpirun tessera potrf --grid PxQ` runs it.
#include <starpu.h>  // renames main into starpu_main in simulation (starpu_simgrid_wrap.h)

#ifdef TESSERA_SIM_MPI
#include <mpi.h>
#include <starpu_mpi.h>

#include "tessera/distributed.hpp"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "tessera/starpu_interop.hpp"
#include "tessera/tessera.hpp"

namespace {

struct Args {
  int n = 0;
  int nb = 0;
  std::string mode = "gpu";
  std::string policy;
  std::string grid;
  bool host = false;
  bool resident = false;
  bool json = false;
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "tessera-sim: %s\nusage: tessera-sim --n N --nb NB [--mode gpu|cpu|hybrid] [--policy P] [--host] "
               "[--resident] [--grid PxQ] [--json]\n",
               message);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--n") a.n = std::atoi(value().c_str());
    else if (arg == "--nb") a.nb = std::atoi(value().c_str());
    else if (arg == "--mode") a.mode = value();
    else if (arg == "--policy") a.policy = value();
    else if (arg == "--grid") a.grid = value();
    else if (arg == "--host") a.host = true;
    else if (arg == "--resident") a.resident = true;
    else if (arg == "--json") a.json = true;
    else usage(("unknown argument " + arg).c_str());
  }
  if (a.n < 1 || a.nb < 1) usage("--n and --nb must be positive");
  return a;
}

tessera::Mode mode_of(const std::string& name) {
  if (name == "gpu") return tessera::Mode::gpu;
  if (name == "cpu") return tessera::Mode::cpu;
  if (name == "hybrid") return tessera::Mode::hybrid;
  usage(("unknown mode " + name).c_str());
}

void print(const Args& a, const tessera::Runtime& runtime, int ranks, const std::string& grid, double seconds, int info) {
  const double flops = double(a.n) * a.n * a.n / 3.0;
  const double gflops = seconds > 0 ? flops / seconds * 1e-9 : 0.0;
  if (a.json)
    std::printf("{\"simulated\":true,\"n\":%d,\"nb\":%d,\"mode\":\"%s\",\"from_host\":%s,\"resident\":%s,\"ranks\":%d,\"grid\":\"%s\","
                "\"policy\":\"%s\",\"workers\":{\"cpu\":%d,\"cuda\":%d},\"seconds\":%.6f,\"gflops\":%.2f,\"info\":%d}\n",
                a.n, a.nb, a.mode.c_str(), a.host ? "true" : "false", a.resident ? "true" : "false", ranks, grid.c_str(), runtime.scheduler().c_str(),
                runtime.cpu_workers(), runtime.cuda_workers(), seconds, gflops, info);
  else
    std::printf("simulated: n %d nb %d mode %s%s ranks %d grid %s policy %s workers %d+%d: %.4f s, %.1f GFLOP/s\n", a.n,
                a.nb, a.mode.c_str(), a.host ? " (from host)" : "", ranks, grid.c_str(), runtime.scheduler().c_str(),
                runtime.cpu_workers(), runtime.cuda_workers(), seconds, gflops);
  std::fflush(stdout);
}

tessera::RuntimeOptions runtime_options(const Args& a) {
  tessera::RuntimeOptions options = tessera::RuntimeOptions::from_environment();
  if (!a.policy.empty()) options.scheduler = a.policy;
  return options;
}

// Buffers StarPU allocates itself in host memory (tiles received from other ranks, copies back
// from the GPUs) are folded too: without it every received tile takes nb x nb x 8 bytes of this
// machine's memory for the whole run. Pinning (and its simulated cost,
// STARPU_SIMGRID_CUDA_MALLOC_COST) is kept.
void fold_runtime_allocations() {
  starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM,
                                          STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT | STARPU_MALLOC_SIMULATION_FOLDED);
}

tessera::FactorOptions factor_options(const Args& a) {
  tessera::FactorOptions options = tessera::FactorOptions::from_environment();
  options.mode = mode_of(a.mode);
  options.nb = a.nb;
  return options;
}

int one_node(const Args& a) {
  tessera::Runtime runtime(runtime_options(a));
  fold_runtime_allocations();
  const tessera::FactorOptions options = factor_options(a);
  int info = 0;
  double seconds = 0;
  if (a.host) {
    // The column-major matrix, folded like the tiles: never read in simulation.
    const std::size_t bytes = std::size_t(a.n) * std::size_t(a.n) * sizeof(double);
    void* memory = nullptr;
    if (starpu_malloc_flags(&memory, bytes, STARPU_MALLOC_SIMULATION_FOLDED) != 0) usage("cannot allocate the matrix");
    const double start = starpu_timing_now();
    info = tessera::potrf_async(runtime, a.n, static_cast<double*>(memory), a.n, options).wait();
    seconds = (starpu_timing_now() - start) * 1e-6;
    starpu_free_flags(memory, bytes, STARPU_MALLOC_SIMULATION_FOLDED);
  } else {
    tessera::TileMatrix<double> A(runtime, a.n, a.nb);
    if (a.resident) {
      // Every tile fetched to the first GPU before the clock starts, as bench_gpu_potrf's
      // "resident" factorization does.
      int workers[STARPU_NMAXWORKERS];
      if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, workers, STARPU_NMAXWORKERS) <= 0) usage("--resident needs a GPU");
      const int node = static_cast<int>(starpu_worker_get_memory_node(static_cast<unsigned>(workers[0])));
      for (int j = 0; j < A.tile_cols(); ++j)
        for (int i = j; i < A.tile_rows(); ++i) {
          starpu_data_acquire_on_node(tessera::starpu_interop::tile_handle(A, i, j), node, STARPU_R);
          starpu_data_release_on_node(tessera::starpu_interop::tile_handle(A, i, j), node);
        }
    }
    const double start = starpu_timing_now();
    info = tessera::potrf_async(A, options).wait();
    seconds = (starpu_timing_now() - start) * 1e-6;
  }
  print(a, runtime, 1, "1x1", seconds, info);
  return 0;
}

#ifdef TESSERA_SIM_MPI
int distributed(const Args& a) {
  const std::size_t x = a.grid.find('x');
  if (x == std::string::npos) usage("--grid expects PxQ");
  const tessera::distributed::Grid grid{std::atoi(a.grid.substr(0, x).c_str()), std::atoi(a.grid.substr(x + 1).c_str())};
  tessera::Runtime runtime(runtime_options(a));
  fold_runtime_allocations();
  const tessera::FactorOptions options = factor_options(a);
  int rank = 0;
  {
    tessera::distributed::Context context(runtime, MPI_COMM_WORLD, grid);
    rank = context.rank();
    tessera::distributed::Matrix<double> A(context, a.n, a.nb, tessera::Uplo::lower);
    starpu_mpi_barrier(MPI_COMM_WORLD);  // under SMPI, main may call StarPU-MPI, not MPI
    const double start = starpu_timing_now();
    const int info = tessera::distributed::potrf(A, options);
    const double seconds = (starpu_timing_now() - start) * 1e-6;
    if (rank == 0) print(a, runtime, context.size(), a.grid, seconds, info);
  }
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
#ifdef TESSERA_SIM_MPI
    if (!a.grid.empty()) return distributed(a);
#endif
    if (!a.grid.empty()) usage("--grid needs the SMPI build (libtessera-sim-mpi.so under starpu_smpirun)");
    return one_node(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-sim: %s\n", e.what());
    return 1;
  }
}
