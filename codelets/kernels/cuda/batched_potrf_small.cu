// Batched Cholesky for n <= 32: register-resident rows, one group of N threads per matrix.
//
// A thread block owns M = (32 / N) * warps matrices. It stages their referenced triangles into
// shared memory with coalesced loads (a contiguous batch in place: runs of consecutive elements,
// one per stored column, for the orders kColumnRuns names, 16-byte vectors for the others; the
// interleaved layout is coalesced by construction), then thread i of a group keeps row i of the
// lower factor in registers and runs the right-looking factorization: at step j the pivot comes by
// shuffle, every row scales its entry of column j and writes it to the packed factor in shared
// memory, and after a warp barrier each row reads column j back (broadcast 16-byte reads) for its
// rank-1 update. Column j of the packed factor then holds its final value, so the write-back
// needs no extra pass over the registers. Upper storage is transposed while staging (U = L^T),
// except in column runs, where each stored column lands as it lies and is read as a row of L.
// Every lane of a warp runs the factorization in step (see factor_rows).
//
// A variable batch runs its own instantiation (Listed), a class at a time (classify_orders) or all
// its matrices as one class: each block first reads where its matrices lie and their orders, then
// moves them as runs, one per stored column (stage_variable_runs), and a warp stops after its
// largest order.
//
// Out of place (BatchDesc::src set) the same kernel, compiled apart, reads each matrix from the
// source with its element strides (16-byte vectors when the source batch is contiguous in either
// order: a row-major matrix is the column-major storage of its transpose, so it is staged as the
// other triangle) and writes whole output matrices: the factor, and zeros in the strict opposite
// triangle. The in-place instantiations are unchanged.
//
// Complex (Hermitian) matrices run the same code: the update subtracts L(i, j) conj(L(c, j)), and
// upper storage holds U = L^H, so its elements are conjugated as they are staged in and out.
#include <array>
#include <type_traits>
#include <utility>

#include "cuda/batched_common.cuh"
#include "cuda/batched_static_for.cuh"
#include "cuda/check.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda::batched_detail {
namespace {

constexpr int kMaxSmallThreads = 256;
constexpr int kDefaultSmallThreads = 128;
// Accesses each thread issues before the first shared-memory store while staging. All staging
// paths live in one kernel, so these also bound its register count (more in flight measured
// slower: 16 vectors raised the kernel to ~160 registers and cost occupancy).
constexpr int kVectorsInFlight = 4;
constexpr int kElementsInFlight = 4;

// Lower triangle of one N x N factor packed column by column in shared memory.
template <class T, int N>
struct PackedL {
  static constexpr int V = Vec16<T>::width;
  static constexpr int elems = N * (N + 1) / 2;
  static constexpr int stride = (elems + V - 1) / V * V;  // keeps every matrix 16-byte aligned
  __host__ __device__ static constexpr int col(int j) { return j * N - j * (j - 1) / 2; }
  __host__ __device__ static constexpr int at(int i, int j) { return col(j) + i - j; }
  // Upper storage staged as it lies (stage_column_runs): stored column c, rows 0..c, from here.
  __host__ __device__ static constexpr int upper_col(int c) { return c * (c + 1) / 2; }
};

// Packed slot of stored element rc (= c * N + r), or -1 outside the referenced triangle.
template <class T, int N>
__device__ __forceinline__ int packed_slot(int rc, bool upper) {
  const int r = rc % N, c = rc / N;
  const int i = upper ? c : r;
  const int j = upper ? r : c;
  return i >= j ? PackedL<T, N>::at(i, j) : -1;
}

// Walks a 2-D index space (fast index in [0, F), then slow) from `start` in steps of `step`
// without a division per element.
struct IndexWalker {
  int fast, slow, F, dfast, dslow;
  __device__ IndexWalker(int start, int f, int step)
      : fast(start % f), slow(start / f), F(f), dfast(step % f), dslow(step / f) {}
  __device__ void advance() {
    fast += dfast;
    slow += dslow;
    if (fast >= F) {
      fast -= F;
      ++slow;
    }
  }
};

// Order of matrix k for this kernel, or -1 if the kernel must leave it alone (a variable batch
// sends orders above N to the panel kernel).
template <class T, int N>
__device__ __forceinline__ int small_order(const BatchDesc<T>& d, long long k) {
  if (d.layout != BatchLayout::variable) return N;
  const int nk = d.nvec[k];
  return nk <= N ? nk : -1;
}

// The matrix at position `pos` of the launch: of its class of a variable batch where Listed (a
// variable batch in one class has no list: position and matrix are the same).
template <bool Listed>
__device__ __forceinline__ long long small_member(const ClassRange& classes, long long pos) {
  if constexpr (Listed)
    return classes.list ? classes.list[static_cast<long long>(classes.first) * classes.batch + pos] : pos;
  else
    return pos;
}

// Element staging (any layout): matrix-major for strided/variable batches, matrix-fastest for
// the interleaved layout, so that neighbouring threads touch neighbouring addresses. Inside a
// variable batch's padding (rows/columns >= n_k) the factor is the identity. Out of place
// (strided batch): the referenced triangle is read from the source, and every element of the
// output matrix is written (zeros outside the factor's triangle).
template <class T, int N, bool ToShared, bool OutOfPlace>
__device__ void stage_elements(const BatchDesc<T>& d, T* smem, long long k0, int M, int count) {
  using GlobalPtr = std::conditional_t<ToShared, const T*, T*>;
  constexpr int NN = N * N;
  constexpr int U = kElementsInFlight;
  const bool matrix_fastest = d.layout == BatchLayout::interleaved;
  IndexWalker w(threadIdx.x, matrix_fastest ? M : NN, blockDim.x);
  const int slow_end = matrix_fastest ? NN : M;
  while (w.slow < slow_end) {
    T v[U];
    GlobalPtr gptr[U];
    int slot[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      slot[u] = -1;
      gptr[u] = nullptr;
      v[u] = T(0);
      if (w.slow < slow_end) {
        const int m = matrix_fastest ? w.fast : w.slow;
        const int rc = matrix_fastest ? w.slow : w.fast;
        if (m < count) {
          const long long k = k0 + m;
          const int nk = small_order<T, N>(d, k);
          const int s = nk >= 0 ? packed_slot<T, N>(rc, d.upper) : -1;
          if constexpr (OutOfPlace) {
            const int r = rc % N, c = rc / N;
            slot[u] = s >= 0 ? m * PackedL<T, N>::stride + s : -1;
            if constexpr (ToShared) {
              if (s >= 0) gptr[u] = source_matrix(d, k) + r * d.src_rs + c * d.src_cs;
            } else {
              gptr[u] = d.A + k * d.stride + r + static_cast<long long>(c) * d.lda;
            }
          } else if (s >= 0) {
            const int r = rc % N, c = rc / N;
            slot[u] = m * PackedL<T, N>::stride + s;
            v[u] = r == c ? T(1) : T(0);
            if (r < nk && c < nk) {
              const StoredMatrix<T> sm = stored_matrix(d, static_cast<int>(k));
              gptr[u] = sm.p + r * sm.rs + c * sm.cs;
            }
          }
        }
      }
      w.advance();
    }
    if constexpr (ToShared) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (gptr[u]) v[u] = *gptr[u];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (slot[u] >= 0) smem[slot[u]] = conj_if(d.upper, v[u]);
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (gptr[u]) *gptr[u] = OutOfPlace && slot[u] < 0 ? T(0) : conj_if(d.upper, smem[slot[u]]);
    }
  }
}

// Contiguous strided batch (lda == n, stride == n*n, 16-byte aligned): the block's matrices are
// one contiguous range from `base`, read and written with 16-byte vectors; `upper` names the
// triangle stored. Vectors that hold no element of the referenced triangle are not read; vectors
// that straddle its edge are written element-wise so the other triangle is never written, unless
// ZeroFill (out of place), which writes whole vectors with zeros outside the triangle.
// `conjugate`: the elements are conjugated on their way (the upper triangle of a Hermitian matrix).
template <class T, int N, bool ToShared, bool ZeroFill>
__device__ void stage_contiguous(std::conditional_t<ToShared, const T*, T*> const base, bool upper,
                                 bool conjugate, T* smem, int count) {
  using Vt = typename Vec16<T>::type;
  using P = PackedL<T, N>;
  constexpr int V = Vec16<T>::width;
  constexpr int NN = N * N;
  constexpr int U = kVectorsInFlight;
  const int total = count * NN;
  const int nvec = total / V;
  for (int v0 = threadIdx.x; v0 < nvec; v0 += U * blockDim.x) {
    int slot[U][V];
    bool any[U], all[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int vi = v0 + u * blockDim.x;
      any[u] = false;
      all[u] = vi < nvec;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const int el = vi * V + e;
        const int s = vi < nvec ? packed_slot<T, N>(el % NN, upper) : -1;
        slot[u][e] = s >= 0 ? (el / NN) * P::stride + s : -1;
        any[u] |= s >= 0;
        all[u] &= s >= 0;
      }
    }
    if constexpr (ToShared) {
      Vt val[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (any[u]) val[u] = reinterpret_cast<const Vt*>(base)[v0 + u * blockDim.x];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (!any[u]) continue;
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (slot[u][e] >= 0) smem[slot[u][e]] = conj_if(conjugate, vec_get<T>(val[u], e));
      }
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int vi = v0 + u * blockDim.x;
        if (ZeroFill ? vi < nvec : all[u]) {
          T tmp[V];
#pragma unroll
          for (int e = 0; e < V; ++e)
            tmp[e] = ZeroFill && slot[u][e] < 0 ? T(0) : conj_if(conjugate, smem[slot[u][e]]);
          reinterpret_cast<Vt*>(base)[vi] = vec_make(tmp);
        } else if (any[u]) {
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (slot[u][e] >= 0) base[vi * V + e] = conj_if(conjugate, smem[slot[u][e]]);
        }
      }
    }
  }
  // Elements after the last whole vector (only when count * n * n is not a multiple of V).
  for (int el = nvec * V + threadIdx.x; el < total; el += blockDim.x) {
    const int s = packed_slot<T, N>(el % NN, upper);
    if (s < 0) {
      if constexpr (ZeroFill && !ToShared) base[el] = T(0);
      continue;
    }
    if constexpr (ToShared)
      smem[(el / NN) * P::stride + s] = conj_if(conjugate, base[el]);
    else
      base[el] = conj_if(conjugate, smem[(el / NN) * P::stride + s]);
  }
}

// Interleaved batch, 16-byte aligned, M a multiple of V: one 16-byte vector holds the same
// element of V neighbouring matrices, so a warp moves whole 32-byte sectors.
template <class T, int N, bool ToShared>
__device__ void stage_interleaved(const BatchDesc<T>& d, T* smem, long long k0, int M,
                                  int count) {
  using Vt = typename Vec16<T>::type;
  using P = PackedL<T, N>;
  constexpr int V = Vec16<T>::width;
  constexpr int NN = N * N;
  constexpr int U = kVectorsInFlight;
  IndexWalker w(threadIdx.x, M / V, blockDim.x);  // fast: vector of matrices, slow: element
  while (w.slow < NN) {
    Vt val[U];
    int slot[U], m0[U];
    long long off[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      slot[u] = -1;
      m0[u] = w.fast * V;
      off[u] = 0;
      if (w.slow < NN && m0[u] < count) {
        slot[u] = packed_slot<T, N>(w.slow, d.upper);
        const long long k = k0 + m0[u];
        off[u] = ((k / kInterleaveWidth) * NN + w.slow) * kInterleaveWidth + k % kInterleaveWidth;
      }
      w.advance();
    }
    if constexpr (ToShared) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (slot[u] >= 0) val[u] = *reinterpret_cast<const Vt*>(d.A + off[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (slot[u] < 0) continue;
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (m0[u] + e < count)
            smem[(m0[u] + e) * P::stride + slot[u]] = conj_if(d.upper, vec_get<T>(val[u], e));
      }
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (slot[u] < 0) continue;
        if (m0[u] + V <= count) {
          T tmp[V];
#pragma unroll
          for (int e = 0; e < V; ++e) tmp[e] = conj_if(d.upper, smem[(m0[u] + e) * P::stride + slot[u]]);
          *reinterpret_cast<Vt*>(d.A + off[u]) = vec_make(tmp);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e)  // matrices past the batch end are padding: not written
            if (m0[u] + e < count) d.A[off[u] + e] = conj_if(d.upper, smem[(m0[u] + e) * P::stride + slot[u]]);
        }
      }
    }
  }
}

// Contiguous strided batch, in place: the referenced part of each stored column is one run of
// consecutive elements in global memory and one in shared memory, so the block copies runs:
// W lanes per run (the power of two >= N), 32 / W runs per warp instruction, kRunsInFlight runs
// per lane before the first store. Lower storage lands in the packed factor's own layout; upper
// storage lands column by column as stored (PackedL::upper_col, conjugated: each run then holds
// a row of L), which factor_rows reads row by row before it writes the factor over it. The write
// back copies lower runs back as they are, and gathers each stored upper column from the packed
// factor's rows; an upper matrix that failed at column f (1-based) gets the finished rows of U
// above f and keeps its stored rows from f on, as the other stagings leave it (`fails`: the
// failing column per matrix, 0 for none).
constexpr int kRunsInFlight = 8;
// Where runs beat the 16-byte vectors of stage_contiguous (H200, both precisions, both
// triangles): up to 8, and at 15 and 16. From 9 to 14 a run leaves most of its 16 lanes idle and
// the runs' registers cost a block per SM; above 16 a run takes a whole warp instruction.
template <int N>
constexpr bool kColumnRuns = N <= 8 || N == 15 || N == 16;

template <int N>
constexpr int run_lanes() {
  return N <= 1 ? 1 : N <= 2 ? 2 : N <= 4 ? 4 : N <= 8 ? 8 : N <= 16 ? 16 : 32;
}

template <class T, int N, bool ToShared>
__device__ void stage_column_runs(std::conditional_t<ToShared, const T*, T*> const base, bool upper,
                                  T* smem, const int* fails, int count) {
  using P = PackedL<T, N>;
  constexpr int W = run_lanes<N>();
  constexpr int RunsPerWarp = 32 / W;
  constexpr int U = kRunsInFlight;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int e = lane % W;  // position inside the run
  const int warps = static_cast<int>(blockDim.x / 32);
  const int step = warps * RunsPerWarp;
  const int runs = count * N;
  // The packed factor's slot of L(c, e) (upper write back): row c of L, column e.
  const int lane_col = P::col(e) - e;
  for (int r0 = static_cast<int>(threadIdx.x / 32) * RunsPerWarp + lane / W; r0 < runs; r0 += U * step) {
    int g[U], sh[U];
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int run = r0 + u * step;
      const int m = run / N, c = run % N;
      const int len = upper ? c + 1 : N - c;
      g[u] = -1;
      sh[u] = 0;
      if (run < runs && e < len && (ToShared || !upper || fails[m] == 0 || e < fails[m] - 1)) {
        g[u] = m * N * N + c * N + (upper ? e : c + e);
        sh[u] = m * P::stride + (upper ? (ToShared ? P::upper_col(c) + e : lane_col + c) : P::col(c) + e);
      }
    }
    if constexpr (ToShared) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u] >= 0) v[u] = base[g[u]];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u] >= 0) smem[sh[u]] = conj_if(upper, v[u]);
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u] >= 0) v[u] = smem[sh[u]];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u] >= 0) base[g[u]] = conj_if(upper, v[u]);
    }
  }
}

// A matrix of a variable batch as a block of the class kernel finds it: read once per block into
// shared memory, so that its elements' addresses need no loads of their own. n = -1: not this
// kernel's (past the launch's matrices, larger than N, or refused by the size screening).
template <class T>
struct VariableMember {
  T* p;
  int n;
  int ld;
};

// Fills the block's members: matrix k0 + m of the launch for m < count.
template <class T, int N>
__device__ void load_variable_members(const BatchDesc<T>& d, const ClassRange& classes, long long k0, int M, int count,
                                      VariableMember<T>* members) {
  for (int m = threadIdx.x; m < M; m += blockDim.x) {
    VariableMember<T> v{nullptr, -1, 1};
    if (m < count) {
      const long long k = small_member<true>(classes, k0 + m);
      v.n = small_order<T, N>(d, k);
      if (v.n >= 0) {
        const StoredMatrix<T> sm = stored_matrix(d, static_cast<int>(k));
        v.p = sm.p;
        v.ld = static_cast<int>(sm.cs);
      }
    }
    members[m] = v;
  }
}

// A variable batch's matrices moved as runs, kRunsInFlight per lane before the first store, W lanes
// per run (the power of two >= N): run (m, c) is column c of matrix m's packed factor. Lower storage:
// stored column c, rows c to n - 1, consecutive in memory and in the packed factor. Upper storage:
// stored column c, rows 0 to c, which is row c of L (conjugated). Past the matrix's order the packed
// factor gets the identity; the write back stores the matrix's own elements only (a failed
// matrix's later columns keep their staged values, so they are written back as they were read).
template <class T, int N, bool ToShared>
__device__ void stage_variable_runs(const BatchDesc<T>& d, T* smem, const VariableMember<T>* members, int count) {
  using P = PackedL<T, N>;
  constexpr int W = run_lanes<N>();
  constexpr int RunsPerWarp = 32 / W;
  constexpr int U = kRunsInFlight;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int e = lane % W;
  const int step = static_cast<int>(blockDim.x / 32) * RunsPerWarp;
  const int runs = count * N;
  const bool upper = d.upper;
  for (int r0 = static_cast<int>(threadIdx.x / 32) * RunsPerWarp + lane / W; r0 < runs; r0 += U * step) {
    T* g[U];
    int sh[U];
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int run = r0 + u * step;
      const int m = run / N, c = run % N;
      const VariableMember<T> mm = run < runs ? members[m] : VariableMember<T>{nullptr, -1, 1};
      // Lower: L(c + e, c); upper: L(c, e) = conj(U(e, c)).
      const int row = upper ? c : c + e, col = upper ? e : c;
      const bool in_run = mm.n >= 0 && (upper ? e <= c : c + e < N);
      const bool stored = in_run && row < mm.n && col < mm.n;
      g[u] = stored ? mm.p + static_cast<long long>(c) * mm.ld + (upper ? e : c + e) : nullptr;
      sh[u] = in_run && (ToShared || stored) ? m * P::stride + P::at(row, col) : -1;
      v[u] = row == col ? T(1) : T(0);  // the identity past the order
    }
    if constexpr (ToShared) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u]) v[u] = *g[u];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (sh[u] >= 0) smem[sh[u]] = conj_if(upper, v[u]);
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (sh[u] >= 0) v[u] = smem[sh[u]];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (g[u]) *g[u] = conj_if(upper, v[u]);
    }
  }
}

template <class T, int N, bool ToShared>
__device__ __forceinline__ void stage(const BatchDesc<T>& d, T* smem, const int* fails, long long k0,
                                      int M, int count) {
  switch (d.staging) {
    case Staging::contiguous:
      if constexpr (kColumnRuns<N>)
        stage_column_runs<T, N, ToShared>(d.A + k0 * N * N, d.upper, smem, fails, count);
      else
        stage_contiguous<T, N, ToShared, false>(d.A + k0 * N * N, d.upper, d.upper, smem, count);
      break;
    case Staging::interleaved:
      stage_interleaved<T, N, ToShared>(d, smem, k0, M, count);
      break;
    default:
      stage_elements<T, N, ToShared, false>(d, smem, k0, M, count);
  }
}

// Out of place: read from the source (a contiguous row-major source is the column-major storage
// of the transpose, which holds the referenced triangle as the other one), write whole matrices.
template <class T, int N, bool ToShared>
__device__ __forceinline__ void stage_out_of_place(const BatchDesc<T>& d, T* smem, long long k0,
                                                   int M, int count) {
  if constexpr (ToShared) {
    if (d.src_staging == Staging::contiguous)
      stage_contiguous<T, N, true, false>(source_matrix(d, k0), d.upper != (d.src_rs != 1), d.upper,
                                          smem, count);
    else
      stage_elements<T, N, true, true>(d, smem, k0, M, count);
  } else {
    if (d.staging == Staging::contiguous)
      stage_contiguous<T, N, false, true>(d.A + k0 * N * N, d.upper, d.upper, smem, count);
    else
      stage_elements<T, N, false, true>(d, smem, k0, M, count);
  }
}

// a[c] -= l * conj(L(c, J)) for c in (J, N), reading column J of the packed factor with 16-byte
// reads where a whole aligned vector lies inside it (rows >= J, all written in this step). Each
// value is used as it arrives, so that the column never occupies registers of its own.
template <class T, int N, int J>
__device__ __forceinline__ void update_from_column(const T* S, T l, T (&a)[N]) {
  using P = PackedL<T, N>;
  constexpr int V = P::V;
  constexpr int lo = P::at(J + 1, J);
  constexpr int hi = P::at(N - 1, J);
  constexpr int first = lo / V * V;
#pragma unroll
  for (int pos = first; pos <= hi; pos += V) {
    if (pos >= P::col(J) && pos + V - 1 <= hi) {
      const auto v = *reinterpret_cast<const typename Vec16<T>::type*>(S + pos);
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (pos + e >= lo) {
          const int c = J + 1 + pos + e - lo;
          a[c] = minus_product_conj(a[c], l, vec_get<T>(v, e));
        }
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (pos + e >= lo && pos + e <= hi) {
          const int c = J + 1 + pos + e - lo;
          a[c] = minus_product_conj(a[c], l, S[pos + e]);
        }
    }
  }
}

// Factor one staged matrix. Thread i (0 <= i < N) of the group holds row i; `base` is the
// group's first lane. Returns 0 or the 1-based column of the failing pivot (columns from there on
// keep their staged values in S). Every lane of the warp runs this in step, idle lanes included
// (`active` false: they neither load nor store): shuffles and warp barriers in converged code
// compile to single instructions, where a divergent caller made each one a collective loop.
// `rows_staged_by_column`: S holds upper storage as stage_column_runs leaves it (row i of L from
// PackedL::upper_col(i)); the factor is written over it in the packed layout once every row is
// in registers.
// `Bounded`: the steps stop after the first `steps` columns (a class of a variable batch).
template <class T, int N, bool Bounded = false>
__device__ __forceinline__ int factor_rows(T* S, int i, int base, bool active, bool fast,
                                           bool rows_staged_by_column, int steps = N) {
  using P = PackedL<T, N>;
  using R = RealPartOf<T>;
  constexpr unsigned kWarp = 0xffffffffu;
  T a[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    a[c] = active && c <= i ? S[rows_staged_by_column ? P::upper_col(i) + c : P::col(c) + i - c] : T(0);
  __syncwarp(kWarp);
  int fail = 0;
  static_for<0, N>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if constexpr (Bounded)
      if (j >= steps) return;  // only the identity padding of every matrix in the warp is left
    const T x = shuffle(kWarp, a[j], base + j);
    // A failed group keeps stepping with a harmless pivot; its stores stop at the failing column.
    const bool ok = real_of(x) > R(0);
    if (!ok && fail == 0) fail = j + 1;
    R dj, rj;
    if (fast)
      pivot_fast(ok ? real_of(x) : R(1), dj, rj);
    else
      pivot_ieee(ok ? real_of(x) : R(1), dj, rj);
    const T l = i == j ? T(dj) : a[j] * rj;
    if (active && fail == 0 && i >= j) S[P::col(j) + i - j] = l;
    if constexpr (j + 1 < N) {
      __syncwarp(kWarp);
      if constexpr (std::is_floating_point_v<T>) {
        update_from_column<T, N, j>(S, l, a);
      } else {
        // A complex element is a 16-byte (or 8-byte) read already; a column copy in registers
        // would double the row's registers.
#pragma unroll
        for (int c = j + 1; c < N; ++c) a[c] = minus_product_conj(a[c], l, S[P::col(j) + c - j]);
      }
    }
  });
  return fail;
}

// Registers per thread. Real matrices: caps that keep five blocks of the default size per SM
// (eight up to n = 14, where 64 registers hold a row without spills): occupancy, not spills,
// bounds these kernels (float n = 9 and 10 took 74 registers uncapped, and lost two blocks per
// SM). Complex ones: what the largest block allows.
constexpr int kRealRegisters = 96;
constexpr int kShortRealRegisters = 64;
template <class T, int N>
constexpr int small_kernel_registers() {
  if constexpr (!std::is_floating_point_v<T>) return 65536 / kMaxSmallThreads - 1;
  return N <= 14 ? kShortRealRegisters : kRealRegisters;
}
static_assert(kRealRegisters * kMaxSmallThreads <= 65536,
              "the largest block must fit one SM's registers");
// Ints of the failing-column array of M matrices in shared memory: an even count, so that what
// follows it is 8-byte aligned.
__host__ __device__ constexpr int small_fails_ints(int M) { return (M + 1) / 2 * 2; }

template <class T, int N, bool OutOfPlace, bool Listed>
__device__ __forceinline__ void potrf_small(const BatchDesc<T>& d, const ClassRange& classes) {
  extern __shared__ __align__(16) unsigned char small_smem_raw[];
  T* const smem = reinterpret_cast<T*>(small_smem_raw);
  constexpr int G = 32 / N;  // matrices per warp
  const int M = G * static_cast<int>(blockDim.x / 32);
  const long long k0 = static_cast<long long>(blockIdx.x) * M;
  const long long members = Listed && classes.list ? classes.count[classes.first] : d.batch;
  if (Listed && k0 >= members) return;
  const int count = static_cast<int>(min(static_cast<long long>(M), members - k0));

  int* const fails = reinterpret_cast<int*>(smem + M * PackedL<T, N>::stride);
  // Listed: a variable batch's matrices, found once per block (after the fails).
  auto* const variable = reinterpret_cast<VariableMember<T>*>(fails + small_fails_ints(M));
  if constexpr (Listed) {
    load_variable_members<T, N>(d, classes, k0, M, count, variable);
    __syncthreads();
    stage_variable_runs<T, N, true>(d, smem, variable, count);
  } else if constexpr (OutOfPlace)
    stage_out_of_place<T, N, true>(d, smem, k0, M, count);
  else
    stage<T, N, true>(d, smem, fails, k0, M, count);
  __syncthreads();

  // Lanes past the warp's last group (32 % N of them) step along on group 0's matrix without
  // touching it; a group past the batch end factors its own (unstaged) slot, never written back.
  const int lane = threadIdx.x & 31;
  const int g = lane / N < G ? lane / N : 0;
  const bool in_group = lane < G * N;
  const int m = static_cast<int>(threadIdx.x / 32) * G + g;
  const long long k = m < count ? small_member<Listed>(classes, k0 + m) : -1;
  int nk = -1;
  if constexpr (Listed)
    nk = variable[m].n;  // -1 past count
  else
    nk = m < count ? small_order<T, N>(d, k) : -1;
  const int base = g * N;
  const bool by_column = !OutOfPlace && kColumnRuns<N> && d.staging == Staging::contiguous && d.upper;
  int steps = N;
  if constexpr (Listed) {
    steps = nk > 0 ? nk : 0;
    for (int offset = 16; offset > 0; offset /= 2) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, offset));
  }
  int fail = factor_rows<T, N, Listed>(smem + m * PackedL<T, N>::stride, lane - base, base, in_group,
                                       d.fast, by_column, steps);
  if (fail > nk) fail = 0;  // the identity padding of a smaller matrix cannot fail
  if (in_group && lane == base && nk >= 0) {
    d.info[k] = fail;
    fails[m] = fail;
  }
  __syncthreads();
  if constexpr (Listed)
    stage_variable_runs<T, N, false>(d, smem, variable, count);
  else if constexpr (OutOfPlace)
    stage_out_of_place<T, N, false>(d, smem, k0, M, count);
  else
    stage<T, N, false>(d, smem, fails, k0, M, count);
}

template <class T, int N, bool OutOfPlace>
__global__ void __maxnreg__((small_kernel_registers<T, N>())) potrf_small_kernel(BatchDesc<T> d) {
  potrf_small<T, N, OutOfPlace, false>(d, ClassRange{});
}

template <class T, int N>
__global__ void __maxnreg__((small_kernel_registers<T, N>())) potrf_small_class_kernel(BatchDesc<T> d,
                                                                                      ClassRange classes) {
  potrf_small<T, N, false, true>(d, classes);
}

// Launches kernel with `smem` bytes of dynamic shared memory: above the default 48 KiB (complex
// double matrices near n = 32 in blocks of 256 threads) the kernel is first allowed that much.
template <class... Args>
void launch_with_shared(void (*kernel)(Args...), unsigned blocks, int threads, std::size_t smem,
                        cudaStream_t stream, const Args&... args) {
  constexpr std::size_t kDefaultDynamicShared = 48 * 1024;
  if (smem > kDefaultDynamicShared)
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<blocks, threads, smem, stream>>>(args...);
}

template <class T, int N>
void launch_small_n(BatchDesc<T> d, int threads, cudaStream_t stream) {
  using P = PackedL<T, N>;
  constexpr int G = 32 / N;
  const int M = G * threads / 32;
  // The matrices, then each one's failing column (stage_column_runs).
  const std::size_t smem = static_cast<std::size_t>(M) * (P::stride * sizeof(T) + sizeof(int));
  const bool aligned = reinterpret_cast<std::uintptr_t>(d.A) % 16 == 0;
  constexpr long long NN = static_cast<long long>(N) * N;
  const bool whole_vectors = (M * NN) % P::V == 0;
  d.staging = Staging::element;
  // A tight batch in place is copied by column runs up to kColumnRuns (no alignment needed), with
  // 16-byte vectors otherwise (out of place: the factor's write back).
  const bool tight =
      d.layout == BatchLayout::strided && d.A_array == nullptr && d.lda == N && d.stride == NN;
  if (tight && ((kColumnRuns<N> && d.src == nullptr) || (aligned && whole_vectors)))
    d.staging = Staging::contiguous;
  if (d.layout == BatchLayout::interleaved && aligned && M % P::V == 0)
    d.staging = Staging::interleaved;
  const long long blocks = (static_cast<long long>(d.batch) + M - 1) / M;
  if (d.src != nullptr) {
    // Contiguous in either order: column-major (1, N) or row-major (N, 1).
    const bool src_aligned = reinterpret_cast<std::uintptr_t>(d.src) % 16 == 0;
    const bool packed = (d.src_rs == 1 && d.src_cs == N) || (d.src_rs == N && d.src_cs == 1);
    d.src_staging = src_aligned && packed && d.src_stride == NN && whole_vectors
                        ? Staging::contiguous
                        : Staging::element;
    launch_with_shared(&potrf_small_kernel<T, N, true>, static_cast<unsigned>(blocks), threads, smem, stream, d);
  } else {
    launch_with_shared(&potrf_small_kernel<T, N, false>, static_cast<unsigned>(blocks), threads, smem, stream, d);
  }
  TESSERA_CUDA_CHECK_LAUNCH();
}

// One class of a variable batch (or, with no list, the whole batch in one class): as many blocks as
// the whole batch would take (a class's size is on the device); those past the class's matrices
// return at once.
template <class T, int N>
void launch_small_class(BatchDesc<T> d, const ClassRange& classes, int threads, cudaStream_t stream) {
  constexpr int G = 32 / N;
  const int M = G * threads / 32;
  // The matrices, their failing columns, and where each matrix lies.
  const std::size_t per_matrix = PackedL<T, N>::stride * sizeof(T) + sizeof(VariableMember<T>);
  const std::size_t smem =
      static_cast<std::size_t>(M) * per_matrix + sizeof(int) * static_cast<std::size_t>(small_fails_ints(M));
  d.staging = Staging::element;
  const long long blocks = (static_cast<long long>(d.batch) + M - 1) / M;
  launch_with_shared(&potrf_small_class_kernel<T, N>, static_cast<unsigned>(blocks), threads, smem, stream, d, classes);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
using SmallLauncher = void (*)(BatchDesc<T>, int, cudaStream_t);

template <class T, int... Is>
constexpr std::array<SmallLauncher<T>, sizeof...(Is)> small_launchers(
    std::integer_sequence<int, Is...>) {
  return {&launch_small_n<T, Is + 1>...};
}

int small_threads(const BatchedOptions& opts) {
  const int threads = opts.threads != 0 ? opts.threads : kDefaultSmallThreads;
  if (threads != 32 && threads != 64 && threads != 128 && threads != 256)
    throw InvalidArgument("batched potrf: threads must be 32, 64, 128 or 256 for n <= 32");
  return threads;
}

}  // namespace

template <class T>
void launch_potrf_small(const BatchDesc<T>& desc, int group_n, cudaStream_t stream,
                        const BatchedOptions& opts) {
  static constexpr auto launchers = small_launchers<T>(std::make_integer_sequence<int, 32>{});
  if (group_n < 1 || group_n > 32)
    throw InvalidArgument("batched potrf: the register kernel takes 1 <= n <= 32");
  launchers[group_n - 1](desc, small_threads(opts), stream);
}

template <class T>
void launch_potrf_small_class(const BatchDesc<T>& desc, const ClassRange& classes, int group_n, cudaStream_t stream,
                              const BatchedOptions& opts) {
  const int threads = small_threads(opts);
  if (group_n == 8)
    launch_small_class<T, 8>(desc, classes, threads, stream);
  else if (group_n == 16)
    launch_small_class<T, 16>(desc, classes, threads, stream);
  else if (group_n == 32)
    launch_small_class<T, 32>(desc, classes, threads, stream);
  else
    throw InvalidArgument("batched potrf: a class of a variable batch runs in groups of 8, 16 or 32 threads");
}

#define TESSERA_INSTANTIATE(T)                                                                                  \
  template void launch_potrf_small<DeviceScalar<T>>(const BatchDesc<DeviceScalar<T>>&, int, cudaStream_t,       \
                                                    const BatchedOptions&);                                     \
  template void launch_potrf_small_class<DeviceScalar<T>>(const BatchDesc<DeviceScalar<T>>&, const ClassRange&,   \
                                                          int, cudaStream_t, const BatchedOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda::batched_detail
