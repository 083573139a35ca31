// Pieces shared by the batched Cholesky kernels: how a kernel finds matrix k of a batch, the
// pivot arithmetic (IEEE or fast), and the internal launchers the public entry points dispatch to.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/batched_kernels.hpp"
#include "cuda/batched_scalar.cuh"

namespace tessera::kernels::cuda::batched_detail {

enum class BatchLayout { strided, interleaved, variable };

// How the register kernel moves its matrices between global and shared memory.
enum class Staging {
  element,      // one element per access (any layout)
  contiguous,   // strided, lda == n, stride == n*n, 16-byte aligned: 16-byte vectors
  interleaved,  // interleaved, 16-byte aligned: one vector = one element of neighbouring matrices
};

// Everything a kernel needs to locate matrix k. For `variable`, n/lda/offset come from the
// device arrays and `n` holds max_n. With A_array set (strided or variable layout), matrix k
// starts at A_array[k] instead: A, stride and offvec are then unused.
//
// Out of place (strided layout only, `src` set): matrix k is read from src + k * src_stride,
// element (i, j) at i * src_rs + j * src_cs (any strides: the source is only read), and its factor
// written to A + k * stride (column-major, lda) with zeros in the strict opposite triangle. `src`
// may be A itself with src_rs = 1, src_cs = lda and src_stride = stride (in place): the kernels
// read each element before they write it and never read the opposite triangle.
template <class T>
struct BatchDesc {
  BatchLayout layout = BatchLayout::strided;
  T* A = nullptr;
  T* const* A_array = nullptr;
  int n = 0;
  int lda = 0;
  long long stride = 0;
  const int* nvec = nullptr;
  const int* ldvec = nullptr;
  const long long* offvec = nullptr;
  int batch = 0;
  int* info = nullptr;
  bool upper = false;
  bool fast = false;
  Staging staging = Staging::element;  // register kernel only; chosen by its launcher
  const T* src = nullptr;              // out of place: the matrices read (see above)
  long long src_rs = 0;
  long long src_cs = 0;
  long long src_stride = 0;
  Staging src_staging = Staging::element;  // register kernel, out of place: how src is read
};

// The classes of a variable batch one launch takes (classify_orders): class c holds the matrices
// list[c * batch + i] for i < count[c]; the launch takes the classes [first, end) in turn (the
// register kernel one class, the panel kernel those of n_k > 32). Apart from BatchDesc, whose size
// the kernels' code is sensitive to.
struct ClassRange {
  const int* count = nullptr;
  const int* list = nullptr;
  int batch = 0;
  int first = 0;
  int end = 0;
  // The matrix at position `pos` of the launch, or -1 past the classes' matrices.
  __device__ __forceinline__ long long member(long long pos) const {
    for (int c = first; c < end; ++c) {
      const int members = count[c];
      if (pos < members) return list[static_cast<long long>(c) * batch + pos];
      pos -= members;
    }
    return -1;
  }
};

// Classes of orders of a variable batch, bounds descending: class c takes the orders in
// (bound[c + 1], bound[c]], the last one every order up to its bound (and the orders below 1: empty
// matrices, and those a size screening marked -1).
constexpr int kMaxOrderClasses = 12;
struct OrderClasses {
  int count = 0;
  int bound[kMaxOrderClasses] = {};
};

// Ints of device scratch classify_orders takes.
std::size_t classify_orders_scratch(int batch, const OrderClasses& classes);
// Splits the variable batch of orders n into `classes`: scratch[c] receives class c's count and
// scratch + classes.count + c * batch its matrices (ClassRange::count, list).
void classify_orders(const int* n, int batch, const OrderClasses& classes, int* scratch, cudaStream_t stream);

// Element (0, 0) of the source of matrix k of an out-of-place batch.
template <class T>
__device__ __forceinline__ const T* source_matrix(const BatchDesc<T>& d, long long k) {
  return d.src + k * d.src_stride;
}

// One matrix as stored: element (r, c) at p[r * rs + c * cs].
template <class T>
struct StoredMatrix {
  T* p;
  long long rs;
  long long cs;
  int n;
};

template <class T>
__device__ __forceinline__ StoredMatrix<T> stored_matrix(const BatchDesc<T>& d, int k) {
  switch (d.layout) {
    case BatchLayout::interleaved: {
      const long long chunk = k / kInterleaveWidth;
      const long long nn = static_cast<long long>(d.n) * d.n;
      return {d.A + chunk * nn * kInterleaveWidth + k % kInterleaveWidth, kInterleaveWidth,
              static_cast<long long>(kInterleaveWidth) * d.n, d.n};
    }
    case BatchLayout::variable:
      return {d.A_array ? d.A_array[k] : d.A + d.offvec[k], 1, d.ldvec[k], d.nvec[k]};
    default:
      return {d.A_array ? d.A_array[k] : d.A + static_cast<long long>(k) * d.stride, 1, d.lda,
              d.n};
  }
}

// ---- pivot arithmetic ---------------------------------------------------------------------
// x is the updated diagonal entry. Returns false for a non-positive or NaN pivot; otherwise
// d = sqrt(x) and r = 1/d. The IEEE path rounds both correctly; the fast path uses the
// approximate reciprocal square root (flushing subnormals), refined once in double.
__device__ __forceinline__ float rsqrt_approx_ftz(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ double rsqrt_approx_ftz(double x) {
  double r;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  return r;
}
__device__ __forceinline__ float mul_ftz(float a, float b) {
  float r;
  asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ void pivot_ieee(float x, float& d, float& r) {
  d = __fsqrt_rn(x);
  r = __frcp_rn(d);
}
__device__ __forceinline__ void pivot_ieee(double x, double& d, double& r) {
  d = __dsqrt_rn(x);
  r = __drcp_rn(d);
}
__device__ __forceinline__ void pivot_fast(float x, float& d, float& r) {
  r = rsqrt_approx_ftz(x);
  d = mul_ftz(x, r);
}
__device__ __forceinline__ void pivot_fast(double x, double& d, double& r) {
  const double r0 = rsqrt_approx_ftz(x);
  // One Newton step: r = r0 * (1.5 - 0.5 * x * r0^2), written to keep the correction small.
  const double e = fma(-0.5 * x * r0, r0, 0.5);
  r = fma(r0, e, r0);
  d = x * r;
}

// x is a diagonal entry (for a complex matrix, its real part counts: a Hermitian matrix's
// diagonal is real, and LAPACK ignores the imaginary part stored there).
template <class T>
__device__ __forceinline__ bool pivot(T entry, bool fast, RealPartOf<T>& d, RealPartOf<T>& r) {
  using R = RealPartOf<T>;
  const R x = real_of(entry);
  if (!(x > R(0))) return false;
  if (fast)
    pivot_fast(x, d, r);
  else
    pivot_ieee(x, d, r);
  return true;
}

// 16-byte vector of T.
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int width = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int width = 2;
};

template <>
struct Vec16<DeviceComplex<float>> {
  using type = float4;
  static constexpr int width = 2;
};
template <>
struct Vec16<DeviceComplex<double>> {
  using type = double2;
  static constexpr int width = 1;
};

template <class T>
__device__ __forceinline__ T vec_get(const typename Vec16<T>::type& v, int e);
template <>
__device__ __forceinline__ float vec_get<float>(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}
template <>
__device__ __forceinline__ double vec_get<double>(const double2& v, int e) {
  return e == 0 ? v.x : v.y;
}
template <>
__device__ __forceinline__ DeviceComplex<float> vec_get<DeviceComplex<float>>(const float4& v, int e) {
  return e == 0 ? DeviceComplex<float>(v.x, v.y) : DeviceComplex<float>(v.z, v.w);
}
template <>
__device__ __forceinline__ DeviceComplex<double> vec_get<DeviceComplex<double>>(const double2& v, int) {
  return {v.x, v.y};
}
__device__ __forceinline__ float4 vec_make(const DeviceComplex<float> (&v)[2]) {
  return make_float4(v[0].re, v[0].im, v[1].re, v[1].im);
}
__device__ __forceinline__ double2 vec_make(const DeviceComplex<double> (&v)[1]) {
  return make_double2(v[0].re, v[0].im);
}
__device__ __forceinline__ float4 vec_make(const float (&v)[4]) {
  return make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ double2 vec_make(const double (&v)[2]) {
  return make_double2(v[0], v[1]);
}

// potrf_batched's checks of a strided batch in place (InvalidArgument with LAPACK's positions).
void check_strided_arguments(int n, bool has_A, int lda, long long strideA, int batch, const int* info);

// ---- internal launchers (one per kernel family) ---------------------------------------------
// Each runs the out-of-place kernels when desc.src is set (strided layout, no A_array).
// n <= 32: one group of n threads per matrix, rows in registers. Matrices with n_k > 32 (in a
// variable batch) are skipped.
template <class T>
void launch_potrf_small(const BatchDesc<T>& desc, int group_n, cudaStream_t stream,
                        const BatchedOptions& opts);
// One class of a variable batch (classes.first; with no list, every matrix of the batch) in groups
// of group_n threads: 8, 16 or 32.
template <class T>
void launch_potrf_small_class(const BatchDesc<T>& desc, const ClassRange& classes, int group_n, cudaStream_t stream,
                              const BatchedOptions& opts);

// Any n: one thread block per matrix, left-looking over panels. Matrices with n_k <= min_n are
// skipped (a variable batch sends those to the small kernel). Out of place, only the shapes that
// potrf_batched_default_shape picks are compiled in (another one throws InvalidArgument).
// With `classes` set (list not null), the launch takes their matrices only, in turn.
template <class T>
void launch_potrf_panel(const BatchDesc<T>& desc, int shape_n, int min_n, cudaStream_t stream,
                        const BatchedOptions& opts, const ClassRange& classes = {});

// The columns one launch of the panel kernel factors: the first `count` columns of the matrices it
// is given, which are the trailing submatrices from column `first` of the caller's (the blocked
// factorization, batched_potrf_blocked.cu). With first > 0 a matrix whose info is already set is
// skipped, and a failure reports first + its own column.
struct PanelColumns {
  int first = 0;
  int count = 0;  // 0: all of them
};
// In the shape potrf_batched_columns_shape picks for desc.n rows and that many columns (or opts').
template <class T>
void launch_potrf_panel_columns(const BatchDesc<T>& desc, cudaStream_t stream, const BatchedOptions& opts,
                                const PanelColumns& columns);

}  // namespace tessera::kernels::cuda::batched_detail
