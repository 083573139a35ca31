// What the public API tells of plans: default tile sizes, a request's plan and its reasons, and
// the route of a stack of GPU matrices. Each asks src/plan, as the requests do.
#include "plan.hpp"
#include "runtime_control.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/precision.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

int default_tile_size(int n, Precision precision, Mode mode, int cpu_workers) {
  return detail::default_tile_size(n, precision, mode, cpu_workers);
}

int default_tile_size(const Runtime& runtime, int n, Precision precision, Mode requested) {
  const detail::Machine machine = detail::RuntimeControl::machine(runtime);
  const Mode mode = detail::resolve_mode(machine, requested);
  return detail::default_tile_size(n, precision, detail::tile_mode(machine, mode), machine.cpu_workers);
}

template <class T>
PlanExplanation explain_potrf(const Runtime& runtime, int n, const FactorOptions& options, MatrixIn where) {
  detail::PlanRequest request;
  request.precision = precision_of<T>();
  request.place = where == MatrixIn::device ? detail::DataPlace::device_array : detail::DataPlace::host_array;
  request.n = n;
  request.options = options;
  const detail::Plan plan = detail::plan(detail::RuntimeControl::machine(runtime), request);
  return {plan.mode, plan.nb, detail::to_string(plan.path), plan.why};
}

#define TESSERA_INSTANTIATE(T)                                                                    \
  template PlanExplanation explain_potrf<T>(const Runtime&, int, const FactorOptions&, MatrixIn);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

namespace device {

bool stack_takes_batched_kernels(int n, int batch) { return detail::stack_takes_batched_kernels(n, batch); }

}  // namespace device

}  // namespace tessera
