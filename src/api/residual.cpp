// Backward error ||A - L L^T||_1 / (n ||A||_1 eps) (L L^H for complex) as tile tasks: R = A - L L^T
// by syrk/gemm on the chosen mode's workers (the GPU does the O(n^3) part in gpu mode), then the
// 1-norms from per-tile column and row sums.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "symmetric_norms.hpp"
#include "tile_access.hpp"
#include "request_support.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

// Per-tile sums of |tile| (moduli for complex tiles): columns first, then rows.
template <class T>
using TileSums = std::vector<std::vector<RealOf<T>>>;

// The check's tasks need no order of their own.
TaskHints unranked(TaskKind kind) { return neutral_hints(kind, 0, 0, 0, 0); }

template <class T>
void insert_sums(const detail::TaskContext& ctx, const TileMatrix<T>& M, TileSums<T>& sums) {
  for (int j = 0; j < M.tile_cols(); ++j)
    for (int i = j; i < M.tile_rows(); ++i) {
      sums.emplace_back(static_cast<std::size_t>(M.tile_height(i) + M.tile_width(j)), RealOf<T>(0));
      detail::insert_abs_sums<T>(ctx, detail::tile_ref(M, i, j), i == j, sums.back().data(), unranked(TaskKind::other));
    }
}

// 1-norm of a symmetric matrix from the sums of its lower tiles (in insert_sums' order).
template <class T>
double symmetric_one_norm(const TileMatrix<T>& M, const TileSums<T>& sums) {
  std::vector<double> column(static_cast<std::size_t>(M.cols()), 0.0);
  std::size_t t = 0;
  for (int j = 0; j < M.tile_cols(); ++j)
    for (int i = j; i < M.tile_rows(); ++i, ++t)
      detail::add_lower_tile_sums(column, i, j, M.nb(), M.tile_height(i), M.tile_width(j), sums[t]);
  return detail::largest_column_sum(column);
}

}  // namespace

template <class T>
double backward_error(const TileMatrix<T>& A, const TileMatrix<T>& L, Mode mode) {
  if (&A.runtime() != &L.runtime() || A.rows() != L.rows() || A.nb() != L.nb() ||
      A.structure() != TileStructure::symmetric_lower || L.structure() != TileStructure::symmetric_lower)
    throw InvalidArgument("backward_error: A and L must be symmetric tile matrices of one size, tile size and runtime");
  const int n = A.rows();
  if (n == 0) return 0.0;
  Runtime& runtime = A.runtime();
  TileMatrix<T> R(runtime, n, A.nb());
  TileMatrix<T> diagonal(runtime, n, n, A.nb(), TileStructure::block_diagonal);  // L(k,k) with zeros above
  TileSums<T> r_sums, a_sums;
  const int nt = A.tile_rows();
  auto factor = [&](int i, int k) { return i == k ? detail::tile_ref(diagonal, k, k) : detail::tile_ref(L, i, k); };
  detail::make_request(runtime, nullptr, [&](detail::Submission& s) {
    const detail::TaskContext ctx = detail::make_context(runtime, s, mode, GpuKernels::vendor);
    for (int k = 0; k < nt; ++k) detail::insert_copy_tile<T>(ctx, detail::tile_ref(L, k, k), factor(k, k), true, unranked(TaskKind::other));
    for (int j = 0; j < nt; ++j)
      for (int i = j; i < nt; ++i) detail::insert_copy_tile<T>(ctx, detail::tile_ref(A, i, j), detail::tile_ref(R, i, j), false,
                                                             unranked(TaskKind::other));
    // R(i, j) -= sum_{k <= j} L(i, k) L(j, k)^T
    for (int k = 0; k < nt; ++k)
      for (int i = k; i < nt; ++i) {
        detail::insert_syrk<T>(ctx, T(-1), factor(i, k), T(1), detail::tile_ref(R, i, i), unranked(TaskKind::syrk));
        for (int j = k; j < i; ++j)
          detail::insert_gemm<T>(ctx, Trans::no, Trans::conjugate_transpose, T(-1), factor(i, k), factor(j, k), T(1),
                                 detail::tile_ref(R, i, j), unranked(TaskKind::gemm));
      }
    insert_sums(ctx, R, r_sums);
    insert_sums(ctx, A, a_sums);
  }).wait();
  return detail::scaled_backward_error(symmetric_one_norm(R, r_sums), symmetric_one_norm(A, a_sums), n,
                                      std::numeric_limits<RealOf<T>>::epsilon());
}

#define TESSERA_INSTANTIATE(T) template double backward_error<T>(const TileMatrix<T>&, const TileMatrix<T>&, Mode);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
