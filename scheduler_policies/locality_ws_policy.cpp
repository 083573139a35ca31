// locality-ws: work stealing for workers of one kind (cpu mode, or gpu mode with several GPUs).
// Each worker has its own queue ordered by priority (Tessera's critical-path ranks). A ready task
// goes to the worker that last wrote its tile (for a GPU: the least loaded stream of that GPU),
// so a tile updated step after step stays in one core's caches or on one GPU; with no such
// worker, to the worker that made it ready (its inputs are warm there), else to the least loaded
// one. An idle worker steals the most urgent task of the busiest queue, its own memory node first.
#include <atomic>
#include <memory>
#include <unordered_map>

#include "policy_support.hpp"
#include "registry.hpp"

namespace tessera::detail {

namespace {

using policy::PolicyLock;

struct WorkerQueue : policy::LockedTaskQueue {
  std::atomic<bool> member{false};
};

struct LocalityState {
  int count = 0;
  std::unique_ptr<WorkerQueue[]> workers;  // by worker id
  std::mutex writers_mutex;
  std::unordered_map<starpu_data_handle_t, int> last_writer;  // a hint: handles may be reused
};

constexpr std::size_t max_remembered_tiles = 1 << 16;

starpu_data_handle_t written_tile(const starpu_task* task) {
  for (unsigned b = 0; b < STARPU_TASK_GET_NBUFFERS(task); ++b)
    if (STARPU_TASK_GET_MODE(task, b) & STARPU_W) return STARPU_TASK_GET_HANDLE(task, b);
  return nullptr;
}

bool can_take(LocalityState& state, int worker, starpu_task* task) {
  return worker >= 0 && worker < state.count && state.workers[worker].member.load() &&
         policy::first_implementation(worker, task) >= 0;
}

bool same_device(int a, int b) {
  return starpu_worker_get_type(a) == starpu_worker_get_type(b) &&
         starpu_worker_get_memory_node(static_cast<unsigned>(a)) == starpu_worker_get_memory_node(static_cast<unsigned>(b));
}

// Among the workers for which `eligible(w)` holds and that can run the task, the least loaded.
template <class Eligible>
int least_loaded(LocalityState& state, starpu_task* task, Eligible&& eligible) {
  int best = -1;
  for (int w = 0; w < state.count; ++w)
    if (eligible(w) && can_take(state, w, task) &&
        (best < 0 || state.workers[w].size.load() < state.workers[best].size.load()))
      best = w;
  return best;
}

int choose_worker(LocalityState& state, starpu_task* task) {
  int owner = -1;
  if (starpu_data_handle_t tile = written_tile(task)) {
    PolicyLock lock(state.writers_mutex);
    const auto it = state.last_writer.find(tile);
    if (it != state.last_writer.end()) owner = it->second;
  }
  if (can_take(state, owner, task)) {
    // A GPU's streams share its memory: any of them keeps the tile in place.
    if (starpu_worker_get_type(owner) == STARPU_CUDA_WORKER)
      return least_loaded(state, task, [&](int w) { return same_device(w, owner); });
    return owner;
  }
  const int self = starpu_worker_get_id();
  if (can_take(state, self, task)) return self;
  return least_loaded(state, task, [](int) { return true; });
}

void remember_writer(LocalityState& state, starpu_task* task, int worker) {
  starpu_data_handle_t tile = written_tile(task);
  if (!tile) return;
  PolicyLock lock(state.writers_mutex);
  if (state.last_writer.size() >= max_remembered_tiles) state.last_writer.clear();
  state.last_writer[tile] = worker;
}

void init(unsigned ctx) {
  policy::create_state_with_worker_queues<LocalityState>(ctx);
  policy::allow_any_priority(ctx);
}

void deinit(unsigned ctx) { policy::destroy_state<LocalityState>(ctx); }

void add_workers(unsigned ctx, int* ids, unsigned count) {
  policy::set_membership<LocalityState>(ctx, ids, count, true);
}

void remove_workers(unsigned ctx, int* ids, unsigned count) {
  policy::set_membership<LocalityState>(ctx, ids, count, false);
}

int push_task(starpu_task* task) {
  LocalityState& state = policy::state_of<LocalityState>(task->sched_ctx);
  const int worker = choose_worker(state, task);
  if (worker < 0) return -1;  // no worker of this context can run it: StarPU pushes it again
  state.workers[worker].push(task, task->priority);
  policy::wake_worker(worker);
  return 0;
}

// The busiest queue, those on the thief's memory node first.
int steal_victim(LocalityState& state, int thief) {
  int victim = -1;
  bool victim_near = false;
  for (int w = 0; w < state.count; ++w) {
    if (w == thief || !state.workers[w].member.load() || state.workers[w].size.load() == 0) continue;
    const bool near = same_device(w, thief);
    if (victim < 0 || (near && !victim_near) ||
        (near == victim_near && state.workers[w].size.load() > state.workers[victim].size.load())) {
      victim = w;
      victim_near = near;
    }
  }
  return victim;
}

starpu_task* pop_task(unsigned ctx) {
  LocalityState& state = policy::state_of<LocalityState>(ctx);
  const int worker = starpu_worker_get_id_check();
  starpu_task* task = state.workers[worker].take_for(worker);
  if (!task) {
    const int victim = steal_victim(state, worker);
    if (victim >= 0) task = state.workers[victim].take_for(worker);
  }
  if (!task) return nullptr;
  policy::assign_implementation(worker, task);
  remember_writer(state, task, worker);
  return task;
}

starpu_sched_policy make_policy() {
  return policy::make_sched_policy(
      "locality-ws", "work stealing: tasks go to the last writer of their tile, critical path first",
      {init, deinit, add_workers, remove_workers, push_task, pop_task});
}

}  // namespace

// The descriptor StarPU copies at start; never modified.
starpu_sched_policy locality_ws_policy = make_policy();

}  // namespace tessera::detail
