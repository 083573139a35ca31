// The dense device-resident API (tessera/device.hpp): potrf, potrs and posv on matrices in GPU
// memory, factored in place through the tile DAG. Residuals and LAPACK info in every mode and
// both triangles, LAPACK's solution on the host as the reference, nothing outside the triangle
// changed, the caller's stream waited for. The argument checks run without a GPU (they come
// before any CUDA call); everything else skips where the runtime has no CUDA worker.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "policy_modes.hpp"
#include "tessera/device.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tessera::test {
namespace {

// ---- argument checks: no GPU needed ---------------------------------------------------------------

template <class T>
void expect_arguments_refused() {
  // Stands for device memory: never read or written, since every call here is refused.
  std::vector<T> storage(64, T(1));
  T* A = storage.data();
  T* B = storage.data() + 32;
  const FactorOptions options;
  Runtime& rt = runtime();
  expect_refused_at(2, "potrf n < 0", [&] { device::potrf(rt, -1, A, 4, nullptr, options); });
  expect_refused_at(3, "potrf null A", [&] { device::potrf<T>(rt, 4, nullptr, 4, nullptr, options); });
  expect_refused_at(4, "potrf lda < n", [&] { device::potrf(rt, 4, A, 3, nullptr, options); });
  expect_refused_at(4, "potrf_ex lda < n", [&] { device::potrf_ex(rt, 4, A, 3, reinterpret_cast<int*>(B), nullptr, options); });
  expect_refused_at(5, "potrf_ex null info", [&] { device::potrf_ex(rt, 4, A, 4, nullptr, nullptr, options); });
  expect_refused_at(2, "potrf into n < 0", [&] { device::potrf<T>(rt, -1, A, 4, 1, B, 4, nullptr, options); });
  expect_refused_at(3, "potrf into null A", [&] { device::potrf<T>(rt, 4, nullptr, 4, 1, B, 4, nullptr, options); });
  expect_refused_at(6, "potrf into null L", [&] { device::potrf<T>(rt, 4, A, 4, 1, nullptr, 4, nullptr, options); });
  expect_refused_at(7, "potrf into ldl < n", [&] { device::potrf<T>(rt, 4, A, 4, 1, B, 3, nullptr, options); });
  expect_refused_at(6, "potrf into L inside A", [&] { device::potrf<T>(rt, 4, A, 4, 1, A + 2, 4, nullptr, options); });

  expect_refused_at(2, "potrs n < 0", [&] { device::potrs<T>(rt, -1, 1, A, 4, B, 4, nullptr, options); });
  expect_refused_at(3, "potrs nrhs < 0", [&] { device::potrs<T>(rt, 4, -1, A, 4, B, 4, nullptr, options); });
  expect_refused_at(4, "potrs null A", [&] { device::potrs<T>(rt, 4, 1, nullptr, 4, B, 4, nullptr, options); });
  expect_refused_at(5, "potrs lda < n", [&] { device::potrs<T>(rt, 4, 1, A, 3, B, 4, nullptr, options); });
  expect_refused_at(6, "potrs null B", [&] { device::potrs<T>(rt, 4, 1, A, 4, nullptr, 4, nullptr, options); });
  expect_refused_at(7, "potrs ldb < n", [&] { device::potrs<T>(rt, 4, 1, A, 4, B, 3, nullptr, options); });
  expect_refused_at(6, "potrs B inside A", [&] { device::potrs<T>(rt, 4, 1, A, 4, A + 2, 4, nullptr, options); });

  auto stack_solve = [&](int n, int nrhs, const T* a, int lda, long long sa, T* b, int ldb, long long sb, int batch) {
    device::potrs_stack_ex<T>(rt, n, nrhs, a, lda, sa, b, ldb, sb, batch, nullptr, options);
  };
  expect_refused_at(2, "potrs_stack n < 0", [&] { stack_solve(-1, 1, A, 4, 16, B, 4, 4, 2); });
  expect_refused_at(3, "potrs_stack nrhs < 0", [&] { stack_solve(4, -1, A, 4, 16, B, 4, 4, 2); });
  expect_refused_at(4, "potrs_stack null A", [&] { stack_solve(4, 1, nullptr, 4, 16, B, 4, 4, 2); });
  expect_refused_at(5, "potrs_stack lda < n", [&] { stack_solve(4, 1, A, 3, 16, B, 4, 4, 2); });
  expect_refused_at(6, "potrs_stack strideA < lda n", [&] { stack_solve(4, 1, A, 4, 15, B, 4, 4, 2); });
  expect_refused_at(7, "potrs_stack null B", [&] { stack_solve(4, 1, A, 4, 16, nullptr, 4, 4, 2); });
  expect_refused_at(8, "potrs_stack ldb < n", [&] { stack_solve(4, 1, A, 4, 16, B, 3, 4, 2); });
  expect_refused_at(10, "potrs_stack batch < 0", [&] { stack_solve(4, 1, A, 4, 16, B, 4, 4, -1); });

  expect_refused_at(2, "posv n < 0", [&] { device::posv<T>(rt, -1, 1, A, 4, B, 4, nullptr, options); });
  expect_refused_at(3, "posv nrhs < 0", [&] { device::posv<T>(rt, 4, -1, A, 4, B, 4, nullptr, options); });
  expect_refused_at(4, "posv null A", [&] { device::posv<T>(rt, 4, 1, nullptr, 4, B, 4, nullptr, options); });
  expect_refused_at(5, "posv lda < n", [&] { device::posv<T>(rt, 4, 1, A, 3, B, 4, nullptr, options); });
  expect_refused_at(6, "posv null B", [&] { device::posv<T>(rt, 4, 1, A, 4, nullptr, 4, nullptr, options); });
  expect_refused_at(7, "posv ldb < n", [&] { device::posv<T>(rt, 4, 1, A, 4, B, 3, nullptr, options); });
  expect_refused_at(6, "posv B inside A", [&] { device::posv<T>(rt, 4, 1, A, 4, A + 5, 4, nullptr, options); });
  EXPECT_EQ(storage, std::vector<T>(64, T(1)));
}

TEST(DeviceArguments, RefusedWithLapackPositionsBeforeAnyCudaCall) {
  expect_arguments_refused<double>();
  expect_arguments_refused<float>();
}

TEST(DeviceArguments, RuntimeWithoutCudaWorkerIsRuntimeError) {
  if (have_gpu()) GTEST_SKIP() << "the test runtime has CUDA workers: this checks a runtime without one";
  std::vector<double> A(16, 1.0), B(8, 1.0);
  try {
    device::potrf(runtime(), 4, A.data(), 4, nullptr);
    ADD_FAILURE() << "accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
  EXPECT_THROW(device::potrs<double>(runtime(), 4, 2, A.data(), 4, B.data(), 4, nullptr), RuntimeError);
  EXPECT_THROW(device::posv<double>(runtime(), 4, 2, A.data(), 4, B.data(), 4, nullptr), RuntimeError);
  std::vector<float> Af(16, 1.0f);
  EXPECT_THROW(device::potrf(runtime(), 4, Af.data(), 4, nullptr), RuntimeError);
  EXPECT_EQ(A, std::vector<double>(16, 1.0));
}

TEST(DeviceArguments, CApiReturnsMinusPosition) {
  double a[8] = {}, b[8] = {};
  float af[8] = {}, bf[8] = {};
  EXPECT_EQ(tessera_dpotrf_device('X', 2, a, 2, nullptr), -1);
  EXPECT_EQ(tessera_dpotrf_device('L', -1, a, 2, nullptr), -2);
  EXPECT_EQ(tessera_dpotrf_device('L', 2, nullptr, 2, nullptr), -3);
  EXPECT_EQ(tessera_spotrf_device('U', 2, af, 1, nullptr), -4);
  EXPECT_EQ(tessera_dpotrs_device('L', 2, -1, a, 2, b, 2, nullptr), -3);
  EXPECT_EQ(tessera_dpotrs_device('L', 2, 1, a, 1, b, 2, nullptr), -5);
  EXPECT_EQ(tessera_spotrs_device('L', 2, 1, af, 2, nullptr, 2, nullptr), -6);
  EXPECT_EQ(tessera_dposv_device('L', 2, 1, a, 2, b, 1, nullptr), -7);
  EXPECT_EQ(tessera_dposv_device('L', 2, 1, a, 2, a + 1, 2, nullptr), -6);
  EXPECT_EQ(tessera_sposv_device('Q', 2, 1, af, 2, bf, 2, nullptr), -1);
  int info = 0;
  EXPECT_EQ(tessera_dpotrf_device_ex('L', 2, a, 1, &info, nullptr), -4);
#ifdef TESSERA_HAVE_CUDA
  EXPECT_EQ(tessera_spotrf_device_ex('L', 2, af, 2, nullptr, nullptr), -5);  // before any CUDA call
#endif
  // Zero sizes return at once, as the host forms do.
  EXPECT_EQ(tessera_dpotrf_device('L', 0, nullptr, 1, nullptr), 0);
  EXPECT_EQ(tessera_dpotrs_device('U', 3, 0, a, 3, nullptr, 3, nullptr), 0);
  EXPECT_EQ(tessera_sposv_device('L', 0, 2, nullptr, 1, nullptr, 1, nullptr), 0);
  if (!have_gpu()) EXPECT_EQ(tessera_dpotrf_device('L', 2, a, 2, nullptr), TESSERA_RUNTIME_FAILURE);
  // The inverse and the complex forms: the same positions.
  tessera_complex_double z[8] = {};
  tessera_complex_float c[8] = {};
  EXPECT_EQ(tessera_dpotri_device('X', 2, a, 2, nullptr), -1);
  EXPECT_EQ(tessera_spotri_device('L', 2, af, 1, nullptr), -4);
  EXPECT_EQ(tessera_zpotri_device('L', -1, z, 2, nullptr), -2);
  EXPECT_EQ(tessera_cpotri_device('U', 2, nullptr, 2, nullptr), -3);
  EXPECT_EQ(tessera_zpotrf_device('L', 2, nullptr, 2, nullptr), -3);
  EXPECT_EQ(tessera_cpotrf_device_ex('L', 2, c, 1, &info, nullptr), -4);
  EXPECT_EQ(tessera_zpotrs_device('L', 2, 1, z, 2, z + 4, 1, nullptr), -7);
  EXPECT_EQ(tessera_cposv_device('Q', 2, 1, c, 2, c + 4, 2, nullptr), -1);
  EXPECT_EQ(tessera_zpotri_device('L', 0, nullptr, 1, nullptr), 0);
  if (!have_gpu()) EXPECT_EQ(tessera_zpotri_device('L', 2, z, 2, nullptr), TESSERA_RUNTIME_FAILURE);
}

#ifdef TESSERA_HAVE_CUDA

// ---- on the GPU --------------------------------------------------------------------------------

#define EXPECT_CUDA_OK(call)                                                          \
  do {                                                                                \
    const cudaError_t status_ = (call);                                               \
    EXPECT_EQ(status_, cudaSuccess) << #call << ": " << cudaGetErrorString(status_); \
  } while (0)

// A host array's copy in GPU memory (cudaMalloc, or cudaMallocManaged).
template <class T>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<T>& host, bool managed = false) : count_(host.size()) {
    if (managed)
      EXPECT_CUDA_OK(cudaMallocManaged(&data_, bytes()));
    else
      EXPECT_CUDA_OK(cudaMalloc(&data_, bytes()));
    EXPECT_CUDA_OK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~DeviceCopy() { cudaFree(data_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

  T* get() const { return data_; }
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    EXPECT_CUDA_OK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  std::size_t bytes() const { return count_ * sizeof(T); }
  std::size_t count_;
  T* data_ = nullptr;
};

// Pinned host memory, so that copies enqueued on a stream really run asynchronously.
template <class T>
class PinnedArray {
 public:
  explicit PinnedArray(std::size_t count) : count_(count) { EXPECT_CUDA_OK(cudaMallocHost(&data_, count * sizeof(T))); }
  ~PinnedArray() { cudaFreeHost(data_); }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  T* get() const { return data_; }
  std::vector<T> to_vector() const { return std::vector<T>(data_, data_ + count_); }

 private:
  std::size_t count_;
  T* data_ = nullptr;
};

struct DenseCase {
  int n;
  int nb;        // 0: Tessera's choice
  int extra_ld;  // lda = n + extra_ld
};

// One tile, a partial tile either side of a boundary, a prime order, and many small tiles.
const DenseCase kCases[] = {{1, 64, 0}, {63, 64, 5}, {65, 64, 1}, {997, 128, 3}, {997, 0, 2}, {2000, 48, 7}};

// Where the tasks run and how the factorization is cut into tasks.
struct Schedule {
  Mode mode;
  TaskGrain grain;
};

std::string to_string(const Schedule& s) {
  return std::string(tessera::to_string(s.mode)) + "_" + tessera::to_string(s.grain);
}

std::string case_name(const char* precision, const DenseCase& c, Uplo uplo, const Schedule& mode) {
  return std::string(precision) + " n=" + std::to_string(c.n) + " nb=" + std::to_string(c.nb) + " lda=n+" +
         std::to_string(c.extra_ld) + " " + tessera::to_string(uplo) + " " + to_string(mode);
}

template <class T>
const char* precision_name() {
  return std::is_same_v<T, double> ? "double" : "float";
}

// Every element outside the triangle `uplo` of the n x n matrix (the other triangle, and the
// padding rows below row n) is as it was, to the bit.
template <class T>
void expect_outside_triangle_unchanged(Uplo uplo, int n, int ld, const std::vector<T>& before,
                                       const std::vector<T>& after, const std::string& name) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i) {
      const bool referenced = i < n && (uplo == Uplo::lower ? i >= j : i <= j);
      const std::size_t e = i + static_cast<std::size_t>(j) * ld;
      if (!referenced && std::memcmp(&before[e], &after[e], sizeof(T)) != 0) {
        ADD_FAILURE() << name << ": element (" << i << ", " << j << ") outside the triangle changed";
        return;
      }
    }
}

FactorOptions options_for(int nb, Uplo uplo, const Schedule& schedule) {
  FactorOptions options;
  options.nb = nb;
  options.uplo = uplo;
  options.mode = schedule.mode;
  options.grain = schedule.grain;
  return options;
}

// With poison_other_triangle the triangle opposite `uplo` holds NaN: LAPACK never references it,
// and on the device it shares the diagonal tiles with the referenced one.
template <class T>
void check_potrf_in_place(const DenseCase& c, Uplo uplo, const Schedule& mode, unsigned seed, bool poison_other_triangle = false) {
  const std::string name = case_name(precision_name<T>(), c, uplo, mode);
  const int ld = c.n + c.extra_ld;
  const std::vector<T> symmetric = random_spd<T>(c.n, ld, seed);
  std::vector<T> A = symmetric;
  if (poison_other_triangle)
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.n; ++i)
        if (uplo == Uplo::lower ? i < j : i > j) A[i + static_cast<std::size_t>(j) * ld] = std::numeric_limits<T>::quiet_NaN();
  const DeviceCopy<T> device_A(A);
  ASSERT_EQ(device::potrf(runtime(), c.n, device_A.get(), ld, nullptr, options_for(c.nb, uplo, mode)), 0) << name;
  const std::vector<T> F = device_A.to_host();
  // LAPACK's bound: at n = 1 a correctly rounded square root alone reaches 1.2 (test_support.hpp).
  EXPECT_LT(factor_backward_error(uplo, c.n, symmetric, F, ld), kResidualThreshold) << name;
  expect_outside_triangle_unchanged(uplo, c.n, ld, A, F, name);
}

int lapack_posv(char uplo, int n, int nrhs, double* A, int lda, double* B, int ldb) {
  return LAPACKE_dposv(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}
int lapack_posv(char uplo, int n, int nrhs, float* A, int lda, float* B, int ldb) {
  return LAPACKE_sposv(LAPACK_COL_MAJOR, uplo, n, nrhs, A, lda, B, ldb);
}

// posv on the device, then potrs on its factor: small residuals, the same solution as LAPACK's on
// the host (the matrices are well conditioned), nothing changed outside A's triangle or B's block.
template <class T>
void check_solves(int n, int nrhs, int nb, Uplo uplo, const Schedule& mode, unsigned seed) {
  const std::string name = case_name(precision_name<T>(), {n, nb, 1}, uplo, mode) + " nrhs=" + std::to_string(nrhs);
  const int lda = n + 1, ldb = n + 2;
  const std::vector<T> A = random_spd<T>(n, lda, seed);
  const std::vector<T> B = random_matrix<T>(n, nrhs, ldb, seed + 1);
  const FactorOptions options = options_for(nb, uplo, mode);

  const DeviceCopy<T> device_A(A), device_X(B);
  ASSERT_EQ(device::posv(runtime(), n, nrhs, device_A.get(), lda, device_X.get(), ldb, nullptr, options), 0) << name;
  const std::vector<T> F = device_A.to_host(), X = device_X.to_host();
  EXPECT_LT(factor_backward_error(uplo, n, A, F, lda), 1.0) << name;
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, X, B, ldb), kResidualThreshold) << "posv " << name;
  expect_outside_triangle_unchanged(uplo, n, lda, A, F, name);

  const DeviceCopy<T> device_Y(B);
  ASSERT_EQ(device::potrs(runtime(), n, nrhs, device_A.get(), lda, device_Y.get(), ldb, nullptr, options), 0) << name;
  const std::vector<T> Y = device_Y.to_host();
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, Y, B, ldb), kResidualThreshold) << "potrs " << name;
  EXPECT_EQ(device_A.to_host(), F) << "potrs changed its factor: " << name;

  std::vector<T> reference_F = A, reference_X = B;
  ASSERT_EQ(lapack_posv(uplo == Uplo::lower ? 'L' : 'U', n, nrhs, reference_F.data(), lda, reference_X.data(), ldb), 0);
  double largest = 0, difference = 0, difference_potrs = 0;
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i) {
      const std::size_t e = i + static_cast<std::size_t>(r) * ldb;
      largest = std::max(largest, std::abs(double(reference_X[e])));
      difference = std::max(difference, std::abs(double(X[e]) - double(reference_X[e])));
      difference_potrs = std::max(difference_potrs, std::abs(double(Y[e]) - double(reference_X[e])));
    }
  const double tolerance = 20.0 * n * std::numeric_limits<T>::epsilon() * largest;
  EXPECT_LE(difference, tolerance) << "posv against LAPACK: " << name;
  EXPECT_LE(difference_potrs, tolerance) << "potrs against LAPACK: " << name;
  // B's padding rows are the caller's.
  for (int r = 0; r < nrhs; ++r)
    for (int i = n; i < ldb; ++i) {
      const std::size_t e = i + static_cast<std::size_t>(r) * ldb;
      ASSERT_EQ(X[e], B[e]) << name;
      ASSERT_EQ(Y[e], B[e]) << name;
    }
}

// An SPD matrix whose leading minor of order `column` (1-based) is not positive definite.
template <class T>
std::vector<T> spd_failing_at(int n, int ld, int column, unsigned seed) {
  std::vector<T> A = random_spd<T>(n, ld, seed);
  A[(column - 1) + static_cast<std::size_t>(column - 1) * ld] = T(-100);
  return A;
}

template <class T>
void expect_info(int n, int nb, int column, Uplo uplo, const Schedule& mode) {
  const std::string name = std::string(precision_name<T>()) + " n=" + std::to_string(n) + " nb=" + std::to_string(nb) +
                           " column=" + std::to_string(column) + " " + to_string(uplo) + " " + to_string(mode);
  const int ld = n + 2, nrhs = 2;
  const std::vector<T> A = spd_failing_at<T>(n, ld, column, 40u + column);
  const std::vector<T> B = random_matrix<T>(n, nrhs, n, 7);
  const FactorOptions options = options_for(nb, uplo, mode);
  const DeviceCopy<T> factored(A);
  EXPECT_EQ(device::potrf(runtime(), n, factored.get(), ld, nullptr, options), column) << name;
  const DeviceCopy<T> solved(A), rhs(B);
  EXPECT_EQ(device::posv(runtime(), n, nrhs, solved.get(), ld, rhs.get(), n, nullptr, options), column) << name;
  EXPECT_EQ(rhs.to_host(), B) << "posv changed B although the factorization failed: " << name;
}

class DeviceDense : public ::testing::TestWithParam<std::tuple<Uplo, Schedule>> {};

TEST_P(DeviceDense, DoubleFactorsInPlace) {
  TESSERA_SKIP_WITHOUT_GPU();
  const auto [uplo, mode] = GetParam();
  unsigned seed = 1;
  for (const DenseCase& c : kCases) check_potrf_in_place<double>(c, uplo, mode, seed++);
}

TEST_P(DeviceDense, FloatFactorsInPlace) {
  TESSERA_SKIP_WITHOUT_GPU();
  const auto [uplo, mode] = GetParam();
  unsigned seed = 100;
  for (const DenseCase& c : kCases) check_potrf_in_place<float>(c, uplo, mode, seed++);
}

TEST_P(DeviceDense, OtherTriangleIsNeverRead) {
  TESSERA_SKIP_WITHOUT_GPU();
  const auto [uplo, mode] = GetParam();
  for (const DenseCase& c : {DenseCase{65, 64, 1}, DenseCase{300, 48, 3}}) {
    check_potrf_in_place<double>(c, uplo, mode, 50, /*poison_other_triangle=*/true);
    check_potrf_in_place<float>(c, uplo, mode, 51, /*poison_other_triangle=*/true);
  }
}

TEST_P(DeviceDense, SolvesMatchLapack) {
  TESSERA_SKIP_WITHOUT_GPU();
  const auto [uplo, mode] = GetParam();
  check_solves<double>(1, 1, 64, uplo, mode, 7);
  check_solves<double>(63, 3, 64, uplo, mode, 8);
  check_solves<double>(65, 40, 64, uplo, mode, 9);
  check_solves<double>(997, 5, 128, uplo, mode, 10);
  check_solves<double>(2000, 3, 96, uplo, mode, 11);
  check_solves<float>(65, 2, 64, uplo, mode, 12);
  check_solves<float>(997, 4, 100, uplo, mode, 13);
}

TEST_P(DeviceDense, NotPositiveDefiniteGivesLapackInfo) {
  TESSERA_SKIP_WITHOUT_GPU();
  const auto [uplo, mode] = GetParam();
  const int n = 70, nb = 16;
  // The first column, either side of tile boundaries, the last column.
  for (int column : {1, 16, 17, 33, 70}) {
    expect_info<double>(n, nb, column, uplo, mode);
    expect_info<float>(n, nb, column, uplo, mode);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, DeviceDense,
                         ::testing::Combine(::testing::Values(Uplo::lower, Uplo::upper),
                                            ::testing::Values(Schedule{Mode::gpu, TaskGrain::automatic},
                                                              Schedule{Mode::gpu, TaskGrain::tiles},
                                                              Schedule{Mode::gpu, TaskGrain::block_columns},
                                                              Schedule{Mode::gpu, TaskGrain::whole_matrix},
                                                              Schedule{Mode::cpu, TaskGrain::whole_matrix},
                                                              Schedule{Mode::hybrid, TaskGrain::automatic},
                                                              Schedule{Mode::hybrid, TaskGrain::block_columns},
                                                              Schedule{Mode::cpu, TaskGrain::automatic})),
                         [](const auto& info) {
                           std::string name = std::string(tessera::to_string(std::get<0>(info.param))) + "_" +
                                              to_string(std::get<1>(info.param));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Work enqueued on the caller's non-blocking stream before the call (a long copy, then the
// matrix's own) is finished before the factorization reads the matrix, and the factor is there
// for work enqueued on the stream after the call.
TEST(DeviceDense, WaitsForTheCallersStreamGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 600, ld = 601;
  const std::size_t elements = static_cast<std::size_t>(ld) * n;
  const std::size_t busy_bytes = std::size_t(256) << 20;
  // nb 0: one vendor call, enqueued on the stream itself; nb 128: tile tasks of the runtime.
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    for (int nb : {128, 0}) {
      const std::string name = std::string(to_string(uplo)) + " nb=" + std::to_string(nb);
      const std::vector<double> A = random_spd<double>(n, ld, 31);
      PinnedArray<double> staged(elements), result(elements);
      std::copy(A.begin(), A.end(), staged.get());
      PinnedArray<char> busy_host(busy_bytes);
      char* busy_device = nullptr;
      double* device_A = nullptr;
      EXPECT_CUDA_OK(cudaMalloc(&busy_device, busy_bytes));
      EXPECT_CUDA_OK(cudaMalloc(&device_A, elements * sizeof(double)));
      EXPECT_CUDA_OK(cudaMemset(device_A, 0xff, elements * sizeof(double)));  // NaN until the copy lands
      EXPECT_CUDA_OK(cudaDeviceSynchronize());
      cudaStream_t stream = nullptr;
      EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

      EXPECT_CUDA_OK(cudaMemcpyAsync(busy_device, busy_host.get(), busy_bytes, cudaMemcpyHostToDevice, stream));
      EXPECT_CUDA_OK(cudaMemcpyAsync(device_A, staged.get(), elements * sizeof(double), cudaMemcpyHostToDevice, stream));
      FactorOptions options;
      options.uplo = uplo;
      options.nb = nb;
      options.mode = Mode::gpu;
      EXPECT_EQ(device::potrf(runtime(), n, device_A, ld, stream, options), 0) << name;
      EXPECT_CUDA_OK(cudaMemcpyAsync(result.get(), device_A, elements * sizeof(double), cudaMemcpyDeviceToHost, stream));
      EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
      EXPECT_LT(factor_backward_error(uplo, n, A, result.to_vector(), ld), 1.0) << name;

      EXPECT_CUDA_OK(cudaStreamDestroy(stream));
      EXPECT_CUDA_OK(cudaFree(device_A));
      EXPECT_CUDA_OK(cudaFree(busy_device));
    }
  }
}

TEST(DeviceDense, HostPointerIsInvalidArgumentGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 8;
  std::vector<double> A = random_spd<double>(n, n, 3), B = random_matrix<double>(n, 1, n, 4);
  const std::vector<double> A0 = A, B0 = B;
  const DeviceCopy<double> device_A(A), device_B(B);
  const auto expect_not_device_memory = [](int position, const char* what, auto&& call) {
    try {
      call();
      ADD_FAILURE() << what << ": accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.position(), position) << what;
      EXPECT_NE(std::string(e.what()).find("not device memory"), std::string::npos) << e.what();
    }
  };
  expect_not_device_memory(3, "potrf", [&] { device::potrf(runtime(), n, A.data(), n, nullptr); });
  expect_not_device_memory(4, "potrs A", [&] { device::potrs<double>(runtime(), n, 1, A.data(), n, device_B.get(), n, nullptr); });
  expect_not_device_memory(6, "potrs B", [&] { device::potrs<double>(runtime(), n, 1, device_A.get(), n, B.data(), n, nullptr); });
  expect_not_device_memory(4, "posv A", [&] { device::posv(runtime(), n, 1, A.data(), n, device_B.get(), n, nullptr); });
  expect_not_device_memory(6, "posv B", [&] { device::posv(runtime(), n, 1, device_A.get(), n, B.data(), n, nullptr); });
  // Pinned host memory is host memory too.
  PinnedArray<float> pinned(static_cast<std::size_t>(n) * n);
  expect_not_device_memory(3, "potrf pinned", [&] { device::potrf(runtime(), n, pinned.get(), n, nullptr); });
  EXPECT_EQ(tessera_dpotrf_device('L', n, A.data(), n, nullptr), -3);
  EXPECT_EQ(tessera_dposv_device('U', n, 1, device_A.get(), n, B.data(), n, nullptr), -6);
  EXPECT_EQ(A, A0);
  EXPECT_EQ(B, B0);
  EXPECT_EQ(device_A.to_host(), A0);
  EXPECT_EQ(device_B.to_host(), B0);
}

// Left to choose, a device matrix of moderate order on one GPU is factored by one task (the
// vendor's potrf on the matrix itself); a tile size asked for keeps the tile DAG.
TEST(DeviceDense, ModerateOrderIsOneTaskUnlessATileSizeIsAskedForGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (runtime().cuda_devices() != 1) GTEST_SKIP() << "the whole-matrix task is chosen on one GPU only";
  if (runtime().automatic_mode().mode != Mode::gpu) GTEST_SKIP() << "the GPU does not dominate here";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const int n = 1000;
  const std::vector<double> A = random_spd<double>(n, n, 17);
  for (const Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const int nb : {0, 250}) {
      const DeviceCopy<double> device_A(A);
      FactorOptions options;
      options.mode = Mode::gpu;
      options.uplo = uplo;
      options.nb = nb;
      options.trace = std::make_shared<Trace>();
      ASSERT_EQ(device::potrf(runtime(), n, device_A.get(), n, nullptr, options), 0);
      EXPECT_LT(factor_backward_error(uplo, n, A, device_A.to_host(), n), 1.0);
      const std::vector<TraceEvent> events = options.trace->events();
      if (nb == 0) {
        ASSERT_EQ(events.size(), 1u) << to_string(uplo);
        EXPECT_EQ(events.front().kind, TaskKind::potrf);
      } else {
        EXPECT_EQ(events.size(), 20u) << to_string(uplo) << ": 4 tiles a side, 20 tile tasks";
      }
    }
}

// Left to choose, a call that is one vendor call on the matrix is enqueued on the caller's stream
// by the calling thread, without the runtime: it completes while the runtime's workers are paused,
// where a request would wait for them. Orders around cuSOLVER's 64-column blocks and primes, both
// triangles (the other one NaN), both precisions, solves against LAPACK, info either side of a
// block boundary and at the last column, B untouched by a failing posv.
TEST(DeviceDense, OneVendorCallRunsOnTheCallersStreamWithoutTheRuntimeGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (runtime().cuda_devices() != 1) GTEST_SKIP() << "one vendor call is chosen on one GPU only";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const Schedule left_to_tessera{Mode::gpu, TaskGrain::automatic};
  runtime().pause_workers();
  auto calls = std::async(std::launch::async, [&] {
    unsigned seed = 300;
    for (const Uplo uplo : {Uplo::lower, Uplo::upper}) {
      for (const int n : {1, 2, 31, 64, 65, 127, 257, 1031}) {
        check_potrf_in_place<double>({n, 0, n % 3}, uplo, left_to_tessera, seed++, /*poison_other_triangle=*/true);
        check_potrf_in_place<float>({n, 0, 1}, uplo, left_to_tessera, seed++, /*poison_other_triangle=*/true);
      }
      check_solves<double>(1, 1, 0, uplo, left_to_tessera, seed++);
      check_solves<double>(257, 3, 0, uplo, left_to_tessera, seed++);
      check_solves<float>(65, 2, 0, uplo, left_to_tessera, seed++);
      for (const int column : {1, 63, 64, 65, 130}) {
        expect_info<double>(130, 0, column, uplo, left_to_tessera);
        expect_info<float>(130, 0, column, uplo, left_to_tessera);
      }
    }
  });
  const bool finished = calls.wait_for(std::chrono::minutes(3)) == std::future_status::ready;
  runtime().resume_workers();
  calls.get();
  EXPECT_TRUE(finished) << "the calls waited for the paused workers: they went through the runtime";
}

// Upper-stored calls share the lower copy of the matrix the runtime keeps. Both streams are held
// behind a 512 MiB copy on the first, then the first stream's call (order 6000) and the second's
// are enqueued, and neither waits for the GPU; the second matrix fits the kept copy (a smaller
// order) or grows it (a larger one). Both factors equal those of the same calls made one at a
// time. (That the second call's work waits for the first's on the GPU rests on the handles'
// event: on an H100 a library without that wait passed this test too.)
TEST(DeviceDense, UpperStorageOnTwoStreamsSharesTheKeptWorkspaceGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const bool one_gpu = runtime().cuda_devices() == 1;
  const std::size_t busy_bytes = std::size_t(512) << 20;
  PinnedArray<char> busy_host(busy_bytes);
  char* busy_device = nullptr;
  EXPECT_CUDA_OK(cudaMalloc(&busy_device, busy_bytes));
  cudaStream_t first = nullptr, second = nullptr;
  cudaEvent_t copied = nullptr;
  EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
  EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  EXPECT_CUDA_OK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  const DeviceCopy<int> infos(std::vector<int>(2, -7));
  FactorOptions options;
  options.uplo = Uplo::upper;
  options.mode = Mode::gpu;
  auto largest_difference = [](const std::vector<double>& a, const std::vector<double>& b) {
    double largest = 0;
    for (std::size_t k = 0; k < a.size(); ++k) largest = std::max(largest, std::abs(a[k] - b[k]));
    return largest;
  };
  unsigned seed = 700;
  const int first_n = 6000;
  for (const int second_n : {201, 6400}) {
    const std::string name = "second order " + std::to_string(second_n);
    const std::vector<double> A1 = random_spd<double>(first_n, first_n, seed++);
    const std::vector<double> A2 = random_spd<double>(second_n, second_n + 3, seed++);
    const DeviceCopy<double> together1(A1), together2(A2), alone1(A1), alone2(A2);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_CUDA_OK(cudaMemcpyAsync(busy_device, busy_host.get(), busy_bytes, cudaMemcpyHostToDevice, first));
    EXPECT_CUDA_OK(cudaEventRecord(copied, first));
    EXPECT_CUDA_OK(cudaStreamWaitEvent(second, copied, 0));
    device::potrf_ex(runtime(), first_n, together1.get(), first_n, infos.get(), first, options);
    device::potrf_ex(runtime(), second_n, together2.get(), second_n + 3, infos.get() + 1, second, options);
    if (one_gpu) EXPECT_EQ(cudaStreamQuery(second), cudaErrorNotReady) << name << ": the calls waited";
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(infos.to_host(), (std::vector<int>{0, 0})) << name;
    EXPECT_EQ(device::potrf(runtime(), first_n, alone1.get(), first_n, first, options), 0) << name;
    EXPECT_EQ(device::potrf(runtime(), second_n, alone2.get(), second_n + 3, first, options), 0) << name;
    // The factors' entries are at most sqrt(n) ~ 80: a mix-up differs by far more.
    EXPECT_LT(largest_difference(together1.to_host(), alone1.to_host()), 1e-9) << name;
    EXPECT_LT(largest_difference(together2.to_host(), alone2.to_host()), 1e-9) << name;
  }
  EXPECT_CUDA_OK(cudaEventDestroy(copied));
  EXPECT_CUDA_OK(cudaStreamDestroy(first));
  EXPECT_CUDA_OK(cudaStreamDestroy(second));
  EXPECT_CUDA_OK(cudaFree(busy_device));
}

// potrf_ex: the info in GPU memory, written on the caller's stream. As one vendor call (nb 0) it
// returns while the work queued ahead of it on the stream (a copy of 512 MiB) is still running; as
// tile tasks (nb 64) it returns once done. Info 0, at a failing column (block boundaries, the
// last), into any int of a device array; a host or null info refused at position 5.
TEST(DeviceDense, PotrfExWritesTheInfoOnTheStreamGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const bool one_gpu = runtime().cuda_devices() == 1;
  const int n = 130, ld = 131;
  const std::size_t busy_bytes = std::size_t(512) << 20;
  PinnedArray<char> busy_host(busy_bytes);
  char* busy_device = nullptr;
  EXPECT_CUDA_OK(cudaMalloc(&busy_device, busy_bytes));
  const DeviceCopy<int> infos(std::vector<int>(4, -7));
  cudaStream_t stream = nullptr;
  EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned seed = 500;
  for (const Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const int nb : {0, 64})
      for (const int column : {0, 1, 64, 65, n}) {  // 0: positive definite
        const std::string name = std::string(to_string(uplo)) + " nb=" + std::to_string(nb) + " column=" + std::to_string(column);
        const std::vector<double> A = column ? spd_failing_at<double>(n, ld, column, seed++) : random_spd<double>(n, ld, seed++);
        const DeviceCopy<double> device_A(A);
        FactorOptions options;
        options.uplo = uplo;
        options.nb = nb;
        options.mode = Mode::gpu;
        EXPECT_CUDA_OK(cudaMemcpyAsync(busy_device, busy_host.get(), busy_bytes, cudaMemcpyHostToDevice, stream));
        device::potrf_ex(runtime(), n, device_A.get(), ld, infos.get() + 2, stream, options);
        if (nb == 0 && one_gpu) EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << name << ": the call waited";
        EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
        const std::vector<int> info = infos.to_host();
        EXPECT_EQ(info[2], column) << name;
        EXPECT_EQ(info[1], -7) << name;
        EXPECT_EQ(info[3], -7) << name;
        if (column == 0) EXPECT_LT(factor_backward_error(uplo, n, A, device_A.to_host(), ld), 1.0) << name;
      }
  const std::vector<float> Af = spd_failing_at<float>(n, n, 77, 9);
  const DeviceCopy<float> device_Af(Af);
  device::potrf_ex(runtime(), n, device_Af.get(), n, infos.get(), stream, FactorOptions{});
  EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(infos.to_host()[0], 77) << "float";
  device::potrf_ex<float>(runtime(), 0, nullptr, 1, infos.get(), stream, FactorOptions{});
  EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(infos.to_host()[0], 0) << "n = 0";

  int host_info = -7;
  try {
    device::potrf_ex(runtime(), n, device_Af.get(), n, &host_info, stream, FactorOptions{});
    ADD_FAILURE() << "an info in host memory was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 5) << e.what();
  }
  EXPECT_EQ(host_info, -7);
  EXPECT_CUDA_OK(cudaStreamDestroy(stream));
  EXPECT_CUDA_OK(cudaFree(busy_device));
}

// The symmetric n x n matrix `symmetric` (column-major, leading dimension ld) laid out through
// element strides in a buffer of `elements`, its triangle opposite `uplo` NaN (never read); the
// rest of the buffer -5.
template <class T>
std::vector<T> strided_layout(const std::vector<T>& symmetric, int n, int ld, Uplo uplo, long long row_stride,
                              long long col_stride, std::size_t elements) {
  std::vector<T> buffer(elements, T(-5));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool referenced = uplo == Uplo::lower ? i >= j : i <= j;
      const T value = symmetric[std::max(i, j) + static_cast<std::size_t>(std::min(i, j)) * ld];
      buffer[static_cast<std::size_t>(i * row_stride + j * col_stride)] =
          referenced ? value : std::numeric_limits<T>::quiet_NaN();
    }
  return buffer;
}

// One matrix of order n factored out of place (A read through the strides rs, cs into L, ldl) by
// one of the device API's forms; returns LAPACK's info once L is complete.
using OutOfPlaceFactor =
    std::function<int(int n, const double* A, long long rs, long long cs, double* L, int ldl, const FactorOptions&)>;

// An out-of-place form reads A through its strides (C-ordered, Fortran-ordered, every other row and
// column), never writes it; L gets the factor in the triangle asked for and exact zeros in the
// other, its rows past n untouched; info 0 or the failing column; as one vendor call (nb 0) and as
// tile tasks (nb 64).
void expect_out_of_place_factors(const OutOfPlaceFactor& factor, unsigned seed) {
  for (const int n : {1, 65, 130, 1031})
    for (const Uplo uplo : {Uplo::lower, Uplo::upper})
      for (const int nb : {0, 64})
        for (const int layout : {0, 1, 2}) {
          if (n == 1031 && (nb != 0 || layout == 2)) continue;
          for (const int column : {0, (n + 1) / 2}) {
            const long long ld = n + 2;
            const long long rs = layout == 0 ? ld : layout == 1 ? 1 : 2;
            const long long cs = layout == 0 ? 1 : layout == 1 ? ld : 2 * ld;
            const std::size_t elements = static_cast<std::size_t>(layout == 2 ? 2 * ld * n : ld * n);
            const std::string name = "n=" + std::to_string(n) + " " + to_string(uplo) + " nb=" + std::to_string(nb) +
                                     " strides " + std::to_string(rs) + "," + std::to_string(cs) +
                                     " failing at " + std::to_string(column);
            const int lds = n + 2, ldl = n + 1;
            const std::vector<double> symmetric =
                column ? spd_failing_at<double>(n, lds, column, seed++) : random_spd<double>(n, lds, seed++);
            const std::vector<double> source = strided_layout(symmetric, n, lds, uplo, rs, cs, elements);
            const DeviceCopy<double> device_A(source);
            const DeviceCopy<double> device_L(std::vector<double>(static_cast<std::size_t>(ldl) * n, -9.0));
            FactorOptions options;
            options.uplo = uplo;
            options.nb = nb;
            options.mode = Mode::gpu;
            EXPECT_EQ(factor(n, device_A.get(), rs, cs, device_L.get(), ldl, options), column) << name;
            const std::vector<double> A_after = device_A.to_host(), L = device_L.to_host();
            EXPECT_EQ(std::memcmp(A_after.data(), source.data(), elements * sizeof(double)), 0) << "A written: " << name;
            for (int j = 0; j < n; ++j)
              for (int i = 0; i < ldl; ++i) {
                const double got = L[i + static_cast<std::size_t>(j) * ldl];
                const bool referenced = uplo == Uplo::lower ? i >= j : i <= j;
                if (i >= n) {
                  ASSERT_EQ(got, -9.0) << "written past row n: " << name;
                } else if (!referenced) {
                  ASSERT_EQ(got, 0.0) << "not zero in the other triangle at (" << i << ", " << j << "): " << name;
                }
              }
            if (column == 0) {
              std::vector<double> factor(static_cast<std::size_t>(lds) * n, 0.0);
              for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) factor[i + static_cast<std::size_t>(j) * lds] = L[i + static_cast<std::size_t>(j) * ldl];
              EXPECT_LT(factor_backward_error(uplo, n, symmetric, factor, lds), kResidualThreshold) << name;
            }
          }
        }
}

// The factor of an n x n matrix in place (L == A, rowStrideA 1, colStrideA ldl) in both triangles
// by one of the out-of-place forms: the factor, zeros in the other triangle.
void expect_in_place_factors(const OutOfPlaceFactor& factor, int n) {
  for (const Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const std::vector<double> A = random_spd<double>(n, n, 12);
    const DeviceCopy<double> device_A(A);
    FactorOptions options;
    options.uplo = uplo;
    EXPECT_EQ(factor(n, device_A.get(), 1, n, device_A.get(), n, options), 0);
    const std::vector<double> F = device_A.to_host();
    EXPECT_LT(factor_backward_error(uplo, n, A, F, n), kResidualThreshold) << "in place " << to_string(uplo);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (uplo == Uplo::lower ? i < j : i > j) ASSERT_EQ(F[i + static_cast<std::size_t>(j) * n], 0.0) << "in place";
  }
}

// potrf_ex out of place (expect_out_of_place_factors), then the argument positions and the in-place
// layout.
TEST(DeviceDense, PotrfExOutOfPlaceReadsThroughStridesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const DeviceCopy<int> info(std::vector<int>{-7});
  const OutOfPlaceFactor factor_ex = [&](int n, const double* A, long long rs, long long cs, double* L, int ldl,
                                         const FactorOptions& options) {
    device::potrf_ex(runtime(), n, A, rs, cs, L, ldl, info.get(), nullptr, options);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    return info.to_host()[0];
  };
  expect_out_of_place_factors(factor_ex, 700);

  // Float, C-ordered, in the default mode.
  const int n = 300;
  const std::vector<float> Af = random_spd<float>(n, n, 11);
  const DeviceCopy<float> device_Af(Af), device_Lf(std::vector<float>(static_cast<std::size_t>(n) * n, 3.0f));
  device::potrf_ex(runtime(), n, static_cast<const float*>(device_Af.get()), n, 1, device_Lf.get(), n, info.get(),
                   nullptr, FactorOptions{});
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(info.to_host()[0], 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, Af, device_Lf.to_host(), n), kResidualThreshold) << "float";

  expect_in_place_factors(factor_ex, n);

  // Positions: L overlapping A, ldl, a null info, a host L.
  const DeviceCopy<double> device_A(std::vector<double>(static_cast<std::size_t>(n) * n * 2, 1.0));
  const double* A = device_A.get();
  const auto expect_position = [&](int position, const char* what, auto&& call) {
    try {
      call();
      ADD_FAILURE() << what << ": accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.position(), position) << what << ": " << e.what();
    }
  };
  expect_position(6, "L inside A", [&] { device::potrf_ex(runtime(), n, A, n, 1, device_A.get() + 10, n, info.get(), nullptr); });
  expect_position(7, "ldl < n", [&] { device::potrf_ex(runtime(), n, A, n, 1, device_A.get() + n * n, n - 1, info.get(), nullptr); });
  expect_position(8, "null info", [&] { device::potrf_ex(runtime(), n, A, n, 1, device_A.get() + n * n, n, nullptr, nullptr); });
  std::vector<double> host_L(static_cast<std::size_t>(n) * n);
  expect_position(6, "host L", [&] { device::potrf_ex(runtime(), n, A, n, 1, host_L.data(), n, info.get(), nullptr); });
}

// device::potrf's out-of-place form returns the info once L is complete, on the caller's stream
// as potrf_ex's form, with no info array (expect_out_of_place_factors); in place; its positions.
TEST(DeviceDense, PotrfOutOfPlaceReturnsTheInfoGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  cudaStream_t stream = nullptr;
  EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const OutOfPlaceFactor factor = [&](int n, const double* A, long long rs, long long cs, double* L, int ldl,
                                      const FactorOptions& options) {
    const int info = device::potrf(runtime(), n, A, rs, cs, L, ldl, stream, options);
    EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess) << "returned before the factor was complete, n = " << n;
    return info;
  };
  expect_out_of_place_factors(factor, 900);
  expect_in_place_factors(factor, 300);

  const int n = 300;
  const std::vector<float> Af = spd_failing_at<float>(n, n, 77, 9);
  const DeviceCopy<float> device_Af(Af), device_Lf(std::vector<float>(static_cast<std::size_t>(n) * n));
  EXPECT_EQ(device::potrf(runtime(), n, static_cast<const float*>(device_Af.get()), n, 1, device_Lf.get(), n, stream), 77)
      << "float";
  EXPECT_EQ(device::potrf<float>(runtime(), 0, nullptr, 1, 1, nullptr, 1, stream), 0) << "n = 0";

  const DeviceCopy<double> device_A(std::vector<double>(static_cast<std::size_t>(n) * n * 2, 1.0));
  const double* A = device_A.get();
  std::vector<double> host_L(static_cast<std::size_t>(n) * n);
  expect_refused_at(6, "L inside A", [&] { device::potrf(runtime(), n, A, n, 1, device_A.get() + 10, n, stream); });
  expect_refused_at(7, "ldl < n", [&] { device::potrf(runtime(), n, A, n, 1, device_A.get() + n * n, n - 1, stream); });
  expect_refused_at(6, "host L", [&] { device::potrf(runtime(), n, A, n, 1, host_L.data(), n, stream); });
  EXPECT_CUDA_OK(cudaStreamDestroy(stream));
}

// Orders up to the plan's replayed_launches_max_n replay one CUDA graph of their launches from the
// second call of an order on. Three calls of each order, on two streams in turn, over more orders
// than the handles keep graphs for and past the table's order: potrf_ex out of place (its triangle
// read, the other one NaN, never read; zeros there in L, L's rows past n untouched) and in place
// (the other triangle left as it was, to the bit), both triangles, positive definite or failing at
// the first, a middle or the last column: each call's info, and each call's factor within a few
// ulps of the first call's (of an order new to the handles, that call launches its kernels one by
// one).
template <class T>
void expect_replays_match_the_first_call(unsigned seed) {
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (cudaStream_t& stream : streams) EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const DeviceCopy<int> info(std::vector<int>{-7});
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (const int n : {1, 2, 31, 33, 64, 97, 128, 130, 200, 257, 511, 512, 513})
    for (const Uplo uplo : {Uplo::lower, Uplo::upper})
      for (const int column : {0, 1, (n + 1) / 2, n}) {
        const int ld = n + 1;
        const std::string name = std::string(precision_name<T>()) + " n=" + std::to_string(n) + " " +
                                 to_string(uplo) + " failing at " + std::to_string(column);
        const std::vector<T> symmetric =
            column ? spd_failing_at<T>(n, ld, column, seed++) : random_spd<T>(n, ld, seed++);
        std::vector<T> stored = symmetric;  // the other strict triangle NaN
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (uplo == Uplo::lower ? i < j : i > j) stored[i + static_cast<std::size_t>(j) * ld] = nan;
        FactorOptions options;
        options.uplo = uplo;
        std::vector<T> first_out_of_place, first_in_place;
        for (int call = 0; call < 3; ++call) {
          const cudaStream_t stream = streams[call % 2];
          const std::string which = name + " call " + std::to_string(call);
          const DeviceCopy<T> source(stored), L(std::vector<T>(static_cast<std::size_t>(ld) * n, T(-9)));
          // cudaMemcpy from pageable memory may return before its copy lands: the streams do not wait for it.
          EXPECT_CUDA_OK(cudaDeviceSynchronize());
          device::potrf_ex(runtime(), n, static_cast<const T*>(source.get()), 1, ld, L.get(), ld, info.get(), stream,
                           options);
          EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
          EXPECT_EQ(info.to_host()[0], column) << which << " out of place";
          const std::vector<T> out = L.to_host();
          for (int j = 0; j < n; ++j) {
            ASSERT_EQ(out[n + static_cast<std::size_t>(j) * ld], T(-9)) << "written past row n: " << which;
            for (int i = 0; i < n; ++i)
              if (uplo == Uplo::lower ? i < j : i > j)
                ASSERT_EQ(out[i + static_cast<std::size_t>(j) * ld], T(0)) << "other triangle: " << which;
          }
          device::potrf_ex(runtime(), n, source.get(), ld, info.get(), stream, options);
          EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
          EXPECT_EQ(info.to_host()[0], column) << which << " in place";
          const std::vector<T> in_place = source.to_host();
          expect_outside_triangle_unchanged(uplo, n, ld, stored, in_place, which + " in place");
          if (column != 0) continue;  // a failed factor is partial, as LAPACK leaves it
          EXPECT_LT(factor_backward_error(uplo, n, symmetric, out, ld), kResidualThreshold) << which;
          EXPECT_LT(factor_backward_error(uplo, n, symmetric, in_place, ld), kResidualThreshold) << which;
          if (call == 0) {
            first_out_of_place = out;
            first_in_place = in_place;
            continue;
          }
          double largest = 0, difference = 0;
          for (std::size_t e = 0; e < out.size(); ++e) {
            if (std::isnan(double(first_in_place[e]))) continue;  // the other triangle in place
            largest = std::max(largest, std::abs(double(first_out_of_place[e])));
            difference = std::max({difference, std::abs(double(out[e]) - double(first_out_of_place[e])),
                                   std::abs(double(in_place[e]) - double(first_in_place[e]))});
          }
          EXPECT_LE(difference, 8 * std::numeric_limits<T>::epsilon() * largest) << which;
        }
      }
  for (cudaStream_t stream : streams) EXPECT_CUDA_OK(cudaStreamDestroy(stream));
}

TEST(DeviceDense, RepeatedSmallOrdersReplayTheirLaunchesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  expect_replays_match_the_first_call<double>(1300);
  expect_replays_match_the_first_call<float>(1400);
}

TEST(DeviceDense, NegativeTileSizeIsInvalidArgumentGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::vector<double> A = random_spd<double>(8, 8, 5);
  const DeviceCopy<double> device_A(A);
  FactorOptions options;
  options.nb = -4;
  EXPECT_THROW(device::potrf(runtime(), 8, device_A.get(), 8, nullptr, options), InvalidArgument);
  EXPECT_EQ(device_A.to_host(), A);
}

TEST(DeviceDense, CApiFactorsAndSolvesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 300, lda = 303, nrhs = 2;
  const std::vector<double> A = random_spd<double>(n, lda, 6);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 7);
  const DeviceCopy<double> device_A(A), device_X(B);
  ASSERT_EQ(tessera_dposv_device('U', n, nrhs, device_A.get(), lda, device_X.get(), n, nullptr), 0);
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, device_X.to_host(), B, n), kResidualThreshold);
  const DeviceCopy<double> device_Y(B);
  ASSERT_EQ(tessera_dpotrs_device('U', n, nrhs, device_A.get(), lda, device_Y.get(), n, nullptr), 0);
  EXPECT_LT(solve_backward_error(n, nrhs, A, lda, device_Y.to_host(), B, n), kResidualThreshold);

  const std::vector<float> Af = random_spd<float>(n, n, 8);
  const std::vector<float> Bf = random_matrix<float>(n, 1, n, 9);
  const DeviceCopy<float> device_Af(Af), device_Xf(Bf), device_Yf(Bf);
  ASSERT_EQ(tessera_spotrf_device('L', n, device_Af.get(), n, nullptr), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, Af, device_Af.to_host(), n), 1.0);
  ASSERT_EQ(tessera_spotrs_device('L', n, 1, device_Af.get(), n, device_Xf.get(), n, nullptr), 0);
  EXPECT_LT(solve_backward_error(n, 1, Af, n, device_Xf.to_host(), Bf, n), kResidualThreshold);
  const DeviceCopy<float> device_Af2(Af);
  ASSERT_EQ(tessera_sposv_device('L', n, 1, device_Af2.get(), n, device_Yf.get(), n, nullptr), 0);
  EXPECT_LT(solve_backward_error(n, 1, Af, n, device_Yf.to_host(), Bf, n), kResidualThreshold);

  // Not positive definite: the global column, as the host form returns it.
  std::vector<double> failing = A;
  failing[100 + static_cast<std::size_t>(100) * lda] = -100;
  const DeviceCopy<double> device_failing(failing);
  EXPECT_EQ(tessera_dpotrf_device('L', n, device_failing.get(), lda, nullptr), 101);
  // The _ex form: the info in device memory, 0 returned.
  const DeviceCopy<double> device_failing_ex(failing);
  const DeviceCopy<int> device_info(std::vector<int>{-7});
  EXPECT_EQ(tessera_dpotrf_device_ex('L', n, device_failing_ex.get(), lda, device_info.get(), nullptr), 0);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(device_info.to_host()[0], 101);
  const DeviceCopy<float> device_Af3(Af);
  EXPECT_EQ(tessera_spotrf_device_ex('U', n, device_Af3.get(), n, device_info.get(), nullptr), 0);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(device_info.to_host()[0], 0);
  // The inverse from posv's upper factor, against LAPACK's potri of the same factor.
  std::vector<double> factor = device_A.to_host(), inverse = factor;
  ASSERT_EQ(kernels::cpu::potri('U', n, inverse.data(), lda), 0);
  ASSERT_EQ(tessera_dpotri_device('U', n, device_A.get(), lda, nullptr), 0);
  const std::vector<double> device_inverse = device_A.to_host();
  double largest = 0;
  for (double v : inverse) largest = std::max(largest, std::abs(v));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i)
      ASSERT_NEAR(device_inverse[i + static_cast<std::size_t>(j) * lda], inverse[i + static_cast<std::size_t>(j) * lda],
                  1e-12 * largest)
          << "X(" << i << ", " << j << ")";
  int host_info = 0;
  EXPECT_EQ(tessera_dpotrf_device_ex('L', n, device_failing_ex.get(), lda, &host_info, nullptr), -5);
  EXPECT_EQ(tessera_dpotrf_device_ex('L', n, device_failing_ex.get(), lda, nullptr, nullptr), -5);
}

TEST(DeviceDense, ManagedMemoryGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 300, ld = 300;
  const std::vector<double> A = random_spd<double>(n, ld, 12);
  const DeviceCopy<double> managed(A, /*managed=*/true);
  FactorOptions options;
  options.nb = 64;
  options.mode = Mode::gpu;
  ASSERT_EQ(device::potrf(runtime(), n, managed.get(), ld, nullptr, options), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, managed.to_host(), ld), 1.0);
}

// B on another GPU than A: each matrix's tiles have their own home.
TEST(DeviceDense, RightHandSidesOnAnotherGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (runtime().cuda_devices() < 2) GTEST_SKIP() << "the runtime drives one GPU: this needs two";
  const int n = 400, nrhs = 3;
  const std::vector<double> A = random_spd<double>(n, n, 13);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 14);
  int previous = 0;
  EXPECT_CUDA_OK(cudaGetDevice(&previous));
  EXPECT_CUDA_OK(cudaSetDevice(0));
  const DeviceCopy<double> device_A(A);
  EXPECT_CUDA_OK(cudaSetDevice(1));
  const DeviceCopy<double> device_X(B);
  EXPECT_CUDA_OK(cudaSetDevice(previous));
  FactorOptions options;
  options.nb = 64;
  options.mode = Mode::gpu;
  ASSERT_EQ(device::posv(runtime(), n, nrhs, device_A.get(), n, device_X.get(), n, nullptr, options), 0);
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, device_X.to_host(), B, n), kResidualThreshold);
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera::test
