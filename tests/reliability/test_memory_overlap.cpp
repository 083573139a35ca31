// The overlap test behind potrs/posv's check of B against A, compared with a count of shared
// elements over every placement of B around A in small arrays: B before A, inside it, in its
// padding rows, after it, with every pair of leading dimensions.
#include <gtest/gtest.h>

#include <vector>

#include "memory_overlap.hpp"

namespace tessera::test {
namespace {

// Whether element `e` (an index into the array) belongs to the n x cols matrix at `origin`.
bool in_matrix(long e, long origin, int n, int cols, int ld) {
  const long offset = e - origin;
  return offset >= 0 && offset / ld < cols && offset % ld < n;
}

TEST(MemoryOverlap, AgreesWithElementByElementComparison) {
  std::vector<double> array(400);
  long placements = 0, overlapping = 0;
  for (int n = 1; n <= 4; ++n)
    for (int nrhs = 1; nrhs <= 3; ++nrhs)
      for (int lda = n; lda <= n + 3; ++lda)
        for (int ldb = n; ldb <= n + 3; ++ldb)
          for (long a = 0; a < 60; a += 7)
            for (long b = 0; b < 90; ++b) {
              bool shared = false;
              for (int r = 0; r < nrhs && !shared; ++r)
                for (int i = 0; i < n && !shared; ++i) shared = in_matrix(b + i + long(r) * ldb, a, n, n, lda);
              const bool found = detail::right_hand_sides_overlap(&array[a], lda, &array[b], ldb, n, nrhs, sizeof(double));
              ASSERT_EQ(found, shared) << "n=" << n << " nrhs=" << nrhs << " lda=" << lda << " ldb=" << ldb << " A at " << a
                                       << " B at " << b;
              ++placements;
              overlapping += shared;
            }
  EXPECT_GT(overlapping, 0);
  EXPECT_LT(overlapping, placements);
}

TEST(MemoryOverlap, FarApartOrHugeDimensionsDoNotOverflow) {
  // Offsets and extents beyond any real memory: no overlap, and no overflow on the way.
  static double a[4], b[4];
  EXPECT_FALSE(detail::right_hand_sides_overlap(a, 1 << 30, b, 1 << 30, 1, 1, sizeof(double)));
  EXPECT_TRUE(detail::right_hand_sides_overlap(a, 1 << 30, a, 1 << 30, 2, 2, sizeof(double)));
  EXPECT_FALSE(detail::right_hand_sides_overlap(a, 2147483647, a + 1, 2147483647, 1, 2147483647, sizeof(double)));
  EXPECT_TRUE(detail::right_hand_sides_overlap(a, 2147483647, a + 1, 2147483647, 2, 2147483647, sizeof(double)));
}

}  // namespace
}  // namespace tessera::test
