#include "policy_support.hpp"

#include <climits>

#include "task_tags.hpp"

namespace tessera::detail::policy {

TaskHints hints_of(const starpu_task* task) { return task_hints(task->tag_id, task->cl_arg, task->priority); }

void TaskQueue::push(starpu_task* task, int64_t key, int tag) {
  entries_.emplace(std::make_pair(key, arrivals_++), Entry{task, tag});
}

void LockedTaskQueue::push(starpu_task* task, int64_t key, int tag) {
  PolicyLock lock(mutex);
  queue.push(task, key, tag);
  size.fetch_add(1);
  starpu_push_task_end(task);
}

starpu_task* LockedTaskQueue::take_for(int worker, Tags tags) {
  if (size.load() == 0) return nullptr;
  TaskQueue::Entry entry{};
  PolicyLock lock(mutex);
  const auto accept = [&](const TaskQueue::Entry& e) {
    const bool admitted = tags == Tags::any || (tags == Tags::nonzero) == (e.tag != 0);
    return admitted && first_implementation(worker, e.task) >= 0;
  };
  if (!queue.pop_first(accept, entry)) return nullptr;
  size.fetch_sub(1);
  return entry.task;
}

std::vector<int> context_workers(unsigned sched_ctx) {
  int* ids = nullptr;
  const unsigned count = starpu_sched_ctx_get_workers_list_raw(sched_ctx, &ids);
  return std::vector<int>(ids, ids + count);
}

int first_implementation(int worker, starpu_task* task) {
  unsigned implementation = 0;
  if (!starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(worker), task, &implementation)) return -1;
  return static_cast<int>(implementation);
}

void wake_worker(int worker) {
#ifndef STARPU_NON_BLOCKING_DRIVERS
  starpu_wake_worker_relax_light(worker);
#else
  static_cast<void>(worker);
#endif
}

bool assign_implementation(int worker, starpu_task* task) {
  const int implementation = first_implementation(worker, task);
  if (implementation < 0) return false;
  starpu_task_set_implementation(task, static_cast<unsigned>(implementation));
  return true;
}

starpu_sched_policy make_sched_policy(const char* name, const char* description, const PolicyCallbacks& callbacks) {
  starpu_sched_policy p{};
  p.init_sched = callbacks.init;
  p.deinit_sched = callbacks.deinit;
  p.add_workers = callbacks.add_workers;
  p.remove_workers = callbacks.remove_workers;
  p.push_task = callbacks.push_task;
  p.pop_task = callbacks.pop_task;
  p.policy_name = name;
  p.policy_description = description;
  p.worker_type = STARPU_WORKER_LIST;
  return p;
}

void allow_any_priority(unsigned sched_ctx) {
  if (!starpu_sched_ctx_min_priority_is_set(sched_ctx)) starpu_sched_ctx_set_min_priority(sched_ctx, INT_MIN);
  if (!starpu_sched_ctx_max_priority_is_set(sched_ctx)) starpu_sched_ctx_set_max_priority(sched_ctx, INT_MAX);
}

}  // namespace tessera::detail::policy
