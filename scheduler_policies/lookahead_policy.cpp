// lookahead: one stream of each GPU kept for the critical path, and no critical task taken ahead.
// StarPU's CUDA workers take tasks ahead of time (the CUDA pipeline) and run each to its end, so
// that a critical task (the diagonal factorization, the panel solves, the updates of the next
// panel) taken by a busy worker waits behind the trailing update's kernels already on its stream.
// Here a worker takes a critical task only when it has nothing in flight, and each GPU's first
// worker (stream) in the context takes critical tasks only, so that one stream is free whenever
// the chain's next task becomes ready; the other workers fill their pipelines with the rest of the
// update, most urgent first. The update of step k thus runs beside the chain of step k + 1.
// Placement needs no perf model: a task that only one GPU's workers can run (every GPU task on one
// GPU; with several, a task the runtime places on its tile's owner) queues on that GPU's node, its
// tiles prefetched at once; a task no GPU can run (conversions, cpu mode) on a queue the CPU
// workers serve; any other on a queue every worker serves. A GPU with a single worker keeps no
// stream.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "policy_support.hpp"
#include "registry.hpp"

namespace tessera::detail {

namespace {

using NodeQueue = policy::LockedTaskQueue;
using policy::node_of;

struct LookaheadState {
  int count = 0;                                    // workers
  std::unique_ptr<std::atomic<bool>[]> member;      // by worker id
  std::unique_ptr<std::atomic<bool>[]> kept;        // by worker id: serves critical tasks only
  std::unique_ptr<std::atomic<int>[]> in_flight;    // by worker id: tasks taken, not yet ended
  std::mutex taken_mutex;
  std::unordered_map<const starpu_task*, int> taken_by;  // tasks in flight, and their worker
  std::unique_ptr<NodeQueue[]> nodes;               // by memory node; GPU nodes only are used
  NodeQueue cpu_only;                               // tasks no CUDA worker can run
  NodeQueue shared;                                 // tasks several GPUs' workers can run
};

constexpr int kCpuOnly = -2, kShared = -1;

bool is_member(const LookaheadState& state, int worker) {
  return worker >= 0 && worker < state.count && state.member[worker].load();
}

bool is_cuda(int worker) { return starpu_worker_get_type(worker) == STARPU_CUDA_WORKER; }

// The memory node of the GPU the task queues on: the one GPU whose workers can run it (a task the
// runtime places on a GPU may run only there); kCpuOnly where no CUDA worker can run it (so that
// CUDA workers never scan those), kShared where several GPUs' workers can.
int placed_node(const LookaheadState& state, starpu_task* task) {
  std::set<unsigned> nodes;
  for (int w = 0; w < state.count; ++w)
    if (is_member(state, w) && is_cuda(w) && policy::first_implementation(w, task) >= 0) nodes.insert(node_of(w));
  if (nodes.empty()) return kCpuOnly;
  return nodes.size() == 1 ? static_cast<int>(*nodes.begin()) : kShared;
}

NodeQueue& queue_of(LookaheadState& state, int node) {
  return node >= 0 ? state.nodes[node] : node == kCpuOnly ? state.cpu_only : state.shared;
}

// Whether `worker` serves the queue of `node`.
bool serves(const LookaheadState& state, int worker, int node) {
  if (node == kShared) return true;
  if (node == kCpuOnly) return !is_cuda(worker);
  return is_cuda(worker) && static_cast<int>(node_of(worker)) == node;
}

// Each GPU's lowest-numbered member worker keeps its stream for critical tasks, where the GPU has
// another member worker to take the rest.
void choose_kept_streams(LookaheadState& state) {
  for (int w = 0; w < state.count; ++w) state.kept[w] = false;
  for (int w = 0; w < state.count; ++w) {
    if (!is_member(state, w) || !is_cuda(w)) continue;
    bool first = true, other = false;
    for (int v = 0; v < state.count; ++v) {
      if (v == w || !is_member(state, v) || !is_cuda(v) || node_of(v) != node_of(w)) continue;
      if (v < w) first = false;
      other = true;
    }
    state.kept[w] = first && other;
  }
}

void init(unsigned ctx) {
  policy::create_state<LookaheadState>(ctx);
  LookaheadState& state = policy::state_of<LookaheadState>(ctx);
  state.count = static_cast<int>(starpu_worker_get_count());
  state.member = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(state.count));
  state.kept = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(state.count));
  state.in_flight = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(state.count));
  state.nodes = std::make_unique<NodeQueue[]>(starpu_memory_nodes_get_count());
  policy::allow_any_priority(ctx);
}

void deinit(unsigned ctx) { policy::destroy_state<LookaheadState>(ctx); }

void set_members(unsigned ctx, const int* ids, unsigned count, bool member) {
  LookaheadState& state = policy::state_of<LookaheadState>(ctx);
  for (unsigned n = 0; n < count; ++n) state.member[ids[n]] = member;
  choose_kept_streams(state);
}

void add_workers(unsigned ctx, int* ids, unsigned count) { set_members(ctx, ids, count, true); }
void remove_workers(unsigned ctx, int* ids, unsigned count) { set_members(ctx, ids, count, false); }

// A task taken and pushed back (a driver that could not start it) is no longer in flight.
void forget_taken(LookaheadState& state, const starpu_task* task) {
  std::lock_guard<std::mutex> lock(state.taken_mutex);
  const auto taken = state.taken_by.find(task);
  if (taken == state.taken_by.end()) return;
  state.in_flight[taken->second].fetch_sub(1);
  state.taken_by.erase(taken);
}

int push_task(starpu_task* task) {
  LookaheadState& state = policy::state_of<LookaheadState>(task->sched_ctx);
  forget_taken(state, task);
  const int node = placed_node(state, task);
  const bool critical = policy::hints_of(task).critical;
  // Before queueing: once queued, a worker may run the task and StarPU free it.
  if (node >= 0 && starpu_get_prefetch_flag()) starpu_prefetch_task_input_on_node(task, static_cast<unsigned>(node));
  queue_of(state, node).push(task, policy::critical_first_key(critical, task->priority), critical ? 1 : 0);
  for (int w = 0; w < state.count; ++w)
    if (is_member(state, w) && serves(state, w, node) && (critical || !state.kept[w])) policy::wake_worker(w);
  return 0;
}

// StarPU calls no post_exec_hook for a task it submits itself; outside OpenMP programs the one of
// those a policy is given is starpu_data_cpy's copy. Counted, it would leave its worker busy for
// ever.
bool ends_with_hook(const starpu_task* task) { return !task->name || std::strcmp(task->name, "data_cpy") != 0; }

// What `worker` may take now: critical tasks only on a kept stream, and no critical task for a
// worker with a task in flight (nothing at all for a busy kept stream).
std::optional<NodeQueue::Tags> admitted_tags(const LookaheadState& state, int worker) {
  const bool idle = state.in_flight[worker].load() == 0;
  if (state.kept[worker].load()) return idle ? std::optional(NodeQueue::Tags::nonzero) : std::nullopt;
  return idle ? NodeQueue::Tags::any : NodeQueue::Tags::zero;
}

starpu_task* pop_task(unsigned ctx) {
  LookaheadState& state = policy::state_of<LookaheadState>(ctx);
  const int worker = starpu_worker_get_id_check();
  if (worker >= state.count) return nullptr;
  const std::optional<NodeQueue::Tags> tags = admitted_tags(state, worker);
  if (!tags) return nullptr;
  NodeQueue& own = is_cuda(worker) ? state.nodes[node_of(worker)] : state.cpu_only;
  starpu_task* task = own.take_for(worker, *tags);
  if (!task) task = state.shared.take_for(worker, *tags);
  if (!task) return nullptr;
  if (ends_with_hook(task)) {
    std::lock_guard<std::mutex> lock(state.taken_mutex);
    state.taken_by[task] = worker;
    state.in_flight[worker].fetch_add(1);
  }
  policy::assign_implementation(worker, task);
  return task;
}

// StarPU calls it once the task has ended (task->workerid is not the worker that ran it).
void post_exec_hook(starpu_task* task, unsigned ctx) { forget_taken(policy::state_of<LookaheadState>(ctx), task); }

starpu_sched_policy make_policy() {
  starpu_sched_policy p = policy::make_sched_policy(
      "lookahead", "critical path first, one stream of each GPU kept for it, no perf models",
      {init, deinit, add_workers, remove_workers, push_task, pop_task});
  p.post_exec_hook = post_exec_hook;
  return p;
}

}  // namespace

// The descriptor StarPU copies at start; never modified.
starpu_sched_policy lookahead_policy = make_policy();

}  // namespace tessera::detail
