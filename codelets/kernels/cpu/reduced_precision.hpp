// CPU kernels of the adaptive-precision factorization (FactorOptions::accuracy): a tile's
// Frobenius norm, its FP16 pieces, and the trailing update's product in FP32 on double tiles.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../tile_part.hpp"
#include "blas.hpp"

namespace tessera::kernels::cpu {

using kernels::TilePart;

// The Frobenius norm of the part of A, scaled by its largest modulus so that no square overflows
// or underflows; NaN if any element read is NaN, infinite if one is infinite.
inline double frobenius_norm(TilePart part, int m, int n, const double* A, int lda) {
  double largest = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      if (in_part(part, i, j)) {
        const double a = std::abs(A[i + static_cast<long>(j) * lda]);
        if (std::isnan(a)) return a;
        largest = std::max(largest, a);
      }
  if (largest == 0 || std::isinf(largest)) return largest;
  double sum = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      if (in_part(part, i, j)) {
        const double s = A[i + static_cast<long>(j) * lda] / largest;
        sum += part_weight(part, i, j) * s * s;
      }
  return largest * std::sqrt(sum);
}

// The power of two 2^e that brings the largest modulus of the m x n block A to [2^14, 2^15)
// (1 for a block of zeros or with a value that is not finite, NaN included, as on the GPU),
// returned as e: a reduced copy scaled by it keeps every value of the block's magnitude inside
// the reduced format's range.
inline int range_exponent(int m, int n, const double* A, int lda) {
  double largest = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double a = std::abs(A[i + static_cast<long>(j) * lda]);
      if (a > largest || std::isnan(a)) largest = a;
    }
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  int e = 0;
  std::frexp(largest, &e);  // largest < 2^e
  return 15 - e;
}

// C += alpha 2^-(ea + eb) op(A) op(B), op(A) m x k, for FP32 operands a and b packed with their
// rows as leading dimension: sgemm, accumulated into C in double.
inline void add_float_product(Trans transa, Trans transb, int m, int n, int k, double alpha, const std::vector<float>& a,
                              int ea, const std::vector<float>& b, int eb, double* C, int ldc) {
  const int ar = transa == Trans::no ? m : k, br = transb == Trans::no ? k : n;
  std::vector<float> w(static_cast<std::size_t>(m) * n);
  gemm(transa, transb, m, n, k, 1.0f, a.data(), std::max(ar, 1), b.data(), std::max(br, 1), 0.0f, w.data(), m);
  const double unscale = std::ldexp(alpha, -(ea + eb));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      C[i + static_cast<long>(j) * ldc] += unscale * static_cast<double>(w[i + static_cast<long>(j) * m]);
}

// The m x n block A * 2^e rounded to FP32, packed.
inline std::vector<float> scaled_to_float(int m, int n, const double* A, int lda, int e) {
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      out[i + static_cast<std::size_t>(j) * m] = static_cast<float>(std::ldexp(A[i + static_cast<long>(j) * lda], e));
  return out;
}

// C += alpha op(A) op(B) with op(A) m x k, computed in FP32 (each operand scaled by a power of two
// into a safe range, rounded to FP32, multiplied by sgemm) and accumulated into C in double.
inline void gemm_in_float(Trans transa, Trans transb, int m, int n, int k, double alpha, const double* A, int lda,
                          const double* B, int ldb, double* C, int ldc) {
  if (m <= 0 || n <= 0) return;
  const int ar = transa == Trans::no ? m : k, ac = transa == Trans::no ? k : m;
  const int br = transb == Trans::no ? k : n, bc = transb == Trans::no ? n : k;
  const int ea = range_exponent(ar, ac, A, lda), eb = range_exponent(br, bc, B, ldb);
  add_float_product(transa, transb, m, n, k, alpha, scaled_to_float(ar, ac, A, lda, ea), ea,
                    scaled_to_float(br, bc, B, ldb, eb), eb, C, ldc);
}

// FP16 values as their bit patterns (the pieces a GPU's tensor cores read), converted in software
// (not every compiler has a 16-bit floating type): x rounded to nearest, ties to even, as the
// GPU's conversion does; beyond FP16's range an infinity, below it FP16's subnormals.
inline std::uint16_t to_fp16_bits(double x) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (std::isnan(x)) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;  // 65504 plus half its unit in the last place and beyond
  if (a < 0x1p-14) return sign | static_cast<std::uint16_t>(std::nearbyint(a * 0x1p24));  // m 2^-24 (1024: 2^-14)
  int e = 0;
  const double f = std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1): 1.m 2^(e - 1)
  unsigned mantissa = static_cast<unsigned>(std::nearbyint((2.0 * f - 1.0) * 1024.0));
  unsigned biased = static_cast<unsigned>(e + 14);
  if (mantissa == 1024) {
    mantissa = 0;
    ++biased;
  }
  if (biased >= 31) return sign | 0x7c00;
  return static_cast<std::uint16_t>(sign | (biased << 10) | mantissa);
}
inline float from_fp16_bits(std::uint16_t bits) {
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  const int biased = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (biased == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (biased == 31) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(static_cast<float>(1024 + mantissa), biased - 25);
}

// The FP16 pieces of the m x n block A (as the CUDA kernel split_to_fp16 makes them): *e :=
// range_exponent, hi := A 2^e rounded to FP16, lo := (A 2^e - hi) 2^11 rounded to FP16, both packed
// (leading dimension m).
inline void split_to_fp16(int m, int n, const double* A, int lda, std::uint16_t* hi, std::uint16_t* lo, short* e) {
  const int exponent = range_exponent(m, n, A, lda);
  *e = static_cast<short>(exponent);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double x = std::ldexp(A[i + static_cast<long>(j) * lda], exponent);
      const std::uint16_t h = to_fp16_bits(x);
      hi[i + static_cast<long>(j) * m] = h;
      lo[i + static_cast<long>(j) * m] = to_fp16_bits((x - from_fp16_bits(h)) * 2048.0);
    }
}

// The values hi (+ 2^-11 lo where with_low) of an m x n block of FP16 pieces (leading dimension
// ld) in FP32, packed: exact, FP32 holding the 22 significant bits of the two pieces.
inline std::vector<float> widen_fp16(int m, int n, const std::uint16_t* hi, const std::uint16_t* lo, int ld,
                                     bool with_low) {
  std::vector<float> x(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const long at = i + static_cast<long>(j) * ld;
      x[i + static_cast<std::size_t>(j) * m] =
          from_fp16_bits(hi[at]) + (with_low ? from_fp16_bits(lo[at]) * (1.0f / 2048.0f) : 0.0f);
    }
  return x;
}

}  // namespace tessera::kernels::cpu
