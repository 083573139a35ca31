// Batched Cholesky for n > 32 (correct for any n): one thread block per matrix, left-looking
// over panels of NB columns.
//
// For panel [p0, p0+NB) the block walks the rows below p0 in chunks of NT*R rows. Each thread
// keeps R rows x NB columns of the chunk in registers and
//   1. subtracts L(rows, 0:p0) * L(p0:p0+NB, 0:p0)^T, streaming the previous columns KB at a
//      time: its own rows' values straight from global memory (coalesced across the block), the
//      NB rows of the diagonal block through a double-buffered shared-memory tile that every
//      thread reads by broadcast;
//   2. factors the panel: in the first chunk (which holds the diagonal block) column by column
//      with the pivot and each finished column published in shared memory; later chunks reuse
//      the finished diagonal block (a triangular solve, no barriers);
//   3. writes the chunk back.
// Only the referenced triangle is read or written. Upper storage is read as its transpose
// (L(i, j) = U(j, i)), which changes the strides: a row of L is then contiguous in memory and a
// column is not, so the loads of step 1, one row per thread, would touch a cache line per thread.
// The kernels for upper storage (UpperRows) therefore move step 1's own rows and (in most
// shapes) the panel rows through shared memory, read and written with consecutive threads on
// consecutive columns (a warp touches whole lines), and fetch the diagonal rows the same way.
// Lower storage compiles as before.
//
// Out of place (BatchDesc::src set; a separate instantiation, the in-place one unchanged) the
// panels are loaded from the source through its strides (step 1's previous columns are already
// the output's), and the block ends by writing zeros to the output's strict opposite triangle;
// after a failure it first copies the part of the triangle it never stored from the source, so
// that the output holds what the in-place kernel leaves in A.
//
// Complex (Hermitian) matrices run the same code with conjugates where L^H enters: the update
// subtracts L(i, k) conj(L(c, k)), and upper storage is read and written as L = U^H.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_pipeline.h>

#include "cuda/batched_common.cuh"
#include "cuda/batched_static_for.cuh"
#include "cuda/check.hpp"
#include "cuda/tile_common.cuh"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::kernels::cuda::batched_detail {
namespace {

// NB: panel width; NT: threads; R: rows per thread; KB: previous columns per update step.
template <class T, int NB, int NT, int R, int KB>
struct PanelCfg {
  static constexpr int V = Vec16<T>::width;
  static constexpr int DS = (NB * KB + NT - 1) / NT;  // diagonal-tile elements each thread loads
  static constexpr int MR = NT * R;                   // rows per chunk
  static_assert(NT >= NB, "the diagonal block's rows must belong to distinct threads");
  static_assert(NB % V == 0, "panel rows are read as 16-byte vectors");
};

// Upper storage (UpperRows): one buffer holding in turn the chunk's panel rows (while they are
// loaded and stored: panel(m)[c] = L(row0 + m, p0 + c)) and step 1's own rows, double-buffered like
// D (own(b, m)[k] = L(row0 + m, q + k)). Every row is padded by one 16-byte vector, so that
// 16-byte reads of a row by consecutive threads meet no bank conflicts. Nothing for lower storage.
template <class T, int NB, int MR, int KB, bool Staged>
struct UpperStage {};
template <class T, int NB, int MR, int KB>
struct UpperStage<T, NB, MR, KB, true> {
  static constexpr int kOwnStride = KB + Vec16<T>::width;
  static constexpr int kPanelStride = NB + Vec16<T>::width;
  static constexpr int kSize = 2 * MR * kOwnStride > MR * kPanelStride ? 2 * MR * kOwnStride : MR * kPanelStride;
  alignas(16) T stage[kSize];
  __device__ __forceinline__ T* own(int b, int m) { return stage + (b * MR + m) * kOwnStride; }
  __device__ __forceinline__ T* panel(int m) { return stage + m * kPanelStride; }
};

// The diagonal rows' tile D; in the upper kernels each of its rows is padded by one 16-byte vector
// (they are written with consecutive threads on consecutive k, a row apart).
template <class T, int NB, int KB, int MR = 0, bool Staged = false>
struct PanelShared : UpperStage<T, NB, MR, KB, Staged> {
  alignas(16) T D[2][KB][NB + (Staged ? Vec16<T>::width : 0)];  // D[b][k][c] = L(p0 + c, q + k)
  alignas(16) T Ld[NB][NB];    // Ld[j][c] = L(p0 + c, p0 + j): finished diagonal block
  RealPartOf<T> piv_r[NB];     // 1 / L(p0 + j, p0 + j)
  RealPartOf<T> piv_d[NB];     // L(p0 + j, p0 + j)
  int fail;
};

// Lower-factor view of one matrix: L(i, j) = p[i * rs + j * cs] (T const for a source), or its
// conjugate where the view reads upper storage of a complex matrix (L = U^H).
template <class T>
struct LowerView {
  using Value = std::remove_const_t<T>;
  T* p;
  long long rs, cs;
  int n;
  bool conjugate;
  __device__ __forceinline__ Value get(int i, int j) const { return conj_if(conjugate, p[i * rs + j * cs]); }
  __device__ __forceinline__ void set(int i, int j, Value v) const { p[i * rs + j * cs] = conj_if(conjugate, v); }
};

// out[c] = row[c] for c in (J, NB), 16-byte reads (row is 16-byte aligned, NB a multiple of V).
template <class T, int NB, int J>
__device__ __forceinline__ void read_tail(const T* row, T (&out)[NB]) {
  constexpr int V = Vec16<T>::width;
#pragma unroll
  for (int pos = (J + 1) / V * V; pos < NB; pos += V) {
    const auto v = *reinterpret_cast<const typename Vec16<T>::type*>(row + pos);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (pos + e > J) out[pos + e] = vec_get<T>(v, e);
  }
}

template <class T, int NB, int NT, int R, class View>
__device__ __forceinline__ void load_panel(const View& L, int row0, int p0, int nbp,
                                           T (&a)[R][NB]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = row0 + static_cast<int>(threadIdx.x) + r * NT;
#pragma unroll
    for (int c = 0; c < NB; ++c)
      a[r][c] = (i < L.n && c < nbp && i >= p0 + c) ? L.get(i, p0 + c) : T(0);
  }
}

// Out of place, a source whose rows hold the panel's elements contiguously (S.cs == 1, as a
// C-ordered lower or a Fortran-ordered upper batch has) and 16-byte aligned: each thread reads its
// row's panel elements as 16-byte vectors instead of one element per load (a warp's loads touch
// one row per thread, so every load instruction costs a sector request per thread). Vectors wholly
// above the diagonal are not read; elements of a vector above it (the other triangle) are dropped.
template <class Scalar>
__device__ __forceinline__ bool rows_are_vectors(const LowerView<Scalar>& S) {
  constexpr int V = Vec16<std::remove_const_t<Scalar>>::width;
  return S.cs == 1 && S.rs % V == 0 && reinterpret_cast<std::uintptr_t>(S.p) % 16 == 0;
}

// A whole panel (NB columns) only.
template <class T, int NB, int NT, int R, class Scalar>
__device__ __forceinline__ void load_panel_rows(const LowerView<Scalar>& S, int row0, int p0,
                                                T (&a)[R][NB]) {
  using Vt = typename Vec16<T>::type;
  constexpr int V = Vec16<T>::width;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = row0 + static_cast<int>(threadIdx.x) + r * NT;
    const bool row_in = i < S.n;
    const Vt* const row = reinterpret_cast<const Vt*>(S.p + (row_in ? i * S.rs + p0 : 0));
#pragma unroll
    for (int c0 = 0; c0 < NB; c0 += V) {
      Vt v{};
      if (row_in && i >= p0 + c0) v = row[c0 / V];
#pragma unroll
      for (int e = 0; e < V; ++e)
        a[r][c0 + e] = i >= p0 + c0 + e ? conj_if(S.conjugate, vec_get<T>(v, e)) : T(0);
    }
  }
}

template <class T, int NB, int NT, int R>
__device__ __forceinline__ void store_panel(const LowerView<T>& L, int row0, int p0, int nbp,
                                            const T (&a)[R][NB]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = row0 + static_cast<int>(threadIdx.x) + r * NT;
#pragma unroll
    for (int c = 0; c < NB; ++c)
      if (i < L.n && c < nbp && i >= p0 + c) L.set(i, p0 + c, a[r][c]);
  }
}

// Upper storage: the chunk's panel rows through shared memory, read with consecutive threads on
// consecutive columns (L's rows are contiguous), then each thread takes its rows. Every load is
// issued before the first store to shared memory: a load through a generic pointer cannot move
// past such a store (it might alias it), so stores between them would wait for each load in
// turn. Ends with a barrier: the buffer is step 1's next.
template <class T, int NB, int NT, int R, class Shared>
__device__ __forceinline__ void load_panel_staged(const LowerView<T>& L, int row0, int p0, int nbp, T (&a)[R][NB],
                                                  Shared& sh) {
  constexpr int S = NB * R;  // elements each thread moves
  const int t = threadIdx.x;
  T v[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int e = t + s * NT;
    const int m = e / NB, c = e % NB;
    const int i = row0 + m;
    v[s] = (i < L.n && c < nbp && i >= p0 + c) ? L.get(i, p0 + c) : T(0);
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int e = t + s * NT;
    sh.panel(e / NB)[e % NB] = v[s];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) read_tail<T, NB, -1>(sh.panel(t + r * NT), a[r]);
  __syncthreads();
}

// Upper storage: the chunk's panel rows back through shared memory, written with consecutive
// threads on consecutive columns; only the triangle is written.
template <class T, int NB, int NT, int R, class Shared>
__device__ __forceinline__ void store_panel_staged(const LowerView<T>& L, int row0, int p0, int nbp,
                                                   const T (&a)[R][NB], Shared& sh) {
  using Vt = typename Vec16<T>::type;
  constexpr int V = Vec16<T>::width;
  constexpr int MR = NT * R;
  const int t = threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c0 = 0; c0 < NB; c0 += V) {
      T v[V];
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] = a[r][c0 + e];
      reinterpret_cast<Vt*>(sh.panel(t + r * NT))[c0 / V] = vec_make(v);
    }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < MR * NB / NT; ++s) {
    const int e = t + s * NT;
    const int m = e / NB, c = e % NB;
    const int i = row0 + m;
    if (i < L.n && c < nbp && i >= p0 + c) L.set(i, p0 + c, sh.panel(m)[c]);
  }
}

// One update step: a -= own * D^H, own[r][k] = L(row r of the chunk, q + k) and D[k][c] =
// L(p0 + c, q + k), the diagonal rows' tile of the step in shared memory.
template <class T, int NB, int NT, int R, int KB, class DiagonalRows>
__device__ __forceinline__ void subtract_step(int row0, int n, const T (&own)[R][KB], const DiagonalRows& D,
                                              T (&a)[R][NB]) {
#pragma unroll
  for (int kk = 0; kk < KB; ++kk) {
    T dv[NB];
    read_tail<T, NB, -1>(D[kk], dv);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (row0 + r * NT >= n) continue;  // whole row block below the matrix
#pragma unroll
      for (int c = 0; c < NB; ++c) a[r][c] = minus_product_conj(a[r][c], own[r][kk], dv[c]);
    }
  }
}

// store_panel for a whole panel of a view whose rows are vectors (rows_are_vectors): a vector
// wholly in the triangle is one 16-byte store, one the diagonal crosses is stored element by
// element (the other triangle is never written).
template <class T, int NB, int NT, int R>
__device__ __forceinline__ void store_panel_rows(const LowerView<T>& L, int row0, int p0, const T (&a)[R][NB]) {
  using Vt = typename Vec16<T>::type;
  constexpr int V = Vec16<T>::width;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = row0 + static_cast<int>(threadIdx.x) + r * NT;
    if (i >= L.n) continue;
    T* const row = L.p + i * L.rs + p0;
#pragma unroll
    for (int c0 = 0; c0 < NB; c0 += V) {
      if (i >= p0 + c0 + V - 1) {
        T v[V];
#pragma unroll
        for (int e = 0; e < V; ++e) v[e] = conj_if(L.conjugate, a[r][c0 + e]);
        reinterpret_cast<Vt*>(row)[c0 / V] = vec_make(v);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (i >= p0 + c0 + e) row[c0 + e] = conj_if(L.conjugate, a[r][c0 + e]);
      }
    }
  }
}

// Upper storage: update_panel with the own rows copied to shared memory (UpperStage) by cp.async,
// 16 bytes at a time with consecutive threads on consecutive addresses, straight from memory (no
// registers held across the step's products, no store instructions), and the diagonal rows fetched
// along L's rows; rows not 16-byte aligned (`vectors` false) are copied element by element. KB
// divides NB (every compiled upper shape), so that no step reaches past column p0.
template <class T, int NB, int NT, int R, int KB, class Shared>
__device__ __forceinline__ void update_panel_upper(const LowerView<T>& L, int row0, int p0, T (&a)[R][NB],
                                                   Shared& sh, bool vectors) {
  constexpr int V = Vec16<T>::width;
  constexpr int DS = PanelCfg<T, NB, NT, R, KB>::DS;
  constexpr int MR = PanelCfg<T, NB, NT, R, KB>::MR;
  constexpr int CPR = KB / V;                      // 16-byte chunks per own row
  constexpr int OC = (MR * CPR + NT - 1) / NT;     // chunks each thread copies
  constexpr int OS = (MR * KB + NT - 1) / NT;      // elements each thread copies, unaligned
  static_assert(NB % KB == 0 && KB % V == 0, "own rows are copied in whole chunks, KB columns at a time");
  const int t = threadIdx.x;
  const auto copy_own = [&](int buf, int q) {
    if (vectors) {
#pragma unroll
      for (int s = 0; s < OC; ++s) {
        const int e = t + s * NT;
        if (e < MR * CPR) {
          const int m = e / CPR, chunk = e % CPR;
          const int i = row0 + m;
          const bool in = i < L.n;  // rows past the matrix: zeros, nothing read
          __pipeline_memcpy_async(sh.own(buf, m) + chunk * V, in ? L.p + i * L.rs + q + chunk * V : L.p, 16,
                                  in ? 0 : 16);
        }
      }
      __pipeline_commit();
    } else {
#pragma unroll
      for (int s = 0; s < OS; ++s) {
        const int e = t + s * NT;
        const int m = e / KB, kk = e % KB;
        const int i = row0 + m;
        if (e < MR * KB) sh.own(buf, m)[kk] = i < L.n ? L.p[i * L.rs + (q + kk) * L.cs] : T(0);
      }
    }
  };
  const auto fetch_diagonal = [&](int q, T(&dreg)[DS]) {
#pragma unroll
    for (int s = 0; s < DS; ++s) {
      const int e = t + s * NT;
      const int c = e / KB, kk = e % KB;
      dreg[s] = (e < NB * KB && p0 + c < L.n) ? L.get(p0 + c, q + kk) : T(0);
    }
  };
  const auto publish_diagonal = [&](int buf, const T(&dreg)[DS]) {
#pragma unroll
    for (int s = 0; s < DS; ++s) {
      const int e = t + s * NT;
      if (e < NB * KB) sh.D[buf][e % KB][e / KB] = dreg[s];
    }
  };

  T dreg[DS];
  copy_own(0, 0);
  fetch_diagonal(0, dreg);
  publish_diagonal(0, dreg);
  __pipeline_wait_prior(0);
  __syncthreads();
  const int steps = p0 / KB;
  for (int step = 0; step < steps; ++step) {
    const int buf = step & 1;
    const bool more = step + 1 < steps;
    if (more) {  // the buffers' other half was last read in the previous step, before its barrier
      copy_own(buf ^ 1, (step + 1) * KB);
      fetch_diagonal((step + 1) * KB, dreg);
    }
    T own[R][KB];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      read_tail<T, KB, -1>(sh.own(buf, t + r * NT), own[r]);
#pragma unroll
      for (int kk = 0; kk < KB; ++kk) own[r][kk] = conj_if(L.conjugate, own[r][kk]);
    }
    subtract_step<T, NB, NT, R, KB>(row0, L.n, own, sh.D[buf], a);
    if (more) publish_diagonal(buf ^ 1, dreg);
    __pipeline_wait_prior(0);
    __syncthreads();
  }
}

// a -= L(rows, 0:p0) * L(p0:p0+NB, 0:p0)^H, KB previous columns per step (the last step is
// padded with zeros when KB does not divide p0).
template <class T, int NB, int NT, int R, int KB, class Shared>
__device__ __forceinline__ void update_panel(const LowerView<T>& L, int row0, int p0,
                                             T (&a)[R][NB], Shared& sh) {
  constexpr int DS = PanelCfg<T, NB, NT, R, KB>::DS;
  const int t = threadIdx.x;
  const auto fetch = [&](int q, T(&own)[R][KB], T(&dreg)[DS]) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = row0 + t + r * NT;
#pragma unroll
      for (int kk = 0; kk < KB; ++kk) own[r][kk] = (i < L.n && q + kk < p0) ? L.get(i, q + kk) : T(0);
    }
#pragma unroll
    for (int s = 0; s < DS; ++s) {
      const int e = t + s * NT;
      const int c = e % NB, kk = e / NB;
      dreg[s] = (e < NB * KB && p0 + c < L.n && q + kk < p0) ? L.get(p0 + c, q + kk) : T(0);
    }
  };
  const auto publish = [&](int buf, const T(&dreg)[DS]) {
#pragma unroll
    for (int s = 0; s < DS; ++s) {
      const int e = t + s * NT;
      if (e < NB * KB) sh.D[buf][e / NB][e % NB] = dreg[s];
    }
  };

  T own[R][KB], dreg[DS];
  fetch(0, own, dreg);
  publish(0, dreg);
  __syncthreads();
  const int steps = (p0 + KB - 1) / KB;
  for (int step = 0; step < steps; ++step) {
    const int buf = step & 1;
    const bool more = step + 1 < steps;
    T own_next[R][KB], dreg_next[DS];
    if (more) fetch((step + 1) * KB, own_next, dreg_next);
    subtract_step<T, NB, NT, R, KB>(row0, L.n, own, sh.D[buf], a);
    if (more) {
      publish(buf ^ 1, dreg_next);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int kk = 0; kk < KB; ++kk) own[r][kk] = own_next[r][kk];
    }
    __syncthreads();
  }
}

// a(:, c) -= a(:, J) conj(L(p0 + c, p0 + J)) for the columns c > J of the panel; lj is column J of the
// finished diagonal block (sh.Ld[J]).
template <class T, int NB, int R, int J>
__device__ __forceinline__ void eliminate_column(T (&a)[R][NB], const T* lj) {
  if constexpr (J + 1 < NB) {
    T lv[NB];
    read_tail<T, NB, J>(lj, lv);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = J + 1; c < NB; ++c) a[r][c] = minus_product_conj(a[r][c], a[r][J], lv[c]);
  }
}

// First chunk of a panel: factor the diagonal block and scale the rows below it.
// Returns 0 or the 1-based global column of the failing pivot.
template <class T, int NB, int NT, int R, int KB, class Shared>
__device__ __forceinline__ int factor_diagonal(int p0, int nbp, T (&a)[R][NB], Shared& sh, bool fast) {
  const int t = threadIdx.x;
  int fail = 0;
  static_for<0, NB>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (fail || j >= nbp) return;
    if (t == j) {
      RealPartOf<T> d, r;
      if (pivot(a[0][j], fast, d, r)) {
        sh.piv_d[j] = d;
        sh.piv_r[j] = r;
      } else {
        sh.fail = p0 + j + 1;
      }
    }
    __syncthreads();
    if (sh.fail) {
      fail = sh.fail;
      return;
    }
    const RealPartOf<T> d = sh.piv_d[j], rinv = sh.piv_r[j];
#pragma unroll
    for (int r = 0; r < R; ++r) a[r][j] = (r == 0 && t == j) ? T(d) : a[r][j] * rinv;
    if (t < NB) sh.Ld[j][t] = a[0][j];
    __syncthreads();
    eliminate_column<T, NB, R, j>(a, sh.Ld[j]);
  });
  return fail;
}

// Later chunks: rows entirely below the diagonal block, solved against the finished block.
template <class T, int NB, int NT, int R, int KB, class Shared>
__device__ __forceinline__ void solve_below(int nbp, T (&a)[R][NB], const Shared& sh) {
  static_for<0, NB>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (j >= nbp) return;
    const RealPartOf<T> rinv = sh.piv_r[j];
#pragma unroll
    for (int r = 0; r < R; ++r) a[r][j] *= rinv;
    eliminate_column<T, NB, R, j>(a, sh.Ld[j]);
  });
}

// Out of place, after a failure in the panel at p0 whose first chunk (rows below p0 + MR) was
// stored: the rest of the triangle from the source (what the in-place kernel leaves untouched).
template <class T>
__device__ void copy_unstored(const LowerView<const T>& S, const LowerView<T>& L, int p0, int nbp,
                              int chunk_rows) {
  for (int j = p0; j < L.n; ++j) {
    const int first = j < p0 + nbp ? max(j, p0 + chunk_rows) : j;
    for (int i = first + static_cast<int>(threadIdx.x); i < L.n; i += blockDim.x) L.set(i, j, S.get(i, j));
  }
}

// Out of place: zeros in the strict opposite triangle of the output, one stored column at a time
// (rows fastest across the block, so the writes are coalesced).
template <class T>
__device__ void zero_opposite(T* p, int ld, int n, bool upper) {
  for (int c = 0; c < n; ++c) {
    const int begin = upper ? c + 1 : 0;
    const int end = upper ? n : c;
    for (int r = begin + static_cast<int>(threadIdx.x); r < end; r += blockDim.x)
      p[r + static_cast<long long>(c) * ld] = T(0);
  }
}

// Upper storage: the panel rows through shared memory (load_panel_staged), except in the
// (16, 64) shape in double, where each thread's 16-byte row vectors measured faster (in float the
// staged rows were the faster there; docs/kernels-batched.md, "Upper storage"); rows not so
// aligned are read element by element.
template <class T, int NB, int NT>
constexpr bool kStagedPanel = !(NB == 16 && NT == 64 && sizeof(RealPartOf<T>) == 8);

// Upper storage: the blocks per SM the compiler must leave registers for (128 per thread), in
// every shape but the widest, where the cap spilled; with the largest shared-memory carveout
// (launch_shape), as many blocks fit as in the lower kernels, which the uncapped kernels' extra
// registers had cost (docs/kernels-batched.md, "Upper storage").
template <bool UpperRows, int NB, int NT>
constexpr int kUpperMinBlocks = UpperRows && !(NB == 32 && NT == 64) ? 65536 / (128 * NT) : 0;

template <class T, int NB, int NT, int R, int KB, bool OutOfPlace, bool UpperRows>
__global__ void __launch_bounds__(NT, (kUpperMinBlocks<UpperRows, NB, NT>))
    potrf_panel_kernel(BatchDesc<T> d, int min_n, ClassRange classes, PanelColumns columns) {
  using C = PanelCfg<T, NB, NT, R, KB>;
  constexpr bool staged_panel = UpperRows && kStagedPanel<T, NB, NT>;
  __shared__ PanelShared<T, NB, KB, C::MR, UpperRows> sh;
  const int k = static_cast<int>(classes.list ? classes.member(blockIdx.x) : blockIdx.x);
  if (k < 0) return;  // past the classes' matrices
  const StoredMatrix<T> sm = stored_matrix(d, k);
  if (sm.n <= min_n) return;  // left to the small kernel (variable batches)
  const LowerView<T> L{sm.p, d.upper ? sm.cs : sm.rs, d.upper ? sm.rs : sm.cs, sm.n, d.upper};
  const int n = sm.n;
  if (columns.first > 0 && d.info[k] != 0) return;  // failed in an earlier block of columns
  const int factored = columns.count > 0 ? min(n, columns.count) : n;
  if (threadIdx.x == 0) sh.fail = 0;
  bool rows = false;  // upper storage: L's rows as 16-byte vectors (the own rows, unstaged panels)
  if constexpr (UpperRows) rows = rows_are_vectors(L);
  bool source_rows = false;  // out of place: the source's rows read as 16-byte vectors
  if constexpr (OutOfPlace) {
    source_rows = rows_are_vectors(LowerView<const T>{
        source_matrix(d, k), d.upper ? d.src_cs : d.src_rs, d.upper ? d.src_rs : d.src_cs, n, d.upper});
  }

  for (int p0 = 0; p0 < factored; p0 += NB) {
    const int nbp = min(NB, factored - p0);
    for (int row0 = p0; row0 < n; row0 += C::MR) {
      T a[R][NB];
      if constexpr (OutOfPlace) {
        const LowerView<const T> S{source_matrix(d, k), d.upper ? d.src_cs : d.src_rs,
                                   d.upper ? d.src_rs : d.src_cs, n, d.upper};
        if (source_rows && nbp == NB)
          load_panel_rows<T, NB, NT, R>(S, row0, p0, a);
        else
          load_panel<T, NB, NT, R>(S, row0, p0, nbp, a);
      } else if constexpr (staged_panel) {
        load_panel_staged<T, NB, NT, R>(L, row0, p0, nbp, a, sh);
      } else if (rows && nbp == NB) {
        load_panel_rows<T, NB, NT, R>(L, row0, p0, a);
      } else {
        load_panel<T, NB, NT, R>(L, row0, p0, nbp, a);
      }
      if (p0 > 0) {
        if constexpr (UpperRows)
          update_panel_upper<T, NB, NT, R, KB>(L, row0, p0, a, sh, rows);
        else
          update_panel<T, NB, NT, R, KB>(L, row0, p0, a, sh);
      }
      int fail = 0;
      if (row0 == p0)
        fail = factor_diagonal<T, NB, NT, R, KB>(p0, nbp, a, sh, d.fast);
      else
        solve_below<T, NB, NT, R, KB>(nbp, a, sh);
      if constexpr (staged_panel)
        store_panel_staged<T, NB, NT, R>(L, row0, p0, nbp, a, sh);
      else if (rows && nbp == NB)
        store_panel_rows<T, NB, NT, R>(L, row0, p0, a);
      else
        store_panel<T, NB, NT, R>(L, row0, p0, nbp, a);
      if (fail) {
        if (threadIdx.x == 0) d.info[k] = columns.first + fail;
        if constexpr (OutOfPlace) {
          const LowerView<const T> S{source_matrix(d, k), d.upper ? d.src_cs : d.src_rs,
                                     d.upper ? d.src_rs : d.src_cs, n, d.upper};
          copy_unstored(S, L, p0, nbp, C::MR);
          zero_opposite(sm.p, d.lda, n, d.upper);
        }
        return;
      }
      __syncthreads();  // shared tiles are reused; the next panel reads what was just stored
    }
  }
  if (threadIdx.x == 0) d.info[k] = 0;
  if constexpr (OutOfPlace) zero_opposite(sm.p, d.lda, n, d.upper);
}

template <class T, int NB, int NT, int R, int KB, bool OutOfPlace, bool UpperRows = false>
void launch_shape(const BatchDesc<T>& d, int min_n, const ClassRange& classes, const PanelColumns& columns,
                  cudaStream_t stream) {
  const auto kernel = potrf_panel_kernel<T, NB, NT, R, KB, OutOfPlace, UpperRows>;
  if constexpr (kUpperMinBlocks<UpperRows, NB, NT> > 0)  // their shared memory for that many blocks
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
  kernel<<<static_cast<unsigned>(d.batch), NT, 0, stream>>>(d, min_n, classes, columns);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template <class T>
using PanelLauncher = void (*)(const BatchDesc<T>&, int, const ClassRange&, const PanelColumns&, cudaStream_t);

// One scalar type's launchers of a shape; null where that form is not compiled in. The upper
// forms (UpperRows) serve upper storage where they are compiled in.
template <class T>
struct ShapeLaunchers {
  PanelLauncher<T> in_place = nullptr;
  PanelLauncher<T> out_of_place = nullptr;
  PanelLauncher<T> upper_in_place = nullptr;
  PanelLauncher<T> upper_out_of_place = nullptr;
};

// A shape's launchers per scalar type. Every shape runs in place for the real types (the tuning
// sweep measures them all); the out-of-place form, and the complex types, only in the shapes
// potrf_batched_default_shape picks (the complex sweep behind those picks had every shape compiled;
// they stay out to keep the build short).
struct ShapeEntry {
  PanelShape shape;
  ShapeLaunchers<float> real_single;
  ShapeLaunchers<double> real_double;
  ShapeLaunchers<DeviceComplex<float>> complex_single;
  ShapeLaunchers<DeviceComplex<double>> complex_double;
};

template <class T>
const ShapeLaunchers<T>& launchers_of(const ShapeEntry& e) {
  if constexpr (std::is_same_v<T, float>) return e.real_single;
  else if constexpr (std::is_same_v<T, double>) return e.real_double;
  else if constexpr (std::is_same_v<T, DeviceComplex<float>>) return e.complex_single;
  else return e.complex_double;
}

template <int NB, int NT, int R, int KB>
constexpr ShapeEntry shape_entry() {
  return {{NB, NT, R, KB},
          {&launch_shape<float, NB, NT, R, KB, false>},
          {&launch_shape<double, NB, NT, R, KB, false>},
          {},
          {}};
}

template <class T, int NB, int NT, int R, int KB>
constexpr ShapeLaunchers<T> both_forms() {
  return {&launch_shape<T, NB, NT, R, KB, false>, &launch_shape<T, NB, NT, R, KB, true>};
}

// The real types' default shapes: both forms for each triangle.
template <class T, int NB, int NT, int R, int KB>
constexpr ShapeLaunchers<T> all_forms() {
  return {&launch_shape<T, NB, NT, R, KB, false>, &launch_shape<T, NB, NT, R, KB, true>,
          &launch_shape<T, NB, NT, R, KB, false, true>, &launch_shape<T, NB, NT, R, KB, true, true>};
}

// A shape potrf_batched_default_shape picks for the real types and, where it picks the shape for
// them too, the complex ones: in place and out of place for those.
template <int NB, int NT, int R, int KB, bool Complex = false>
constexpr ShapeEntry default_shape_entry() {
  if constexpr (Complex)
    return {{NB, NT, R, KB},
            all_forms<float, NB, NT, R, KB>(),
            all_forms<double, NB, NT, R, KB>(),
            both_forms<DeviceComplex<float>, NB, NT, R, KB>(),
            both_forms<DeviceComplex<double>, NB, NT, R, KB>()};
  else
    return {{NB, NT, R, KB}, all_forms<float, NB, NT, R, KB>(), all_forms<double, NB, NT, R, KB>(), {}, {}};
}

// Every compiled shape; the tuning sweep in bench_batched_kernels measures them all.
constexpr ShapeEntry kShapeTable[] = {
    default_shape_entry<8, 32, 1, 8, true>(),   shape_entry<8, 32, 1, 16>(),
    shape_entry<8, 32, 2, 8>(),           shape_entry<8, 64, 1, 8>(),
    shape_entry<8, 64, 1, 16>(),          default_shape_entry<16, 32, 1, 8>(),
    shape_entry<16, 32, 1, 16>(),         shape_entry<16, 32, 2, 4>(),
    default_shape_entry<16, 64, 1, 8, true>(),  shape_entry<16, 64, 1, 16>(),
    shape_entry<16, 64, 2, 4>(),          shape_entry<16, 128, 1, 8>(),
    shape_entry<32, 32, 1, 4>(),          shape_entry<32, 64, 1, 4>(),
    default_shape_entry<32, 64, 1, 8>(),  shape_entry<32, 128, 1, 4>(),
};
constexpr int kShapeCount = sizeof(kShapeTable) / sizeof(kShapeTable[0]);

const PanelShape* shape_list() {
  static const auto shapes = [] {
    std::array<PanelShape, kShapeCount> s{};
    for (int i = 0; i < kShapeCount; ++i) s[i] = kShapeTable[i].shape;
    return s;
  }();
  return shapes.data();
}

const ShapeEntry& find_shape(const PanelShape& s) {
  for (const ShapeEntry& e : kShapeTable)
    if (e.shape.panel_width == s.panel_width && e.shape.threads == s.threads &&
        e.shape.rows_per_thread == s.rows_per_thread && e.shape.update_width == s.update_width)
      return e;
  throw InvalidArgument("batched potrf: panel shape (" + std::to_string(s.panel_width) + ", " +
                        std::to_string(s.threads) + ", " + std::to_string(s.rows_per_thread) +
                        ", " + std::to_string(s.update_width) + ") is not compiled in");
}

}  // namespace

// The launcher of `shape` (with the overrides of `opts`) in the form desc asks for.
template <class T>
PanelLauncher<T> shape_launcher(const BatchDesc<T>& desc, PanelShape shape, const BatchedOptions& opts) {
  if (opts.panel_width) shape.panel_width = opts.panel_width;
  if (opts.threads) shape.threads = opts.threads;
  if (opts.rows_per_thread) shape.rows_per_thread = opts.rows_per_thread;
  if (opts.update_width) shape.update_width = opts.update_width;
  const ShapeLaunchers<T>& forms = launchers_of<T>(find_shape(shape));
  PanelLauncher<T> launch = desc.src ? forms.out_of_place : forms.in_place;
  if (desc.upper && opts.upper_rows) {
    const PanelLauncher<T> upper = desc.src ? forms.upper_out_of_place : forms.upper_in_place;
    if (upper) launch = upper;
  }
  if (launch == nullptr)
    throw InvalidArgument(
        "batched potrf: the out-of-place form and complex matrices run the built-in panel shapes only");
  return launch;
}

template <class T>
void launch_potrf_panel(const BatchDesc<T>& desc, int shape_n, int min_n, cudaStream_t stream,
                        const BatchedOptions& opts, const ClassRange& classes) {
  const PanelShape shape = potrf_batched_default_shape(shape_n, static_cast<int>(sizeof(RealPartOf<T>)),
                                                       !std::is_floating_point_v<T>, desc.batch,
                                                       cuda::detail::device_sm_count());
  shape_launcher(desc, shape, opts)(desc, min_n, classes, {}, stream);
}

template <class T>
void launch_potrf_panel_columns(const BatchDesc<T>& desc, cudaStream_t stream, const BatchedOptions& opts,
                                const PanelColumns& columns) {
  const int count = columns.count > 0 ? std::min(columns.count, desc.n) : desc.n;
  const int element_bytes = static_cast<int>(sizeof(RealPartOf<T>));
  const bool complex = !std::is_floating_point_v<T>;
  const int sm_count = cuda::detail::device_sm_count();
  const PanelShape shape =
      opts.columns_shape_table
          ? potrf_batched_columns_shape(desc.n, count, element_bytes, complex, desc.upper, desc.batch, sm_count)
          : potrf_batched_default_shape(desc.n, element_bytes, complex, desc.batch, sm_count);
  shape_launcher(desc, shape, opts)(desc, 0, {}, columns, stream);
}

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template void launch_potrf_panel<DeviceScalar<T>>(const BatchDesc<DeviceScalar<T>>&, int, int, cudaStream_t,    \
                                                    const BatchedOptions&, const ClassRange&);                    \
  template void launch_potrf_panel_columns<DeviceScalar<T>>(const BatchDesc<DeviceScalar<T>>&, cudaStream_t,      \
                                                            const BatchedOptions&, const PanelColumns&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels::cuda::batched_detail

namespace tessera::kernels::cuda {

int potrf_batched_panel_shapes(const PanelShape** shapes) {
  if (shapes) *shapes = batched_detail::shape_list();
  return batched_detail::kShapeCount;
}

// Built-in shape per order and precision: the fastest shape of the tuning sweep
// (bench_batched_kernels --tune, H100; see docs/kernels-batched.md). Small blocks win: the
// kernel is bound by the latency of its barriers and loads, so more resident matrices per SM
// matter more than wider blocks. A batch of at most kFewMatricesPerSm matrices per SM leaves
// most SMs with one block or none: there the widest compiled block wins instead, its matrix
// factored by more threads at once (the same sweep at batch 1 to 2 per SM, H200).
PanelShape potrf_batched_default_shape(int n, int element_bytes, bool complex, long long batch, int sm_count) {
  const bool single = element_bytes == 4;
  const bool few = batch > 0 && batch <= static_cast<long long>(kFewMatricesPerSm) * sm_count;
  // Complex types (bench_batched_complex --tune, H200): narrow panels up to the middle orders, a
  // complex element taking the registers of two real ones; the wider of their two shapes for few
  // matrices from order 48.
  if (complex) return n > 192 || (few && n >= 48) ? PanelShape{16, 64, 1, 8} : PanelShape{8, 32, 1, 8};
  if (few) return n < 64 ? PanelShape{16, 64, 1, 8} : PanelShape{32, 64, 1, 8};
  if (n <= 40) return {8, 32, 1, 8};
  if (n <= (single ? 160 : 200)) return {16, 32, 1, 8};
  if (n <= (single ? 224 : 320)) return {16, 64, 1, 8};
  return {32, 64, 1, 8};
}

}  // namespace tessera::kernels::cuda
