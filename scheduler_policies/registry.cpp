#include "registry.hpp"

#include <sstream>

#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

// Tessera's own policies, each defined in its own file of this folder.
std::vector<PolicyEntry> own_policies() { return {}; }

}  // namespace

std::vector<PolicyEntry> scheduling_policies() {
  std::vector<PolicyEntry> all = own_policies();
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p)
    all.push_back({(*p)->policy_name, (*p)->policy_description ? (*p)->policy_description : "", nullptr, false});
  return all;
}

PolicyEntry find_scheduling_policy(const std::string& name) {
  const auto all = scheduling_policies();
  for (const auto& entry : all)
    if (entry.name == name) return entry;
  std::ostringstream msg;
  msg << "unknown scheduling policy '" << name << "'; known policies:";
  for (const auto& entry : all) msg << ' ' << entry.name;
  throw InvalidArgument(msg.str());
}

}  // namespace tessera::detail
