// Scheduling policies selectable by name: StarPU's built-in ones and Tessera's own (one file per
// policy in this folder).
#pragma once

#include <starpu.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera::detail {

struct PolicyEntry {
  std::string name;
  std::string description;
  starpu_sched_policy* policy = nullptr;  // Tessera's own; nullptr for StarPU's (started by name)
  bool needs_cuda = false;                // meaningless without CUDA workers
  bool runs_gpu_mode = true;              // false: its placement needs CPU workers for some tasks
  bool runs_hybrid_mode = true;           // false: it balances workers of one kind only
  // It places tasks by the perf models' estimates, and runs a task on a worker whose model has no
  // estimate yet in order to calibrate it (StarPU's dm* and heft policies, critical-path-heft).
  bool places_by_perf_models = false;
  std::string restriction;                // why it refuses a mode, for the error message
  // starpu_conf::sched_policy_init: what the policy needs set up at start (heteroprio's buckets).
  void (*init)(unsigned sched_ctx) = nullptr;

  bool runs(Mode resolved) const {
    return resolved == Mode::cpu || (resolved == Mode::gpu ? runs_gpu_mode : runs_hybrid_mode);
  }
};

// Every policy, Tessera's first.
std::vector<PolicyEntry> scheduling_policies();
// The named policy; throws InvalidArgument listing the valid names when there is none.
PolicyEntry find_scheduling_policy(const std::string& name);
// The named policy, if there is one.
std::optional<PolicyEntry> scheduling_policy_named(const std::string& name);
// The named policy, or one without restrictions when Tessera does not know it (an application's).
PolicyEntry policy_or_unrestricted(const std::string& name);

// The scheduling context the calling thread submits to.
unsigned current_sched_ctx();

// The StarPU priority a Tessera task is submitted with: its hints' priority, except under a policy
// whose priorities mean something else (heteroprio started with Tessera's buckets: the hinted
// bucket for where the task may run).
int submitted_priority(const TaskHints& hints, uint32_t where);

// Tessera's own policies (each in its own file).
extern starpu_sched_policy panel_cpu_policy;
extern starpu_sched_policy critical_path_heft_policy;
extern starpu_sched_policy locality_ws_policy;
extern starpu_sched_policy owner_computes_policy;
extern starpu_sched_policy lookahead_policy;

// heteroprio_buckets.cpp: the buckets of Tessera's task kinds, and the StarPU priority of a task
// in the bucket of `bucket`'s kind that may run on `where`.
void init_heteroprio_buckets(unsigned sched_ctx);
int heteroprio_bucket(TaskKind bucket, uint32_t where);

}  // namespace tessera::detail
