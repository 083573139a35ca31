// The running policy (TESSERA_POLICY) and the modes it runs, for tests that must ask for a mode
// the policy accepts.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "tessera/policies.hpp"
#include "test_support.hpp"

namespace tessera::test {

inline PolicyInfo running_policy() {
  for (const PolicyInfo& p : scheduling_policies())
    if (p.name == runtime().scheduler()) return p;
  return PolicyInfo{runtime().scheduler(), "", false, {Mode::cpu, Mode::gpu, Mode::hybrid}};
}

inline bool policy_runs(Mode resolved) {
  const std::vector<Mode> modes = running_policy().modes;
  return std::find(modes.begin(), modes.end(), resolved) != modes.end();
}

// The mode a request for `mode` runs in on this machine (hybrid without a GPU runs on the CPUs);
// nothing when the machine cannot run it.
inline std::optional<Mode> resolved_here(Mode mode) {
  if (mode == Mode::cpu) return Mode::cpu;
  if (!have_gpu()) return mode == Mode::hybrid ? std::optional<Mode>(Mode::cpu) : std::nullopt;
  return mode;
}

// Hybrid where the policy runs it, else gpu, else cpu.
inline Mode a_mode_the_policy_runs() {
  for (Mode mode : {Mode::hybrid, Mode::gpu})
    if (resolved_here(mode) && policy_runs(*resolved_here(mode))) return mode;
  return Mode::cpu;
}

}  // namespace tessera::test
