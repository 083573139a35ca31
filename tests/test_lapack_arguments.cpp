// One set of argument checks (tessera/tools/lapack_arguments.hpp) behind every interface: each argument
// made bad on its own gives its position from the checks, -position from the C API, the position
// in the C++ API's InvalidArgument and, for LAPACK's own checks, the drop-in's INFO (the drop-in
// refuses a call with the reference_* checks and sends what only Tessera refuses to the next
// LAPACK). Then the edge cases of sizes zero, batches of 0 or 1, strides and offsets, and the
// types of the errors that are not misuse.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "request_support.hpp"
#include "tessera/tools/lapack_arguments.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

namespace tessera::test {
namespace {

// The position of the InvalidArgument a call throws; 0 when it throws nothing, -1 for another
// exception.
template <class Call>
int thrown_position(Call&& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.position();
  } catch (...) {
    return -1;
  }
  return 0;
}

FactorOptions factor_options(char uplo) {
  FactorOptions options;
  options.uplo = uplo == 'U' || uplo == 'u' ? Uplo::upper : Uplo::lower;
  options.mode = Mode::cpu;
  return options;
}

BatchOptions batch_options(char uplo) {
  BatchOptions options;
  options.uplo = factor_options(uplo).uplo;
  options.mode = Mode::cpu;
  return options;
}

// Which checks a position comes from: reference LAPACK's (the drop-in's INFO too) or Tessera's
// own (the drop-in passes such a call on to the next LAPACK, INFO untouched by the checks).
enum class CheckedBy { lapack, tessera };

// Every interface that has the routine agrees on the position (0: the call is valid and runs).
template <class Call>
void expect_position(const Call& call, int expected, CheckedBy checked_by = CheckedBy::tessera) {
  const ArgumentError error = call.checks();
  EXPECT_EQ(error.position, expected) << error.name << " " << error.rule;
  if (const std::optional<int> status = call.c_api()) {
    if (expected) {
      EXPECT_EQ(*status, -expected) << "C API";
    } else {
      EXPECT_GE(*status, 0) << "C API";
    }
  }
  // The C++ API takes uplo as an enum: there is no bad uplo to pass it.
  if (expected != 1) EXPECT_EQ(thrown_position([&] { call.cpp(); }), expected) << "C++ API";
  if constexpr (Call::in_drop_in)
    EXPECT_EQ(call.lapack_checks().position, checked_by == CheckedBy::lapack ? expected : 0) << "drop-in";
}

// The call with one argument changed (`member` may be a base's).
template <class Call, class Member, class Value>
Call with(Call call, Member member, Value value) {
  call.*member = value;
  return call;
}

// ---- one matrix ------------------------------------------------------------------------------

struct PotrfCall {
  static constexpr bool in_drop_in = true;
  char uplo;
  int n;
  double* a;
  int lda;

  ArgumentError checks() const { return potrf_argument_error(uplo, n, a, lda); }
  ArgumentError lapack_checks() const { return reference_potrf_argument_error(uplo, n, lda); }
  std::optional<int> c_api() const { return tessera_dpotrf(uplo, n, a, lda); }
  void cpp() const { potrf(runtime(), n, a, lda, factor_options(uplo)); }
};

// potrs when factors is false, else posv: the same arguments.
struct SolveCall {
  static constexpr bool in_drop_in = true;
  bool factors;
  char uplo;
  int n;
  int nrhs;
  double* a;
  int lda;
  double* b;
  int ldb;

  ArgumentError checks() const {
    return factors ? posv_argument_error<double>(uplo, n, nrhs, a, lda, b, ldb)
                   : potrs_argument_error<double>(uplo, n, nrhs, a, lda, b, ldb);
  }
  ArgumentError lapack_checks() const {
    return factors ? reference_posv_argument_error(uplo, n, nrhs, lda, ldb)
                   : reference_potrs_argument_error(uplo, n, nrhs, lda, ldb);
  }
  std::optional<int> c_api() const {
    return factors ? tessera_dposv(uplo, n, nrhs, a, lda, b, ldb) : tessera_dpotrs(uplo, n, nrhs, a, lda, b, ldb);
  }
  void cpp() const {
    if (factors)
      posv(runtime(), n, nrhs, a, lda, b, ldb, factor_options(uplo));
    else
      potrs(runtime(), n, nrhs, static_cast<const double*>(a), lda, b, ldb, factor_options(uplo));
  }
};

TEST(LapackArguments, PotrfEachBadArgument) {
  std::vector<double> memory(16, 0.0);
  const PotrfCall valid{'L', 4, memory.data(), 4};
  EXPECT_EQ(valid.checks().position, 0);
  expect_position(with(valid, &PotrfCall::uplo, 'X'), 1, CheckedBy::lapack);
  expect_position(with(valid, &PotrfCall::n, -1), 2, CheckedBy::lapack);
  expect_position(with(valid, &PotrfCall::a, nullptr), 3);
  expect_position(with(valid, &PotrfCall::lda, 3), 4, CheckedBy::lapack);
  // Several bad: LAPACK's checks first, in LAPACK's order, then the null A.
  expect_position(PotrfCall{'X', -1, nullptr, 0}, 1, CheckedBy::lapack);
  expect_position(PotrfCall{'L', 4, nullptr, 3}, 4, CheckedBy::lapack);
}

TEST(LapackArguments, PotrsAndPosvEachBadArgument) {
  std::vector<double> memory(64, 0.0);
  for (const bool factors : {false, true}) {
    SCOPED_TRACE(factors ? "posv" : "potrs");
    const SolveCall valid{factors, 'U', 4, 2, memory.data(), 4, memory.data() + 32, 4};
    EXPECT_EQ(valid.checks().position, 0);
    expect_position(with(valid, &SolveCall::uplo, '?'), 1, CheckedBy::lapack);
    expect_position(with(valid, &SolveCall::n, -1), 2, CheckedBy::lapack);
    expect_position(with(valid, &SolveCall::nrhs, -1), 3, CheckedBy::lapack);
    expect_position(with(valid, &SolveCall::a, nullptr), 4);
    expect_position(with(valid, &SolveCall::lda, 3), 5, CheckedBy::lapack);
    expect_position(with(valid, &SolveCall::b, nullptr), 6);
    expect_position(with(valid, &SolveCall::ldb, 3), 7, CheckedBy::lapack);
    // B sharing an element with A: an invalid B, after every other check.
    expect_position(with(valid, &SolveCall::b, memory.data() + 15), 6);
    expect_position(with(with(valid, &SolveCall::b, memory.data() + 15), &SolveCall::ldb, 1), 7, CheckedBy::lapack);
    expect_position(SolveCall{factors, 'L', 4, 2, nullptr, 4, nullptr, 3}, 7, CheckedBy::lapack);
  }
}

TEST(LapackArguments, ZeroSizesNeedNoMemoryButLapacksLeadingDimensions) {
  expect_position(PotrfCall{'L', 0, nullptr, 1}, 0);
  expect_position(PotrfCall{'L', 0, nullptr, 0}, 4, CheckedBy::lapack);  // lda >= max(1, n) even for n = 0
  for (const bool factors : {false, true}) {
    expect_position(SolveCall{factors, 'U', 0, 3, nullptr, 1, nullptr, 1}, 0);
    expect_position(SolveCall{factors, 'L', 0, 0, nullptr, 0, nullptr, 1}, 5, CheckedBy::lapack);
    expect_position(SolveCall{factors, 'L', 0, 0, nullptr, 1, nullptr, 0}, 7, CheckedBy::lapack);
  }
  std::vector<double> A = random_spd<double>(1, 1, 3);
  expect_position(SolveCall{false, 'L', 1, 0, A.data(), 1, nullptr, 1}, 0);  // no right-hand side, no B
}

TEST(LapackArguments, RightHandSidesInThePaddingRowsAreApart) {
  const int n = 4, lda = 8;
  std::vector<double> memory = random_spd<double>(n, lda, 9);
  // B (4 x 1, ldb 8) in rows 4..7 of A's first column: no element shared.
  expect_position(SolveCall{true, 'L', n, 1, memory.data(), lda, memory.data() + n, lda}, 0);
  expect_position(SolveCall{true, 'L', n, 1, memory.data(), lda, memory.data() + n - 1, lda}, 6);
}

// The 64-bit LAPACK interfaces pass sizes beyond int: reference LAPACK's checks take them as they
// are; Tessera refuses them (the drop-in then calls the next LAPACK).
TEST(LapackArguments, SizesBeyondIntAreValidForLapackButNotForTessera) {
  const long long big = 3'000'000'000LL;
  double element = 1.0;
  EXPECT_EQ(reference_potrf_argument_error('L', big, big).position, 0);
  EXPECT_EQ(potrf_argument_error('L', big, &element, big).position, 2);
  EXPECT_EQ(reference_potrf_argument_error('L', big, 1).position, 4);
  EXPECT_EQ(potrf_argument_error('L', 1, &element, big).position, 4);
  EXPECT_EQ(reference_posv_argument_error('L', 1, big, 1, 1).position, 0);
  EXPECT_EQ(posv_argument_error('L', 1, big, &element, 1, &element + 1, 1).position, 3);
  EXPECT_EQ(potrs_argument_error('L', 1, 1, &element, 1, &element + 1, big).position, 7);
}

TEST(LapackArguments, CppMessagesNameTheArgumentAndItsPosition) {
  std::vector<double> A(16, 0.0);
  try {
    potrf(runtime(), 4, A.data(), 3);
    ADD_FAILURE() << "lda = 3 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 4);
    EXPECT_EQ(std::string(e.what()), "potrf: lda (argument 4) must be >= max(1, n)");
  }
  const int n[2] = {2, -1}, lda[2] = {2, 1};
  const long long offsets[2] = {0, 4};
  int info[2];
  EXPECT_EQ(describe("potrf_vbatched", potrf_vbatched_argument_error('L', n, A.data(), offsets, lda, 2, info)),
            "potrf_vbatched: n (argument 2) must hold orders >= 0 (matrix 1)");
}

// ---- strided batches -------------------------------------------------------------------------

struct PotrfBatchedCall {
  static constexpr bool in_drop_in = false;
  char uplo;
  int n;
  double* a;
  int lda;
  long long stride_a;
  int batch;
  int* info;

  ArgumentError checks() const { return potrf_batched_argument_error(uplo, n, a, lda, stride_a, batch, info); }
  std::optional<int> c_api() const { return tessera_dpotrf_batched(uplo, n, a, lda, stride_a, batch, info); }
  void cpp() const { potrf_batched(runtime(), n, a, lda, stride_a, batch, info, batch_options(uplo)); }
};

// potrs_batched (C++ only, no info) when factors is false, else posv_batched: each matrix's
// arguments are a solve's, then where the matrices lie and how many there are.
struct SolveBatchedCall : SolveCall {
  static constexpr bool in_drop_in = false;
  long long stride_a;
  long long stride_b;
  int batch;
  int* info;

  ArgumentError checks() const {
    return factors ? posv_batched_argument_error<double>(uplo, n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch, info)
                   : potrs_batched_argument_error<double>(uplo, n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch);
  }
  std::optional<int> c_api() const {
    if (!factors) return std::nullopt;
    return tessera_dposv_batched(uplo, n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch, info);
  }
  void cpp() const {
    if (factors)
      posv_batched(runtime(), n, nrhs, a, lda, stride_a, b, ldb, stride_b, batch, info, batch_options(uplo));
    else
      potrs_batched_async(runtime(), n, nrhs, static_cast<const double*>(a), lda, stride_a, b, ldb, stride_b, batch,
                          batch_options(uplo))
          .wait();
  }
};

// Identity matrices of order n, lda = n, one after another.
std::vector<double> identities(int n, int count) {
  std::vector<double> memory(static_cast<std::size_t>(n) * n * count, 0.0);
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) memory[static_cast<std::size_t>(k) * n * n + i + i * n] = 1.0;
  return memory;
}

TEST(LapackArguments, PotrfBatchedEachBadArgument) {
  std::vector<double> memory = identities(2, 3);
  std::vector<int> info(3, -9);
  const PotrfBatchedCall valid{'L', 2, memory.data(), 2, 4, 3, info.data()};
  EXPECT_EQ(valid.checks().position, 0);
  expect_position(with(valid, &PotrfBatchedCall::uplo, 'X'), 1);
  expect_position(with(valid, &PotrfBatchedCall::n, -1), 2);
  expect_position(with(valid, &PotrfBatchedCall::a, nullptr), 3);
  expect_position(with(valid, &PotrfBatchedCall::lda, 1), 4);
  expect_position(with(valid, &PotrfBatchedCall::stride_a, 3LL), 5);  // the matrices would overlap
  expect_position(with(valid, &PotrfBatchedCall::batch, -1), 6);
  expect_position(with(valid, &PotrfBatchedCall::info, nullptr), 7);
}

TEST(LapackArguments, StridedBatchesNeedWholeMatricesApart) {
  std::vector<double> memory = identities(2, 3);
  std::vector<int> info(5, -9);
  const PotrfBatchedCall valid{'L', 2, memory.data(), 2, 4, 3, info.data()};
  expect_position(with(valid, &PotrfBatchedCall::stride_a, 0LL), 5);
  expect_position(with(valid, &PotrfBatchedCall::stride_a, -4LL), 5);
  // lda * n, not the lda * (n - 1) + n elements a matrix spans: 5 is refused, although matrix 1
  // would only begin in matrix 0's last padding row.
  expect_position(PotrfBatchedCall{'L', 2, memory.data(), 3, 5, 2, info.data()}, 5);
  // One matrix, or none: any stride.
  for (const long long stride : {-4LL, 0LL, 1LL}) {
    expect_position(with(with(valid, &PotrfBatchedCall::batch, 1), &PotrfBatchedCall::stride_a, stride), 0);
    expect_position(PotrfBatchedCall{'L', 2, nullptr, 2, stride, 0, nullptr}, 0);
  }
  // Matrices with no element: any stride, no memory; lda still >= 1.
  expect_position(PotrfBatchedCall{'L', 0, nullptr, 1, -1, 5, info.data()}, 0);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(info[k], 0);
  expect_position(PotrfBatchedCall{'L', 0, nullptr, 0, 0, 5, info.data()}, 4);
}

TEST(LapackArguments, PotrsAndPosvBatchedEachBadArgument) {
  std::vector<double> memory = identities(2, 6);
  std::vector<int> info(3, -9);
  for (const bool factors : {false, true}) {
    SCOPED_TRACE(factors ? "posv_batched" : "potrs_batched");
    const SolveBatchedCall valid{{factors, 'L', 2, 1, memory.data(), 2, memory.data() + 12, 2}, 4, 2, 3, info.data()};
    EXPECT_EQ(valid.checks().position, 0);
    expect_position(with(valid, &SolveBatchedCall::uplo, 'X'), 1);
    expect_position(with(valid, &SolveBatchedCall::n, -1), 2);
    expect_position(with(valid, &SolveBatchedCall::nrhs, -1), 3);
    expect_position(with(valid, &SolveBatchedCall::a, nullptr), 4);
    expect_position(with(valid, &SolveBatchedCall::lda, 1), 5);
    expect_position(with(valid, &SolveBatchedCall::stride_a, 3LL), 6);
    expect_position(with(valid, &SolveBatchedCall::b, nullptr), 7);
    expect_position(with(valid, &SolveBatchedCall::ldb, 1), 8);
    expect_position(with(valid, &SolveBatchedCall::stride_b, 1LL), 9);
    expect_position(with(valid, &SolveBatchedCall::stride_b, -2LL), 9);
    expect_position(with(valid, &SolveBatchedCall::batch, -1), 10);
    if (factors) expect_position(with(valid, &SolveBatchedCall::info, nullptr), 11);
    // B_0 on A_1 (elements 6..7 of 4..7), B_1 on A_2: an invalid B, after every other check.
    expect_position(with(valid, &SolveBatchedCall::b, memory.data() + 6), 7);
    expect_position(with(with(valid, &SolveBatchedCall::b, memory.data() + 6), &SolveBatchedCall::ldb, 1), 8);
    // No right-hand side: B and strideB are never used.
    expect_position(with(with(with(valid, &SolveBatchedCall::nrhs, 0), &SolveBatchedCall::b, nullptr),
                         &SolveBatchedCall::stride_b, -7LL),
                    0);
    // n = 0: nothing at all is used but the sizes and info.
    expect_position(SolveBatchedCall{{factors, 'U', 0, 3, nullptr, 1, nullptr, 1}, -1, -1, 3, info.data()}, 0);
  }
}

// ---- variable-size batches -----------------------------------------------------------------

// potrf_vbatched when solves is false, else potrs_vbatched (factors false) or posv_vbatched;
// C++ only.
struct VariableBatchCall {
  static constexpr bool in_drop_in = false;
  bool solves;
  bool factors;
  char uplo;
  const int* n;
  int nrhs;
  double* a;
  const long long* offsets;
  const int* lda;
  double* b;
  const long long* offsets_b;
  const int* ldb;
  int batch;
  int* info;

  ArgumentError checks() const {
    if (!solves) return potrf_vbatched_argument_error(uplo, n, a, offsets, lda, batch, info);
    return factors ? posv_vbatched_argument_error<double>(uplo, n, nrhs, a, offsets, lda, b, offsets_b, ldb, batch, info)
                   : potrs_vbatched_argument_error<double>(uplo, n, nrhs, a, offsets, lda, b, offsets_b, ldb, batch);
  }
  std::optional<int> c_api() const { return std::nullopt; }
  void cpp() const {
    if (!solves)
      potrf_vbatched_async(runtime(), n, a, offsets, lda, batch, info, batch_options(uplo)).wait();
    else if (factors)
      posv_vbatched_async(runtime(), n, nrhs, a, offsets, lda, b, offsets_b, ldb, batch, info, batch_options(uplo)).wait();
    else
      potrs_vbatched_async(runtime(), n, nrhs, static_cast<const double*>(a), offsets, lda, b, offsets_b, ldb, batch,
                           batch_options(uplo))
          .wait();
  }
};

TEST(LapackArguments, PotrfVbatchedEachBadArgument) {
  const int n[2] = {2, 3}, lda[2] = {2, 3}, negative_n[2] = {2, -1}, small_lda[2] = {2, 2};
  const long long offsets[2] = {0, 4}, overlapping[2] = {0, 3}, decreasing[2] = {9, 0}, negative[2] = {-1, 4};
  std::vector<double> memory(13, 0.0);
  std::vector<int> info(2, -9);
  const VariableBatchCall valid{false, false, 'L', n, 0, memory.data(), offsets, lda, nullptr, nullptr, nullptr, 2,
                                info.data()};
  EXPECT_EQ(valid.checks().position, 0);
  expect_position(with(valid, &VariableBatchCall::uplo, 'X'), 1);
  expect_position(with(valid, &VariableBatchCall::n, static_cast<const int*>(nullptr)), 2);
  expect_position(with(valid, &VariableBatchCall::n, negative_n), 2);
  expect_position(with(valid, &VariableBatchCall::a, nullptr), 3);
  expect_position(with(valid, &VariableBatchCall::offsets, static_cast<const long long*>(nullptr)), 4);
  expect_position(with(valid, &VariableBatchCall::offsets, overlapping), 4);
  expect_position(with(valid, &VariableBatchCall::offsets, decreasing), 4);
  expect_position(with(valid, &VariableBatchCall::offsets, negative), 4);
  expect_position(with(valid, &VariableBatchCall::lda, static_cast<const int*>(nullptr)), 5);
  expect_position(with(valid, &VariableBatchCall::lda, small_lda), 5);
  expect_position(with(valid, &VariableBatchCall::batch, -1), 6);
  expect_position(with(valid, &VariableBatchCall::info, nullptr), 7);
  EXPECT_EQ(with(valid, &VariableBatchCall::lda, small_lda).checks().matrix, 1);
  // No matrix: no array is read. Empty matrices only: no memory and no offsets are used.
  expect_position(VariableBatchCall{false, false, 'L', nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    0, nullptr},
                  0);
  const int zeros[2] = {0, 0}, ones[2] = {1, 1};
  expect_position(VariableBatchCall{false, false, 'L', zeros, 0, nullptr, nullptr, ones, nullptr, nullptr, nullptr, 2,
                                    info.data()},
                  0);
}

TEST(LapackArguments, PotrsAndPosvVbatchedEachBadArgument) {
  const int n[2] = {2, 3}, lda[2] = {2, 3}, negative_n[2] = {2, -1}, small_ld[2] = {1, 3};
  const long long offsets[2] = {0, 4}, offsets_b[2] = {20, 22}, overlapping_b[2] = {20, 21}, on_a[2] = {2, 22};
  std::vector<double> memory(32, 0.0);
  memory[0] = memory[3] = memory[4] = memory[8] = memory[12] = 1.0;  // identities
  std::vector<int> info(2, -9);
  for (const bool factors : {false, true}) {
    SCOPED_TRACE(factors ? "posv_vbatched" : "potrs_vbatched");
    const VariableBatchCall valid{true, factors, 'L', n, 1, memory.data(), offsets, lda, memory.data(), offsets_b, lda,
                                  2, info.data()};
    EXPECT_EQ(valid.checks().position, 0);
    expect_position(with(valid, &VariableBatchCall::uplo, 'X'), 1);
    expect_position(with(valid, &VariableBatchCall::n, negative_n), 2);
    expect_position(with(valid, &VariableBatchCall::nrhs, -1), 3);
    expect_position(with(valid, &VariableBatchCall::a, nullptr), 4);
    expect_position(with(valid, &VariableBatchCall::offsets, static_cast<const long long*>(nullptr)), 5);
    expect_position(with(valid, &VariableBatchCall::lda, small_ld), 6);
    expect_position(with(valid, &VariableBatchCall::b, nullptr), 7);
    expect_position(with(valid, &VariableBatchCall::offsets_b, overlapping_b), 8);
    expect_position(with(valid, &VariableBatchCall::ldb, small_ld), 9);
    expect_position(with(valid, &VariableBatchCall::batch, -1), 10);
    if (factors) expect_position(with(valid, &VariableBatchCall::info, nullptr), 11);
    expect_position(with(valid, &VariableBatchCall::offsets_b, on_a), 7);  // B_0 inside A_0
    // No right-hand side: neither B nor its offsets are used.
    expect_position(with(with(with(valid, &VariableBatchCall::nrhs, 0), &VariableBatchCall::b, nullptr),
                         &VariableBatchCall::offsets_b, static_cast<const long long*>(nullptr)),
                    0);
  }
}

// ---- errors that are not misuse --------------------------------------------------------------

// A matrix too large for the machine is a ResourceError, raised before anything is allocated or
// read.
TEST(LapackArguments, CapacityLimitsAreResourceErrors) {
  double element = 1.0;
  const int n = 1'000'000;  // 4 TB of tiles
  EXPECT_THROW(potrf(runtime(), n, &element, n, factor_options('L')), ResourceError);
  EXPECT_THROW(TileMatrix<double>(runtime(), n, 1024), ResourceError);
}

// An error raised inside a task comes out of Request::wait as the type it was raised with.
template <class Exception>
void expect_rethrown_with_its_type(const Exception& raised) {
  Request request = detail::make_request(runtime(), nullptr, [&](detail::Submission& submission) {
    try {
      throw raised;
    } catch (...) {
      submission.record_current_exception("task");
    }
  });
  EXPECT_THROW(request.wait(), Exception);
}

TEST(LapackArguments, TaskErrorsKeepTheirTypeThroughWait) {
  expect_rethrown_with_its_type(CudaError("launch failed"));
  expect_rethrown_with_its_type(ResourceError("batch too large for one launch"));
  expect_rethrown_with_its_type(RuntimeError("no worker"));
}

}  // namespace
}  // namespace tessera::test
