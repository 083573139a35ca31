// The CPU conversion kernels between a caller's column-major matrix and tiles, against their
// element-by-element definitions: sizes around the transpose block (1, 31, 32, 33, 70), both
// directions, lower triangle only, and the first non-finite row they report; the copies of
// transposed tiles (upper triangle only, the first non-finite column).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "kernels/cpu/blas.hpp"

namespace tessera {
namespace {

using kernels::cpu::kTransposeBlock;

std::vector<double> numbered(int rows, int cols, int ld) {
  std::vector<double> a(static_cast<std::size_t>(ld) * cols, -1.0);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) a[i + static_cast<std::size_t>(j) * ld] = 1000.0 * i + j + 0.5;
  return a;
}

TEST(CpuCopyKernels, CopyBlockMatchesItsDefinition) {
  for (int m : {1, kTransposeBlock - 1, kTransposeBlock, kTransposeBlock + 1, 70})
    for (int n : {1, kTransposeBlock + 1, 70})
      for (bool transpose : {false, true})
        for (bool lower_only : {false, true}) {
          const int rows = transpose ? n : m, cols = transpose ? m : n;
          if (lower_only && rows != cols) continue;
          const int lds = m + 3, ldd = rows + 2;
          const std::vector<double> src = numbered(m, n, lds);
          std::vector<double> dst(static_cast<std::size_t>(ldd) * cols, -7.0);
          kernels::cpu::copy_block(transpose, lower_only, m, n, src.data(), lds, dst.data(), ldd);
          EXPECT_EQ(kernels::cpu::first_non_finite_row(lower_only, rows, cols, dst.data(), ldd), -1);
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < ldd; ++i) {
              const double got = dst[i + static_cast<std::size_t>(j) * ldd];
              const bool written = i < rows && (!lower_only || i >= j);
              const double want = !written ? -7.0 : transpose ? src[j + static_cast<std::size_t>(i) * lds]
                                                              : src[i + static_cast<std::size_t>(j) * lds];
              ASSERT_EQ(got, want) << "m=" << m << " n=" << n << " transpose=" << transpose
                                   << " lower_only=" << lower_only << " at (" << i << ", " << j << ")";
            }
        }
}

TEST(CpuCopyKernels, TheScanOfACopiedBlockReportsTheFirstNonFiniteRow) {
  const int n = 70, ld = n;
  for (bool transpose : {false, true}) {
    std::vector<double> src = numbered(n, n, ld);
    // Destination rows 50 (a NaN) and 40 (an infinity), both in column 3 of the destination.
    auto at = [&](int i, int j) -> double& {
      return transpose ? src[j + static_cast<std::size_t>(i) * ld] : src[i + static_cast<std::size_t>(j) * ld];
    };
    at(50, 3) = std::numeric_limits<double>::quiet_NaN();
    at(40, 3) = std::numeric_limits<double>::infinity();
    std::vector<double> dst(static_cast<std::size_t>(ld) * n);
    kernels::cpu::copy_block(transpose, true, n, n, src.data(), ld, dst.data(), ld);
    EXPECT_EQ(kernels::cpu::first_non_finite_row(true, n, n, dst.data(), ld), 40) << transpose;
    EXPECT_EQ(kernels::cpu::first_non_finite_row(false, n, n, dst.data(), ld), 40) << transpose;
    // Above the diagonal nothing is read: a NaN there is not reported.
    std::vector<double> upper = numbered(n, n, ld);
    (transpose ? upper[60 + static_cast<std::size_t>(2) * ld] : upper[2 + static_cast<std::size_t>(60) * ld]) =
        std::numeric_limits<double>::quiet_NaN();
    std::vector<double> clean(static_cast<std::size_t>(ld) * n, 0.0);
    kernels::cpu::copy_block(transpose, true, n, n, upper.data(), ld, clean.data(), ld);
    EXPECT_EQ(kernels::cpu::first_non_finite_row(true, n, n, clean.data(), ld), -1) << transpose;
  }
}

// The one-pass copy and scan give what copy_block then first_non_finite_row (and copy_columns then
// first_non_finite_column) give: the same copy, the same first row (column), for non-finite values
// at every position in turn, one or two of them, inside and outside the triangle that is read.
TEST(CpuCopyKernels, OnePassCopyAndScanMatchTheTwoPasses) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (int m : {1, 2, 31, 37})
    for (int n : {1, 33, 37})
      for (bool triangle : {false, true}) {
        if (triangle && m != n) continue;
        const int lds = m + 3, ldd = m + 1;
        for (int at = -1; at < m * n; ++at) {
          std::vector<double> src = numbered(m, n, lds);
          if (at >= 0) src[at % m + static_cast<std::size_t>(at / m) * lds] = nan;
          if (at >= 0 && at % 3 == 0) src[(at * 7) % m + static_cast<std::size_t>((at * 5) % n) * lds] = -inf;
          std::vector<double> two(static_cast<std::size_t>(ldd) * n, -7.0), one = two;
          kernels::cpu::copy_block(false, triangle, m, n, src.data(), lds, two.data(), ldd);
          const int want_row = kernels::cpu::first_non_finite_row(triangle, m, n, two.data(), ldd);
          ASSERT_EQ(kernels::cpu::copy_block_and_find_non_finite_row(triangle, m, n, src.data(), lds, one.data(), ldd),
                    want_row) << "m=" << m << " n=" << n << " lower_only=" << triangle << " at " << at;
          ASSERT_TRUE(std::equal(one.begin(), one.end(), two.begin(), [](double x, double y) {
            return x == y || (std::isnan(x) && std::isnan(y));
          })) << "m=" << m << " n=" << n << " lower_only=" << triangle << " at " << at;
          std::vector<double> two_columns(static_cast<std::size_t>(ldd) * n, -7.0), one_column = two_columns;
          kernels::cpu::copy_columns(triangle, m, n, src.data(), lds, two_columns.data(), ldd);
          const int want_column = kernels::cpu::first_non_finite_column(triangle, m, n, two_columns.data(), ldd);
          ASSERT_EQ(kernels::cpu::copy_columns_and_find_non_finite_column(triangle, m, n, src.data(), lds,
                                                                          one_column.data(), ldd),
                    want_column) << "m=" << m << " n=" << n << " upper_only=" << triangle << " at " << at;
          ASSERT_TRUE(std::equal(one_column.begin(), one_column.end(), two_columns.begin(), [](double x, double y) {
            return x == y || (std::isnan(x) && std::isnan(y));
          }));
        }
      }
}

// Streaming stores write what cached stores write, in both precisions, with destinations at every
// alignment (the first elements before a 16-byte boundary are stored one by one) and columns of
// every length around the vector width, and the scans report the same first row and column.
template <class T>
void check_streaming_stores_match_cached_ones() {
  using kernels::cpu::Stores;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int m : {1, 2, 3, 5, 8, 37})
    for (int n : {1, 3, 37})
      for (bool triangle : {false, true})
        for (int offset = 0; offset < 4; ++offset) {  // the destination's first element, in elements
          if (triangle && m != n) continue;
          const int lds = m + 3, ldd = m + 1;
          std::vector<T> src(static_cast<std::size_t>(lds) * n);
          for (std::size_t k = 0; k < src.size(); ++k) src[k] = static_cast<T>(k) + T(0.25);
          if (m * n > 2) src[(m / 2) + static_cast<std::size_t>(n / 2) * lds] = nan;
          const std::size_t size = static_cast<std::size_t>(ldd) * n + offset;
          std::vector<T> cached(size, T(-7)), streamed(size, T(-7));
          auto same = [](T x, T y) { return x == y || (std::isnan(x) && std::isnan(y)); };
          const auto where = ::testing::Message() << "m=" << m << " n=" << n << " triangle=" << triangle
                                                  << " offset=" << offset << " size of T=" << sizeof(T);
          kernels::cpu::copy_block(false, triangle, m, n, src.data(), lds, cached.data() + offset, ldd);
          kernels::cpu::copy_block(false, triangle, m, n, src.data(), lds, streamed.data() + offset, ldd,
                                   Stores::streaming);
          ASSERT_TRUE(std::equal(cached.begin(), cached.end(), streamed.begin(), same)) << where;
          std::fill(streamed.begin(), streamed.end(), T(-7));
          ASSERT_EQ(kernels::cpu::copy_block_and_find_non_finite_row(triangle, m, n, src.data(), lds,
                                                                     streamed.data() + offset, ldd, Stores::streaming),
                    kernels::cpu::first_non_finite_row(triangle, m, n, cached.data() + offset, ldd)) << where;
          ASSERT_TRUE(std::equal(cached.begin(), cached.end(), streamed.begin(), same)) << where;
          std::fill(cached.begin(), cached.end(), T(-7));
          std::fill(streamed.begin(), streamed.end(), T(-7));
          kernels::cpu::copy_columns(triangle, m, n, src.data(), lds, cached.data() + offset, ldd);
          ASSERT_EQ(kernels::cpu::copy_columns_and_find_non_finite_column(triangle, m, n, src.data(), lds,
                                                                          streamed.data() + offset, ldd,
                                                                          Stores::streaming),
                    kernels::cpu::first_non_finite_column(triangle, m, n, cached.data() + offset, ldd)) << where;
          ASSERT_TRUE(std::equal(cached.begin(), cached.end(), streamed.begin(), same)) << where;
          std::fill(streamed.begin(), streamed.end(), T(-7));
          kernels::cpu::copy_columns(triangle, m, n, src.data(), lds, streamed.data() + offset, ldd, Stores::streaming);
          ASSERT_TRUE(std::equal(cached.begin(), cached.end(), streamed.begin(), same)) << where;
        }
}

// The vector copy (AVX2, where the CPU has it) and the portable one copy the same values and find
// the same NaN or infinity, wherever it is in the column and wherever the column starts.
template <class T>
void check_column_copies_agree() {
  using kernels::cpu::Stores;
  for (int count : {1, 3, 4, 7, 8, 9, 17, 64})
    for (int offset = 0; offset < 8; ++offset)
      for (int bad = -1; bad < count; ++bad) {
        std::vector<T> src(count + 8);
        for (int i = 0; i < count + 8; ++i) src[i] = T(i) + T(0.5);
        if (bad >= 0) src[offset + bad] = bad % 2 ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
        std::vector<T> portable(count + 8, T(-7)), vector_cached = portable, vector_streamed = portable;
        const bool want = kernels::cpu::column_copy_detail::copy_and_check_portable(src.data() + offset, count,
                                                                                    portable.data() + offset);
        ASSERT_EQ(want, bad >= 0);
        ASSERT_EQ(kernels::cpu::copy_column_and_check(src.data() + offset, count, vector_cached.data() + offset,
                                                      Stores::cached), want) << count << " " << offset << " " << bad;
        ASSERT_EQ(kernels::cpu::copy_column_and_check(src.data() + offset, count, vector_streamed.data() + offset,
                                                      Stores::streaming), want) << count << " " << offset << " " << bad;
        kernels::cpu::finish_streaming();
        auto same = [](T x, T y) { return x == y || (std::isnan(x) && std::isnan(y)); };
        ASSERT_TRUE(std::equal(portable.begin(), portable.end(), vector_cached.begin(), same));
        ASSERT_TRUE(std::equal(portable.begin(), portable.end(), vector_streamed.begin(), same));
      }
}

TEST(CpuCopyKernels, VectorAndPortableColumnCopiesAgree) {
  check_column_copies_agree<double>();
  check_column_copies_agree<float>();
}

TEST(CpuCopyKernels, StreamingStoresWriteWhatCachedStoresWrite) {
  check_streaming_stores_match_cached_ones<double>();
  check_streaming_stores_match_cached_ones<float>();
}

TEST(CpuCopyKernels, LowerTriangleGoesAboveTheDiagonalTransposed) {
  for (int n : {1, kTransposeBlock - 1, kTransposeBlock, kTransposeBlock + 1, 70}) {
    const int lds = n + 1, ldd = n + 5;
    const std::vector<double> src = numbered(n, n, lds);
    std::vector<double> dst(static_cast<std::size_t>(ldd) * n, -7.0);
    kernels::cpu::copy_lower_to_upper_transposed(n, src.data(), lds, dst.data(), ldd);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < ldd; ++i) {
        const double want = i <= j && i < n ? src[j + static_cast<std::size_t>(i) * lds] : -7.0;
        ASSERT_EQ(dst[i + static_cast<std::size_t>(j) * ldd], want) << "n=" << n << " at (" << i << ", " << j << ")";
      }
  }
}

TEST(CpuCopyKernels, CopyColumnsMatchesItsDefinition) {
  for (int m : {1, 2, 31, 70})
    for (int n : {1, 33, 70})
      for (bool upper_only : {false, true}) {
        if (upper_only && m != n) continue;
        const int lds = m + 3, ldd = m + 2;
        const std::vector<double> src = numbered(m, n, lds);
        std::vector<double> dst(static_cast<std::size_t>(ldd) * n, -7.0);
        kernels::cpu::copy_columns(upper_only, m, n, src.data(), lds, dst.data(), ldd);
        EXPECT_EQ(kernels::cpu::first_non_finite_column(upper_only, m, n, dst.data(), ldd), -1);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < ldd; ++i) {
            const bool written = i < m && (!upper_only || i <= j);
            const double want = written ? src[i + static_cast<std::size_t>(j) * lds] : -7.0;
            ASSERT_EQ(dst[i + static_cast<std::size_t>(j) * ldd], want)
                << "m=" << m << " n=" << n << " upper_only=" << upper_only << " at (" << i << ", " << j << ")";
          }
      }
}

// A piece of whole columns [first, first + n) of a diagonal block, rows [0, first + n): with
// upper_only only the entries on and above the block's diagonal are copied and scanned, in both
// directions (a staged upper-stored tile's pieces).
TEST(CpuCopyKernels, PiecesOfADiagonalBlockFollowItsDiagonal) {
  const int order = 70, ld = order + 1;
  std::vector<double> block = numbered(order, order, ld);
  block[40 + static_cast<std::size_t>(33) * ld] = std::numeric_limits<double>::quiet_NaN();  // below: ignored
  block[20 + static_cast<std::size_t>(52) * ld] = std::numeric_limits<double>::infinity();   // above: column 52
  for (const int first : {0, 1, 31, 50}) {
    const int n = std::min(19, order - first), m = first + n;
    std::vector<double> piece(static_cast<std::size_t>(m) * n, -7.0);
    const double* src = block.data() + static_cast<std::size_t>(first) * ld;
    const int bad = kernels::cpu::copy_columns_and_find_non_finite_column(true, m, n, src, ld, piece.data(), m,
                                                                          kernels::cpu::Stores::streaming, first);
    EXPECT_EQ(bad, first <= 52 && 52 < first + n ? 52 - first : -1) << "first=" << first;
    std::vector<double> back(block.size(), -9.0);
    kernels::cpu::copy_columns(true, m, n, piece.data(), m, back.data() + static_cast<std::size_t>(first) * ld, ld,
                               kernels::cpu::Stores::cached, first);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const bool upper = i <= first + j;
        const double copied = piece[i + static_cast<std::size_t>(j) * m];
        const double original = block[i + static_cast<std::size_t>(first + j) * ld];
        const double returned = back[i + static_cast<std::size_t>(first + j) * ld];
        if (upper) {
          ASSERT_TRUE(copied == original || (std::isnan(copied) && std::isnan(original))) << first << " " << i << " " << j;
          ASSERT_TRUE(returned == original || (std::isnan(returned) && std::isnan(original)));
        } else {
          ASSERT_EQ(copied, -7.0) << "below the diagonal written: first=" << first << " (" << i << ", " << j << ")";
          ASSERT_EQ(returned, -9.0);
        }
      }
  }
}

// A transposed tile's column c is row c of the tile it stands for: both the copy and the scan of
// a tile in place report the smallest column, and see only the upper triangle with upper_only.
TEST(CpuCopyKernels, TheScanOfATransposedTileReportsTheFirstNonFiniteColumn) {
  const int n = 70, ld = n + 1;
  std::vector<double> src = numbered(n, n, ld);
  src[3 + static_cast<std::size_t>(50) * ld] = std::numeric_limits<double>::quiet_NaN();
  src[45 + static_cast<std::size_t>(45) * ld] = -std::numeric_limits<double>::infinity();
  std::vector<double> dst(static_cast<std::size_t>(ld) * n);
  for (bool upper_only : {false, true}) {
    kernels::cpu::copy_columns(upper_only, n, n, src.data(), ld, dst.data(), ld);
    EXPECT_EQ(kernels::cpu::first_non_finite_column(upper_only, n, n, dst.data(), ld), 45) << upper_only;
    EXPECT_EQ(kernels::cpu::first_non_finite_column(upper_only, n, n, src.data(), ld), 45) << upper_only;
  }
  // Below the diagonal nothing is read with upper_only.
  std::vector<double> lower = numbered(n, n, ld);
  lower[60 + static_cast<std::size_t>(2) * ld] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(kernels::cpu::first_non_finite_column(true, n, n, lower.data(), ld), -1);
  EXPECT_EQ(kernels::cpu::first_non_finite_column(false, n, n, lower.data(), ld), 2);
}

// The vectorized test sees every kind of non-finite value at every position, float and double,
// and no finite one (the largest, the smallest subnormal, negative zero).
TEST(CpuCopyKernels, AnyNonFiniteSeesEveryNonFiniteValueAndNoFiniteOne) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    using limits = std::numeric_limits<T>;
    std::vector<T> a = {T(1), limits::max(), -limits::max(), limits::denorm_min(), T(-0.0), limits::min(), T(3)};
    EXPECT_FALSE(kernels::cpu::any_non_finite(a.data(), static_cast<int>(a.size())));
    for (T bad : {limits::quiet_NaN(), limits::infinity(), -limits::infinity(), limits::signaling_NaN()})
      for (std::size_t at = 0; at < a.size(); ++at) {
        std::vector<T> b = a;
        b[at] = bad;
        EXPECT_TRUE(kernels::cpu::any_non_finite(b.data(), static_cast<int>(b.size()))) << at;
        EXPECT_FALSE(kernels::cpu::any_non_finite(b.data(), static_cast<int>(at))) << at;
      }
  };
  check(0.0);
  check(0.0f);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

using zdouble = std::complex<double>;

std::vector<zdouble> numbered_complex(int rows, int cols, int ld) {
  std::vector<zdouble> a(static_cast<std::size_t>(ld) * cols, zdouble(-1.0, -1.0));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) a[i + static_cast<std::size_t>(j) * ld] = zdouble(1000.0 * i + j + 0.5, i - 2.0 * j);
  return a;
}

// A transposed copy of a complex block is its conjugate transpose (the other triangle of a
// Hermitian matrix); a plain copy, streaming or not, copies the values as they are.
TEST(CpuCopyKernels, ComplexTransposedCopiesConjugate) {
  for (int m : {1, kernels::cpu::kTransposeBlock + 1, 70})
    for (int n : {1, 45})
      for (bool transpose : {false, true})
        for (auto stores : {kernels::cpu::Stores::cached, kernels::cpu::Stores::streaming}) {
          const int rows = transpose ? n : m, cols = transpose ? m : n;
          const int lds = m + 1, ldd = rows + 3;
          const std::vector<zdouble> src = numbered_complex(m, n, lds);
          std::vector<zdouble> dst(static_cast<std::size_t>(ldd) * cols, zdouble(-7.0, 0.0));
          kernels::cpu::copy_block(transpose, false, m, n, src.data(), lds, dst.data(), ldd, stores);
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) {
              const zdouble want = transpose ? std::conj(src[j + static_cast<std::size_t>(i) * lds])
                                             : src[i + static_cast<std::size_t>(j) * lds];
              ASSERT_EQ(dst[i + static_cast<std::size_t>(j) * ldd], want) << m << " " << n << " " << transpose;
            }
        }
  // The lower triangle of a tile above the diagonal of the caller's block: conjugated too.
  const int n = 37;
  const std::vector<zdouble> tile = numbered_complex(n, n, n);
  std::vector<zdouble> block(static_cast<std::size_t>(n) * n, zdouble(0.0, 0.0));
  kernels::cpu::copy_lower_to_upper_transposed(n, tile.data(), n, block.data(), n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) ASSERT_EQ(block[j + static_cast<std::size_t>(i) * n], std::conj(tile[i + static_cast<std::size_t>(j) * n]));
}

// A NaN or an infinity in either part of a complex entry is found, by the one-pass copy and by
// the scans, at its row (or column).
TEST(CpuCopyKernels, ComplexNonFiniteInEitherPartIsFound) {
  const int m = 41, n = 9, ld = 44;
  for (bool imaginary : {false, true})
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      std::vector<zdouble> src = numbered_complex(m, n, ld);
      zdouble& entry = src[30 + static_cast<std::size_t>(4) * ld];
      entry = imaginary ? zdouble(entry.real(), bad) : zdouble(bad, entry.imag());
      std::vector<zdouble> dst(static_cast<std::size_t>(ld) * n);
      for (auto stores : {kernels::cpu::Stores::cached, kernels::cpu::Stores::streaming})
        EXPECT_EQ(kernels::cpu::copy_block_and_find_non_finite_row(false, m, n, src.data(), ld, dst.data(), ld, stores), 30);
      EXPECT_EQ(kernels::cpu::first_non_finite_row(false, m, n, src.data(), ld), 30);
      EXPECT_EQ(kernels::cpu::first_non_finite_column(false, m, n, src.data(), ld), 4);
      EXPECT_EQ(kernels::cpu::copy_columns_and_find_non_finite_column(false, m, n, src.data(), ld, dst.data(), ld), 4);
      EXPECT_TRUE(kernels::cpu::any_non_finite(src.data() + static_cast<std::size_t>(4) * ld, m));
      EXPECT_FALSE(kernels::cpu::any_non_finite(src.data(), m));
    }
}

}  // namespace
}  // namespace tessera
