// What each kind of request asks of the plan: written once for the requests and for
// explain_potrf, so that an explanation is the plan the request makes.
#pragma once

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

// A LAPACK-layout request on an n x n host array.
template <class T>
PlanRequest array_request(int n, const FactorOptions& options, bool factors) {
  PlanRequest request;
  request.precision = precision_of<T>();
  request.place = DataPlace::host_array;
  request.n = n;
  request.factors = factors;
  request.options = options;
  return request;
}

// An n x n matrix in GPU memory (tessera/device.hpp).
template <class T>
PlanRequest device_array_request(int n, const FactorOptions& options) {
  PlanRequest request;
  request.precision = precision_of<T>();
  request.place = DataPlace::device_array;
  request.n = n;
  request.options = options;
  return request;
}

// A batch of `batch` host matrices (tessera/batched.hpp); chunk 0: chosen by the plan.
inline PlanRequest batch_request(int batch, Mode mode, int chunk) {
  PlanRequest request;
  request.place = DataPlace::batch;
  request.options.mode = mode;
  request.batch = batch;
  request.batch_chunk = chunk;
  return request;
}

}  // namespace tessera::detail
