// owner-computes: one priority queue per memory node. A task placed on a GPU (TaskHints::gpu: the
// owner of the tile it writes, GpuPlacement::block_cyclic) queues on that GPU's node, where its
// tiles are prefetched at once; any other task on a queue every worker may serve. A GPU's workers
// (its streams) take the most urgent task of their GPU first, then of the shared queue; CPU
// workers serve the shared queue (conversions, and every task in cpu mode). No task moves to
// another GPU: the tiles stay where they are written, and only the panel travels.
#include <atomic>
#include <memory>

#include "policy_support.hpp"
#include "registry.hpp"

namespace tessera::detail {

namespace {

using NodeQueue = policy::LockedTaskQueue;
using policy::node_of;

struct OwnerState {
  int count = 0;  // workers
  std::unique_ptr<std::atomic<bool>[]> member;  // by worker id
  std::unique_ptr<NodeQueue[]> nodes;           // by memory node; GPU nodes only are used
  NodeQueue shared;
};

bool is_member(const OwnerState& state, int worker) { return worker >= 0 && worker < state.count && state.member[worker].load(); }

// The memory node of the GPU a placed task must run on (a CUDA worker of this context allowed to
// run it), or -1: the shared queue.
int placed_node(const OwnerState& state, starpu_task* task) {
  if (policy::hints_of(task).gpu < 0) return -1;
  for (int w = 0; w < state.count; ++w)
    if (is_member(state, w) && starpu_worker_get_type(w) == STARPU_CUDA_WORKER && policy::first_implementation(w, task) >= 0)
      return static_cast<int>(node_of(w));
  return -1;
}

void init(unsigned ctx) {
  policy::create_state<OwnerState>(ctx);
  OwnerState& state = policy::state_of<OwnerState>(ctx);
  state.count = static_cast<int>(starpu_worker_get_count());
  state.member = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(state.count));
  state.nodes = std::make_unique<NodeQueue[]>(starpu_memory_nodes_get_count());
  policy::allow_any_priority(ctx);
}

void deinit(unsigned ctx) { policy::destroy_state<OwnerState>(ctx); }

void set_members(unsigned ctx, const int* ids, unsigned count, bool member) {
  OwnerState& state = policy::state_of<OwnerState>(ctx);
  for (unsigned n = 0; n < count; ++n) state.member[ids[n]] = member;
}

void add_workers(unsigned ctx, int* ids, unsigned count) { set_members(ctx, ids, count, true); }
void remove_workers(unsigned ctx, int* ids, unsigned count) { set_members(ctx, ids, count, false); }

int push_task(starpu_task* task) {
  OwnerState& state = policy::state_of<OwnerState>(task->sched_ctx);
  const int node = placed_node(state, task);
  NodeQueue& q = node >= 0 ? state.nodes[node] : state.shared;
  // Before queueing: once queued, a worker may run the task and StarPU free it.
  if (node >= 0 && starpu_get_prefetch_flag()) starpu_prefetch_task_input_on_node(task, static_cast<unsigned>(node));
  q.push(task, task->priority);
  for (int w = 0; w < state.count; ++w)
    if (is_member(state, w) && (node < 0 || static_cast<int>(node_of(w)) == node)) policy::wake_worker(w);
  return 0;
}

starpu_task* pop_task(unsigned ctx) {
  OwnerState& state = policy::state_of<OwnerState>(ctx);
  const int worker = starpu_worker_get_id_check();
  starpu_task* task = nullptr;
  if (starpu_worker_get_type(worker) == STARPU_CUDA_WORKER) task = state.nodes[node_of(worker)].take_for(worker);
  if (!task) task = state.shared.take_for(worker);
  if (task) policy::assign_implementation(worker, task);
  return task;
}

starpu_sched_policy make_policy() {
  return policy::make_sched_policy(
      "owner-computes", "each tile task on the GPU owning its tile, critical path first, one queue per GPU",
      {init, deinit, add_workers, remove_workers, push_task, pop_task});
}

}  // namespace

// The descriptor StarPU copies at start; never modified.
starpu_sched_policy owner_computes_policy = make_policy();

}  // namespace tessera::detail
