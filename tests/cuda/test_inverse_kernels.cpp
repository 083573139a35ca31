// vendor::invert_from_lower_factor (xPOTRI's product from a lower factor) by both of its routes, the
// triangular solve of the identity and the inverse by levels: (L L^H) X = I on the host in double
// over orders around the levels' leaves of 64 (1, 63, 65, 130, 193, 257), in double and complex
// double, out of place (X's strict upper triangle left as it was) and in place (X = L: L's strict
// upper triangle, NaN, left as it was); L's strict upper triangle is never read. Skipped where no
// CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "cuda/vendor.hpp"
#include "kernel_test_support.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

std::size_t at(int i, int j, int ld) { return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * ld; }

template <class T>
T random_entry(std::mt19937& gen, double scale) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (std::is_floating_point_v<T>)
    return T(scale * u(gen));
  else
    return T(scale * u(gen), scale * u(gen));
}

template <class T>
T conj_of(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v;
  else
    return std::conj(v);
}

// max |(L L^H) X - I| with X Hermitian, read from its lower triangle (the diagonal's imaginary
// parts ignored, as the product leaves them near zero).
template <class T>
double inverse_residual(int n, const std::vector<T>& L, int ld, const std::vector<T>& X, int ldx) {
  using C = std::complex<double>;
  const auto l = [&](int i, int j) { return i >= j ? C(L[at(i, j, ld)]) : C(0); };
  const auto x = [&](int i, int j) {
    return i > j ? C(X[at(i, j, ldx)]) : i == j ? C(std::real(X[at(i, i, ldx)])) : std::conj(C(X[at(j, i, ldx)]));
  };
  std::vector<C> A(static_cast<std::size_t>(n) * n);  // L L^H
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      C sum = 0;
      for (int k = 0; k <= std::min(i, j); ++k) sum += l(i, k) * std::conj(l(j, k));
      A[at(i, j, n)] = sum;
    }
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      C sum = 0;
      for (int k = 0; k < n; ++k) sum += A[at(i, k, n)] * x(k, j);
      worst = std::max(worst, std::abs(sum - C(i == j ? 1.0 : 0.0)));
    }
  return worst;
}

template <class T>
void check_inverse_from_lower_factor() {
  namespace vendor = tk::vendor;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  const T sentinel(12345);
  for (int n : {1, 63, 65, 130, 193, 257})
    for (bool by_levels : {false, true})
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " by_levels=" << by_levels << " in_place=" << in_place);
        const int ld = n + 3, ldx = in_place ? ld : n + 2;
        std::mt19937 gen(n);
        std::vector<T> L(static_cast<std::size_t>(ld) * n, T(std::numeric_limits<double>::quiet_NaN()));
        for (int j = 0; j < n; ++j)
          for (int i = j; i < n; ++i)
            L[at(i, j, ld)] = i == j ? T(1.5 + 0.5 * std::abs(std::real(random_entry<T>(gen, 1.0))))
                                     : random_entry<T>(gen, 1.0 / std::sqrt(n));
        DeviceBuffer<T> dL(L), dX(std::vector<T>(static_cast<std::size_t>(ldx) * n, sentinel));
        DeviceBuffer<T> W(std::vector<T>(static_cast<std::size_t>(n) * n));
        DeviceBuffer<T> work(std::vector<T>(std::max<std::size_t>(1, vendor::inverse_by_levels_elements(n, n))));
        DeviceBuffer<T*> pointers(std::vector<T*>(std::max(1, vendor::inverse_by_levels_pointers(n))));
        T* const X = in_place ? dL.get() : dX.get();
        vendor::invert_from_lower_factor(handle, by_levels, n, dL.get(), ld, X, ldx, W.get(), n, work.get(),
                                         pointers.get(), nullptr);
        const std::vector<T> got = in_place ? dL.to_host() : dX.to_host();
        EXPECT_LT(inverse_residual(n, L, ld, got, ldx), 1e-12 * n) << "max |A X - I|";
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < j; ++i) {
            const T above = got[at(i, j, ldx)];
            if (in_place)
              ASSERT_TRUE(std::isnan(std::real(above))) << "L's upper triangle written at (" << i << ", " << j << ")";
            else
              ASSERT_EQ(above, sentinel) << "X's upper triangle written at (" << i << ", " << j << ")";
          }
      }
  cublasDestroy(handle);
}

TEST(InverseKernels, FromLowerFactorByBothRoutesDouble) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_inverse_from_lower_factor<double>();
}

TEST(InverseKernels, FromLowerFactorByBothRoutesComplexDouble) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_inverse_from_lower_factor<std::complex<double>>();
}

}  // namespace
