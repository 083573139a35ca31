// The scalar arithmetic the batched kernels are written in, for real and complex (Hermitian)
// matrices alike. A kernel templated on T uses these helpers where the complex case differs
// (conjugates, the real diagonal, shuffles, read-only loads); for float and double they are the
// plain operations, so the real instantiations compile to what they were.
//
// Complex matrices run as DeviceComplex<R>: two R in a row, laid out as std::complex<R> (the
// public entry points reinterpret the caller's pointers through DeviceScalar). Its product is the
// plain formula, without the infinity recovery of C99's Annex G (std::complex in device code):
// a Cholesky factorization that meets an infinity reports it through info anyway.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <type_traits>

namespace tessera::kernels::cuda::batched_detail {

template <class R>
struct alignas(2 * sizeof(R)) DeviceComplex {
  R re;
  R im;
  DeviceComplex() = default;  // trivial, so that the type may live in shared memory
  __host__ __device__ constexpr DeviceComplex(R r) : re(r), im(R(0)) {}  // NOLINT: as std::complex
  __host__ __device__ constexpr DeviceComplex(R r, R i) : re(r), im(i) {}
};

static_assert(sizeof(DeviceComplex<double>) == sizeof(std::complex<double>));
static_assert(sizeof(DeviceComplex<float>) == sizeof(std::complex<float>));

// The kernels' type for a public scalar type T.
template <class T>
struct DeviceScalarOf {
  using type = T;
};
template <class R>
struct DeviceScalarOf<std::complex<R>> {
  using type = DeviceComplex<R>;
};
template <class T>
using DeviceScalar = typename DeviceScalarOf<T>::type;

// The caller's pointers, seen as the kernels' type.
template <class T>
DeviceScalar<T>* device_view(T* p) {
  return reinterpret_cast<DeviceScalar<T>*>(p);
}
template <class T>
const DeviceScalar<T>* device_view(const T* p) {
  return reinterpret_cast<const DeviceScalar<T>*>(p);
}
template <class T>
DeviceScalar<T>* const* device_view(T* const* p) {
  return reinterpret_cast<DeviceScalar<T>* const*>(p);
}
template <class T>
const DeviceScalar<T>* const* device_view(const T* const* p) {
  return reinterpret_cast<const DeviceScalar<T>* const*>(p);
}

template <class T>
struct RealPart {
  using type = T;
};
template <class R>
struct RealPart<DeviceComplex<R>> {
  using type = R;
};
template <class T>
using RealPartOf = typename RealPart<T>::type;

// ---- arithmetic -----------------------------------------------------------------------------
template <class R>
__device__ __forceinline__ DeviceComplex<R> operator+(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> operator-(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> operator-(DeviceComplex<R> a) {
  return {-a.re, -a.im};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> operator*(DeviceComplex<R> a, R s) {
  return {a.re * s, a.im * s};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R>& operator*=(DeviceComplex<R>& a, R s) {
  a.re *= s;
  a.im *= s;
  return a;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R>& operator+=(DeviceComplex<R>& a, DeviceComplex<R> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}

__device__ __forceinline__ float conj_of(float x) { return x; }
__device__ __forceinline__ double conj_of(double x) { return x; }
template <class R>
__device__ __forceinline__ DeviceComplex<R> conj_of(DeviceComplex<R> x) {
  return {x.re, -x.im};
}

template <class T>
__device__ __forceinline__ T conj_if(bool conjugate, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x;
  } else {
    return conjugate ? conj_of(x) : x;
  }
}

__device__ __forceinline__ float real_of(float x) { return x; }
__device__ __forceinline__ double real_of(double x) { return x; }
template <class R>
__device__ __forceinline__ R real_of(DeviceComplex<R> x) {
  return x.re;
}

// acc - a * b
__device__ __forceinline__ float minus_product(float acc, float a, float b) { return fma(-a, b, acc); }
__device__ __forceinline__ double minus_product(double acc, double a, double b) { return fma(-a, b, acc); }
template <class R>
__device__ __forceinline__ DeviceComplex<R> minus_product(DeviceComplex<R> acc, DeviceComplex<R> a,
                                                          DeviceComplex<R> b) {
  return {fma(a.im, b.im, fma(-a.re, b.re, acc.re)), fma(-a.im, b.re, fma(-a.re, b.im, acc.im))};
}

// acc - a * conj(b): the update of a Hermitian factorization (a * b for real types).
template <class T>
__device__ __forceinline__ T minus_product_conj(T acc, T a, T b) {
  return minus_product(acc, a, conj_of(b));
}

// acc + a * b
template <class T>
__device__ __forceinline__ T plus_product(T acc, T a, T b) {
  return minus_product(acc, -a, b);
}

// a * b
template <class T>
__device__ __forceinline__ T times(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a * b;
  else
    return plus_product(T(0), a, b);
}

// x / d for a diagonal entry d of a triangular factor, as LAPACK's trsm divides: by the complex
// element where d is complex (Smith's division, as LAPACK's: no overflow of |d|^2 for large
// entries), which is the division by its real part where d is real, as in every factor Tessera
// writes.
__device__ __forceinline__ float divide_by_diagonal(float x, float d) { return x / d; }
__device__ __forceinline__ double divide_by_diagonal(double x, double d) { return x / d; }
template <class R>
__device__ __forceinline__ DeviceComplex<R> divide_by_diagonal(DeviceComplex<R> x, DeviceComplex<R> d) {
  if (fabs(d.re) >= fabs(d.im)) {
    const R ratio = d.im / d.re;
    const R denominator = d.re + d.im * ratio;
    return {(x.re + x.im * ratio) / denominator, (x.im - x.re * ratio) / denominator};
  }
  const R ratio = d.re / d.im;
  const R denominator = d.re * ratio + d.im;
  return {(x.re * ratio + x.im) / denominator, (x.im * ratio - x.re) / denominator};
}

// 1 / d, by the same division.
template <class T>
__device__ __forceinline__ T reciprocal(T d) {
  return divide_by_diagonal(T(1), d);
}

// ---- warp shuffles and read-only loads -----------------------------------------------------
template <class T>
__device__ __forceinline__ T shuffle(unsigned mask, T v, int lane) {
  if constexpr (std::is_floating_point_v<T>) {
    return __shfl_sync(mask, v, lane);
  } else {
    return {__shfl_sync(mask, v.re, lane), __shfl_sync(mask, v.im, lane)};
  }
}

template <class T>
__device__ __forceinline__ T shuffle_xor(unsigned mask, T v, int offset) {
  if constexpr (std::is_floating_point_v<T>) {
    return __shfl_xor_sync(mask, v, offset);
  } else {
    return {__shfl_xor_sync(mask, v.re, offset), __shfl_xor_sync(mask, v.im, offset)};
  }
}

__device__ __forceinline__ float load_read_only(const float* p) { return __ldg(p); }
__device__ __forceinline__ double load_read_only(const double* p) { return __ldg(p); }
__device__ __forceinline__ DeviceComplex<float> load_read_only(const DeviceComplex<float>* p) {
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
}
__device__ __forceinline__ DeviceComplex<double> load_read_only(const DeviceComplex<double>* p) {
  const double2 v = __ldg(reinterpret_cast<const double2*>(p));
  return {v.x, v.y};
}

}  // namespace tessera::kernels::cuda::batched_detail
