// critical-path-heft: each ready task goes to the worker (and implementation) where it is expected
// to finish first: the worker's queued work, plus the moving of the task's tiles to that worker
// (StarPU's transfer estimates), plus the task's length from its history perf model for that
// worker's architecture and implementation. A task its hints flag critical (critical_path_hints:
// potrf, the panel trsm, the updates of the next panel) jumps the queues: it only waits for the
// critical work already queued, and each worker serves critical tasks first, then by priority. The chosen
// worker prefetches the task's tiles at once.
//
// Perf models start uncalibrated (no estimate). A kind of worker StarPU rates at least as fast as
// every worker with an estimate (a new GPU next to calibrated CPUs or GPUs) takes the task at once
// when idle, to measure it, and otherwise competes with a length guessed from the fastest estimate
// scaled by relative speed. A slower kind without an estimate is never tried: a CPU core can take
// a hundred times longer than a GPU on a large tile, and such a task at the end of the graph
// delays everything. With no estimate anywhere (or no model: an application's task) the task goes
// to the least loaded worker, load counted in tasks divided by relative speed, as StarPU's dm
// schedulers do. An idle worker takes the most urgent task of a busier worker of the same kind
// and memory node.
#include <atomic>
#include <cmath>
#include <memory>
#include <vector>

#include "policy_support.hpp"
#include "registry.hpp"

namespace tessera::detail {

namespace {

using policy::PolicyLock;
using policy::TaskQueue;

struct WorkerQueue {
  std::mutex mutex;
  TaskQueue queue;             // entry tag: 1 for a critical-path task
  double queued_us = 0;        // expected length of the queued tasks
  double queued_critical_us = 0;
  double running_end_us = 0;   // expected end of the task in execution; 0 when none
  std::atomic<int> size{0};
  std::atomic<bool> member{false};
};

struct HeftState {
  int count = 0;
  std::unique_ptr<WorkerQueue[]> workers;  // by worker id
};

// A placement being considered.
struct Candidate {
  int worker = -1;
  unsigned implementation = 0;
  double length_us = NAN;  // NaN: no estimate
  double transfer_us = 0;
  double finish_us = 0;
  double available_us = 0;
  double speedup = 1;      // StarPU's relative speed of the worker's architecture
  double relative_load = 0;  // (queued tasks + 1) / speedup
};


double known(double us) { return std::isnan(us) ? 0.0 : us; }

bool better_finish(const Candidate& c, const Candidate& best) {
  return best.worker < 0 || c.finish_us < best.finish_us;
}

bool less_loaded(const Candidate& c, const Candidate& best) {
  return best.worker < 0 || c.relative_load < best.relative_load ||
         (c.relative_load == best.relative_load && c.available_us < best.available_us);
}

// The best worker and implementation for `task` (worker -1: no worker of the context can run it).
Candidate choose_placement(HeftState& state, unsigned ctx, starpu_task* task, bool critical) {
  const double now = starpu_timing_now();
  const bool has_model = task->cl && task->cl->model;
  std::vector<Candidate> candidates;
  Candidate to_calibrate, least_loaded;
  double fastest_estimated = 0;  // the largest speedup among workers with an estimate
  double reference_us = NAN;     // the fastest estimate, scaled to a worker of relative speed 1
  for (int w = 0; w < state.count; ++w) {
    WorkerQueue& q = state.workers[w];
    unsigned mask = 0;
    if (!q.member.load() || !starpu_worker_can_execute_task_impl(static_cast<unsigned>(w), task, &mask)) continue;
    Candidate c;
    c.worker = w;
    bool idle = false;
    starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(w, ctx);
    c.speedup = starpu_worker_get_relative_speedup(arch);
    {
      PolicyLock lock(q.mutex);
      c.available_us = std::max(now, q.running_end_us) + (critical ? q.queued_critical_us : q.queued_us);
      const int queued = q.size.load();
      c.relative_load = (queued + 1) / c.speedup;
      idle = queued == 0 && q.running_end_us == 0;
    }
    c.transfer_us = known(starpu_task_expected_data_transfer_time_for(task, static_cast<unsigned>(w)));
    for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; ++impl) {
      if (!(mask & (1u << impl))) continue;
      c.implementation = impl;
      c.length_us = has_model ? starpu_task_expected_length(task, arch, impl) : NAN;
      if (less_loaded(c, least_loaded)) least_loaded = c;
      if (std::isnan(c.length_us)) {
        if (has_model && idle && (to_calibrate.worker < 0 || c.speedup > to_calibrate.speedup)) to_calibrate = c;
      } else {
        fastest_estimated = std::max(fastest_estimated, c.speedup);
        reference_us = std::isnan(reference_us) ? c.length_us * c.speedup : std::min(reference_us, c.length_us * c.speedup);
      }
      candidates.push_back(c);
    }
  }
  if (std::isnan(reference_us)) return least_loaded;  // no estimate anywhere
  if (to_calibrate.worker >= 0 && to_calibrate.speedup >= fastest_estimated) return to_calibrate;
  Candidate best;
  for (Candidate& c : candidates) {
    if (std::isnan(c.length_us)) {
      // A kind as fast as the fastest estimated one gets a guess scaled from it; a slower kind
      // without an estimate is not tried.
      if (c.speedup < fastest_estimated) continue;
      c.length_us = reference_us / c.speedup;
    }
    c.finish_us = std::max(c.available_us, now + c.transfer_us) + c.length_us;
    if (better_finish(c, best)) best = c;
  }
  return best;
}

void init(unsigned ctx) {
  policy::create_state_with_worker_queues<HeftState>(ctx);
  policy::allow_any_priority(ctx);
}

void deinit(unsigned ctx) { policy::destroy_state<HeftState>(ctx); }

void add_workers(unsigned ctx, int* ids, unsigned count) {
  policy::set_membership<HeftState>(ctx, ids, count, true);
}

void remove_workers(unsigned ctx, int* ids, unsigned count) {
  policy::set_membership<HeftState>(ctx, ids, count, false);
}

int push_task(starpu_task* task) {
  HeftState& state = policy::state_of<HeftState>(task->sched_ctx);
  const bool critical = policy::hints_of(task).critical;
  const Candidate c = choose_placement(state, task->sched_ctx, task, critical);
  if (c.worker < 0) return -1;  // no worker of this context can run it: StarPU pushes it again
  starpu_task_set_implementation(task, c.implementation);
  task->predicted = c.length_us;
  task->predicted_transfer = c.transfer_us;
  // Before queueing: once queued, the worker may run the task and StarPU free it.
  if (starpu_get_prefetch_flag()) starpu_prefetch_task_input_for(task, static_cast<unsigned>(c.worker));
  WorkerQueue& q = state.workers[c.worker];
  {
    PolicyLock lock(q.mutex);
    q.queue.push(task, policy::critical_first_key(critical, task->priority), critical ? 1 : 0);
    q.queued_us += known(c.length_us);
    if (critical) q.queued_critical_us += known(c.length_us);
    q.size.fetch_add(1);
    starpu_push_task_end(task);
  }
  policy::wake_worker(c.worker);
  return 0;
}

// Removes the most urgent task of `q` that `worker` can run, with its accounting.
starpu_task* take_from(WorkerQueue& q, int worker) {
  if (q.size.load() == 0) return nullptr;
  TaskQueue::Entry entry{};
  PolicyLock lock(q.mutex);
  if (!q.queue.pop_first([&](const TaskQueue::Entry& e) { return policy::first_implementation(worker, e.task) >= 0; },
                         entry))
    return nullptr;
  const double length = known(entry.task->predicted);
  q.queued_us = std::max(0.0, q.queued_us - length);
  if (entry.tag) q.queued_critical_us = std::max(0.0, q.queued_critical_us - length);
  q.size.fetch_sub(1);
  return entry.task;
}

// An idle worker's victim: the most loaded worker of the same kind on the same memory node.
int steal_victim(HeftState& state, int thief) {
  const unsigned node = starpu_worker_get_memory_node(static_cast<unsigned>(thief));
  const starpu_worker_archtype type = starpu_worker_get_type(thief);
  int victim = -1;
  int most = 1;  // a lone queued task is about to start where it is
  for (int w = 0; w < state.count; ++w) {
    if (w == thief || !state.workers[w].member.load() || starpu_worker_get_type(w) != type ||
        starpu_worker_get_memory_node(static_cast<unsigned>(w)) != node)
      continue;
    const int queued = state.workers[w].size.load();
    if (queued > most) {
      most = queued;
      victim = w;
    }
  }
  return victim;
}

starpu_task* pop_task(unsigned ctx) {
  HeftState& state = policy::state_of<HeftState>(ctx);
  const int worker = starpu_worker_get_id_check();
  WorkerQueue& own = state.workers[worker];
  starpu_task* task = take_from(own, worker);
  if (!task) {
    const int victim = steal_victim(state, worker);
    if (victim >= 0) task = take_from(state.workers[victim], worker);
    // The implementation chosen for the victim may not suit the thief.
    if (task && !starpu_worker_can_execute_task(static_cast<unsigned>(worker), task, starpu_task_get_implementation(task)))
      policy::assign_implementation(worker, task);
  }
  if (task) {
    PolicyLock lock(own.mutex);
    own.running_end_us = starpu_timing_now() + known(task->predicted_transfer) + known(task->predicted);
  }
  return task;
}

void pre_exec_hook(starpu_task* task, unsigned ctx) {
  WorkerQueue& q = policy::state_of<HeftState>(ctx).workers[starpu_worker_get_id_check()];
  PolicyLock lock(q.mutex);
  q.running_end_us = starpu_timing_now() + known(task->predicted);
}

void post_exec_hook(starpu_task*, unsigned ctx) {
  WorkerQueue& q = policy::state_of<HeftState>(ctx).workers[starpu_worker_get_id_check()];
  PolicyLock lock(q.mutex);
  q.running_end_us = 0;
}

starpu_sched_policy make_policy() {
  starpu_sched_policy p = policy::make_sched_policy(
      "critical-path-heft", "earliest finish time from perf models and transfers, critical path first",
      {init, deinit, add_workers, remove_workers, push_task, pop_task});
  p.pre_exec_hook = pre_exec_hook;
  p.post_exec_hook = post_exec_hook;
  return p;
}

}  // namespace

// The descriptor StarPU copies at start; never modified.
starpu_sched_policy critical_path_heft_policy = make_policy();

}  // namespace tessera::detail
