// panel-cpu: the classic hybrid placement. Each task goes to the kind of worker its hints prefer
// (critical_path_hints: the diagonal-tile factorization on CPU workers; the panel solves and the
// trailing updates on GPUs), each on the GPU
// that already holds the tile it writes, so that tiles do not travel back and forth. Workers
// sharing a memory node (the CPUs; the streams of one GPU) share one queue ordered by priority
// (the hints' priorities). An idle worker takes work from another queue, but never a task
// placed on the other kind of worker. Tasks that only one kind of worker can run (a mode's
// restriction, conversions, an application's tasks) go wherever they can run.
#include <atomic>
#include <memory>

#include "policy_support.hpp"
#include "registry.hpp"

namespace tessera::detail {

namespace {

using policy::PolicyLock;
using policy::TaskQueue;

enum class Arch { any = 0, cpu = 1, cuda = 2 };

Arch arch_of_worker(int worker) { return starpu_worker_get_type(worker) == STARPU_CUDA_WORKER ? Arch::cuda : Arch::cpu; }

Arch arch_of(WorkerKind kind) {
  switch (kind) {
    case WorkerKind::cpu: return Arch::cpu;
    case WorkerKind::gpu: return Arch::cuda;
    case WorkerKind::any: break;
  }
  return Arch::any;
}

// Workers of one kind sharing a memory node, and their queue. A queue entry's tag is the kind of
// worker the task was placed for (Arch::any: whoever can run it).
struct WorkerGroup {
  unsigned node = 0;
  Arch arch = Arch::any;
  std::vector<int> workers;  // the machine's workers of this node and kind
  std::mutex mutex;
  TaskQueue queue;
  std::atomic<int> queued{0};
};

// Groups are fixed at start (every worker of the machine), so that pushes and pops read them
// without a lock; a worker's membership of the context is a flag.
struct PanelCpuState {
  std::vector<std::unique_ptr<WorkerGroup>> groups;
  std::vector<int> group_of;                     // worker id -> index in groups
  std::unique_ptr<std::atomic<bool>[]> member;  // worker id -> in this context
};

bool group_can_run(const PanelCpuState& state, const WorkerGroup& group, starpu_task* task) {
  for (int w : group.workers)
    if (state.member[w].load() && policy::first_implementation(w, task) >= 0) return true;
  return false;
}

// True when `node` already holds every tile the task writes: the task then moves no tile that it
// modifies.
bool holds_written_tiles(unsigned node, const starpu_task* task) {
  for (unsigned b = 0; b < STARPU_TASK_GET_NBUFFERS(task); ++b)
    if ((STARPU_TASK_GET_MODE(task, b) & STARPU_W) && !starpu_data_is_on_node(STARPU_TASK_GET_HANDLE(task, b), node))
      return false;
  return true;
}

// The group a ready task goes to, and the kind of worker it is placed for.
WorkerGroup* choose_group(const PanelCpuState& state, starpu_task* task, Arch& placed_for) {
  const Arch preferred = arch_of(policy::hints_of(task).preferred);
  std::vector<WorkerGroup*> able, preferred_able;
  for (const auto& group : state.groups) {
    if (!group_can_run(state, *group, task)) continue;
    able.push_back(group.get());
    if (group->arch == preferred) preferred_able.push_back(group.get());
  }
  const std::vector<WorkerGroup*>& candidates = preferred_able.empty() ? able : preferred_able;
  placed_for = preferred_able.empty() ? Arch::any : preferred;
  // The group holding the written tiles; among equals the least loaded per worker.
  WorkerGroup* best = nullptr;
  double best_score = 0;
  for (WorkerGroup* group : candidates) {
    const double load = static_cast<double>(group->queued.load()) / static_cast<double>(group->workers.size());
    const double score = (holds_written_tiles(group->node, task) ? 0.0 : 1e9) + load;
    if (!best || score < best_score) {
      best = group;
      best_score = score;
    }
  }
  return best;
}

void init(unsigned ctx) {
  policy::create_state<PanelCpuState>(ctx);
  PanelCpuState& state = policy::state_of<PanelCpuState>(ctx);
  const int workers = static_cast<int>(starpu_worker_get_count());
  state.member = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(workers));
  state.group_of.assign(static_cast<std::size_t>(workers), -1);
  for (int w = 0; w < workers; ++w) {
    const unsigned node = starpu_worker_get_memory_node(static_cast<unsigned>(w));
    const Arch arch = arch_of_worker(w);
    std::size_t g = 0;
    while (g < state.groups.size() && !(state.groups[g]->node == node && state.groups[g]->arch == arch)) ++g;
    if (g == state.groups.size()) {
      state.groups.push_back(std::make_unique<WorkerGroup>());
      state.groups.back()->node = node;
      state.groups.back()->arch = arch;
    }
    state.groups[g]->workers.push_back(w);
    state.group_of[static_cast<std::size_t>(w)] = static_cast<int>(g);
    state.member[w] = false;
  }
  policy::allow_any_priority(ctx);
}

void deinit(unsigned ctx) { policy::destroy_state<PanelCpuState>(ctx); }

void add_workers(unsigned ctx, int* ids, unsigned count) {
  PanelCpuState& state = policy::state_of<PanelCpuState>(ctx);
  for (unsigned n = 0; n < count; ++n) {
    state.member[ids[n]] = true;
    starpu_sched_ctx_worker_shares_tasks_lists(ids[n], static_cast<int>(ctx));
  }
}

void remove_workers(unsigned ctx, int* ids, unsigned count) {
  PanelCpuState& state = policy::state_of<PanelCpuState>(ctx);
  for (unsigned n = 0; n < count; ++n) state.member[ids[n]] = false;
}

int push_task(starpu_task* task) {
  PanelCpuState& state = policy::state_of<PanelCpuState>(task->sched_ctx);
  Arch placed_for = Arch::any;
  WorkerGroup* group = choose_group(state, task, placed_for);
  if (!group) return -1;  // no worker of this context can run it: StarPU pushes it again
  {
    PolicyLock lock(group->mutex);
    group->queue.push(task, task->priority, static_cast<int>(placed_for));
    group->queued.fetch_add(1);
    starpu_push_task_end(task);
  }
  for (int w : group->workers)
    if (state.member[w].load()) {
      policy::wake_worker(w);
      break;
    }
  return 0;
}

// Takes the most urgent task of `group` that `worker` may run; from another group, only a task
// placed for this kind of worker or for any.
starpu_task* take_from(WorkerGroup& group, int worker, bool own_group) {
  if (group.queued.load() == 0) return nullptr;
  const Arch arch = arch_of_worker(worker);
  TaskQueue::Entry entry{};
  {
    PolicyLock lock(group.mutex);
    const bool found = group.queue.pop_first(
        [&](const TaskQueue::Entry& e) {
          const Arch placed_for = static_cast<Arch>(e.tag);
          const bool contract = own_group || placed_for == Arch::any || placed_for == arch;
          return contract && policy::first_implementation(worker, e.task) >= 0;
        },
        entry);
    if (!found) return nullptr;
    group.queued.fetch_sub(1);
  }
  return entry.task;
}

starpu_task* pop_task(unsigned ctx) {
  PanelCpuState& state = policy::state_of<PanelCpuState>(ctx);
  const int worker = starpu_worker_get_id_check();
  const int own = state.group_of[static_cast<std::size_t>(worker)];
  starpu_task* task = take_from(*state.groups[static_cast<std::size_t>(own)], worker, true);
  // Idle: the other queues, those of this kind of worker first (another GPU's backlog).
  for (int same_kind = 1; same_kind >= 0 && !task; --same_kind)
    for (std::size_t g = 0; g < state.groups.size() && !task; ++g)
      if (static_cast<int>(g) != own && (state.groups[g]->arch == arch_of_worker(worker)) == (same_kind == 1))
        task = take_from(*state.groups[g], worker, false);
  if (task) policy::assign_implementation(worker, task);
  return task;
}

starpu_sched_policy make_policy() {
  return policy::make_sched_policy(
      "panel-cpu", "potrf on CPUs, updates on GPUs by data ownership, critical path first",
      {init, deinit, add_workers, remove_workers, push_task, pop_task});
}

}  // namespace

// The descriptor StarPU copies at start; never modified.
starpu_sched_policy panel_cpu_policy = make_policy();

}  // namespace tessera::detail
