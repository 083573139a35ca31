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

// Elements a rows x cols column-major matrix with leading dimension ld spans (none when empty).
inline long long elements_spanned(int rows, int cols, int ld) {
  return rows == 0 || cols == 0 ? 0 : static_cast<long long>(ld) * (cols - 1) + rows;
}

// A column-major block in memory, in bytes: `cols` columns of `rows` bytes, `ld` bytes apart,
// the first at address `start`. ld >= rows; an empty block (rows or cols 0) holds nothing.
struct ByteBlock {
  std::uintptr_t start;
  std::uint64_t rows;
  std::uint64_t cols;
  std::uint64_t ld;

  bool empty() const { return rows == 0 || cols == 0; }
  std::uintptr_t end() const { return start + (cols - 1) * ld + rows; }  // one past the last byte
};

// True when the two blocks share a byte. For each column of a, only the first column of b that
// ends after that column starts can overlap it (b's columns are disjoint and ordered).
inline bool blocks_overlap(const ByteBlock& a, const ByteBlock& b) {
  if (a.empty() || b.empty() || a.end() <= b.start || b.end() <= a.start) return false;
  for (std::uint64_t c = 0; c < a.cols; ++c) {
    const std::uintptr_t s = a.start + c * a.ld, e = s + a.rows;
    if (e <= b.start) continue;
    // First column r of b with b.start + r ldb + rows_b > s.
    const std::uint64_t r = s < b.start + b.rows ? 0 : (s - b.start - b.rows) / b.ld + 1;
    if (r >= b.cols) return false;  // b ends before this and every later column of a
    if (b.start + r * b.ld < e) return true;
  }
  return false;
}

// True when a block of `bs` shares a byte with a block of `as`. Each list must be ordered by
// address with disjoint address ranges (the batched layouts' rule); a sweep pairs only the blocks
// whose ranges meet, then compares them column by column.
template <class BlockA, class BlockB>
bool any_blocks_overlap(int count_a, BlockA&& block_a, int count_b, BlockB&& block_b) {
  int first_a = 0;
  for (int j = 0; j < count_b; ++j) {
    const ByteBlock b = block_b(j);
    if (b.empty()) continue;
    while (first_a < count_a && (block_a(first_a).empty() || block_a(first_a).end() <= b.start)) ++first_a;
    for (int k = first_a; k < count_a; ++k) {
      const ByteBlock a = block_a(k);
      if (a.empty()) continue;
      if (a.start >= b.end()) break;
      if (blocks_overlap(a, b)) return true;
    }
  }
  return false;
}

}  // namespace tessera::detail
