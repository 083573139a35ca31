// distributed::Context: StarPU-MPI started on a duplicate of the application's communicator.
#include <starpu_mpi.h>

#include <atomic>
#include <string>

#include "distributed_state.hpp"
#include "environment.hpp"
#include "runtime_control.hpp"
#include "tessera/error.hpp"

namespace tessera::distributed {

struct Context::Impl {
  detail::ContextState state;
};

namespace {

// StarPU-MPI is one per process (its progress thread, its tables): one Context at a time.
std::atomic<bool>& starpu_mpi_in_use() {
  static std::atomic<bool> in_use{false};
  return in_use;
}

// Under SimGrid's SMPI (StarPU's simulation of MPI applications), StarPU-MPI initializes MPI before
// the application's main, which runs in a simulated thread of its own that is not an MPI process:
// it may call StarPU-MPI (whose progress thread is the rank's MPI process), not MPI itself. The
// context then works on MPI_COMM_WORLD, through StarPU-MPI's rank, size and barrier.
#ifdef STARPU_SIMGRID
constexpr bool kSmpi = true;
#else
constexpr bool kSmpi = false;
#endif

void check_mpi_ready() {
  if (kSmpi) return;
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw RuntimeError("distributed::Context: MPI is not initialized (call MPI_Init_thread with MPI_THREAD_MULTIPLE first)");
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE)
    throw RuntimeError("distributed::Context: MPI was initialized without MPI_THREAD_MULTIPLE; StarPU-MPI's thread "
                       "and the application both call MPI");
}

void check_grid(Grid grid, int size) {
  if (grid.rows < 1 || grid.cols < 1 || static_cast<long long>(grid.rows) * grid.cols != size)
    throw InvalidArgument("distributed::Context: a " + std::to_string(grid.rows) + " x " + std::to_string(grid.cols) +
                          " process grid needs " + std::to_string(static_cast<long long>(grid.rows) * grid.cols) +
                          " ranks, the communicator has " + std::to_string(size));
}

}  // namespace

Context::Context(Runtime& runtime, MPI_Comm comm, Grid grid) {
  detail::RuntimeControl::check_callable(runtime);
  check_mpi_ready();
  if (comm == MPI_COMM_NULL) throw InvalidArgument("distributed::Context: null communicator");
  int size = 0;
  int rank = 0;
  if (kSmpi) {
    if (comm != MPI_COMM_WORLD) throw InvalidArgument("distributed::Context: simulated runs use MPI_COMM_WORLD");
    starpu_mpi_comm_size(comm, &size);
    starpu_mpi_comm_rank(comm, &rank);
  } else {
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
  }
  check_grid(grid, size);
  if (starpu_mpi_in_use().exchange(true))
    throw RuntimeError("distributed::Context: StarPU-MPI already runs for another Context in this process");
  MPI_Comm own = comm;
  if (!kSmpi) MPI_Comm_dup(comm, &own);
  const int ret = starpu_mpi_init_comm(nullptr, nullptr, 0, own);
  if (ret != 0) {
    if (!kSmpi) MPI_Comm_free(&own);
    starpu_mpi_in_use().store(false);
    throw RuntimeError("distributed::Context: StarPU-MPI could not start (error " + std::to_string(ret) + ")");
  }
  impl_ = std::make_unique<Impl>(Impl{detail::ContextState(runtime, comm, own, grid, rank, size)});
}

Context::~Context() {
  detail::ContextState& state = impl_->state;
  {
    // StarPU-MPI's shutdown waits for every task and transfer: the workers must run them.
    const detail::TransfersInFlight awake(*state.runtime);
    starpu_mpi_shutdown();
  }
  if (!kSmpi) MPI_Comm_free(&state.comm);
  starpu_mpi_in_use().store(false);
}

Runtime& Context::runtime() const noexcept { return *impl_->state.runtime; }
MPI_Comm Context::comm() const noexcept { return impl_->state.user_comm; }
Grid Context::grid() const noexcept { return impl_->state.grid; }
int Context::rank() const noexcept { return impl_->state.rank; }
int Context::size() const noexcept { return impl_->state.size; }
Traffic Context::last_traffic() const noexcept { return impl_->state.inserter.traffic(); }

bool launched_by_mpi() { return detail::launched_by_mpi_from_environment(); }

}  // namespace tessera::distributed

namespace tessera::detail {

ContextState& DistributedAccess::state(const distributed::Context& context) { return context.impl_->state; }

}  // namespace tessera::detail
