// The argument checks of tessera/tools/lapack_arguments.hpp. libtessera_lapack compiles this file too
// (src/lapack/CMakeLists.txt): it reaches libtessera only through dlopen, so it could not call the
// exported functions for its own checks, and one source keeps the two on the same rules.
#include "tessera/tools/lapack_arguments.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "memory_overlap.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

constexpr const char* must_be_uplo = "must be 'U' or 'L'";
constexpr const char* must_not_be_negative = "must be >= 0";
constexpr const char* must_cover_n = "must be >= max(1, n)";
constexpr const char* must_fit_int = "must be <= INT_MAX (Tessera counts in int)";
constexpr const char* must_not_be_null = "must not be null";
constexpr const char* must_keep_apart_from_a = "must not share memory with A";

// Where each argument stands in a routine's list (lapack_arguments.hpp); 0 for one it lacks. uplo
// is always first.
struct ArgumentList {
  int n = 0;
  int nrhs = 0;
  int a = 0;
  int where_a = 0;  // strideA or offsets
  int lda = 0;
  int b = 0;
  int where_b = 0;  // strideB or offsetsB
  int ldb = 0;
  int batch = 0;
  int info = 0;
  int max_n = 0;  // device-resident variable batches
};

constexpr ArgumentList potrf_list{2, 0, 3, 0, 4};
constexpr ArgumentList solve_list{2, 3, 4, 0, 5, 6, 0, 7};
constexpr ArgumentList potrf_batched_list{2, 0, 3, 5, 4, 0, 0, 0, 6, 7};
constexpr ArgumentList potrs_batched_list{2, 3, 4, 6, 5, 7, 9, 8, 10};
constexpr ArgumentList posv_batched_list{2, 3, 4, 6, 5, 7, 9, 8, 10, 11};
constexpr ArgumentList potrf_vbatched_list{2, 0, 3, 4, 5, 0, 0, 0, 6, 7};
constexpr ArgumentList potrs_vbatched_list{2, 3, 4, 5, 6, 7, 8, 9, 10};
constexpr ArgumentList posv_vbatched_list{2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
constexpr ArgumentList strided_matrices_list{2, 0, 3, 5, 4, 0, 0, 0, 6, 0};
// Out of place: A 3 (its strides 4, 5, 6), L 7 with ldl 8 and strideL 9 (in the B fields).
constexpr ArgumentList potrf_out_of_place_list{2, 0, 3, 6, 0, 7, 9, 8, 10, 11};
// The same places without the info (11): the out-of-place inverses' may be null (a failed matrix's
// inverse is NaN either way).
constexpr ArgumentList out_of_place_matrices_list{2, 0, 3, 6, 0, 7, 9, 8, 10, 0};
// One matrix out of place (device::potrf_ex): A 3 (its strides 4, 5), L 6 with ldl 7, info 8;
// device::potrf's form returns its info (none among the arguments).
constexpr ArgumentList potrf_dense_out_of_place_list{2, 0, 3, 0, 0, 6, 0, 7, 0, 8};
constexpr ArgumentList potrf_dense_out_of_place_returning_info_list{2, 0, 3, 0, 0, 6, 0, 7, 0, 0};
constexpr ArgumentList potrf_pointers_list{2, 0, 3, 0, 4, 0, 0, 0, 5, 6};
constexpr ArgumentList potrs_pointers_list{2, 3, 4, 0, 5, 6, 0, 7, 8, 0};
constexpr ArgumentList posv_pointers_list{2, 3, 4, 0, 5, 6, 0, 7, 8, 9};
constexpr ArgumentList potrf_vbatched_device_list{2, 0, 4, 0, 5, 0, 0, 0, 6, 7, 3};
constexpr ArgumentList potrs_vbatched_device_list{2, 4, 5, 0, 6, 7, 0, 8, 9, 0, 3};
constexpr ArgumentList posv_vbatched_device_list{2, 4, 5, 0, 6, 7, 0, 8, 9, 10, 3};

bool valid_uplo(char uplo) { return uplo == 'U' || uplo == 'u' || uplo == 'L' || uplo == 'l'; }

// The bytes of matrix k of a batch, as memory_overlap.hpp compares them (empty: no element). In
// integers: an unused matrix's offset may point anywhere.
template <class T>
detail::ByteBlock byte_block(const T* base, long long offset, int rows, int cols, int ld) {
  if (rows == 0 || cols == 0) return {0, 0, 0, 1};
  return {reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(offset) * sizeof(T),
          static_cast<std::uint64_t>(rows) * sizeof(T), static_cast<std::uint64_t>(cols),
          static_cast<std::uint64_t>(ld) * sizeof(T)};
}

// ---- one matrix (xPOTRF, xPOTRS, xPOSV) --------------------------------------------------------

// Reference LAPACK's checks, in its order: uplo, n, nrhs, lda, ldb.
ArgumentError reference_error(const ArgumentList& list, char uplo, long long n, long long nrhs, long long lda,
                              long long ldb) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (n < 0) return {list.n, "n", must_not_be_negative};
  if (list.nrhs && nrhs < 0) return {list.nrhs, "nrhs", must_not_be_negative};
  if (lda < std::max(1LL, n)) return {list.lda, "lda", must_cover_n};
  if (list.ldb && ldb < std::max(1LL, n)) return {list.ldb, "ldb", must_cover_n};
  return {};
}

// Then Tessera's: sizes within int, the matrices' memory, B apart from A.
template <class T>
ArgumentError matrix_error(const ArgumentList& list, char uplo, long long n, long long nrhs, const T* a, long long lda,
                           const T* b, long long ldb) {
  if (const ArgumentError error = reference_error(list, uplo, n, nrhs, lda, ldb)) return error;
  if (n > INT_MAX) return {list.n, "n", must_fit_int};
  if (nrhs > INT_MAX) return {list.nrhs, "nrhs", must_fit_int};
  if (lda > INT_MAX) return {list.lda, "lda", must_fit_int};
  if (ldb > INT_MAX) return {list.ldb, "ldb", must_fit_int};
  if (a == nullptr && n > 0) return {list.a, "A", must_not_be_null};
  if (!list.b || n == 0 || nrhs == 0) return {};
  if (b == nullptr) return {list.b, "B", must_not_be_null};
  if (detail::right_hand_sides_overlap(a, static_cast<int>(lda), b, static_cast<int>(ldb), static_cast<int>(n),
                                       static_cast<int>(nrhs), sizeof(T)))
    return {list.b, "B", must_keep_apart_from_a};
  return {};
}

// ---- strided batches ---------------------------------------------------------------------------

// With two or more matrices holding elements, each starts where the previous one's lda * cols
// elements end, or later (the header says why).
bool strided_apart(int rows, int cols, int ld, long long stride, int batch) {
  return batch <= 1 || rows == 0 || cols == 0 || stride >= static_cast<long long>(ld) * cols;
}

// Sizes (uplo, n, nrhs, lda, strideA, ldb, strideB, batch), then pointers (A, B, info), then B
// apart from A. A list without B (potrf) passes nrhs = 0.
template <class T>
ArgumentError strided_error(const ArgumentList& list, char uplo, int n, int nrhs, const T* a, int lda,
                            long long stride_a, const T* b, int ldb, long long stride_b, int batch, const int* info) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (n < 0) return {list.n, "n", must_not_be_negative};
  if (nrhs < 0) return {list.nrhs, "nrhs", must_not_be_negative};
  if (lda < std::max(1, n)) return {list.lda, "lda", must_cover_n};
  if (!strided_apart(n, n, lda, stride_a, batch))
    return {list.where_a, "strideA", "must be >= lda * n (the matrices would overlap)"};
  if (list.ldb && ldb < std::max(1, n)) return {list.ldb, "ldb", must_cover_n};
  if (list.where_b && !strided_apart(n, nrhs, ldb, stride_b, batch))
    return {list.where_b, "strideB", "must be >= ldb * nrhs (the right-hand sides would overlap)"};
  if (batch < 0) return {list.batch, "batch", must_not_be_negative};
  if (batch == 0) return {};
  if (a == nullptr && n > 0) return {list.a, "A", must_not_be_null};
  const bool solves = list.b && n > 0 && nrhs > 0;
  if (solves && b == nullptr) return {list.b, "B", must_not_be_null};
  if (list.info && info == nullptr) return {list.info, "info", must_not_be_null};
  if (solves && detail::any_blocks_overlap(
                    batch, [&](int k) { return byte_block(a, k * stride_a, n, n, lda); }, batch,
                    [&](int k) { return byte_block(b, k * stride_b, n, nrhs, ldb); }))
    return {list.b, "B", must_keep_apart_from_a};
  return {};
}

// ---- out-of-place batches ----------------------------------------------------------------------

// Wide enough for an address plus any product of an int count and a long long stride.
__extension__ typedef __int128 Wide;

// The bytes [first, last] a batch spans: batch x rows x cols elements, any strides.
struct ByteRange {
  Wide first;
  Wide last;
};

template <class T>
ByteRange strided_range(const T* base, int batch, long long stride, int rows, long long row_stride, int cols,
                        long long col_stride) {
  Wide low = 0, high = 0;
  const auto extend = [&](int count, long long step) {
    const Wide reach = static_cast<Wide>(count - 1) * step;
    (reach < 0 ? low : high) += reach;
  };
  extend(batch, stride);
  extend(rows, row_stride);
  extend(cols, col_stride);
  const Wide address = static_cast<Wide>(reinterpret_cast<std::uintptr_t>(base));
  const Wide size = static_cast<Wide>(sizeof(T));
  return {address + low * size, address + high * size + size - 1};
}

template <class T>
ArgumentError out_of_place_error(const ArgumentList& list, char uplo, int n, const T* a, long long row_stride_a,
                                 long long col_stride_a, long long stride_a, const T* l, int ldl, long long stride_l,
                                 int batch, const int* info) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (n < 0) return {list.n, "n", must_not_be_negative};
  if (ldl < std::max(1, n)) return {list.ldb, "ldl", must_cover_n};
  if (!strided_apart(n, n, ldl, stride_l, batch))
    return {list.where_b, "strideL", "must be >= ldl * n (the factors would overlap)"};
  if (batch < 0) return {list.batch, "batch", must_not_be_negative};
  if (batch == 0) return {};
  if (a == nullptr && n > 0) return {list.a, "A", must_not_be_null};
  if (l == nullptr && n > 0) return {list.b, "L", must_not_be_null};
  if (list.info != 0 && info == nullptr) return {list.info, "info", must_not_be_null};
  if (n == 0) return {};
  const bool in_place = a == l && (n <= 1 || (row_stride_a == 1 && col_stride_a == ldl)) &&
                        (batch <= 1 || stride_a == stride_l);
  if (in_place) return {};
  const ByteRange source = strided_range(a, batch, stride_a, n, row_stride_a, n, col_stride_a);
  const ByteRange factors = strided_range(l, batch, stride_l, n, 1, n, ldl);
  if (source.first <= factors.last && factors.first <= source.last)
    return {list.b, "L", "must not share memory with A (unless in place: L == A, rowStrideA 1, colStrideA ldl, "
                         "strideA strideL)"};
  return {};
}

// ---- variable-size batches ---------------------------------------------------------------------

// One array of a variable-size batch: matrix k is rows[k] x cols(k) at offsets[k], leading
// dimension ld[k].
struct VariableMatrices {
  const int* rows;
  int fixed_cols;  // < 0: square matrices
  const long long* offsets;
  const int* ld;

  int cols(int k) const { return fixed_cols < 0 ? rows[k] : fixed_cols; }
  long long elements(int k) const { return detail::elements_spanned(rows[k], cols(k), ld[k]); }
  bool any_elements(int batch) const {
    for (int k = 0; k < batch; ++k)
      if (elements(k) > 0) return true;
    return false;
  }
  template <class T>
  detail::ByteBlock block(const T* base, int k) const {
    return elements(k) == 0 ? detail::ByteBlock{0, 0, 0, 1} : byte_block(base, offsets[k], rows[k], cols(k), ld[k]);
  }
};

ArgumentError orders_error(int position, const int* n, int batch) {
  if (n == nullptr) return {position, "n", must_not_be_null};
  for (int k = 0; k < batch; ++k)
    if (n[k] < 0) return {position, "n", "must hold orders >= 0", k};
  return {};
}

ArgumentError leading_dimensions_error(int position, const char* name, const int* ld, const int* n, int batch) {
  if (ld == nullptr) return {position, name, must_not_be_null};
  for (int k = 0; k < batch; ++k)
    if (ld[k] < std::max(1, n[k])) return {position, name, "must hold values >= max(1, n[k])", k};
  return {};
}

// The matrices holding elements in increasing order, each after the end of the previous one.
ArgumentError offsets_error(int position, const char* name, const VariableMatrices& matrices, int batch) {
  if (!matrices.any_elements(batch)) return {};  // no offset is used
  if (matrices.offsets == nullptr) return {position, name, must_not_be_null};
  long long previous_end = 0;
  for (int k = 0; k < batch; ++k) {
    const long long elements = matrices.elements(k);
    if (elements == 0) continue;
    if (matrices.offsets[k] < previous_end)
      return {position, name, "must increase, each matrix after the end of the previous one (they would overlap)", k};
    previous_end = matrices.offsets[k] + elements;
  }
  return {};
}

// Scalars (uplo, nrhs, batch), the per-matrix sizes (n, lda, ldb), the offsets, then pointers
// (A, B, info), then B apart from A. A list without B (potrf) passes nrhs = 0.
template <class T>
ArgumentError variable_error(const ArgumentList& list, char uplo, const int* n, int nrhs, const T* a,
                             const long long* offsets, const int* lda, const T* b, const long long* offsets_b,
                             const int* ldb, int batch, const int* info) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (nrhs < 0) return {list.nrhs, "nrhs", must_not_be_negative};
  if (batch < 0) return {list.batch, "batch", must_not_be_negative};
  if (batch == 0) return {};  // no array is read
  if (const ArgumentError error = orders_error(list.n, n, batch)) return error;
  if (const ArgumentError error = leading_dimensions_error(list.lda, "lda", lda, n, batch)) return error;
  if (list.ldb)
    if (const ArgumentError error = leading_dimensions_error(list.ldb, "ldb", ldb, n, batch)) return error;
  const VariableMatrices matrices{n, -1, offsets, lda};
  const VariableMatrices right_hand_sides{n, list.b ? nrhs : 0, offsets_b, ldb};
  if (const ArgumentError error = offsets_error(list.where_a, "offsets", matrices, batch)) return error;
  if (list.where_b)
    if (const ArgumentError error = offsets_error(list.where_b, "offsetsB", right_hand_sides, batch)) return error;
  if (a == nullptr && matrices.any_elements(batch)) return {list.a, "A", must_not_be_null};
  const bool solves = list.b && right_hand_sides.any_elements(batch);
  if (solves && b == nullptr) return {list.b, "B", must_not_be_null};
  if (list.info && info == nullptr) return {list.info, "info", must_not_be_null};
  if (solves && detail::any_blocks_overlap(
                    batch, [&](int k) { return matrices.block(a, k); }, batch,
                    [&](int k) { return right_hand_sides.block(b, k); }))
    return {list.b, "B", must_keep_apart_from_a};
  return {};
}

// ---- device-resident batches ---------------------------------------------------------------------
// The pointer arrays and per-matrix sizes are device memory: only their own pointers are checked.

// Arrays of pointers, uniform sizes: uplo, n, nrhs, lda, ldb, batch, then A_array, B_array, info.
// A list without B (potrf) passes nrhs = 0.
template <class T>
ArgumentError pointer_array_error(const ArgumentList& list, char uplo, int n, int nrhs, const T* const* a_array,
                                  int lda, const T* const* b_array, int ldb, int batch, const int* info) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (n < 0) return {list.n, "n", must_not_be_negative};
  if (nrhs < 0) return {list.nrhs, "nrhs", must_not_be_negative};
  if (lda < std::max(1, n)) return {list.lda, "lda", must_cover_n};
  if (list.ldb && ldb < std::max(1, n)) return {list.ldb, "ldb", must_cover_n};
  if (batch < 0) return {list.batch, "batch", must_not_be_negative};
  if (batch == 0) return {};
  if (a_array == nullptr && n > 0) return {list.a, "A_array", must_not_be_null};
  if (list.b && n > 0 && nrhs > 0 && b_array == nullptr) return {list.b, "B_array", must_not_be_null};
  if (list.info && info == nullptr) return {list.info, "info", must_not_be_null};
  return {};
}

// Variable sizes in device arrays: the scalars (uplo, max_n, nrhs, batch), the size arrays (n,
// lda, ldb), then A_array, B_array, info. Every matrix holds elements only where max_n > 0.
template <class T>
ArgumentError device_variable_error(const ArgumentList& list, char uplo, const int* n, int max_n, int nrhs,
                                    const T* const* a_array, const int* lda, const T* const* b_array, const int* ldb,
                                    int batch, const int* info) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (max_n < 0) return {list.max_n, "max_n", must_not_be_negative};
  if (nrhs < 0) return {list.nrhs, "nrhs", must_not_be_negative};
  if (batch < 0) return {list.batch, "batch", must_not_be_negative};
  if (batch == 0) return {};
  if (n == nullptr) return {list.n, "n", must_not_be_null};
  if (lda == nullptr) return {list.lda, "lda", must_not_be_null};
  if (list.ldb && ldb == nullptr) return {list.ldb, "ldb", must_not_be_null};
  if (a_array == nullptr && max_n > 0) return {list.a, "A_array", must_not_be_null};
  if (list.b && max_n > 0 && nrhs > 0 && b_array == nullptr) return {list.b, "B_array", must_not_be_null};
  if (list.info && info == nullptr) return {list.info, "info", must_not_be_null};
  return {};
}

}  // namespace

std::string describe(const char* routine, const ArgumentError& error) {
  std::string text = std::string(routine) + ": " + error.name + " (argument " + std::to_string(error.position) + ") " +
                     error.rule;
  if (error.matrix >= 0) text += " (matrix " + std::to_string(error.matrix) + ")";
  return text;
}

ArgumentError reference_potrf_argument_error(char uplo, long long n, long long lda) {
  return reference_error(potrf_list, uplo, n, 0, lda, 1);
}

ArgumentError reference_potrs_argument_error(char uplo, long long n, long long nrhs, long long lda, long long ldb) {
  return reference_error(solve_list, uplo, n, nrhs, lda, ldb);
}

ArgumentError reference_posv_argument_error(char uplo, long long n, long long nrhs, long long lda, long long ldb) {
  return reference_error(solve_list, uplo, n, nrhs, lda, ldb);
}

ArgumentError reference_posv_refined_argument_error(char uplo, long long n, long long nrhs, long long lda,
                                                    long long ldb, long long ldx) {
  if (const ArgumentError error = reference_error(solve_list, uplo, n, nrhs, lda, ldb)) return error;
  if (ldx < std::max(1LL, n)) return {9, "ldx", must_cover_n};
  return {};
}

template <class T>
ArgumentError potrf_argument_error(char uplo, long long n, const T* a, long long lda) {
  return matrix_error<T>(potrf_list, uplo, n, 0, a, lda, nullptr, 1);
}

template <class T>
ArgumentError potrs_argument_error(char uplo, long long n, long long nrhs, const T* a, long long lda, const T* b,
                                   long long ldb) {
  return matrix_error(solve_list, uplo, n, nrhs, a, lda, b, ldb);
}

template <class T>
ArgumentError posv_argument_error(char uplo, long long n, long long nrhs, const T* a, long long lda, const T* b,
                                  long long ldb) {
  return matrix_error(solve_list, uplo, n, nrhs, a, lda, b, ldb);
}

template <class T>
ArgumentError posv_refined_argument_error(char uplo, long long n, long long nrhs, const T* a, long long lda,
                                          const T* b, long long ldb, const T* x, long long ldx) {
  if (const ArgumentError error = reference_posv_refined_argument_error(uplo, n, nrhs, lda, ldb, ldx)) return error;
  if (n > INT_MAX) return {2, "n", must_fit_int};
  if (nrhs > INT_MAX) return {3, "nrhs", must_fit_int};
  if (lda > INT_MAX) return {5, "lda", must_fit_int};
  if (ldb > INT_MAX) return {7, "ldb", must_fit_int};
  if (ldx > INT_MAX) return {9, "ldx", must_fit_int};
  if (a == nullptr && n > 0) return {4, "A", must_not_be_null};
  if (n == 0 || nrhs == 0) return {};
  if (b == nullptr) return {6, "B", must_not_be_null};
  if (x == nullptr) return {8, "X", must_not_be_null};
  // B is only read: it may share memory with A, though not with X.
  const auto block = [&](const T* p, int cols, long long ld) { return byte_block(p, 0, static_cast<int>(n), cols, static_cast<int>(ld)); };
  if (detail::blocks_overlap(block(x, static_cast<int>(nrhs), ldx), block(a, static_cast<int>(n), lda)) ||
      detail::blocks_overlap(block(x, static_cast<int>(nrhs), ldx), block(b, static_cast<int>(nrhs), ldb)))
    return {8, "X", "must not share memory with A or B"};
  return {};
}

template <class T>
ArgumentError potrf_batched_argument_error(char uplo, int n, const T* a, int lda, long long stride_a, int batch,
                                           const int* info) {
  return strided_error<T>(potrf_batched_list, uplo, n, 0, a, lda, stride_a, nullptr, 1, 0, batch, info);
}

template <class T>
ArgumentError potrs_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda, long long stride_a,
                                           const T* b, int ldb, long long stride_b, int batch) {
  return strided_error(potrs_batched_list, uplo, n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch, nullptr);
}

template <class T>
ArgumentError posv_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda, long long stride_a,
                                          const T* b, int ldb, long long stride_b, int batch, const int* info) {
  return strided_error(posv_batched_list, uplo, n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch, info);
}

template <class T>
ArgumentError posv_refined_batched_argument_error(char uplo, int n, int nrhs, const T* a, int lda, long long stride_a,
                                                  const T* b, int ldb, long long stride_b, const T* x, int ldx,
                                                  long long stride_x, int batch) {
  if (!valid_uplo(uplo)) return {1, "uplo", must_be_uplo};
  if (n < 0) return {2, "n", must_not_be_negative};
  if (nrhs < 0) return {3, "nrhs", must_not_be_negative};
  if (lda < std::max(1, n)) return {5, "lda", must_cover_n};
  if (!strided_apart(n, n, lda, stride_a, batch))
    return {6, "strideA", "must be >= lda * n (the matrices would overlap)"};
  if (ldb < std::max(1, n)) return {8, "ldb", must_cover_n};
  if (!strided_apart(n, nrhs, ldb, stride_b, batch))
    return {9, "strideB", "must be >= ldb * nrhs (the right-hand sides would overlap)"};
  if (ldx < std::max(1, n)) return {11, "ldx", must_cover_n};
  if (!strided_apart(n, nrhs, ldx, stride_x, batch))
    return {12, "strideX", "must be >= ldx * nrhs (the solutions would overlap)"};
  if (batch < 0) return {13, "batch", must_not_be_negative};
  if (batch == 0 || n == 0) return {};
  if (a == nullptr) return {4, "A", must_not_be_null};
  if (nrhs == 0) return {};
  if (b == nullptr) return {7, "B", must_not_be_null};
  if (x == nullptr) return {10, "X", must_not_be_null};
  // B is only read: it may share memory with A, though not with X.
  const auto x_block = [&](int k) { return byte_block(x, k * stride_x, n, nrhs, ldx); };
  if (detail::any_blocks_overlap(
          batch, [&](int k) { return byte_block(a, k * stride_a, n, n, lda); }, batch, x_block) ||
      detail::any_blocks_overlap(
          batch, [&](int k) { return byte_block(b, k * stride_b, n, nrhs, ldb); }, batch, x_block))
    return {10, "X", "must not share memory with A or B"};
  return {};
}

template <class T>
ArgumentError potrf_vbatched_argument_error(char uplo, const int* n, const T* a, const long long* offsets,
                                            const int* lda, int batch, const int* info) {
  return variable_error<T>(potrf_vbatched_list, uplo, n, 0, a, offsets, lda, nullptr, nullptr, nullptr, batch, info);
}

template <class T>
ArgumentError potrs_vbatched_argument_error(char uplo, const int* n, int nrhs, const T* a, const long long* offsets,
                                            const int* lda, const T* b, const long long* offsets_b, const int* ldb,
                                            int batch) {
  return variable_error(potrs_vbatched_list, uplo, n, nrhs, a, offsets, lda, b, offsets_b, ldb, batch, nullptr);
}

template <class T>
ArgumentError posv_vbatched_argument_error(char uplo, const int* n, int nrhs, const T* a, const long long* offsets,
                                           const int* lda, const T* b, const long long* offsets_b, const int* ldb,
                                           int batch, const int* info) {
  return variable_error(posv_vbatched_list, uplo, n, nrhs, a, offsets, lda, b, offsets_b, ldb, batch, info);
}

template <class T>
ArgumentError strided_matrices_argument_error(char uplo, int n, const T* a, int lda, long long stride_a, int batch) {
  return strided_error<T>(strided_matrices_list, uplo, n, 0, a, lda, stride_a, nullptr, 1, 0, batch, nullptr);
}

template <class T>
ArgumentError potrf_batched_out_of_place_argument_error(char uplo, int n, const T* a, long long row_stride_a,
                                                        long long col_stride_a, long long stride_a, const T* l,
                                                        int ldl, long long stride_l, int batch, const int* info) {
  return out_of_place_error(potrf_out_of_place_list, uplo, n, a, row_stride_a, col_stride_a, stride_a, l, ldl,
                            stride_l, batch, info);
}

template <class T>
ArgumentError out_of_place_matrices_argument_error(char uplo, int n, const T* l, long long row_stride_l,
                                                   long long col_stride_l, long long stride_l, const T* x, int ldx,
                                                   long long stride_x, int batch) {
  return out_of_place_error(out_of_place_matrices_list, uplo, n, l, row_stride_l, col_stride_l, stride_l, x, ldx,
                            stride_x, batch, static_cast<const int*>(nullptr));
}

template <class T>
ArgumentError potrf_out_of_place_argument_error(char uplo, int n, const T* a, long long row_stride_a,
                                                long long col_stride_a, const T* l, int ldl, const int* info) {
  return out_of_place_error(potrf_dense_out_of_place_list, uplo, n, a, row_stride_a, col_stride_a, 0, l, ldl, 0, 1,
                            info);
}

template <class T>
ArgumentError potrf_out_of_place_argument_error(char uplo, int n, const T* a, long long row_stride_a,
                                                long long col_stride_a, const T* l, int ldl) {
  return out_of_place_error(potrf_dense_out_of_place_returning_info_list, uplo, n, a, row_stride_a, col_stride_a, 0, l,
                            ldl, 0, 1, static_cast<const int*>(nullptr));
}

template <class T>
ArgumentError potrf_batched_pointers_argument_error(char uplo, int n, const T* const* a_array, int lda, int batch,
                                                    const int* info) {
  return pointer_array_error<T>(potrf_pointers_list, uplo, n, 0, a_array, lda, nullptr, 1, batch, info);
}

template <class T>
ArgumentError potrs_batched_pointers_argument_error(char uplo, int n, int nrhs, const T* const* a_array, int lda,
                                                    const T* const* b_array, int ldb, int batch) {
  return pointer_array_error(potrs_pointers_list, uplo, n, nrhs, a_array, lda, b_array, ldb, batch, nullptr);
}

template <class T>
ArgumentError posv_batched_pointers_argument_error(char uplo, int n, int nrhs, const T* const* a_array, int lda,
                                                   const T* const* b_array, int ldb, int batch, const int* info) {
  return pointer_array_error(posv_pointers_list, uplo, n, nrhs, a_array, lda, b_array, ldb, batch, info);
}

template <class T>
ArgumentError potrf_vbatched_device_argument_error(char uplo, const int* n, int max_n, const T* const* a_array,
                                                   const int* lda, int batch, const int* info) {
  return device_variable_error<T>(potrf_vbatched_device_list, uplo, n, max_n, 0, a_array, lda, nullptr, nullptr, batch,
                                  info);
}

template <class T>
ArgumentError potrs_vbatched_device_argument_error(char uplo, const int* n, int max_n, int nrhs,
                                                   const T* const* a_array, const int* lda, const T* const* b_array,
                                                   const int* ldb, int batch) {
  return device_variable_error(potrs_vbatched_device_list, uplo, n, max_n, nrhs, a_array, lda, b_array, ldb, batch,
                               nullptr);
}

template <class T>
ArgumentError posv_vbatched_device_argument_error(char uplo, const int* n, int max_n, int nrhs,
                                                  const T* const* a_array, const int* lda, const T* const* b_array,
                                                  const int* ldb, int batch, const int* info) {
  return device_variable_error(posv_vbatched_device_list, uplo, n, max_n, nrhs, a_array, lda, b_array, ldb, batch,
                               info);
}

template ArgumentError posv_refined_argument_error<double>(char, long long, long long, const double*, long long,
                                                           const double*, long long, const double*, long long);
template ArgumentError posv_refined_argument_error<std::complex<double>>(char, long long, long long,
                                                                         const std::complex<double>*, long long,
                                                                         const std::complex<double>*, long long,
                                                                         const std::complex<double>*, long long);

template ArgumentError posv_refined_batched_argument_error<double>(char, int, int, const double*, int, long long,
                                                                   const double*, int, long long, const double*, int,
                                                                   long long, int);
template ArgumentError posv_refined_batched_argument_error<std::complex<double>>(
    char, int, int, const std::complex<double>*, int, long long, const std::complex<double>*, int, long long,
    const std::complex<double>*, int, long long, int);

#define TESSERA_INSTANTIATE_ARGUMENT_CHECKS(T)                                                                        \
  template ArgumentError potrf_argument_error<T>(char, long long, const T*, long long);                               \
  template ArgumentError potrs_argument_error<T>(char, long long, long long, const T*, long long, const T*, long long); \
  template ArgumentError posv_argument_error<T>(char, long long, long long, const T*, long long, const T*, long long);  \
  template ArgumentError potrf_batched_argument_error<T>(char, int, const T*, int, long long, int, const int*);         \
  template ArgumentError potrs_batched_argument_error<T>(char, int, int, const T*, int, long long, const T*, int,      \
                                                         long long, int);                                             \
  template ArgumentError posv_batched_argument_error<T>(char, int, int, const T*, int, long long, const T*, int,       \
                                                        long long, int, const int*);                                  \
  template ArgumentError potrf_vbatched_argument_error<T>(char, const int*, const T*, const long long*, const int*,    \
                                                          int, const int*);                                           \
  template ArgumentError potrs_vbatched_argument_error<T>(char, const int*, int, const T*, const long long*,           \
                                                          const int*, const T*, const long long*, const int*, int);   \
  template ArgumentError posv_vbatched_argument_error<T>(char, const int*, int, const T*, const long long*,            \
                                                         const int*, const T*, const long long*, const int*, int,     \
                                                         const int*);                                                   \
  template ArgumentError strided_matrices_argument_error<T>(char, int, const T*, int, long long, int);                  \
  template ArgumentError potrf_batched_out_of_place_argument_error<T>(char, int, const T*, long long, long long,         \
                                                                      long long, const T*, int, long long, int,         \
                                                                      const int*);                                      \
  template ArgumentError out_of_place_matrices_argument_error<T>(char, int, const T*, long long, long long, long long, \
                                                                 const T*, int, long long, int);                     \
  template ArgumentError potrf_out_of_place_argument_error<T>(char, int, const T*, long long, long long, const T*, int, \
                                                              const int*);                                              \
  template ArgumentError potrf_out_of_place_argument_error<T>(char, int, const T*, long long, long long, const T*,      \
                                                              int);                                                     \
  template ArgumentError potrf_batched_pointers_argument_error<T>(char, int, const T* const*, int, int, const int*);    \
  template ArgumentError potrs_batched_pointers_argument_error<T>(char, int, int, const T* const*, int,                 \
                                                                  const T* const*, int, int);                           \
  template ArgumentError posv_batched_pointers_argument_error<T>(char, int, int, const T* const*, int,                  \
                                                                 const T* const*, int, int, const int*);                \
  template ArgumentError potrf_vbatched_device_argument_error<T>(char, const int*, int, const T* const*, const int*,    \
                                                                 int, const int*);                                      \
  template ArgumentError potrs_vbatched_device_argument_error<T>(char, const int*, int, int, const T* const*,           \
                                                                 const int*, const T* const*, const int*, int);         \
  template ArgumentError posv_vbatched_device_argument_error<T>(char, const int*, int, int, const T* const*,            \
                                                                const int*, const T* const*, const int*, int,           \
                                                                const int*);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE_ARGUMENT_CHECKS)
#undef TESSERA_INSTANTIATE_ARGUMENT_CHECKS

}  // namespace tessera
