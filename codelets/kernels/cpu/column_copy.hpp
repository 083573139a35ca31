// One column of a copy between a caller's array and a tile, and whether it holds a NaN or an
// infinity, in one pass: the load tasks' inner loop. Loading a matrix from host memory for a GPU
// is bound by the host's memory traffic, so the copy checks each vector as it moves it, and can
// write with streaming stores (Stores::streaming).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::kernels::cpu {

// How a copy writes its destination. Streaming stores (x86's non-temporal stores) bypass the
// caches: for a destination no core reads soon (a tile on its way to a GPU, a large block going
// home to the caller's array) they save reading each line before it is written, a third of a
// copy's memory traffic. Without AVX2 they are plain stores.
enum class Stores { cached, streaming };

// Orders the streaming stores made so far before whatever tells another thread or a DMA engine
// that the copy is done: every copy with Stores::streaming ends with it.
inline void finish_streaming() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

template <class T>
using FloatBits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

// All exponent bits set: a NaN or an infinity.
template <class T>
constexpr FloatBits<T> kExponentBits = static_cast<FloatBits<T>>(sizeof(T) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);

template <class T>
bool is_non_finite_bits(T x) {
  FloatBits<T> bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & kExponentBits<T>) == kExponentBits<T>;
}

// Whether a[0..count) holds a NaN or infinity, with integer tests the compiler vectorizes, so a
// scan runs at memory speed (std::isfinite element by element, with its branch, made the scan of
// a tile cost a third of copying it).
template <class T>
bool any_non_finite(const T* a, int count) {
  static_assert(std::is_floating_point_v<T> && (sizeof(T) == 8 || sizeof(T) == 4));
  FloatBits<T> found = 0;
  for (int i = 0; i < count; ++i) found |= static_cast<FloatBits<T>>(is_non_finite_bits(a[i]));
  return found != 0;
}

// A complex array is its real and imaginary parts, in one real array twice as long.
template <class T>
bool any_non_finite(const std::complex<T>* a, int count) {
  return any_non_finite(reinterpret_cast<const T*>(a), 2 * count);
}

namespace column_copy_detail {

// Without AVX2: a plain copy, then the scan of the source (still in cache).
template <class T>
bool copy_and_check_portable(const T* s, int count, T* d) {
  std::copy(s, s + count, d);
  return any_non_finite(s, count);
}

#if defined(__x86_64__)
// d[0..count) := s[0..count) in 32-byte vectors, each tested for all exponent bits on its way.
template <class T>
__attribute__((target("avx2"))) bool copy_and_check_avx2(const T* s, int count, T* d, Stores stores) {
  int i = 0;
  bool found = false;
  for (; i < count && reinterpret_cast<std::uintptr_t>(d + i) % 32 != 0; ++i) {
    d[i] = s[i];
    found |= is_non_finite_bits(s[i]);
  }
  constexpr int lanes = static_cast<int>(32 / sizeof(T));
  const __m256i exponent = sizeof(T) == 8 ? _mm256_set1_epi64x(static_cast<long long>(kExponentBits<double>))
                                          : _mm256_set1_epi32(static_cast<int>(kExponentBits<float>));
  __m256i hits = _mm256_setzero_si256();
  for (; i + lanes <= count; i += lanes) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i masked = _mm256_and_si256(v, exponent);
    hits = _mm256_or_si256(hits, sizeof(T) == 8 ? _mm256_cmpeq_epi64(masked, exponent)
                                                : _mm256_cmpeq_epi32(masked, exponent));
    if (stores == Stores::streaming)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), v);
    else
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + i), v);
  }
  for (; i < count; ++i) {
    d[i] = s[i];
    found |= is_non_finite_bits(s[i]);
  }
  return found || !_mm256_testz_si256(hits, hits);
}
#endif

}  // namespace column_copy_detail

// d[0..count) := s[0..count); returns whether s[0..count) holds a NaN or infinity. With
// Stores::streaming, finish_streaming() must follow the last such copy of a task.
template <class T>
bool copy_column_and_check(const T* s, int count, T* d, Stores stores) {
  if (count <= 0) return false;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return column_copy_detail::copy_and_check_avx2(s, count, d, stores);
#endif
  return column_copy_detail::copy_and_check_portable(s, count, d);
}

template <class T>
bool copy_column_and_check(const std::complex<T>* s, int count, std::complex<T>* d, Stores stores) {
  return copy_column_and_check(reinterpret_cast<const T*>(s), 2 * count, reinterpret_cast<T*>(d), stores);
}

// d[0..count) := s[0..count) with the given stores.
template <class T>
void copy_column(const T* s, int count, T* d, Stores stores) {
  if (stores == Stores::streaming)
    copy_column_and_check(s, count, d, stores);
  else
    std::copy(s, s + count, d);
}

}  // namespace tessera::kernels::cpu
