// What each kind of request asks of the plan: written once for the requests and for
// explain_potrf, so that an explanation is the plan the request makes.
#pragma once

#include "caller_memory.hpp"
#include "plan.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/precision.hpp"
#include "tile_access.hpp"

namespace tessera::detail {

// A request on a tile matrix (the tile matrix's own tile size).
template <class T>
PlanRequest tiles_request(const TileMatrix<T>& A, const FactorOptions& options, bool factors) {
  PlanRequest request;
  request.precision = precision_of<T>();
  request.place = DataPlace::tiles;
  request.n = A.rows();
  request.factors = factors;
  request.options = options;
  request.tile_nb = A.nb();
  request.tiles_on_first_gpu = [&A] { return tiles_valid_on_first_gpu(tile_grid(A)); };
  return request;
}

// Whether a plan claims the runtime's first host-array call (a request) or only looks at it (an
// explanation, which must leave it to the request that follows).
enum class FirstCall { claim, look };

// A LAPACK-layout request on the n x n host array A.
template <class T>
PlanRequest array_request(const Runtime& runtime, int n, const T* A, const FactorOptions& options, bool factors,
                          FirstCall first_call = FirstCall::claim) {
  PlanRequest request;
  request.precision = precision_of<T>();
  request.place = DataPlace::host_array;
  request.n = n;
  request.factors = factors;
  request.options = options;
  request.array_pinned_by_caller = [A] { return pinned_by_caller(A); };
  request.free_gpu_memory = [](int device) { return free_gpu_memory(device); };
  request.gpus_present = [&runtime] { return runtime.cuda_workers() > 0; };
  if (first_call == FirstCall::claim)
    request.claim_first_call = [&runtime] { return claim_first_call(runtime); };
  else
    request.claim_first_call = [&runtime] { return first_call_unclaimed(runtime); };
  return request;
}

// A solve in LAPACK layout with nrhs right-hand sides: potrs (the factor given), or posv (factors).
template <class T>
PlanRequest solve_array_request(const Runtime& runtime, int n, int nrhs, const T* A, const FactorOptions& options,
                                bool factors) {
  PlanRequest request = array_request<T>(runtime, n, A, options, factors);
  request.solves = true;
  request.nrhs = nrhs;
  return request;
}

// An n x n matrix in GPU memory (tessera/device.hpp); `inverts`: the inverse from its factor.
template <class T>
PlanRequest device_array_request(int n, const FactorOptions& options, bool inverts = false) {
  PlanRequest request;
  request.precision = precision_of<T>();
  request.place = DataPlace::device_array;
  request.n = n;
  request.options = options;
  request.inverts = inverts;
  return request;
}

// A batch of `batch` host matrices of order n (-1: orders that vary, a variable batch;
// tessera/batched.hpp), solved for nrhs columns each where the batch solves; options.batch_chunk
// 0: chosen by the plan.
template <class T>
PlanRequest batch_request(int n, int batch, const FactorOptions& options, int nrhs = 0) {
  PlanRequest request;
  request.solves = nrhs > 0;
  request.nrhs = nrhs;
  request.precision = precision_of<T>();
  request.place = DataPlace::batch;
  request.n = n;
  request.options = options;
  request.batch = batch;
  request.batch_chunk = options.batch_chunk;
  return request;
}

}  // namespace tessera::detail
