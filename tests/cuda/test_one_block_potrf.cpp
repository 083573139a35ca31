// potrf_one_block (one matrix, one thread block) against LAPACK's potrf: orders on both sides of
// its panels' edges (1, 31-33, 63-65, ..., 191, 192, as far as the type's shared memory goes), the
// four scalar types, in place on a lower or an upper (transposed) triangle and out of place from
// strided sources, LAPACK's info at the first, a middle and the last column and for a NaN pivot,
// nothing outside the triangle written in place, zeros above the factor out of place, the columns
// from a failing one left as the input's; complex diagonals with imaginary parts, which LAPACK
// ignores; stacks, a block per matrix.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "cuda/one_block_potrf.hpp"
#include "tessera/precision.hpp"
#include "kernel_test_support.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

const std::vector<int> kOrders = {1, 2, 17, 31, 32, 33, 47, 48, 63, 64, 65, 96, 127, 128, 129, 160, 161, 191, 192};

template <class T>
using Real = tessera::RealOf<T>;
template <class T>
constexpr bool kComplex = tessera::kIsComplex<T>;

template <class T>
T conjugate(T x) {
  if constexpr (kComplex<T>)
    return std::conj(x);
  else
    return x;
}

// G G^H / n + I (both triangles), column-major n x n; complex: the diagonal given imaginary parts,
// which a Hermitian factorization ignores.
template <class T>
std::vector<T> random_hpd(int n, unsigned seed) {
  using Z = std::complex<double>;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Z> g(static_cast<std::size_t>(n) * n);
  for (Z& x : g) x = kComplex<T> ? Z(u(rng), u(rng)) : Z(u(rng));
  std::vector<T> a(g.size());
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      Z sum = i == j ? 1.0 : 0.0;
      for (int p = 0; p < n; ++p) sum += g[i + std::size_t(p) * n] * std::conj(g[j + std::size_t(p) * n]) / double(n);
      if constexpr (kComplex<T>) {
        a[i + std::size_t(j) * n] = T(sum);
        a[j + std::size_t(i) * n] = std::conj(T(sum));
        if (i == j) a[i + std::size_t(i) * n] = T(Real<T>(sum.real()), Real<T>(0.25));
      } else {
        a[i + std::size_t(j) * n] = a[j + std::size_t(i) * n] = T(sum.real());
      }
    }
  return a;
}

// LAPACK's potrf (the _work form: LAPACKE's own would refuse a NaN before LAPACK sees it).
template <class T>
int lapack_potrf(int n, std::vector<T>& a) {
  if constexpr (std::is_same_v<T, double>)
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a.data(), n);
  else if constexpr (std::is_same_v<T, float>)
    return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, a.data(), n);
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, 'L', n, reinterpret_cast<lapack_complex_double*>(a.data()), n);
  else
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, 'L', n, reinterpret_cast<lapack_complex_float*>(a.data()), n);
}

// A case: the matrix a (n x n column-major, T), its failing column (0: none) as LAPACK has it.
template <class T>
struct Case {
  int n;
  std::vector<T> a;
  std::vector<T> lapack;  // LAPACK's potrf of a's lower triangle
  int info;
};

// `fail`: 0 for an SPD matrix; k > 0: the leading minor of order k made not positive definite
// (its last diagonal entry -1, or NaN where `nan`).
template <class T>
Case<T> make_case(int n, int fail, bool nan) {
  Case<T> c{n, random_hpd<T>(n, 7u + static_cast<unsigned>(n)), {}, 0};
  if (fail > 0) c.a[(fail - 1) + std::size_t(fail - 1) * n] = T(-1);
  c.lapack = c.a;
  c.info = lapack_potrf<T>(n, c.lapack);
  // A NaN pivot fails where -1 does (not every LAPACK's potrf checks for NaN: OpenBLAS's does not)
  if (nan) c.a[(fail - 1) + std::size_t(fail - 1) * n] = T(poison<Real<T>>());
  return c;
}

// Runs the kernel on element (i, j) of the lower triangle at `src` + i * sr + j * sc, the factor to
// `dst` + i * dr + j * dc; returns the info.
template <class T>
int run_kernel(int n, const T* src, long long sr, long long sc, T* dst, long long dr, long long dc, bool out_of_place) {
  int* info = nullptr;
  EXPECT_EQ(cudaMalloc(&info, sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaMemset(info, 0xff, sizeof(int)), cudaSuccess);
  tk::potrf_one_block(n, src, sr, sc, dst, dr, dc, out_of_place, info, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int host = -7;
  EXPECT_EQ(cudaMemcpy(&host, info, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(info);
  return host;
}

// The factor's lower triangle read at `at(i, j)` against LAPACK's: to rounding where LAPACK defines
// it (all of it, or the leading minor before the failing one: LAPACK's blocked potrf leaves the
// rows below a failing block unfactored), and the columns from the failing one as the input's (bit
// for bit).
template <class T, class At>
void expect_factor(const Case<T>& c, const At& at) {
  const int n = c.n, factored = c.info == 0 ? n : c.info - 1;
  double largest = 0, difference = 0;
  for (int j = 0; j < factored; ++j)
    for (int i = j; i < (c.info == 0 ? n : factored); ++i) {
      const T expected = c.lapack[i + std::size_t(j) * n], got = at(i, j);
      largest = std::max(largest, double(std::abs(expected)));
      difference = std::max(difference, double(std::abs(got - expected)));
      if (i == j && kComplex<T>) ASSERT_EQ(std::imag(got), Real<T>(0)) << "diagonal " << i << " not real";
    }
  EXPECT_LE(difference, 20.0 * n * eps<Real<T>>() * largest);
  for (int j = factored; j < n; ++j)
    for (int i = j; i < n; ++i)
      ASSERT_TRUE(same_bits(at(i, j), c.a[i + std::size_t(j) * n])) << "(" << i << ", " << j << ") not the input's";
}

// The orders of kOrders this GPU's shared memory holds for T (complex double's stop at 128).
template <class T>
std::vector<int> orders() {
  std::vector<int> held;
  for (int n : kOrders)
    if (tk::potrf_one_block_fits<T>(n)) held.push_back(n);
  return held;
}

template <class T>
class OneBlockPotrf : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(OneBlockPotrf, ScalarTypes);

// In place, the lower triangle of a column-major matrix (ld > n) or the upper one (Hermitian
// storage, read as its transpose: row stride ld): the other triangle and the rows past n come back
// bit for bit.
TYPED_TEST(OneBlockPotrf, InPlaceMatchesLapackAndWritesOnlyTheTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (int n : orders<T>()) {
    for (int fail : {0, 1, n / 2 + 1, n}) {
      for (bool nan : {false, true}) {
        if (nan && fail != n / 2 + 1) continue;
        const Case<T> c = make_case<T>(n, fail, nan);
        for (bool upper : {false, true}) {
          SCOPED_TRACE("n = " + std::to_string(n) + ", failing minor " + std::to_string(fail) + (nan ? " (NaN)" : "") +
                       (upper ? ", upper" : ", lower"));
          const int ld = n + 3;
          std::vector<T> host(std::size_t(ld) * n, T(-5));
          for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
              const T lower = c.a[i + std::size_t(j) * n];
              if (upper)
                host[j + std::size_t(i) * ld] = conjugate(lower);
              else
                host[i + std::size_t(j) * ld] = lower;
            }
          DeviceBuffer<T> device(host);
          const long long row = upper ? ld : 1, col = upper ? 1 : ld;
          EXPECT_EQ(run_kernel<T>(n, device.get(), row, col, device.get(), row, col, false), c.info);
          const std::vector<T> out = device.to_host();
          expect_factor(c, [&](int i, int j) {
            const T stored = out[i * row + j * col];
            return upper ? conjugate(stored) : stored;  // U = L^H
          });
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < ld; ++i) {
              const bool in_triangle = upper ? (i <= j) : (i >= j && i < n);
              if (!in_triangle) ASSERT_EQ(out[i + std::size_t(j) * ld], T(-5)) << i << ", " << j;
            }
        }
      }
    }
  }
}

// Out of place from a C-ordered source (row stride n), into a column-major L (ldl > n) or into its
// transpose: the factor, zeros in L's other triangle, the source untouched, L's padding rows too.
TYPED_TEST(OneBlockPotrf, OutOfPlaceFromStridedSourcesZeroesTheOtherTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (int n : orders<T>()) {
    for (int fail : {0, 1, n / 2 + 1, n}) {
      const Case<T> c = make_case<T>(n, fail, false);
      for (bool transposed : {false, true}) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", failing minor " + std::to_string(fail) +
                     (transposed ? ", factor transposed" : ""));
        std::vector<T> source(std::size_t(n) * n);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) source[std::size_t(i) * n + j] = c.a[i + std::size_t(j) * n];  // C order
        const int ldl = n + 1;
        DeviceBuffer<T> src(source), dst(std::vector<T>(std::size_t(ldl) * n, T(poison<Real<T>>())));
        const long long dr = transposed ? ldl : 1, dc = transposed ? 1 : ldl;
        EXPECT_EQ(run_kernel<T>(n, src.get(), n, 1, dst.get(), dr, dc, true), c.info);
        const std::vector<T> out = dst.to_host();
        expect_factor(c, [&](int i, int j) { return out[i * dr + j * dc]; });
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < j; ++i) ASSERT_EQ(out[i * dr + j * dc], T(0)) << i << ", " << j;
        for (int j = 0; j < n; ++j) ASSERT_TRUE(same_bits(out[n + std::size_t(j) * ldl], T(poison<Real<T>>())));
        EXPECT_EQ(src.to_host(), source);
      }
    }
  }
}

// A stack, one block per matrix: each matrix's factor and info, out of place with strides between
// the matrices larger than their size, the matrix in the middle failing.
TYPED_TEST(OneBlockPotrf, StackFactorsEachMatrixWithItsInfo) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (int n : {1, 33, 64, 97, 128}) {
    if (!tk::potrf_one_block_fits<T>(n)) continue;
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<Case<T>> cases = {make_case<T>(n, 0, false), make_case<T>(n, n / 2 + 1, false),
                                        make_case<T>(n, 0, false)};
    const long long stride = static_cast<long long>(n) * n + 5;
    std::vector<T> source(std::size_t(stride) * cases.size(), T(-5));
    for (std::size_t b = 0; b < cases.size(); ++b)
      std::copy(cases[b].a.begin(), cases[b].a.end(), source.begin() + b * stride);
    DeviceBuffer<T> src(source), dst(std::vector<T>(source.size(), T(-5)));
    DeviceBuffer<int> info(std::vector<int>(cases.size(), -7));
    tk::potrf_one_block_stack(n, int(cases.size()), src.get(), 1, n, stride, dst.get(), 1, n, stride, true, info.get(),
                              nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<int> infos = info.to_host();
    const std::vector<T> out = dst.to_host();
    for (std::size_t b = 0; b < cases.size(); ++b) {
      EXPECT_EQ(infos[b], cases[b].info) << "matrix " << b;
      expect_factor(cases[b], [&](int i, int j) { return out[b * stride + i + std::size_t(j) * n]; });
      for (int e = n * n; e < stride; ++e) ASSERT_EQ(out[b * stride + e], T(-5)) << "past matrix " << b;
    }
  }
}

TYPED_TEST(OneBlockPotrf, EmptyMatrixHasInfoZero) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  DeviceBuffer<T> a(std::vector<T>(1, T(1)));
  EXPECT_EQ(run_kernel<T>(0, a.get(), 1, 1, a.get(), 1, 1, false), 0);
  // complex double's triangle of order 192 is past any GPU's shared memory, its 128 within an H100's
  EXPECT_TRUE(tk::potrf_one_block_fits<T>(kComplex<T> && sizeof(T) == 16 ? 128 : tk::one_block_potrf_max_n));
  EXPECT_FALSE(tk::potrf_one_block_fits<T>(tk::one_block_potrf_max_n + 1));
}

}  // namespace
