// Whether a solve's right-hand sides share memory with its matrix. The tasks read A and write B
// concurrently, so a shared element would silently corrupt both: such calls are rejected as an
// invalid B. Disjoint elements of one array (B in A's padding rows, B after A) are fine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace tessera::detail {

// True when an element of the n x nrhs matrix B (leading dimension ldb) is also an element of
// the n x n matrix A (lda): column by column, A's column k holds the bytes [k lda, k lda + n) and
// B's column r the bytes [r ldb, r ldb + n), in elements of elem_bytes, from their own origins.
// Expects valid LAPACK sizes (n, nrhs > 0, lda, ldb >= n) and non-null pointers. Offsets stay
// within 64 bits: beyond the last column of B the scan stops.
inline bool right_hand_sides_overlap(const void* A, int lda, const void* B, int ldb, int n, int nrhs,
                                     std::size_t elem_bytes) {
  using Offset = std::int64_t;
  const Offset a_column = static_cast<Offset>(lda) * static_cast<Offset>(elem_bytes);
  const Offset b_column = static_cast<Offset>(ldb) * static_cast<Offset>(elem_bytes);
  const Offset length = static_cast<Offset>(n) * static_cast<Offset>(elem_bytes);
  // Distance of A's column k from B's origin, in bytes (unsigned subtraction: no overflow).
  Offset start = static_cast<Offset>(reinterpret_cast<std::uintptr_t>(A) - reinterpret_cast<std::uintptr_t>(B));
  for (int k = 0; k < n; ++k) {
    // The last column of B starting before the end of A's column k; it overlaps unless it ends
    // before A's column starts.
    if (start + length > 0) {
      const Offset last = std::min<Offset>((start + length - 1) / b_column, nrhs - 1);
      if (last * b_column + length > start) return true;
      if (last == nrhs - 1 && start >= last * b_column + length) return false;  // past B's end
    }
    // Offsets this far from B's origin are past any memory B can have.
    if (start > std::numeric_limits<Offset>::max() - a_column - length) return false;
    start += a_column;
  }
  return false;
}

}  // namespace tessera::detail
