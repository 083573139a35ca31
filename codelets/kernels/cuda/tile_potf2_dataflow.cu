// potf2, variant 3: the whole tile in one persistent kernel whose thread blocks take tasks in a
// fixed order and wait for their inputs through counters in global memory (no grid barrier, no
// launch between block columns).
//
// The tile is cut into block columns of 32 and each block column's rows below its diagonal block
// into chunks of RP rows. Two kinds of task:
//  - panel (J, c): updates the diagonal block of block column J and chunk c by block column J - 1,
//    factors the diagonal block in one warp (tile_warp_cholesky.cuh), solves the chunk's rows
//    against it and stores them (the last chunk's task also the diagonal block, once every
//    other panel task of J has read it);
//  - update (J', K, r): subtracts block column K's contribution from the diagonal rows (r = 0) or
//    chunk r - 1 of block column J', for J' >= K + 2.
// Task order: panel 0; then for J = 1, 2, ...: panel J, then the updates by block column J - 1.
// Every task waits only for tasks earlier in that order (panel J for panel J - 1 and for the
// updates of its rows by block columns 0 .. J - 2; update (J', K, r) for panel K and for update
// (J', K - 1, r)), and the launch is cooperative (every thread block resident), so the tasks,
// taken in order from one counter, always finish. The chain from one diagonal block to the next is
// then panel J - 1's end, panel J's update of its own rows and its factorization, with no kernel
// boundary; the other block columns' updates run beside it on the other thread blocks.
//
// Data written by another thread block of the same launch is read through L2 (__ldcg: the L1
// caches are not coherent) after every thread has acquired the counter its writer released.
// Info: the first failing pivot, which panel order makes the first one reported.
#include <algorithm>

#include "tile_common.cuh"
#include "tile_potf2_dataflow.cuh"
#include "tile_warp_cholesky.cuh"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda::detail {
namespace {

// Block columns and row chunks of an n x n tile with chunks of rp rows.
struct DataflowGrid {
  int n, columns, rp;
  __host__ __device__ int width(int J) const { return min(kWarpBlock, n - kWarpBlock * J); }
  __host__ __device__ int rows_below(int J) const { return n - kWarpBlock * J - width(J); }
  __host__ __device__ int chunks(int J) const { return ceil_div(rows_below(J), rp); }
  __host__ __device__ int panel_tasks(int J) const { return max(1, chunks(J)); }
  __host__ __device__ int update_tasks(int Jp) const { return 1 + chunks(Jp); }  // diagonal rows, chunks
  __host__ __device__ int max_chunks() const { return chunks(0); }
};

// Counters of one call, zeroed before the launch.
struct DataflowCounters {
  int* next_task;   // [1]
  int* panel_done;  // [columns]: panel tasks of block column J finished
  int* updated;     // [columns][max_chunks + 1]: updates applied to rows r of block column J
  int* read_diagonal;  // [columns]: panel tasks of block column J past reading its diagonal block
};

inline std::size_t counter_ints(const DataflowGrid& g) {
  return 1 + static_cast<std::size_t>(g.columns) * (g.max_chunks() + 3);
}

struct Task {
  int panel;  // 1: panel (J, c); 0: update (J', K = J - 1, r)
  int J, c;   // panel: block column and chunk; update: J is the group (K + 1)
  int Jp, r;  // update: target block column and rows (0: diagonal rows, r >= 1: chunk r - 1)
};

// Task t, from the group starts (group 0 is panel 0; group J >= 1 is panel J then the updates
// of block columns J + 1 .. by block column J - 1).
__device__ Task task_at(const DataflowGrid& g, int t, const int* group_start, const int* update_start) {
  int lo = 0, hi = g.columns - 1;  // the last group whose start <= t
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (group_start[mid] <= t) lo = mid; else hi = mid - 1;
  }
  const int J = lo;
  int off = t - group_start[J];
  Task task{};
  task.J = J;
  if (off < g.panel_tasks(J)) {
    task.panel = 1;
    task.c = off;
    return task;
  }
  off -= g.panel_tasks(J);
  // Updates of block columns J + 1 ..: update_start[Jp] = sum of update_tasks(J'') for J'' < Jp.
  const int base = update_start[J + 1];
  lo = J + 1, hi = g.columns - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (update_start[mid] - base <= off) lo = mid; else hi = mid - 1;
  }
  task.panel = 0;
  task.Jp = lo;
  task.r = off - (update_start[lo] - base);
  return task;
}

// acc (a row's 32 columns of block column Jp) -= row's L in block column K times lq^T, where
// lq[k][c] = L(32 Jp + c, 32 K + k). The loop over k unrolled by 8 puts 8 of the row's loads in
// flight at a time (all 32 at once spilled registers; unrolled further, the persistent kernel's
// code outgrew the instruction cache).
template <class T>
__device__ __forceinline__ void subtract_block_column(T (&acc)[kWarpBlock], const T* A, int lda, int row, int K,
                                                      const T (*lq)[kWarpBlock]) {
  const T* l = A + row + static_cast<std::size_t>(kWarpBlock * K) * lda;
#pragma unroll 8
  for (int k = 0; k < kWarpBlock; ++k) {
    const T y = __ldcg(l + static_cast<std::size_t>(k) * lda);
#pragma unroll
    for (int c = 0; c < kWarpBlock; ++c) acc[c] = fma(-y, lq[k][c], acc[c]);
  }
}

// The same for row 32 Jp + i, one of lq's own rows: its L in block column K is lq[.][i], in
// shared memory, so that the diagonal rows' update waits for no load.
template <class T>
__device__ __forceinline__ void subtract_own_block_rows(T (&acc)[kWarpBlock], int i, const T (*lq)[kWarpBlock]) {
#pragma unroll 8
  for (int k = 0; k < kWarpBlock; ++k) {
    const T y = lq[k][i];
#pragma unroll
    for (int c = 0; c < kWarpBlock; ++c) acc[c] = fma(-y, lq[k][c], acc[c]);
  }
}

// lq[k][c] = L(32 Jp + c, 32 K + k) for c < w (0 past it), by the whole thread block of THREADS
// threads: every load issued before the first store, so that they share one L2 latency.
template <class T, int THREADS>
__device__ __forceinline__ void load_block_rows(T (*lq)[kWarpBlock], const T* A, int lda, int Jp, int w, int K) {
  constexpr int kPer = ceil_div(kWarpBlock * kWarpBlock, THREADS);
  T v[kPer];
#pragma unroll
  for (int p = 0; p < kPer; ++p) {
    const int i = p * THREADS + static_cast<int>(threadIdx.x), c = i % kWarpBlock, k = i / kWarpBlock;
    v[p] = i < kWarpBlock * kWarpBlock && c < w
               ? __ldcg(A + kWarpBlock * Jp + c + static_cast<std::size_t>(kWarpBlock * K + k) * lda)
               : T(0);
  }
#pragma unroll
  for (int p = 0; p < kPer; ++p) {
    const int i = p * THREADS + static_cast<int>(threadIdx.x);
    if (i < kWarpBlock * kWarpBlock) lq[i / kWarpBlock][i % kWarpBlock] = v[p];
  }
}

template <class T, int RP>
__global__ void __launch_bounds__(kWarpBlock + RP)
    potf2_dataflow_kernel(DataflowGrid g, T* A, int lda, int* info, DataflowCounters counters) {
  static_assert(RP % 32 == 0, "chunk rows in whole warps");
  constexpr int kMaxColumns = 64;  // tiles up to 2048
  __shared__ __align__(16) T lq[kWarpBlock][kWarpBlock];
  __shared__ __align__(16) T lcol[kWarpBlock][kWarpBlock];
  __shared__ T inv[kWarpBlock];
  __shared__ int group_start[kMaxColumns + 1], update_start[kMaxColumns + 1];
  __shared__ int task_index, failed_column;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;

  if (tid == 0) {
    update_start[0] = 0;
    for (int J = 0; J < g.columns; ++J) update_start[J + 1] = update_start[J] + g.update_tasks(J);
    group_start[0] = 0;
    for (int J = 0; J < g.columns; ++J) {
      int size = g.panel_tasks(J);
      if (J >= 1) size += update_start[g.columns] - update_start[J + 1];
      group_start[J + 1] = group_start[J] + size;
    }
  }
  __syncthreads();
  const int total = group_start[g.columns];
  const int stride = g.max_chunks() + 1;

  // The next task is taken as the current one starts, so that the counter's round trip overlaps
  // the work. Holding one task not yet started cannot deadlock: a blocked task waits only for
  // earlier tasks, and the earliest blocked one's inputs are neither blocked nor held unstarted
  // behind a later one.
  int next = 0;
  if (tid == 0) next = atomicAdd(counters.next_task, 1);
  for (;;) {
    if (tid == 0) task_index = next;
    __syncthreads();
    const int t = task_index;
    __syncthreads();  // task_index is rewritten at the next grab
    if (t >= total) return;
    if (tid == 0) next = atomicAdd(counters.next_task, 1);
    const Task task = task_at(g, t, group_start, update_start);

    if (!task.panel) {
      // update (Jp, K, r)
      const int K = task.J - 1, Jp = task.Jp, r = task.r, w = g.width(Jp);
      block_wait_at_least(counters.panel_done + K, g.panel_tasks(K));
      block_wait_at_least(counters.updated + Jp * stride + r, K);
      load_block_rows<T, kWarpBlock + RP>(lq, A, lda, Jp, w, K);
      __syncthreads();
      const int top = kWarpBlock * Jp;
      const int first = r == 0 ? top : top + w + (r - 1) * RP, count = r == 0 ? w : min(RP, g.n - first);
      if (tid < count) {
        const int row = first + tid;
        T* a = A + row + static_cast<std::size_t>(top) * lda;
        T acc[kWarpBlock];
#pragma unroll
        for (int c = 0; c < kWarpBlock; ++c)
          acc[c] = c < w && (r > 0 || c <= tid) ? __ldcg(a + static_cast<std::size_t>(c) * lda) : T(0);
        if (r == 0)
          subtract_own_block_rows<T>(acc, tid, lq);
        else
          subtract_block_column<T>(acc, A, lda, row, K, lq);
        opaque(a);
#pragma unroll
        for (int c = 0; c < kWarpBlock; ++c)
          if (c < w && (r > 0 || c <= tid)) a[static_cast<std::size_t>(c) * lda] = acc[c];
      }
      block_count_up(counters.updated + Jp * stride + r);
      continue;
    }

    // panel (J, c). Every panel task of J reads the diagonal block of A, so the last one writes
    // its L, once the others are past reading it; nothing else reads that L.
    const int J = task.J, c = task.c, w = g.width(J), top = kWarpBlock * J;
    const int chunks = g.chunks(J);
    const bool writes_diagonal = c == g.panel_tasks(J) - 1;
    if (J > 0) {
      block_wait_at_least(counters.panel_done + J - 1, g.panel_tasks(J - 1));
      block_wait_at_least(counters.updated + J * stride, J - 1);
      if (chunks > 0) block_wait_at_least(counters.updated + J * stride + 1 + c, J - 1);
    }
    if (J > 0) load_block_rows<T, kWarpBlock + RP>(lq, A, lda, J, w, J - 1);
    __syncthreads();
    const bool diagonal = warp == 0;
    const int row = diagonal ? top + lane : top + w + c * RP + (warp - 1) * 32 + lane;
    const bool valid = diagonal ? lane < w : row < g.n;
    T x[kWarpBlock];
#pragma unroll
    for (int k = 0; k < kWarpBlock; ++k) {
      const bool load = valid && k < w && (!diagonal || k <= lane);
      x[k] = load ? __ldcg(A + row + static_cast<std::size_t>(top + k) * lda) : T(diagonal && k == lane ? 1 : 0);
    }
    // Rows past w stay an identity: their L in block column J - 1 is not read. The diagonal
    // rows' entries right of the diagonal take garbage here, which the factorization ignores.
    if (J > 0 && valid) {
      if (diagonal)
        subtract_own_block_rows<T>(x, lane, lq);
      else
        subtract_block_column<T>(x, A, lda, row, J - 1, lq);
    }
    int failed = kWarpBlock;
    if (diagonal) {
      failed = factor_diagonal_warp<T>(x, lcol, inv);
      if (lane == 0) failed_column = failed;
    }
    __syncthreads();
    failed = failed_column;
    if (!writes_diagonal) block_count_up(counters.read_diagonal + J);  // the diagonal warp's loads are consumed
    if (!diagonal) solve_against_diagonal<T>(x, lcol, inv);
    if (valid && !diagonal) {
      T* out = A + row + static_cast<std::size_t>(top) * lda;
      opaque(out);
#pragma unroll
      for (int k = 0; k < kWarpBlock; ++k)
        if (k < w && k < failed) out[static_cast<std::size_t>(k) * lda] = x[k];
    }
    if (tid == 0 && writes_diagonal && failed < w) atomicCAS(info, 0, top + failed + 1);
    block_count_up(counters.panel_done + J);
    if (writes_diagonal) {
      // Off the chain: no task reads the diagonal block's L. The diagonal warp still holds it.
      block_wait_at_least(counters.read_diagonal + J, g.panel_tasks(J) - 1);
      if (diagonal && valid) {
        T* out = A + row + static_cast<std::size_t>(top) * lda;
        opaque(out);
#pragma unroll
        for (int k = 0; k < kWarpBlock; ++k)
          if (k < w && k < failed && k <= lane) out[static_cast<std::size_t>(k) * lda] = x[k];
      }
    }
  }
}

// Thread blocks of `kernel` (with `threads` threads each) that can all be resident at once.
int resident_blocks(const void* kernel, int threads) {
  int per_sm = 0;
  TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return per_sm * device_sm_count();
}

template <class T, int RP>
void launch_dataflow(const DataflowGrid& g, int blocks, T* A, int lda, int* info, const DataflowCounters& counters,
                     cudaStream_t stream) {
  const void* kernel = reinterpret_cast<const void*>(potf2_dataflow_kernel<T, RP>);
  const int threads = kWarpBlock + RP;
  blocks = std::max(1, std::min(blocks, resident_blocks(kernel, threads)));
  DataflowGrid grid = g;
  T* a = A;
  int* i = info;
  DataflowCounters c = counters;
  void* args[] = {&grid, &a, &lda, &i, &c};
  TESSERA_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, blocks, threads, args, 0, stream));
}

// cfg's shape (zero fields: 96 rows, 128 blocks), when it is one of kDataflowShapes.
DataflowShape dataflow_shape(const TileKernelConfig& cfg) {
  const DataflowShape s{cfg.tile ? cfg.tile : 96, cfg.crossover ? cfg.crossover : 128};
  for (const DataflowShape& k : kDataflowShapes)
    if (k.rows == s.rows && k.blocks == s.blocks && (cfg.threads == 0 || cfg.threads == kWarpBlock + s.rows))
      return s;
  invalid_config("potf2 variant 3 supports ib = 32 and (tile, crossover) = (64, 64|128), (96, 64|128|256)");
}

}  // namespace

bool cooperative_launch_supported() {
  int dev = 0, supported = 0;
  // No device (or no driver) answers "not supported", and the error is cleared: callers then
  // leave variant 3 out.
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return supported != 0;
}

void check_potf2_dataflow_config(int n, const TileKernelConfig& cfg) {
  if (cfg.ib != 0 && cfg.ib != kWarpBlock) invalid_config("potf2 variant 3 supports ib = 32 only");
  if (!cooperative_launch_supported())
    invalid_config("potf2 variant 3 needs cooperative launches, which this device does not support");
  if (n > 64 * kWarpBlock) invalid_config("potf2 variant 3 supports tiles up to 2048");
  (void)dataflow_shape(cfg);
}

std::size_t potf2_dataflow_workspace_bytes(int n, const TileKernelConfig& cfg) {
  check_potf2_dataflow_config(n, cfg);
  const DataflowGrid g{n, ceil_div(n, kWarpBlock), dataflow_shape(cfg).rows};
  return sizeof(int) * counter_ints(g);
}

template <class T>
void potf2_dataflow(int n, T* A, int lda, int* info, void* workspace, cudaStream_t stream,
                    const TileKernelConfig& cfg) {
  check_potf2_dataflow_config(n, cfg);
  const DataflowShape shape = dataflow_shape(cfg);
  const DataflowGrid g{n, ceil_div(n, kWarpBlock), shape.rows};
  const int blocks = shape.blocks;
  int* ints = static_cast<int*>(workspace);
  const DataflowCounters counters{ints, ints + 1, ints + 1 + g.columns,
                                  ints + 1 + g.columns + static_cast<std::size_t>(g.columns) * (g.max_chunks() + 1)};
  TESSERA_CUDA_CHECK(cudaMemsetAsync(ints, 0, sizeof(int) * counter_ints(g), stream));
  TESSERA_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
  switch (g.rp) {
    case 64: return launch_dataflow<T, 64>(g, blocks, A, lda, info, counters, stream);
    case 96: return launch_dataflow<T, 96>(g, blocks, A, lda, info, counters, stream);
    default: invalid_config("potf2 variant 3: a row count of kDataflowShapes has no kernel instantiated");
  }
}

#define TESSERA_INSTANTIATE(T)                                                                       \
  template void potf2_dataflow<T>(int, T*, int, int*, void*, cudaStream_t, const TileKernelConfig&);
TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda::detail
