// The device-resident batched API (tessera/device.hpp) where no GPU is needed. Each argument made
// bad on its own throws InvalidArgument with its position (the C API returns -position), checked
// before any CUDA call, so these tests hold on a machine without a GPU; n = 0, max_n = 0 and
// batch = 0 return at once, enqueueing nothing. Built without CUDA every C++ call throws
// RuntimeError. The pointers below stand for device memory: the checks never dereference them.
// The GPU tests are tests/cuda/test_device_batched.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/tools/lapack_arguments.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

using device::Stream;
const Stream kStream = nullptr;

// What a call throws: the InvalidArgument's position, 0 for nothing, -1 for another exception.
template <class Call>
int thrown_position(Call&& call, std::string* message = nullptr) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    if (message) *message = e.what();
    return e.position();
  } catch (const std::exception& e) {
    if (message) *message = e.what();
    return -1;
  }
  return 0;
}

// Storage standing in for device memory: a batch of 3 matrices of order 4 (lda 4, strideA 16),
// right-hand sides of 2 columns (ldb 4, strideB 8) after them, pointer arrays, sizes and info.
template <class T>
struct StandIns {
  std::vector<T> storage = std::vector<T>(256);
  T* A = storage.data();
  T* B = storage.data() + 128;
  T* A_array[3] = {A, A + 16, A + 32};
  T* B_array[3] = {B, B + 8, B + 16};
  int n[3] = {4, 4, 4};
  int ld[3] = {4, 4, 4};
  int info[3] = {-77, -77, -77};
};

// ---- the calls, each argument a member, valid as constructed ----------------------------------------

template <class T>
struct StridedPotrf {  // uplo 1, n 2, A 3, lda 4, strideA 5, batch 6, info 7
  int n = 4;
  T* A;
  int lda = 4;
  long long strideA = 16;
  int batch = 3;
  int* info;
  explicit StridedPotrf(StandIns<T>& s) : A(s.A), info(s.info) {}
  void cpp() const { device::potrf_batched_ex<T>(Uplo::lower, n, A, lda, strideA, batch, info, kStream); }
};

// uplo 1, n 2, A 3, rowStrideA 4, colStrideA 5, strideA 6, L 7, ldl 8, strideL 9, batch 10, info 11:
// a C-ordered batch read from A, its factors written column-major to B's storage.
template <class T>
struct OutOfPlacePotrf {
  int n = 4;
  const T* A;
  long long rowStrideA = 4;
  long long colStrideA = 1;
  long long strideA = 16;
  T* L;
  int ldl = 4;
  long long strideL = 16;
  int batch = 3;
  int* info;
  explicit OutOfPlacePotrf(StandIns<T>& s) : A(s.A), L(s.B), info(s.info) {}
  void cpp() const {
    device::potrf_batched_ex<T>(Uplo::lower, n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch, info,
                                kStream);
  }
  ArgumentError check() const {
    return potrf_batched_out_of_place_argument_error<T>('L', n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL,
                                                        batch, info);
  }
  // The inverses from the factors at A into L (the same positions; info may be null).
  void potri() const {
    device::potri_batched_ex<T>(Uplo::lower, n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch, info,
                                kStream);
  }
  ArgumentError potri_check() const {
    return out_of_place_matrices_argument_error<T>('L', n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch);
  }
};

template <class T>
struct StridedSolve {  // uplo 1, n 2, nrhs 3, A 4, lda 5, strideA 6, B 7, ldb 8, strideB 9, batch 10, info 11
  int n = 4;
  int nrhs = 2;
  T* A;
  int lda = 4;
  long long strideA = 16;
  T* B;
  int ldb = 4;
  long long strideB = 8;
  int batch = 3;
  int* info;
  explicit StridedSolve(StandIns<T>& s) : A(s.A), B(s.B), info(s.info) {}
  void potrs() const {
    device::potrs_batched_ex<T>(Uplo::lower, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, kStream);
  }
  void posv() const {
    device::posv_batched_ex<T>(Uplo::lower, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, kStream);
  }
  int posv_checking() const {
    return device::posv_batched<T>(Uplo::lower, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, kStream);
  }
};

template <class T>
struct PointerPotrf {  // uplo 1, n 2, A_array 3, lda 4, batch 5, info 6
  int n = 4;
  T* const* A_array;
  int lda = 4;
  int batch = 3;
  int* info;
  explicit PointerPotrf(StandIns<T>& s) : A_array(s.A_array), info(s.info) {}
  void cpp() const { device::potrf_batched_ex<T>(Uplo::lower, n, A_array, lda, batch, info, kStream); }
};

template <class T>
struct PointerSolve {  // uplo 1, n 2, nrhs 3, A_array 4, lda 5, B_array 6, ldb 7, batch 8, info 9
  int n = 4;
  int nrhs = 2;
  T* const* A_array;
  int lda = 4;
  T* const* B_array;
  int ldb = 4;
  int batch = 3;
  int* info;
  explicit PointerSolve(StandIns<T>& s) : A_array(s.A_array), B_array(s.B_array), info(s.info) {}
  void potrs() const {
    device::potrs_batched_ex<T>(Uplo::lower, n, nrhs, A_array, lda, B_array, ldb, batch, info, kStream);
  }
  void posv() const {
    device::posv_batched_ex<T>(Uplo::lower, n, nrhs, A_array, lda, B_array, ldb, batch, info, kStream);
  }
};

template <class T>
struct VariablePotrf {  // uplo 1, n 2, max_n 3, A_array 4, lda 5, batch 6, info 7
  const int* n;
  int max_n = 4;
  T* const* A_array;
  const int* lda;
  int batch = 3;
  int* info;
  explicit VariablePotrf(StandIns<T>& s) : n(s.n), A_array(s.A_array), lda(s.ld), info(s.info) {}
  void cpp() const { device::potrf_vbatched_ex<T>(Uplo::lower, n, max_n, A_array, lda, batch, info, kStream); }
};

template <class T>
struct VariableSolve {  // uplo 1, n 2, max_n 3, nrhs 4, A_array 5, lda 6, B_array 7, ldb 8, batch 9, info 10
  const int* n;
  int max_n = 4;
  int nrhs = 2;
  T* const* A_array;
  const int* lda;
  T* const* B_array;
  const int* ldb;
  int batch = 3;
  int* info;
  explicit VariableSolve(StandIns<T>& s)
      : n(s.n), A_array(s.A_array), lda(s.ld), B_array(s.B_array), ldb(s.ld), info(s.info) {}
  void potrs() const {
    device::potrs_vbatched_ex<T>(Uplo::lower, n, max_n, nrhs, A_array, lda, B_array, ldb, batch, info, kStream);
  }
  void posv() const {
    device::posv_vbatched_ex<T>(Uplo::lower, n, max_n, nrhs, A_array, lda, B_array, ldb, batch, info, kStream);
  }
};

template <class T>
struct StridedMatrices {  // uplo 1, n 2, A 3, lda 4, strideA 5, batch 6 (then host_info 7, may be null)
  int n = 4;
  T* A;
  int lda = 4;
  long long strideA = 16;
  int batch = 3;
  int* host_info;
  explicit StridedMatrices(StandIns<T>& s) : A(s.A), host_info(s.info) {}
  int potrf_checking() const {
    return device::potrf_batched<T>(Uplo::lower, n, A, lda, strideA, batch, host_info, kStream);
  }
  void zero_opposite() const { device::zero_opposite_triangle<T>(Uplo::lower, n, A, lda, strideA, batch, kStream); }
};

// The call with one member changed.
template <class Call, class Member, class Value>
Call with(Call call, Member member, Value value) {
  call.*member = value;
  return call;
}

template <class T>
class DeviceApi : public ::testing::Test {
 protected:
  StandIns<T> s;
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceApi, Precisions);

#if TESSERA_HAVE_CUDA

TYPED_TEST(DeviceApi, StridedArgumentsGiveTheirPositions) {
  using T = TypeParam;
  const StridedPotrf<T> f(this->s);
  auto potrf = [](const StridedPotrf<T>& c) { return thrown_position([&] { c.cpp(); }); };
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::n, -1)), 2);
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::A, nullptr)), 3);
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::lda, 3)), 4);
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::strideA, 15LL)), 5);
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::batch, -1)), 6);
  EXPECT_EQ(potrf(with(f, &StridedPotrf<T>::info, nullptr)), 7);

  const StridedSolve<T> v(this->s);
  auto potrs = [](const StridedSolve<T>& c) { return thrown_position([&] { c.potrs(); }); };
  auto posv = [](const StridedSolve<T>& c) { return thrown_position([&] { c.posv(); }); };
  auto posv_checking = [](const StridedSolve<T>& c) { return thrown_position([&] { c.posv_checking(); }); };
  for (auto solve : {+potrs, +posv, +posv_checking}) {
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::n, -1)), 2);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::nrhs, -1)), 3);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::A, nullptr)), 4);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::lda, 3)), 5);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::strideA, 15LL)), 6);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::B, nullptr)), 7);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::B, this->s.A + 40)), 7) << "B sharing memory with A";
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::ldb, 3)), 8);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::strideB, 7LL)), 9);
    EXPECT_EQ(solve(with(v, &StridedSolve<T>::batch, -1)), 10);
  }
  EXPECT_EQ(posv(with(v, &StridedSolve<T>::info, nullptr)), 11);
}

TYPED_TEST(DeviceApi, OutOfPlaceArgumentsGiveTheirPositions) {
  using T = TypeParam;
  using F = OutOfPlacePotrf<T>;
  const F f(this->s);
  auto potrf = [](const F& c) { return thrown_position([&] { c.cpp(); }); };
  EXPECT_EQ(f.check().position, 0);
  EXPECT_EQ(potrf(with(f, &F::n, -1)), 2);
  EXPECT_EQ(potrf(with(f, &F::A, static_cast<const T*>(nullptr))), 3);
  EXPECT_EQ(potrf(with(f, &F::L, static_cast<T*>(nullptr))), 7);
  EXPECT_EQ(potrf(with(f, &F::ldl, 3)), 8);
  EXPECT_EQ(potrf(with(f, &F::strideL, 15LL)), 9);
  EXPECT_EQ(potrf(with(f, &F::batch, -1)), 10);
  EXPECT_EQ(potrf(with(f, &F::info, static_cast<int*>(nullptr))), 11);
  // L sharing memory with A: the last element of A's batch is A + 47.
  EXPECT_EQ(potrf(with(f, &F::L, this->s.storage.data() + 47)), 7);
  EXPECT_EQ(potrf(with(f, &F::L, this->s.storage.data() + 40)), 7);
  EXPECT_EQ(with(f, &F::L, this->s.storage.data() + 48).check().position, 0);
  // Below A: L's last factor ends at L + 47.
  const F above = with(f, &F::A, static_cast<const T*>(this->s.storage.data() + 100));
  EXPECT_EQ(with(above, &F::L, this->s.storage.data() + 52).check().position, 0);
  EXPECT_EQ(potrf(with(above, &F::L, this->s.storage.data() + 53)), 7);

  // A is only read: any strides, zero and negative included (the range then reaches below A).
  // Here A's batch spans [A - 15, A] = elements 65 to 80, and L's 48 elements from L.
  const F odd = with(with(with(with(f, &F::A, static_cast<const T*>(this->s.storage.data() + 80)), &F::rowStrideA, 0LL),
                          &F::colStrideA, -5LL),
                     &F::strideA, 0LL);
  EXPECT_EQ(with(odd, &F::L, this->s.storage.data() + 81).check().position, 0);
  EXPECT_EQ(with(odd, &F::L, this->s.storage.data() + 17).check().position, 0);
  EXPECT_EQ(potrf(with(odd, &F::L, this->s.storage.data() + 18)), 7);
  EXPECT_EQ(potrf(with(odd, &F::L, this->s.storage.data() + 80)), 7);

  // In place: L == A in A's own column-major layout; any other layout over the same memory is refused.
  const F in_place = with(with(with(f, &F::L, this->s.A), &F::rowStrideA, 1LL), &F::colStrideA, 4LL);
  EXPECT_EQ(in_place.check().position, 0);
  EXPECT_EQ(potrf(with(in_place, &F::rowStrideA, 4LL)), 7);
  EXPECT_EQ(potrf(with(in_place, &F::strideA, 20LL)), 7);
  EXPECT_EQ(with(with(in_place, &F::n, 1), &F::rowStrideA, 9LL).check().position, 0) << "n = 1: no stride used";

  std::string message;
  EXPECT_EQ(thrown_position([&] { with(f, &F::ldl, 2).cpp(); }, &message), 8);
  EXPECT_NE(message.find("device::potrf_batched_ex"), std::string::npos) << message;
  EXPECT_NE(message.find("ldl (argument 8)"), std::string::npos) << message;
}

// The out-of-place inverse checks what the factorization does, but takes a null info (no infos
// wanted: a failed matrix's inverse is NaN).
TYPED_TEST(DeviceApi, OutOfPlaceInverseTakesANullInfo) {
  using T = TypeParam;
  using F = OutOfPlacePotrf<T>;
  const F f(this->s);
  auto potri = [](const F& c) { return thrown_position([&] { c.potri(); }); };
  EXPECT_EQ(f.potri_check().position, 0);
  EXPECT_EQ(potri(with(f, &F::n, -1)), 2);
  EXPECT_EQ(potri(with(f, &F::A, static_cast<const T*>(nullptr))), 3);
  EXPECT_EQ(potri(with(with(f, &F::L, static_cast<T*>(nullptr)), &F::info, static_cast<int*>(nullptr))), 7);
  EXPECT_EQ(potri(with(with(f, &F::ldl, 3), &F::info, static_cast<int*>(nullptr))), 8);
  EXPECT_EQ(potri(with(f, &F::strideL, 15LL)), 9);
  EXPECT_EQ(potri(with(f, &F::batch, -1)), 10);
  EXPECT_EQ(potri(with(f, &F::L, this->s.storage.data() + 47)), 7);
  // Nothing to do: returns at once, with or without an info.
  EXPECT_EQ(potri(with(with(f, &F::n, 0), &F::info, static_cast<int*>(nullptr))), 0);
  EXPECT_EQ(potri(with(with(f, &F::batch, 0), &F::info, static_cast<int*>(nullptr))), 0);
}

// The C API's out-of-place inverse likewise: a bad ldx is reported with a null info, not the info.
TEST(DeviceApiC, OutOfPlaceInverseTakesANullInfo) {
  StandIns<double> s;
  EXPECT_EQ(tessera_dpotri_batched_device_out_of_place_ex('L', 4, s.A, 4, 1, 16, s.B, 3, 16, 3, nullptr, nullptr), -8);
  EXPECT_EQ(tessera_dpotri_batched_device_out_of_place_ex('L', 0, s.A, 4, 1, 16, s.B, 4, 16, 3, nullptr, nullptr), 0);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, s.A, 4, 1, 16, s.B, 4, 16, 3, nullptr, nullptr), -11);
}

TYPED_TEST(DeviceApi, PointerArrayArgumentsGiveTheirPositions) {
  using T = TypeParam;
  const PointerPotrf<T> f(this->s);
  auto potrf = [](const PointerPotrf<T>& c) { return thrown_position([&] { c.cpp(); }); };
  EXPECT_EQ(potrf(with(f, &PointerPotrf<T>::n, -1)), 2);
  EXPECT_EQ(potrf(with(f, &PointerPotrf<T>::A_array, nullptr)), 3);
  EXPECT_EQ(potrf(with(f, &PointerPotrf<T>::lda, 3)), 4);
  EXPECT_EQ(potrf(with(f, &PointerPotrf<T>::batch, -1)), 5);
  EXPECT_EQ(potrf(with(f, &PointerPotrf<T>::info, nullptr)), 6);

  const PointerSolve<T> v(this->s);
  auto potrs = [](const PointerSolve<T>& c) { return thrown_position([&] { c.potrs(); }); };
  auto posv = [](const PointerSolve<T>& c) { return thrown_position([&] { c.posv(); }); };
  for (auto solve : {+potrs, +posv}) {
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::n, -1)), 2);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::nrhs, -1)), 3);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::A_array, nullptr)), 4);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::lda, 3)), 5);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::B_array, nullptr)), 6);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::ldb, 3)), 7);
    EXPECT_EQ(solve(with(v, &PointerSolve<T>::batch, -1)), 8);
  }
  EXPECT_EQ(posv(with(v, &PointerSolve<T>::info, nullptr)), 9);
  // Two bad arguments: the first in the module's order (sizes by position, then pointers).
  EXPECT_EQ(posv(with(with(v, &PointerSolve<T>::ldb, 0), &PointerSolve<T>::A_array, nullptr)), 7);
}

TYPED_TEST(DeviceApi, VariableArgumentsGiveTheirPositions) {
  using T = TypeParam;
  const VariablePotrf<T> f(this->s);
  auto potrf = [](const VariablePotrf<T>& c) { return thrown_position([&] { c.cpp(); }); };
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::n, nullptr)), 2);
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::max_n, -1)), 3);
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::A_array, nullptr)), 4);
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::lda, nullptr)), 5);
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::batch, -1)), 6);
  EXPECT_EQ(potrf(with(f, &VariablePotrf<T>::info, nullptr)), 7);

  const VariableSolve<T> v(this->s);
  auto potrs = [](const VariableSolve<T>& c) { return thrown_position([&] { c.potrs(); }); };
  auto posv = [](const VariableSolve<T>& c) { return thrown_position([&] { c.posv(); }); };
  for (auto solve : {+potrs, +posv}) {
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::n, nullptr)), 2);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::max_n, -1)), 3);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::nrhs, -1)), 4);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::A_array, nullptr)), 5);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::lda, nullptr)), 6);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::B_array, nullptr)), 7);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::ldb, nullptr)), 8);
    EXPECT_EQ(solve(with(v, &VariableSolve<T>::batch, -1)), 9);
  }
  EXPECT_EQ(posv(with(v, &VariableSolve<T>::info, nullptr)), 10);
}

TYPED_TEST(DeviceApi, CheckingFormAndZeroOppositeTriangleGiveTheirPositions) {
  using T = TypeParam;
  const StridedMatrices<T> m(this->s);
  auto checking = [](const StridedMatrices<T>& c) { return thrown_position([&] { c.potrf_checking(); }); };
  auto zero = [](const StridedMatrices<T>& c) { return thrown_position([&] { c.zero_opposite(); }); };
  for (auto call : {+checking, +zero}) {
    EXPECT_EQ(call(with(m, &StridedMatrices<T>::n, -1)), 2);
    EXPECT_EQ(call(with(m, &StridedMatrices<T>::A, nullptr)), 3);
    EXPECT_EQ(call(with(m, &StridedMatrices<T>::lda, 3)), 4);
    EXPECT_EQ(call(with(m, &StridedMatrices<T>::strideA, 15LL)), 5);
    EXPECT_EQ(call(with(m, &StridedMatrices<T>::batch, -1)), 6);
  }
}

TYPED_TEST(DeviceApi, MessagesNameTheRoutineAndTheArgument) {
  using T = TypeParam;
  std::string message;
  EXPECT_EQ(thrown_position([&] { with(PointerSolve<T>(this->s), &PointerSolve<T>::ldb, 1).posv(); }, &message), 7);
  EXPECT_NE(message.find("device::posv_batched_ex"), std::string::npos) << message;
  EXPECT_NE(message.find("ldb (argument 7)"), std::string::npos) << message;
}

// Without work the calls return before any CUDA call: on a machine without a GPU a CUDA call
// would throw CudaError, and info (standing in for device memory) would be written.
TYPED_TEST(DeviceApi, EmptyWorkReturnsAtOnce) {
  using T = TypeParam;
  StandIns<T>& s = this->s;
  EXPECT_EQ(thrown_position([&] { with(StridedPotrf<T>(s), &StridedPotrf<T>::n, 0).cpp(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(StridedPotrf<T>(s), &StridedPotrf<T>::batch, 0).cpp(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(StridedSolve<T>(s), &StridedSolve<T>::n, 0).posv(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(StridedSolve<T>(s), &StridedSolve<T>::nrhs, 0).potrs(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(PointerPotrf<T>(s), &PointerPotrf<T>::n, 0).cpp(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(PointerSolve<T>(s), &PointerSolve<T>::nrhs, 0).potrs(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(PointerSolve<T>(s), &PointerSolve<T>::batch, 0).posv(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(VariablePotrf<T>(s), &VariablePotrf<T>::max_n, 0).cpp(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(VariableSolve<T>(s), &VariableSolve<T>::max_n, 0).posv(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(VariableSolve<T>(s), &VariableSolve<T>::nrhs, 0).potrs(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(StridedMatrices<T>(s), &StridedMatrices<T>::n, 0).zero_opposite(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(OutOfPlacePotrf<T>(s), &OutOfPlacePotrf<T>::n, 0).cpp(); }), 0);
  EXPECT_EQ(thrown_position([&] { with(OutOfPlacePotrf<T>(s), &OutOfPlacePotrf<T>::batch, 0).cpp(); }), 0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(s.info[k], -77) << "info written for matrix " << k;
  EXPECT_NO_THROW(device::potrf_batched_ex<T>(Uplo::lower, 5, static_cast<const T*>(nullptr), 5, 1, 25, nullptr, 5, 25,
                                              0, nullptr, kStream));

  // Nothing null is needed when batch = 0.
  EXPECT_NO_THROW(device::posv_vbatched_ex<T>(Uplo::upper, nullptr, 5, 1, nullptr, nullptr, nullptr, nullptr, 0,
                                              nullptr, kStream));
  EXPECT_NO_THROW(device::potrf_batched_ex<T>(Uplo::upper, 5, static_cast<T* const*>(nullptr), 5, 0, nullptr,
                                              kStream));
}

// The checking forms with n = 0: every matrix succeeds, known without the device.
TYPED_TEST(DeviceApi, CheckingFormsOfEmptyMatricesReportNoFailure) {
  using T = TypeParam;
  StandIns<T>& s = this->s;
  EXPECT_EQ(with(StridedMatrices<T>(s), &StridedMatrices<T>::n, 0).potrf_checking(), 0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(s.info[k], 0);
  s.info[1] = -77;
  EXPECT_EQ(with(StridedSolve<T>(s), &StridedSolve<T>::n, 0).posv_checking(), 0);
  EXPECT_EQ(s.info[1], 0);
  EXPECT_EQ(with(with(StridedMatrices<T>(s), &StridedMatrices<T>::host_info, nullptr), &StridedMatrices<T>::n, 0)
                .potrf_checking(),
            0);
}

#else  // !TESSERA_HAVE_CUDA

TYPED_TEST(DeviceApi, EveryCallNeedsCuda) {
  using T = TypeParam;
  StandIns<T>& s = this->s;
  auto expect_runtime_error = [](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": nothing thrown";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("without CUDA"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  };
  expect_runtime_error([&] { StridedPotrf<T>(s).cpp(); }, "potrf_batched_ex");
  expect_runtime_error([&] { OutOfPlacePotrf<T>(s).cpp(); }, "potrf_batched_ex (out of place)");
  expect_runtime_error([&] { StridedSolve<T>(s).potrs(); }, "potrs_batched_ex");
  expect_runtime_error([&] { StridedSolve<T>(s).posv(); }, "posv_batched_ex");
  expect_runtime_error([&] { StridedSolve<T>(s).posv_checking(); }, "posv_batched");
  expect_runtime_error([&] { PointerPotrf<T>(s).cpp(); }, "potrf_batched_ex (pointers)");
  expect_runtime_error([&] { PointerSolve<T>(s).potrs(); }, "potrs_batched_ex (pointers)");
  expect_runtime_error([&] { PointerSolve<T>(s).posv(); }, "posv_batched_ex (pointers)");
  expect_runtime_error([&] { VariablePotrf<T>(s).cpp(); }, "potrf_vbatched_ex");
  expect_runtime_error([&] { VariableSolve<T>(s).potrs(); }, "potrs_vbatched_ex");
  expect_runtime_error([&] { VariableSolve<T>(s).posv(); }, "posv_vbatched_ex");
  expect_runtime_error([&] { StridedMatrices<T>(s).potrf_checking(); }, "potrf_batched");
  expect_runtime_error([&] { StridedMatrices<T>(s).zero_opposite(); }, "zero_opposite_triangle");
}

#endif  // TESSERA_HAVE_CUDA

// read_info: its arguments checked before any CUDA call; nothing to read returns 0 at once.
TEST(DeviceReadInfo, ArgumentsGiveTheirPositionsAndCountZeroReadsNothing) {
  int info[2] = {-77, -77};
  int host[2] = {-77, -77};
  std::string message;
  EXPECT_EQ(thrown_position([&] { device::read_info(info, -1, host, kStream); }, &message), 2);
  EXPECT_NE(message.find("device::read_info: count (argument 2)"), std::string::npos) << message;
  EXPECT_EQ(thrown_position([&] { device::read_info(nullptr, 2, host, kStream); }), 1);
  EXPECT_EQ(thrown_position([&] { device::read_info(info, 2, nullptr, kStream); }), 3);
  EXPECT_EQ(device::read_info(nullptr, 0, nullptr, kStream), 0);
  EXPECT_EQ(host[0], -77);
}

// ---- C API: -position, checked before anything else ---------------------------------------------------

TEST(DeviceCApi, BadArgumentsReturnMinusTheirPosition) {
  std::vector<double> d(256);
  std::vector<float> f(256);
  int info[3] = {-77, -77, -77};
  double* A = d.data();
  double* B = d.data() + 128;

  EXPECT_EQ(tessera_dpotrf_batched_device_ex('X', 4, A, 4, 16, 3, info, nullptr), -1);
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', -1, A, 4, 16, 3, info, nullptr), -2);
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', 4, nullptr, 4, 16, 3, info, nullptr), -3);
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', 4, A, 3, 16, 3, info, nullptr), -4);
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('U', 4, A, 4, 15, 3, info, nullptr), -5);
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', 4, A, 4, 16, -1, info, nullptr), -6);
  EXPECT_EQ(tessera_spotrf_batched_device_ex('L', 4, f.data(), 4, 16, 3, nullptr, nullptr), -7);

  EXPECT_EQ(tessera_dpotrs_batched_device_ex('x', 4, 2, A, 4, 16, B, 4, 8, 3, info, nullptr), -1);
  EXPECT_EQ(tessera_dpotrs_batched_device_ex('L', 4, -2, A, 4, 16, B, 4, 8, 3, info, nullptr), -3);
  EXPECT_EQ(tessera_dpotrs_batched_device_ex('L', 4, 2, A, 4, 16, A + 40, 4, 8, 3, info, nullptr), -7);
  EXPECT_EQ(tessera_spotrs_batched_device_ex('L', 4, 2, f.data(), 4, 16, f.data() + 128, 3, 8, 3, info, nullptr), -8);
  EXPECT_EQ(tessera_spotrs_batched_device_ex('L', 4, 2, f.data(), 4, 16, f.data() + 128, 4, 8, -3, info, nullptr), -10);

  EXPECT_EQ(tessera_dposv_batched_device_ex('L', 4, 2, A, 4, 16, B, 4, 7, 3, info, nullptr), -9);
  EXPECT_EQ(tessera_dposv_batched_device_ex('L', 4, 2, A, 4, 16, B, 4, 8, 3, nullptr, nullptr), -11);
  EXPECT_EQ(tessera_sposv_batched_device_ex('L', 4, 2, f.data(), 0, 16, f.data() + 128, 4, 8, 3, info, nullptr), -5);

  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('X', 4, A, 4, 1, 16, B, 4, 16, 3, info, nullptr), -1);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', -4, A, 4, 1, 16, B, 4, 16, 3, info, nullptr), -2);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, nullptr, 4, 1, 16, B, 4, 16, 3, info, nullptr), -3);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, A, 4, 1, 16, nullptr, 4, 16, 3, info, nullptr), -7);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('U', 4, A, 4, 1, 16, A + 8, 4, 16, 3, info, nullptr), -7);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, A, 4, 1, 16, B, 2, 16, 3, info, nullptr), -8);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, A, 4, 1, 16, B, 4, 12, 3, info, nullptr), -9);
  EXPECT_EQ(tessera_spotrf_batched_device_out_of_place_ex('L', 4, f.data(), 1, 4, 16, f.data() + 128, 4, 16, -1, info,
                                                          nullptr),
            -10);
  EXPECT_EQ(tessera_spotrf_batched_device_out_of_place_ex('L', 4, f.data(), 1, 4, 16, f.data() + 128, 4, 16, 3,
                                                          nullptr, nullptr),
            -11);
  EXPECT_EQ(tessera_dpotrf_batched_device('L', 4, A, 4, 8, 3, info, nullptr), -5);
  EXPECT_EQ(tessera_spotrf_batched_device('?', 4, f.data(), 4, 16, 3, nullptr, nullptr), -1);
  EXPECT_EQ(tessera_spotrf_batched_device('L', 4, f.data(), 4, 16, -3, nullptr, nullptr), -6);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(info[k], -77) << "info written for matrix " << k;
}

#if TESSERA_HAVE_CUDA
TEST(DeviceCApi, EmptyWorkReturnsZeroAtOnce) {
  std::vector<double> d(256);
  int info[3] = {-77, -77, -77};
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', 0, d.data(), 1, 0, 3, info, nullptr), 0);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 0, d.data(), 0, 0, 0, d.data(), 1, 0, 3, info, nullptr),
            0);
  EXPECT_EQ(tessera_dpotrf_batched_device_out_of_place_ex('L', 4, d.data(), 4, 1, 16, d.data(), 4, 16, 0, info,
                                                          nullptr),
            0);
  EXPECT_EQ(tessera_dposv_batched_device_ex('U', 4, 2, d.data(), 4, 16, d.data() + 128, 4, 8, 0, info, nullptr), 0);
  EXPECT_EQ(tessera_dpotrs_batched_device_ex('L', 4, 0, d.data(), 4, 16, d.data() + 128, 4, 8, 3, nullptr, nullptr),
            0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(info[k], -77);
  EXPECT_EQ(tessera_dpotrf_batched_device('L', 0, d.data(), 1, 0, 3, info, nullptr), 0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(info[k], 0);
}
#else
TEST(DeviceCApi, ValidCallsWithoutCudaAreRuntimeFailures) {
  std::vector<double> d(256);
  int info[3] = {-77, -77, -77};
  EXPECT_EQ(tessera_dpotrf_batched_device_ex('L', 4, d.data(), 4, 16, 3, info, nullptr), TESSERA_RUNTIME_FAILURE);
  EXPECT_EQ(tessera_dpotrf_batched_device('L', 4, d.data(), 4, 16, 3, info, nullptr), TESSERA_RUNTIME_FAILURE);
}
#endif

}  // namespace
}  // namespace tessera::test
