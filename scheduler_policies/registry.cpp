#include "registry.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/policies.hpp"

namespace tessera::detail {

namespace {

PolicyEntry entry(const char* name, const char* description, starpu_sched_policy* policy = nullptr) {
  PolicyEntry e;
  e.name = name;
  e.description = description;
  e.policy = policy;
  return e;
}

// Tessera's own policies, each defined in its own file of this folder, with the mode each cannot
// serve, if any, and why.
struct OwnPolicy {
  const char* name;
  const char* description;
  starpu_sched_policy* policy;
  bool places_by_perf_models;
  std::optional<Mode> refused;
  const char* why;
};

const OwnPolicy kOwnPolicies[] = {
    {"critical-path-heft",
     "earliest finish time from perf models and transfer estimates, critical path first, per-worker priority "
     "queues with prefetch",
     &critical_path_heft_policy, true, std::nullopt, ""},
    {"panel-cpu",
     "diagonal-tile factorization on CPU workers, trailing updates on GPUs by data ownership, critical path first",
     &panel_cpu_policy, false, Mode::gpu,
     "it runs the diagonal-tile factorization on CPU workers, which gpu mode excludes"},
    {"locality-ws",
     "work stealing for workers of one kind: a task goes to the worker that last wrote its tile, idle workers "
     "steal the most urgent task nearby",
     &locality_ws_policy, false, Mode::hybrid, "it balances workers of one kind (cpu or gpu mode)"},
    {"owner-computes",
     "each tile task on the GPU owning its tile (2-D block-cyclic over the GPUs), critical path first, one priority "
     "queue per GPU with prefetch",
     &owner_computes_policy, false, Mode::hybrid,
     "it leaves the CPU workers only the conversions and other untiled tasks (cpu or gpu mode)"},
    {"lookahead",
     "critical path first, one stream of each GPU kept for the critical tasks, the rest of the update beside them "
     "on the GPU's other streams; no perf models",
     &lookahead_policy, false, Mode::hybrid, "it runs every task a GPU can run on the GPUs (cpu or gpu mode)"},
};

std::vector<PolicyEntry> own_policies() {
  std::vector<PolicyEntry> all;
  for (const OwnPolicy& own : kOwnPolicies) {
    PolicyEntry e = entry(own.name, own.description, own.policy);
    e.places_by_perf_models = own.places_by_perf_models;
    if (own.refused == Mode::gpu) e.runs_gpu_mode = false;
    if (own.refused == Mode::hybrid) e.runs_hybrid_mode = false;
    e.restriction = own.why;
    all.push_back(e);
  }
  return all;
}

// StarPU policies Tessera neither offers nor starts, because a factorization never completes under
// them (StarPU 1.3.10, tests/reliability/test_listed_policies.cpp): graph_test, StarPU's test of
// its task-graph bookkeeping, never schedules the tasks of a running graph; modular-heteroprio-heft
// ran no task at all, not even a factorization of order 1.
bool offered(const starpu_sched_policy& policy) {
  if (!policy.policy_name) return false;
  for (const char* never_completes : {"graph_test", "modular-heteroprio-heft"})
    if (std::strcmp(policy.policy_name, never_completes) == 0) return false;
  return true;
}

// Tessera supplies heteroprio's buckets (StarPU's description of heteroprio is its name).
PolicyEntry builtin_entry(const starpu_sched_policy& policy) {
  PolicyEntry e = entry(policy.policy_name, policy.policy_description ? policy.policy_description : "");
  e.places_by_perf_models = e.name.rfind("dm", 0) == 0 || e.name.find("heft") != std::string::npos;
  if (e.name == "modular-gemm") {
    // Built for StarPU's own gemm example (it places tasks by their model's name): with CUDA
    // workers a factorization did not complete (docs/reliability.md).
    e.runs_gpu_mode = e.runs_hybrid_mode = false;
    e.restriction = "it completed factorizations only on CPU workers";
  }
  if (e.name == "heteroprio") {
    e.description = "StarPU's heteroprio with Tessera's buckets: critical path first, CPUs kept off GPU work";
    e.init = init_heteroprio_buckets;
  }
  return e;
}

}  // namespace

std::vector<PolicyEntry> scheduling_policies() {
  std::vector<PolicyEntry> all = own_policies();
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p)
    if (offered(**p)) all.push_back(builtin_entry(**p));
  return all;
}

std::optional<PolicyEntry> scheduling_policy_named(const std::string& name) {
  for (auto& entry : scheduling_policies())
    if (entry.name == name) return entry;
  return std::nullopt;
}

PolicyEntry policy_or_unrestricted(const std::string& name) {
  if (auto known = scheduling_policy_named(name)) return *known;
  return entry(name.c_str(), "");
}

PolicyEntry find_scheduling_policy(const std::string& name) {
  if (auto entry = scheduling_policy_named(name)) return *entry;
  std::ostringstream msg;
  msg << "unknown scheduling policy '" << name << "'; known policies:";
  for (const auto& entry : scheduling_policies()) msg << ' ' << entry.name;
  throw InvalidArgument(msg.str());
}

unsigned current_sched_ctx() {
  const unsigned ctx = starpu_sched_ctx_get_context();
  return ctx == STARPU_NMAX_SCHED_CTXS ? 0 : ctx;  // a thread with no context of its own submits to the initial one
}

int submitted_priority(const TaskHints& hints, uint32_t where) {
  // The init callback identifies heteroprio started with Tessera's buckets; a host application's
  // own heteroprio keeps the priorities it was given.
  const unsigned ctx = current_sched_ctx();
  if (starpu_sched_ctx_get_sched_policy_init(ctx) == init_heteroprio_buckets)
    return heteroprio_bucket(hints.bucket, where);
  // With bounds set (STARPU_MIN_PRIO and STARPU_MAX_PRIO, or a policy's own), StarPU's queues are
  // indexed by the priority's place between them: dmda's write past their end for one outside.
  if (starpu_sched_ctx_min_priority_is_set(ctx) && starpu_sched_ctx_max_priority_is_set(ctx))
    return std::clamp(hints.priority, starpu_sched_ctx_get_min_priority(ctx), starpu_sched_ctx_get_max_priority(ctx));
  return hints.priority;
}

}  // namespace tessera::detail

namespace tessera {

std::vector<PolicyInfo> scheduling_policies() {
  std::vector<PolicyInfo> all;
  for (const detail::PolicyEntry& entry : detail::scheduling_policies()) {
    PolicyInfo info{entry.name, entry.description, entry.policy != nullptr, {}, entry.places_by_perf_models};
    for (Mode mode : {Mode::cpu, Mode::gpu, Mode::hybrid})
      if (entry.runs(mode)) info.modes.push_back(mode);
    all.push_back(info);
  }
  return all;
}

}  // namespace tessera
