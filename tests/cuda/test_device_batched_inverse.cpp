// The batched inverse from factors on a GPU (tessera::device::potri_batched_ex and potri_batched,
// through libtessera's exported symbols) against LAPACKE's xPOTRI on each matrix, in the four
// scalar types, both triangles, orders 1, 7, 31, 32, 33, 64, 127 and 200 (the largest ones past
// shared memory for the double types: their squares run from device memory), batches of 1 and 37
// with lda > n and gaps between the matrices. Members 1, 2 and 3 of a batch of 37 have a zero on
// their factor's diagonal at the first, a middle and the last column: their info must say where
// and (in place) their storage must come back bit-identical. Elements outside the referenced
// triangle (the other triangle, rows past n, gaps) are NaN and must come back bit-identical. The
// out-of-place form must write the whole Hermitian inverse for C-ordered and Fortran-ordered
// sources, NaN for a failed member, and leave its source as it was.
// Skipped where no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "batched_test_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "tessera/device.hpp"

namespace {

using tessera::Uplo;
namespace device = tessera::device;
namespace cpu = tessera::kernels::cpu;

constexpr int kOrders[] = {1, 7, 31, 32, 33, 64, 127, 200};
constexpr int kBatches[] = {1, 37};
constexpr Uplo kUplos[] = {Uplo::lower, Uplo::upper};

template <class T>
struct Real {
  using type = T;
};
template <class R>
struct Real<std::complex<R>> {
  using type = R;
};
template <class T>
using RealOf = typename Real<T>::type;

template <class T>
T nan_value() {
  const RealOf<T> nan = std::numeric_limits<RealOf<T>>::quiet_NaN();
  if constexpr (std::is_floating_point_v<T>)
    return nan;
  else
    return T(nan, nan);
}

template <class T>
T conjugate(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return std::conj(x);
}

template <class T>
T random_entry(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(u(rng));
  else
    return T(static_cast<RealOf<T>>(u(rng)), static_cast<RealOf<T>>(u(rng)));
}

using tessera::test::cuda_ok;
using tessera::test::DeviceArray;
using tessera::test::poisoned_info;
using tessera::test::same_bits;

char letter(Uplo uplo) { return uplo == Uplo::lower ? 'L' : 'U'; }
bool in_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; }

// A batch of factors (lda = n + 3, matrices lda * n + 5 apart, NaN everywhere else) and, for each,
// LAPACKE's inverse in the same storage and the info xPOTRI must report.
template <class T>
struct FactorBatch {
  int n, lda, batch;
  long long stride;
  std::vector<T> factors;
  std::vector<T> inverses;
  std::vector<int> info;
};

// Column that member k of a batch of more than 3 gets a zero at (-1: none).
int zero_column(int k, int n, int batch) {
  if (batch <= 3) return -1;
  return k == 1 ? 0 : k == 2 ? n / 2 : k == 3 ? n - 1 : -1;
}

template <class T>
FactorBatch<T> factor_batch(Uplo uplo, int n, int batch, std::mt19937_64& rng) {
  FactorBatch<T> fb{n, n + 3, batch, static_cast<long long>(n + 3) * n + 5, {}, {}, {}};
  fb.factors.assign(static_cast<std::size_t>(fb.stride * batch), nan_value<T>());
  fb.info.assign(static_cast<std::size_t>(batch), 0);
  for (int k = 0; k < batch; ++k) {
    // A = B B^H + n I: well conditioned, so that the inverse is accurate to a few n eps.
    std::vector<T> b(static_cast<std::size_t>(n) * n), a(static_cast<std::size_t>(n) * n, T(0));
    for (T& v : b) v = random_entry<T>(rng);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        T sum = i == j ? T(static_cast<RealOf<T>>(n)) : T(0);
        for (int m = 0; m < n; ++m) {
          if constexpr (std::is_floating_point_v<T>)
            sum += b[i + m * n] * b[j + m * n];
          else
            sum += b[i + m * n] * std::conj(b[j + m * n]);
        }
        a[i + j * n] = sum;
      }
    EXPECT_EQ(cpu::potrf(letter(uplo), n, a.data(), n), 0);
    const int zero = zero_column(k, n, batch);
    if (zero >= 0) {
      a[zero + zero * n] = T(0);
      fb.info[k] = zero + 1;
    }
    T* slot = fb.factors.data() + k * fb.stride;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (in_triangle(uplo, i, j)) slot[i + j * fb.lda] = a[i + j * n];
  }
  fb.inverses = fb.factors;
  for (int k = 0; k < batch; ++k)
    EXPECT_EQ(cpu::potri(letter(uplo), n, fb.inverses.data() + k * fb.stride, fb.lda), fb.info[k]);
  return fb;
}

// The largest |x| of the triangle of member k of the reference inverses.
template <class T>
double largest(const FactorBatch<T>& fb, Uplo uplo, int k) {
  double most = 0;
  for (int j = 0; j < fb.n; ++j)
    for (int i = 0; i < fb.n; ++i)
      if (in_triangle(uplo, i, j)) most = std::max(most, static_cast<double>(std::abs(fb.inverses[k * fb.stride + i + j * fb.lda])));
  return most;
}

std::string describe(const char* form, Uplo uplo, int n, int batch) {
  std::ostringstream s;
  s << form << " uplo " << letter(uplo) << " n " << n << " batch " << batch;
  return s.str();
}

template <class T>
double tolerance(const FactorBatch<T>& fb, Uplo uplo, int k) {
  return 50.0 * fb.n * std::numeric_limits<RealOf<T>>::epsilon() * largest(fb, uplo, k);
}

// In place: the reference inverse in the triangle, everything else (and failed members) as it was.
template <class T>
void check_in_place(const FactorBatch<T>& fb, Uplo uplo, const std::vector<T>& out, const std::vector<int>& info,
                    const std::string& where) {
  for (int k = 0; k < fb.batch; ++k) {
    ASSERT_EQ(info[k], fb.info[k]) << where << ": matrix " << k;
    const double tol = tolerance(fb, uplo, k);
    for (long long e = 0; e < fb.stride && k * fb.stride + e < static_cast<long long>(out.size()); ++e) {
      const long long at = k * fb.stride + e;
      const int i = static_cast<int>(e % fb.lda), j = static_cast<int>(e / fb.lda);
      const bool computed = fb.info[k] == 0 && j < fb.n && i < fb.n && in_triangle(uplo, i, j);
      if (!computed) {
        ASSERT_TRUE(same_bits(out[at], fb.factors[at])) << where << ": matrix " << k << " element " << e << " changed";
        continue;
      }
      ASSERT_LE(std::abs(out[at] - fb.inverses[at]), tol)
          << where << ": matrix " << k << " X(" << i << ", " << j << ") differs from LAPACKE's potri";
      if (i == j) {
        ASSERT_EQ(std::imag(std::complex<double>(out[at])), 0.0) << where << ": a diagonal is not real";
      }
    }
  }
}

template <class T>
class DeviceBatchedInverse : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSERA_REQUIRE_CUDA_DEVICE();
    cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  device::Stream stream() const { return reinterpret_cast<device::Stream>(stream_); }
  cudaStream_t stream_ = nullptr;
};

using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceBatchedInverse, Scalars);

TYPED_TEST(DeviceBatchedInverse, InPlaceMatchesLapackAndReportsZeroDiagonals) {
  using T = TypeParam;
  std::mt19937_64 rng(20261201);
  for (Uplo uplo : kUplos)
    for (int n : kOrders)
      for (int batch : kBatches) {
        const std::string where = describe("potri_batched_ex", uplo, n, batch);
        const FactorBatch<T> fb = factor_batch<T>(uplo, n, batch, rng);
        DeviceArray<T> a(fb.factors.size());
        DeviceArray<int> info(static_cast<std::size_t>(batch));
        a.upload(fb.factors, this->stream_);
        info.upload(poisoned_info(batch), this->stream_);
        device::potri_batched_ex(uplo, n, a.get(), fb.lda, fb.stride, batch, info.get(), this->stream());
        check_in_place(fb, uplo, a.download(this->stream_), info.download(this->stream_), where);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TYPED_TEST(DeviceBatchedInverse, CheckingFormCountsFailures) {
  using T = TypeParam;
  std::mt19937_64 rng(7);
  for (Uplo uplo : kUplos)
    for (int n : {5, 40}) {
      const std::string where = describe("potri_batched", uplo, n, 37);
      const FactorBatch<T> fb = factor_batch<T>(uplo, n, 37, rng);
      DeviceArray<T> a(fb.factors.size());
      a.upload(fb.factors, this->stream_);
      std::vector<int> host_info = poisoned_info(37);
      EXPECT_EQ(device::potri_batched(uplo, n, a.get(), fb.lda, fb.stride, 37, host_info.data(), this->stream()), 3)
          << where;
      check_in_place(fb, uplo, a.download(this->stream_), host_info, where);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// Out of place from C-ordered (row stride n) and Fortran-ordered (row stride 1) sources: the whole
// inverse, column-major with ldx = n + 1; failed members NaN; the source unchanged.
TYPED_TEST(DeviceBatchedInverse, OutOfPlaceWritesTheWholeInverse) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  for (Uplo uplo : kUplos)
    for (int n : {1, 31, 33, 127})
      for (bool c_ordered : {false, true}) {
        const int batch = 37;
        const std::string where = describe(c_ordered ? "out of place, C-ordered" : "out of place, Fortran-ordered",
                                           uplo, n, batch);
        const FactorBatch<T> fb = factor_batch<T>(uplo, n, batch, rng);
        // The source: each factor's n x n matrix packed, element (i, j) at i * rs + j * cs.
        const long long rs = c_ordered ? n : 1, cs = c_ordered ? 1 : n, nn = static_cast<long long>(n) * n;
        std::vector<T> source(static_cast<std::size_t>(nn * batch), nan_value<T>());
        for (int k = 0; k < batch; ++k)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
              if (in_triangle(uplo, i, j)) source[k * nn + i * rs + j * cs] = fb.factors[k * fb.stride + i + j * fb.lda];
        const int ldx = n + 1;
        const long long strideX = static_cast<long long>(ldx) * n;
        const std::vector<T> zeros(static_cast<std::size_t>(strideX * batch), T(0));
        DeviceArray<T> l(source.size()), x(zeros.size());
        DeviceArray<int> info(static_cast<std::size_t>(batch));
        l.upload(source, this->stream_);
        x.upload(zeros, this->stream_);
        info.upload(poisoned_info(batch), this->stream_);
        device::potri_batched_ex(uplo, n, static_cast<const T*>(l.get()), rs, cs, nn, x.get(), ldx, strideX, batch,
                                 info.get(), this->stream());
        const std::vector<T> out = x.download(this->stream_);
        const std::vector<int> got = info.download(this->stream_);
        const std::vector<T> after = l.download(this->stream_);
        for (std::size_t e = 0; e < source.size(); ++e)
          ASSERT_TRUE(same_bits(after[e], source[e])) << where << ": the source changed at " << e;
        for (int k = 0; k < batch; ++k) {
          ASSERT_EQ(got[k], fb.info[k]) << where << ": matrix " << k;
          const double tol = tolerance(fb, uplo, k);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
              const T value = out[k * strideX + i + j * ldx];
              if (fb.info[k] != 0) {
                ASSERT_TRUE(std::isnan(std::real(value))) << where << ": failed matrix " << k << " not NaN";
                continue;
              }
              // The reference holds one triangle: X(i, j) or the conjugate of X(j, i).
              const bool stored = in_triangle(uplo, i, j);
              const T reference = stored ? fb.inverses[k * fb.stride + i + j * fb.lda]
                                         : conjugate(fb.inverses[k * fb.stride + j + i * fb.lda]);
              ASSERT_LE(std::abs(value - reference), tol) << where << ": matrix " << k << " X(" << i << ", " << j << ")";
            }
          // Rows past n are not written.
          for (int j = 0; j < n; ++j) ASSERT_EQ(out[k * strideX + n + j * ldx], T(0)) << where << ": row n written";
        }
      }
}

TYPED_TEST(DeviceBatchedInverse, EmptyBatchesAndOrdersEnqueueNothing) {
  using T = TypeParam;
  DeviceArray<int> info(3);
  info.upload(poisoned_info(3), this->stream_);
  device::potri_batched_ex<T>(Uplo::lower, 0, nullptr, 1, 0, 3, info.get(), this->stream());
  std::vector<int> host_info = poisoned_info(3);
  EXPECT_EQ(device::potri_batched<T>(Uplo::upper, 0, nullptr, 1, 0, 3, host_info.data(), this->stream()), 0);
  EXPECT_EQ(host_info, std::vector<int>(3, 0));
  EXPECT_EQ(info.download(this->stream_), poisoned_info(3));
}

}  // namespace
