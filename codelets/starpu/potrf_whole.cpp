// potrf_whole: the whole factorization as one task over every lower tile (TaskGrain::whole_matrix),
// for sizes where StarPU's latency on a chain of nt steps costs more than a tile DAG's overlap
// gains. Tiles that lie in one column-major matrix (a device matrix's view) are factored where they
// are; others are gathered into one matrix, factored and scattered back. Transposed tiles (an
// upper-stored matrix's blocks) are gathered transposed, so that the factorization is always the
// lower one. CPU: LAPACKE. CUDA: cuSOLVER, synchronous (the info is read back before the task
// ends).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#include "kernels/cuda/stream_memory.hpp"
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

namespace {

struct WholeArgs {
  TaskHeader header;
  int n;   // order of the matrix
  int nb;  // tile size: tile (i, j) starts at row i nb, column j nb
  int nt;  // tiles a side
  bool transposed;
};

// The (tile row, tile column) of each buffer: column by column, each from its diagonal tile down.
std::vector<std::pair<int, int>> tile_positions(int nt) {
  std::vector<std::pair<int, int>> positions;
  for (int j = 0; j < nt; ++j)
    for (int i = j; i < nt; ++i) positions.emplace_back(i, j);
  return positions;
}

// The element offset of lower block (i, j) in a column-major matrix of leading dimension ld, as
// stored: an upper-stored matrix holds it transposed, at block (j, i).
long stored_offset(const WholeArgs& a, int i, int j, int ld) {
  const long row = static_cast<long>(a.transposed ? j : i) * a.nb, col = static_cast<long>(a.transposed ? i : j) * a.nb;
  return row + col * ld;
}

// The tiles as views of one column-major matrix (its first tile's pointer and leading
// dimension), or null.
template <class T>
T* one_matrix(const WholeArgs& a, const std::vector<TileView<T>>& tiles) {
  const std::vector<std::pair<int, int>> at = tile_positions(a.nt);
  T* base = tiles[0].ptr;
  const int ld = tiles[0].ld;
  if (ld < a.n) return nullptr;
  for (std::size_t t = 0; t < tiles.size(); ++t)
    if (tiles[t].ld != ld || tiles[t].ptr != base + stored_offset(a, at[t].first, at[t].second, ld)) return nullptr;
  return base;
}

void report_info(const WholeArgs& a, int info) {
  if (info > 0) a.header.submission->record_not_positive_definite(info);
  if (info < 0) throw std::logic_error("potrf kernel rejected argument " + std::to_string(-info));
}

template <class T>
void potrf_whole_cpu(void* buffers[], void* cl_arg) {
  const WholeArgs& a = task_args<WholeArgs>(cl_arg);
  run_task_body(a.header, "potrf_whole", [&] {
    const std::vector<TileView<T>> tiles = tile_views<T>(buffers, 0, a.nt * (a.nt + 1) / 2);
    if (T* base = one_matrix(a, tiles)) {
      report_info(a, kernels::cpu::potrf(a.transposed ? 'U' : 'L', a.n, base, tiles[0].ld));
      return;
    }
    const std::vector<std::pair<int, int>> at = tile_positions(a.nt);
    std::vector<T> matrix(static_cast<std::size_t>(a.n) * a.n);
    auto block = [&](int i, int j) { return matrix.data() + static_cast<long>(i) * a.nb + static_cast<long>(j) * a.nb * a.n; };
    // A transposed tile is cols x rows of the lower block it stands for.
    for (std::size_t t = 0; t < tiles.size(); ++t)
      kernels::cpu::copy_block(a.transposed, false, tiles[t].rows, tiles[t].cols, tiles[t].ptr, tiles[t].ld,
                               block(at[t].first, at[t].second), a.n);
    const int info = kernels::cpu::potrf('L', a.n, matrix.data(), a.n);
    for (std::size_t t = 0; t < tiles.size(); ++t) {
      const TileView<T>& tile = tiles[t];
      const bool diagonal = at[t].first == at[t].second;
      // Back into the triangle the tile holds: a diagonal tile's other triangle is the caller's.
      if (!a.transposed)
        kernels::cpu::copy_block(false, diagonal, tile.rows, tile.cols, block(at[t].first, at[t].second), a.n, tile.ptr,
                                 tile.ld);
      else
        for (int c = 0; c < tile.cols; ++c)  // stored column c is row c of the lower block
          for (int r = 0; r < (diagonal ? c + 1 : tile.rows); ++r)
            tile.ptr[r + static_cast<long>(c) * tile.ld] = block(at[t].first, at[t].second)[c + static_cast<long>(r) * a.n];
    }
    report_info(a, info);
  });
}

#ifdef TESSERA_HAVE_CUDA
namespace cuda = kernels::cuda;

// cuSOLVER's potrf of the lower triangle of the n x n matrix L (leading dimension ld), with its
// info checked against the factor's diagonal.
template <class T>
int factor_lower(CudaWorkerContext& ctx, const TaskHeader& header, int n, T* L, int ld) {
  if (factor_on_host_for(header)) return factor_on_host(ctx, 'L', TileView<T>{L, n, n, ld});
  const int lwork = cuda::vendor::potrf_workspace(ctx.cusolver, 'L', n, L, ld);
  void* work = ctx.workspace_of(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)));
  cuda::vendor::potrf(ctx.cusolver, 'L', n, L, ld, static_cast<T*>(work), lwork, ctx.device_info);
  return device_potrf_info(TileView<T>{L, n, n, ld}, ctx);
}

// Lower block (i, j) of `matrix` (n x n) <-> the transposed tile holding it (an upper-stored
// matrix's block); a diagonal tile's copy back writes only the triangle the tile holds.
template <class T>
void gather_transposed_tile(CudaWorkerContext& ctx, const WholeArgs& a, const TileView<T>& tile, bool diagonal, T* block) {
  if (diagonal)
    cuda::transpose_triangle(cuda::Triangle::lower, tile.rows, tile.ptr, tile.ld, block, a.n, ctx.stream);
  else
    cuda::vendor::transpose(ctx.cublas, tile.cols, tile.rows, tile.ptr, tile.ld, block, a.n);
}

template <class T>
void scatter_transposed_tile(CudaWorkerContext& ctx, const WholeArgs& a, const TileView<T>& tile, bool diagonal,
                             const T* block) {
  if (diagonal)
    cuda::transpose_triangle(cuda::Triangle::upper, tile.rows, block, a.n, tile.ptr, tile.ld, ctx.stream);
  else
    cuda::vendor::transpose(ctx.cublas, tile.rows, tile.cols, block, a.n, tile.ptr, tile.ld);
}

enum class Direction { gather, scatter };

// Every tile into its block of the gathered matrix (leading dimension ld), or back (a diagonal
// tile's other triangle is the caller's: only its lower triangle goes back), a launch per 64 tiles
// instead of one per tile (whose launches cost more than the copies at moderate orders).
template <class T, class Block>
void copy_tiles(const std::vector<TileView<T>>& tiles, const std::vector<std::pair<int, int>>& at, Block&& block, int ld,
                Direction direction, cudaStream_t stream) {
  std::vector<cuda::BlockCopy<T>> copies;
  copies.reserve(tiles.size());
  for (std::size_t t = 0; t < tiles.size(); ++t) {
    const TileView<T>& tile = tiles[t];
    if (direction == Direction::gather)
      copies.push_back({tile.ptr, block(t), tile.ld, ld, tile.rows, tile.cols, false});
    else
      copies.push_back({block(t), tile.ptr, ld, tile.ld, tile.rows, tile.cols, at[t].first == at[t].second});
  }
  cuda::copy_blocks(copies.data(), static_cast<int>(copies.size()), stream);
}

template <class T>
void potrf_whole_cuda(void* buffers[], void* cl_arg) {
  const WholeArgs& a = task_args<WholeArgs>(cl_arg);
  run_task_body(a.header, "potrf_whole (cuSOLVER)", [&] {
    CudaWorkerContext& ctx = current_cuda_context(a.header);
    const std::vector<TileView<T>> tiles = tile_views<T>(buffers, 0, a.nt * (a.nt + 1) / 2);
    T* base = one_matrix(a, tiles);
    if (base && !a.transposed) {
      report_info(a, factor_lower(ctx, a.header, a.n, base, tiles[0].ld));
      return;
    }
    const cuda::StreamBuffer<T> matrix(static_cast<std::size_t>(a.n) * static_cast<std::size_t>(a.n), ctx.stream);
    int info = 0;
    if (base) {  // an upper-stored matrix in one piece: its triangle transposed in and out at once
      cuda::transpose_triangle(cuda::Triangle::lower, a.n, base, tiles[0].ld, matrix.data(), a.n, ctx.stream);
      info = factor_lower(ctx, a.header, a.n, matrix.data(), a.n);
      cuda::transpose_triangle(cuda::Triangle::upper, a.n, matrix.data(), a.n, base, tiles[0].ld, ctx.stream);
    } else {
      const std::vector<std::pair<int, int>> at = tile_positions(a.nt);
      auto block = [&](std::size_t t) {
        return matrix.data() + static_cast<long>(at[t].first) * a.nb + static_cast<long>(at[t].second) * a.nb * a.n;
      };
      if (a.transposed) {
        for (std::size_t t = 0; t < tiles.size(); ++t)
          gather_transposed_tile(ctx, a, tiles[t], at[t].first == at[t].second, block(t));
      } else {
        copy_tiles(tiles, at, block, a.n, Direction::gather, ctx.stream);
      }
      info = factor_lower(ctx, a.header, a.n, matrix.data(), a.n);
      if (a.transposed) {
        for (std::size_t t = 0; t < tiles.size(); ++t)
          scatter_transposed_tile(ctx, a, tiles[t], at[t].first == at[t].second, block(t));
      } else {
        copy_tiles(tiles, at, block, a.n, Direction::scatter, ctx.stream);
      }
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    report_info(a, info);
  });
}

bool never_custom(const WholeArgs&) { return false; }
#endif

template <class T>
starpu_codelet* potrf_whole_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>(
      {"potrf_whole", potrf_whole_cpu<T>, TESSERA_IF_CUDA(potrf_whole_cuda<T>), nullptr, false, {},
       TESSERA_IF_CUDA((can_execute_with_kernel_choice<WholeArgs, never_custom, false>))});
  return &codelet;
}

}  // namespace

template <class T>
void insert_whole_factorization(const TaskContext& ctx, const std::vector<TileRef>& tiles, const TaskHints& hints) {
  if (tiles.empty()) return;
  WholeArgs args{};
  args.header.kind = TaskKind::potrf;
  args.nb = tiles.front().rows;
  args.transposed = tiles.front().transposed;
  int nt = 0;
  while (nt * (nt + 1) / 2 < static_cast<int>(tiles.size())) ++nt;
  if (nt * (nt + 1) / 2 != static_cast<int>(tiles.size())) throw std::logic_error("whole factorization: not a triangle of tiles");
  args.nt = nt;
  args.n = tiles.back().row0 + tiles.back().rows;
  std::vector<TaskBuffer> buffers;
  for (const TileRef& tile : tiles) buffers.push_back({tile.handle, STARPU_RW});
  submit(ctx, potrf_whole_codelet<T>(), args, buffers.data(), buffers.size(), hints, tiles.front(), 0);
}

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template void insert_whole_factorization<T>(const TaskContext&, const std::vector<TileRef>&, const TaskHints&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
