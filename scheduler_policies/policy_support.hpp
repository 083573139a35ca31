// What Tessera's policies share: a task's scheduling hints, a priority-ordered queue of
// ready tasks, the workers of a scheduling context, and the locking and hand-over rules StarPU
// imposes on a policy. Each policy keeps its state in the data StarPU stores per scheduling
// context (starpu_sched_ctx_set_policy_data).
#pragma once

#include <starpu.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tessera/options.hpp"

namespace tessera::detail::policy {

// A task's scheduling hints (FactorOptions::hints); an application's own task has only its
// priority. Policies decide from these, never from a task's tiles.
TaskHints hints_of(const starpu_task* task);

// Ready tasks, the largest key first, first in first out among equal keys.
class TaskQueue {
 public:
  struct Entry {
    starpu_task* task;
    int tag;  // what the policy remembers of the task (its placement, ...)
  };

  void push(starpu_task* task, int64_t key, int tag = 0);
  // Removes and returns the first entry, in order, that `accept(const Entry&)` accepts.
  template <class Accept>
  bool pop_first(Accept&& accept, Entry& out) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (accept(it->second)) {
        out = it->second;
        entries_.erase(it);
        return true;
      }
    return false;
  }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

 private:
  // (key, arrival): descending key, ascending arrival.
  struct Order {
    bool operator()(const std::pair<int64_t, uint64_t>& a, const std::pair<int64_t, uint64_t>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  std::map<std::pair<int64_t, uint64_t>, Entry, Order> entries_;
  uint64_t arrivals_ = 0;
};

// A TaskQueue behind its own mutex, with a count readable without it (an idle worker's quick
// look).
struct LockedTaskQueue {
  std::mutex mutex;
  TaskQueue queue;
  std::atomic<int> size{0};

  // Queues `task` and ends StarPU's push under the queue's lock, as StarPU requires.
  void push(starpu_task* task, int64_t key, int tag = 0);
  // Which entries a worker may take, by the tag they were pushed with.
  enum class Tags { any, nonzero, zero };
  // Removes the most urgent task `worker` can run among the entries `tags` admits; nullptr when
  // there is none.
  starpu_task* take_for(int worker, Tags tags = Tags::any);
};

// A TaskQueue key that puts the tasks flagged critical ahead of every other, then orders by
// priority (any int).
inline int64_t critical_first_key(bool critical, int priority) {
  return (critical ? int64_t(1) << 33 : 0) + priority;
}

// The memory node of a worker.
inline unsigned node_of(int worker) { return starpu_worker_get_memory_node(static_cast<unsigned>(worker)); }

// The workers of a scheduling context.
std::vector<int> context_workers(unsigned sched_ctx);

// The first implementation `worker` may run `task` with (the task's `where`, the codelet's
// implementations and its can_execute), or -1.
int first_implementation(int worker, starpu_task* task);

// Takes a policy mutex. A worker in the middle of a scheduling operation lets other threads see
// it as relaxed while it waits, as StarPU requires, so that none of them waits on it in turn.
// Never call into StarPU's worker locking or waking while holding one.
class PolicyLock {
 public:
  explicit PolicyLock(std::mutex& mutex) : lock_(mutex, std::defer_lock) {
    starpu_worker_relax_on();
    lock_.lock();
    starpu_worker_relax_off();
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// Tells `worker` a task is waiting for it. Needed only where StarPU's drivers sleep; with
// non-blocking drivers idle workers poll.
void wake_worker(int worker);

// Hands `task` to `worker` with the implementation that worker can run; false if it can run none.
bool assign_implementation(int worker, starpu_task* task);

// Policy state per scheduling context, owned by StarPU's policy-data slot.
template <class State>
void create_state(unsigned sched_ctx) {
  starpu_sched_ctx_set_policy_data(sched_ctx, new State());
}
template <class State>
State& state_of(unsigned sched_ctx) {
  return *static_cast<State*>(starpu_sched_ctx_get_policy_data(sched_ctx));
}
template <class State>
void destroy_state(unsigned sched_ctx) {
  delete static_cast<State*>(starpu_sched_ctx_get_policy_data(sched_ctx));
  starpu_sched_ctx_set_policy_data(sched_ctx, nullptr);
}

// For a policy whose state keeps one queue per worker id (`count`, `workers[id].member`).
template <class State>
void create_state_with_worker_queues(unsigned sched_ctx) {
  using Queue = typename decltype(State::workers)::element_type;
  create_state<State>(sched_ctx);
  State& state = state_of<State>(sched_ctx);
  state.count = static_cast<int>(starpu_worker_get_count());
  state.workers = std::make_unique<Queue[]>(static_cast<std::size_t>(state.count));
}
template <class State>
void set_membership(unsigned sched_ctx, const int* ids, unsigned count, bool member) {
  State& state = state_of<State>(sched_ctx);
  for (unsigned n = 0; n < count; ++n) state.workers[ids[n]].member = member;
}

// A policy's descriptor from its callbacks, over StarPU's worker lists (StarPU copies it at start).
struct PolicyCallbacks {
  void (*init)(unsigned sched_ctx);
  void (*deinit)(unsigned sched_ctx);
  void (*add_workers)(unsigned sched_ctx, int* ids, unsigned count);
  void (*remove_workers)(unsigned sched_ctx, int* ids, unsigned count);
  int (*push_task)(starpu_task* task);
  starpu_task* (*pop_task)(unsigned sched_ctx);
};
starpu_sched_policy make_sched_policy(const char* name, const char* description, const PolicyCallbacks& callbacks);

// Tessera's policies accept any integer priority (Tessera's critical-path ranks grow with the
// tile count).
void allow_any_priority(unsigned sched_ctx);

}  // namespace tessera::detail::policy
