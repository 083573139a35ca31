// What the public API tells of plans: default tile sizes, a request's plan and its reasons, and
// the route of a stack of GPU matrices. Each asks src/plan, as the requests do.
#include "plan.hpp"
#include "plan_requests.hpp"
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
PlanExplanation explain_potrf(const Runtime& runtime, const MatrixView<T>& A, const FactorOptions& options) {
  detail::PlanRequest request;
  switch (A.where()) {
    case MatrixIn::host:
      request = detail::array_request<T>(runtime, A.rows(), A.data(), options, true, detail::FirstCall::look);
      break;
    case MatrixIn::device: request = detail::device_array_request<T>(A.rows(), options); break;
    case MatrixIn::tiles: request = detail::tiles_request(*A.tiles(), options, true); break;
    case MatrixIn::host_batch:  // a batch of empty matrices has nothing to plan
      request = detail::batch_request<T>(A.rows(), A.rows() == 0 ? 0 : A.count(), options);
      break;
    case MatrixIn::host_variable_batch:
      request = detail::batch_request<T>(-1, A.count(), options);
      break;
  }
  const detail::Plan plan = detail::plan(detail::RuntimeControl::machine(runtime), request);
  return {plan.mode, plan.nb, detail::to_string(plan.path), plan.why};
}

#define TESSERA_INSTANTIATE(T)                                                                            \
  template PlanExplanation explain_potrf<T>(const Runtime&, const MatrixView<T>&, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

namespace device {

bool stack_takes_batched_kernels(int n, int batch, Precision precision) {
  return detail::stack_takes_batched_kernels(n, batch, precision);
}

bool stack_solves_take_batched_kernels(int n, int batch, int nrhs, Precision precision) {
  return detail::stack_solves_take_batched_kernels(n, batch, nrhs, precision);
}

bool inverse_takes_batched_kernel(int n, int batch, Precision precision) {
  return detail::inverse_takes_batched_kernel(n, batch, precision);
}

bool inverse_takes_dense_call(int n, int batch, Precision precision) {
  return detail::inverse_takes_dense_call(n, batch, precision);
}

}  // namespace device

}  // namespace tessera
