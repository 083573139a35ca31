// The batched inverse from factors on a GPU (tessera::device::potri_batched_ex and potri_batched,
// through libtessera's exported symbols) against LAPACKE's xPOTRI on each matrix, in the four
// scalar types, both triangles, orders 1, 7, 12, 16, 24, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129,
// 200 and 257 (the warp kernel's shapes of 8, 16 and 32, full and not; every side of the 32-row
// panels of the thread-block kernel; 200 and 257 past shared memory for the double types: their
// squares run from device memory), batches of 1 and 37
// with lda > n and gaps between the matrices. Members 1, 2 and 3 of a batch of 37 have a zero on
// their factor's diagonal at the first, a middle and the last column: their info must say where
// and (in place) their storage must come back bit-identical. Elements outside the referenced
// triangle (the other triangle, rows past n, gaps) are NaN and must come back bit-identical. The
// out-of-place form must write the whole inverse, exactly Hermitian, for C-ordered and Fortran-ordered
// sources, NaN for a failed member, and leave its source as it was. The arrays-of-pointers form
// and the C API's forms must give the strided form's results; the variable-size form, each matrix's.
// Skipped where no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <deque>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "../inverse_batch_support.hpp"
#include "batched_test_support.hpp"
#include "gpu_runtime.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/tessera.h"

namespace {

using tessera::Uplo;
namespace device = tessera::device;

constexpr int kOrders[] = {1, 7, 12, 16, 24, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 200, 257};
constexpr int kBatches[] = {1, 37};
constexpr Uplo kUplos[] = {Uplo::lower, Uplo::upper};

using tessera::test::cuda_ok;
using tessera::test::DeviceArray;
using tessera::test::gpu_runtime;
using tessera::test::poisoned_info;
using tessera::test::same_bits;
using namespace tessera::test::inverse_batch;

// The C API's batched inverse on device memory (tessera.h) for T.
template <class T>
struct CApi;
#define TESSERA_C_API(T, x)                                                            \
  template <>                                                                          \
  struct CApi<T> {                                                                     \
    static constexpr auto in_place = tessera_##x##potri_batched_device_ex;             \
    static constexpr auto out_of_place = tessera_##x##potri_batched_device_out_of_place_ex; \
    static constexpr auto checking = tessera_##x##potri_batched_device;                \
  };
TESSERA_C_API(float, s)
TESSERA_C_API(double, d)
TESSERA_C_API(std::complex<float>, c)
TESSERA_C_API(std::complex<double>, z)
#undef TESSERA_C_API

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

// Arrays of pointers (the factors where the strided layout has them, addressed one by one), in
// place: the strided form's results, misuse at LAPACK's positions.
TYPED_TEST(DeviceBatchedInverse, PointerArraysMatchLapack) {
  using T = TypeParam;
  std::mt19937_64 rng(13);
  for (Uplo uplo : kUplos)
    for (int n : {7, 32, 33, 200}) {
      const int batch = 37;
      const std::string where = describe("potri_batched_ex, arrays of pointers", uplo, n, batch);
      const FactorBatch<T> fb = factor_batch<T>(uplo, n, batch, rng);
      DeviceArray<T> a(fb.factors.size());
      DeviceArray<int> info(static_cast<std::size_t>(batch));
      a.upload(fb.factors, this->stream_);
      info.upload(poisoned_info(batch), this->stream_);
      std::vector<T*> pointers(static_cast<std::size_t>(batch));
      for (int k = 0; k < batch; ++k) pointers[k] = a.get() + k * fb.stride;
      DeviceArray<T*> array(pointers.size());
      array.upload(pointers, this->stream_);
      device::potri_batched_ex(uplo, n, array.get(), fb.lda, batch, info.get(), this->stream());
      check_in_place(fb, uplo, a.download(this->stream_), info.download(this->stream_), where);
      if (::testing::Test::HasFatalFailure()) return;
    }
  DeviceArray<T*> array(1);
  DeviceArray<int> info(1);
  const auto position_of = [](auto&& call) {
    try {
      call();
    } catch (const tessera::InvalidArgument& e) {
      return e.position();
    }
    return 0;
  };
  EXPECT_EQ(position_of([&] { device::potri_batched_ex<T>(Uplo::lower, 4, nullptr, 4, 1, info.get(), this->stream()); }), 3);
  EXPECT_EQ(position_of([&] { device::potri_batched_ex<T>(Uplo::lower, 4, array.get(), 3, 1, info.get(), this->stream()); }),
            4);
  EXPECT_EQ(position_of([&] { device::potri_batched_ex<T>(Uplo::upper, 4, array.get(), 4, 1, nullptr, this->stream()); }),
            6);
}

// Variable sizes (potri_vbatched_ex): for each largest order (the warp kernel's two shapes, the
// thread-block kernel in shared memory and, for the double types, from device memory) a batch of
// several orders up to it, four matrices each (members 1-3 with a zero on their factor's diagonal),
// plus an empty matrix and matrices whose sizes are refused (n < 0, n > max_n, lda < n): each
// valid matrix as LAPACKE's potri leaves it, the refused ones untouched with info -2, -3, -5.
TYPED_TEST(DeviceBatchedInverse, VariableSizesMatchLapack) {
  using T = TypeParam;
  std::mt19937_64 rng(17);
  const std::vector<std::pair<int, std::vector<int>>> cases = {
      {16, {1, 5, 16}}, {32, {2, 17, 31, 32}}, {130, {1, 7, 33, 64, 100, 130}}, {210, {3, 40, 129, 210}}};
  for (Uplo uplo : kUplos)
    for (const auto& [max_n, orders] : cases) {
      std::vector<FactorBatch<T>> batches;
      std::deque<DeviceArray<T>> storage;  // DeviceArray does not move
      std::vector<T*> pointers;
      std::vector<int> n, lda;
      for (int order : orders) {
        batches.push_back(factor_batch<T>(uplo, order, 4, rng));
        storage.emplace_back(batches.back().factors.size());
        storage.back().upload(batches.back().factors, this->stream_);
        for (int k = 0; k < 4; ++k) {
          pointers.push_back(storage.back().get() + k * batches.back().stride);
          n.push_back(order);
          lda.push_back(batches.back().lda);
        }
      }
      // An empty matrix, then three refused ones over the first matrix of the first batch (which
      // stays as it is: refused matrices are not touched).
      const FactorBatch<T>& first = batches.front();
      const std::vector<std::pair<int, int>> extra = {
          {0, 1}, {-1, first.lda}, {max_n + 1, max_n + 1}, {first.n + 1, first.n}};
      for (const auto& [order, ld] : extra) {
        pointers.push_back(storage.front().get());
        n.push_back(order);
        lda.push_back(ld);
      }
      const int batch = static_cast<int>(pointers.size());
      const std::string where = describe("potri_vbatched_ex", uplo, max_n, batch);
      DeviceArray<T*> array(pointers.size());
      DeviceArray<int> sizes(n.size()), leading(lda.size()), info(static_cast<std::size_t>(batch));
      array.upload(pointers, this->stream_);
      sizes.upload(n, this->stream_);
      leading.upload(lda, this->stream_);
      info.upload(poisoned_info(batch), this->stream_);
      device::potri_vbatched_ex(uplo, sizes.get(), max_n, array.get(), leading.get(), batch, info.get(),
                                this->stream());
      const std::vector<int> got = info.download(this->stream_);
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const std::vector<int> its_info(got.begin() + 4 * b, got.begin() + 4 * b + 4);
        check_in_place(batches[b], uplo, storage[b].download(this->stream_), its_info,
                       where + " order " + std::to_string(batches[b].n));
        if (::testing::Test::HasFatalFailure()) return;
      }
      const int refused = 4 * static_cast<int>(batches.size());
      EXPECT_EQ(got[refused], 0) << where << ": the empty matrix";
      EXPECT_EQ(got[refused + 1], -2) << where << ": n < 0";
      EXPECT_EQ(got[refused + 2], -3) << where << ": n > max_n";
      EXPECT_EQ(got[refused + 3], -5) << where << ": lda < n";
    }
}

// Factor k of fb packed as an n x n matrix whose element (i, j) lies at i * rs + j * cs, NaN
// outside its triangle.
template <class T>
std::vector<T> packed_factor(const FactorBatch<T>& fb, Uplo uplo, int k, long long rs, long long cs) {
  const int n = fb.n;
  std::vector<T> source(static_cast<std::size_t>(n) * n, nan_value<T>());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (in_triangle(uplo, i, j)) source[i * rs + j * cs] = fb.factors[k * fb.stride + i + j * fb.lda];
  return source;
}

// X (column-major, ldx > n, starting at out[offset]) holds the whole inverse of member k of fb
// (both triangles against LAPACK's one, within tolerance), or NaN everywhere where that member
// failed; its row n is still 0.
template <class T>
void check_whole_inverse(const FactorBatch<T>& fb, Uplo uplo, int k, const std::vector<T>& out, long long offset,
                         int ldx, const std::string& where) {
  const int n = fb.n;
  const double tol = tolerance(fb, uplo, k);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const T value = out[offset + i + static_cast<long long>(j) * ldx];
      if (fb.info[k] != 0) {
        ASSERT_TRUE(std::isnan(std::real(value))) << where << ": failed matrix " << k << " not NaN";
        continue;
      }
      // The reference holds one triangle: X(i, j) or the conjugate of X(j, i).
      const bool stored = in_triangle(uplo, i, j);
      const T reference =
          stored ? fb.inverses[k * fb.stride + i + j * fb.lda] : conjugate(fb.inverses[k * fb.stride + j + i * fb.lda]);
      ASSERT_LE(std::abs(value - reference), tol) << where << ": matrix " << k << " X(" << i << ", " << j << ")";
    }
  // Exactly Hermitian: each entry above the diagonal the conjugate of its mirror, bit for bit.
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n && fb.info[k] == 0; ++i)
      ASSERT_TRUE(same_bits(out[offset + j + static_cast<long long>(i) * ldx],
                            conjugate(out[offset + i + static_cast<long long>(j) * ldx])))
          << where << ": matrix " << k << " X(" << j << ", " << i << ") is not the conjugate of X(" << i << ", " << j
          << ")";
  for (int j = 0; j < n; ++j)
    ASSERT_EQ(out[offset + n + static_cast<long long>(j) * ldx], T(0)) << where << ": row n written";
}

// Out of place from C-ordered (row stride n) and Fortran-ordered (row stride 1) sources: the whole
// inverse, exactly Hermitian, column-major with ldx = n + 1; failed members NaN; the source
// unchanged; the same inverses with a null info.
TYPED_TEST(DeviceBatchedInverse, OutOfPlaceWritesTheWholeInverse) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  for (Uplo uplo : kUplos)
    for (int n : {1, 31, 33, 48, 64, 65, 127, 200})
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
        // Without an info (a null one): the same inverses, bit for bit, failed members NaN.
        DeviceArray<T> x_without_info(zeros.size());
        x_without_info.upload(zeros, this->stream_);
        device::potri_batched_ex(uplo, n, static_cast<const T*>(l.get()), rs, cs, nn, x_without_info.get(), ldx,
                                 strideX, batch, nullptr, this->stream());
        const std::vector<T> out_without_info = x_without_info.download(this->stream_);
        for (std::size_t e = 0; e < out.size(); ++e)
          ASSERT_TRUE(same_bits(out_without_info[e], out[e])) << where << ": without an info, element " << e;
        for (std::size_t e = 0; e < source.size(); ++e)
          ASSERT_TRUE(same_bits(after[e], source[e])) << where << ": the source changed at " << e;
        for (int k = 0; k < batch; ++k) {
          ASSERT_EQ(got[k], fb.info[k]) << where << ": matrix " << k;
          check_whole_inverse(fb, uplo, k, out, k * strideX, ldx, where);
        }
      }
}

// The dense inverse of one matrix (device::potri in place, device::potri_ex out of place) on a
// runtime in gpu mode: by the plan (on the caller's stream at these orders: the triangle's inverse
// by a solve of the identity up to order 192, by levels from 200) and as tile tasks (tiles of 64
// asked for). In place: each member of a batch of 4 (zeros on the
// diagonals of members 1-3) in its slot, LAPACK's inverse in its triangle, everything else (and a
// failed member) bit for bit as it was. Out of place from C-ordered and Fortran-ordered factors:
// the whole inverse, NaN and the info where the diagonal holds a zero, the source unchanged, and
// with a null info the same inverse.
TYPED_TEST(DeviceBatchedInverse, DenseCallsMatchLapack) {
  using T = TypeParam;
  std::mt19937_64 rng(20261204);
  for (Uplo uplo : kUplos)
    for (int n : {1, 31, 33, 65, 127, 200, 331})
      for (int nb : {0, 64}) {
        tessera::FactorOptions options;
        options.uplo = uplo;
        options.mode = tessera::Mode::gpu;
        options.nb = nb;
        const int batch = 4;
        const FactorBatch<T> fb = factor_batch<T>(uplo, n, batch, rng);
        const std::string where = describe(nb ? "dense, tiles of 64" : "dense", uplo, n, batch);
        DeviceArray<T> a(fb.factors.size());
        a.upload(fb.factors, this->stream_);
        std::vector<int> info(batch);
        for (int k = 0; k < batch; ++k)
          info[k] = device::potri(gpu_runtime(), n, a.get() + k * fb.stride, fb.lda, this->stream(), options);
        check_in_place(fb, uplo, a.download(this->stream_), info, where + ", in place");
        if (::testing::Test::HasFatalFailure()) return;

        const int ldx = n + 1;
        for (bool c_ordered : {false, true})
          for (int k = 0; k < batch; ++k) {
            const std::string form = where + (c_ordered ? ", potri_ex, C-ordered" : ", potri_ex, Fortran-ordered");
            const long long rs = c_ordered ? n : 1, cs = c_ordered ? 1 : n;
            const std::vector<T> source = packed_factor(fb, uplo, k, rs, cs);
            const std::vector<T> zeros(static_cast<std::size_t>(ldx) * n, T(0));
            DeviceArray<T> l(source.size()), x(zeros.size()), x_without_info(zeros.size());
            DeviceArray<int> dinfo(1);
            l.upload(source, this->stream_);
            x.upload(zeros, this->stream_);
            x_without_info.upload(zeros, this->stream_);
            dinfo.upload(poisoned_info(1), this->stream_);
            device::potri_ex(gpu_runtime(), n, static_cast<const T*>(l.get()), rs, cs, x.get(), ldx, dinfo.get(),
                             this->stream(), options);
            device::potri_ex(gpu_runtime(), n, static_cast<const T*>(l.get()), rs, cs, x_without_info.get(), ldx,
                             nullptr, this->stream(), options);
            ASSERT_EQ(dinfo.download(this->stream_), std::vector<int>{fb.info[k]}) << form << ": matrix " << k;
            const std::vector<T> out = x.download(this->stream_);
            check_whole_inverse(fb, uplo, k, out, 0, ldx, form);
            const std::vector<T> out_without_info = x_without_info.download(this->stream_);
            for (std::size_t e = 0; e < out.size(); ++e)
              ASSERT_TRUE(same_bits(out_without_info[e], out[e])) << form << ": without an info, element " << e;
            const std::vector<T> after = l.download(this->stream_);
            for (std::size_t e = 0; e < source.size(); ++e)
              ASSERT_TRUE(same_bits(after[e], source[e])) << form << ": the source changed at " << e;
          }
      }
}

// potri_ex's misuse at LAPACK's positions, before any work: X on no GPU, X equal to L.
TYPED_TEST(DeviceBatchedInverse, DenseOutOfPlaceRefusesMisuse) {
  using T = TypeParam;
  DeviceArray<T> l(16), x(16);
  std::vector<T> host(16);
  const auto position = [&](auto&& call) {
    try {
      call();
    } catch (const tessera::InvalidArgument& e) {
      return e.position();
    }
    return 0;
  };
  tessera::Runtime& rt = gpu_runtime();
  const T* L = l.get();
  EXPECT_EQ(position([&] { device::potri_ex<T>(rt, -1, L, 1, 4, x.get(), 4, nullptr, this->stream()); }), 2);
  EXPECT_EQ(position([&] { device::potri_ex<T>(rt, 4, nullptr, 1, 4, x.get(), 4, nullptr, this->stream()); }), 3);
  EXPECT_EQ(position([&] { device::potri_ex<T>(rt, 4, L, 1, 4, x.get(), 3, nullptr, this->stream()); }), 7);
  EXPECT_EQ(position([&] { device::potri_ex<T>(rt, 4, L, 1, 4, host.data(), 4, nullptr, this->stream()); }), 6);
  EXPECT_EQ(position([&] { device::potri_ex<T>(rt, 4, L, 1, 4, const_cast<T*>(L), 4, nullptr, this->stream()); }), 6);
  // n = 0: only the info written.
  DeviceArray<int> info(1);
  info.upload(poisoned_info(1), this->stream_);
  device::potri_ex<T>(rt, 0, L, 1, 1, x.get(), 1, info.get(), this->stream());
  EXPECT_EQ(info.download(this->stream_), std::vector<int>{0});
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

// The C API's three forms: the same results as the C++ forms, and LAPACK's positions for misuse.
TYPED_TEST(DeviceBatchedInverse, CApiMatchesLapackAndReportsPositions) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  const int n = 33, batch = 37;
  for (Uplo uplo : kUplos) {
    const FactorBatch<T> fb = factor_batch<T>(uplo, n, batch, rng);
    DeviceArray<T> a(fb.factors.size());
    DeviceArray<int> info(static_cast<std::size_t>(batch));
    a.upload(fb.factors, this->stream_);
    info.upload(poisoned_info(batch), this->stream_);
    ASSERT_EQ(CApi<T>::in_place(letter(uplo), n, a.get(), fb.lda, fb.stride, batch, info.get(), this->stream_), 0);
    check_in_place(fb, uplo, a.download(this->stream_), info.download(this->stream_), describe("C, in place", uplo, n, batch));

    a.upload(fb.factors, this->stream_);
    std::vector<int> host_info = poisoned_info(batch);
    ASSERT_EQ(CApi<T>::checking(letter(uplo), n, a.get(), fb.lda, fb.stride, batch, host_info.data(), this->stream_), 3);
    check_in_place(fb, uplo, a.download(this->stream_), host_info, describe("C, checking", uplo, n, batch));

    // Out of place from the factors where they lie (Fortran order, lda): the whole inverse.
    const int ldx = n;
    const long long strideX = static_cast<long long>(n) * n;
    DeviceArray<T> x(static_cast<std::size_t>(strideX * batch));
    a.upload(fb.factors, this->stream_);
    info.upload(poisoned_info(batch), this->stream_);
    ASSERT_EQ(CApi<T>::out_of_place(letter(uplo), n, a.get(), 1, fb.lda, fb.stride, x.get(), ldx, strideX, batch,
                                    info.get(), this->stream_),
              0);
    const std::vector<T> out = x.download(this->stream_);
    const std::vector<int> got = info.download(this->stream_);
    for (int k = 0; k < batch; ++k) {
      ASSERT_EQ(got[k], fb.info[k]) << "C, out of place: matrix " << k;
      if (fb.info[k] != 0) continue;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const T reference = in_triangle(uplo, i, j) ? fb.inverses[k * fb.stride + i + j * fb.lda]
                                                      : conjugate(fb.inverses[k * fb.stride + j + i * fb.lda]);
          ASSERT_LE(std::abs(out[k * strideX + i + j * ldx] - reference), tolerance(fb, uplo, k))
              << "C, out of place: matrix " << k << " X(" << i << ", " << j << ")";
        }
    }
  }
  // Misuse: LAPACK's positions, nothing enqueued.
  DeviceArray<T> a(16);
  DeviceArray<int> info(1);
  EXPECT_EQ(CApi<T>::in_place('X', 4, a.get(), 4, 16, 1, info.get(), this->stream_), -1);
  EXPECT_EQ(CApi<T>::in_place('L', -1, a.get(), 4, 16, 1, info.get(), this->stream_), -2);
  EXPECT_EQ(CApi<T>::in_place('L', 4, a.get(), 3, 16, 1, info.get(), this->stream_), -4);
  EXPECT_EQ(CApi<T>::in_place('L', 4, a.get(), 4, 16, -1, info.get(), this->stream_), -6);
  EXPECT_EQ(CApi<T>::checking('U', 4, nullptr, 4, 16, 1, nullptr, this->stream_), -3);
  EXPECT_EQ(CApi<T>::out_of_place('L', 4, a.get(), 1, 4, 16, a.get(), 3, 16, 1, info.get(), this->stream_), -8);
}

}  // namespace
