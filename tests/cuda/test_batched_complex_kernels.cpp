// The batched Cholesky kernels on complex Hermitian matrices (std::complex<float> and
// std::complex<double>), every form: strided in place (tight and padded), out of place from
// Fortran- and C-ordered sources, arrays of pointers, variable sizes, the interleaved layout, and
// the solves. Orders cover both kernel families (n <= 32 in registers, panels above) and their
// edges. Each batch holds matrices that must fail at known columns (a negative pivot in the
// middle, a NaN first pivot, a zero last pivot); the diagonal's imaginary parts are garbage on
// input (LAPACK's zpotrf ignores them) and must be zero in the factor. Results are compared with
// LAPACKE's zpotrf/cpotrf and zpotrs/cpotrs; elements outside the referenced triangles are NaN
// and must come back bit-identical. Skipped where no CUDA device is present.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batched_test_support.hpp"
#include "cuda/batched_kernels.hpp"
#include "kernels/cpu/blas.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;

namespace {

template <class C>
using Real = typename C::value_type;

template <class C>
C nan_complex() {
  return {poison<Real<C>>(), poison<Real<C>>()};
}

template <class C>
bool same_complex_bits(C a, C b) {
  return std::memcmp(&a, &b, sizeof(C)) == 0;
}

const std::vector<int>& complex_orders() {
  static const std::vector<int> orders = {1, 2, 3, 5, 8, 13, 16, 17, 24, 31, 32, 33, 40, 41, 64, 65, 100, 128, 129, 200, 257};
  return orders;
}

constexpr tk::BatchUplo kBothUplos[] = {tk::BatchUplo::lower, tk::BatchUplo::upper};

// Full Hermitian positive definite matrix (column-major, order n): G G^H / n + 0.25 ones + 0.5 I,
// G with uniform parts in [-1, 1], rounded to C.
template <class C>
std::vector<std::complex<double>> random_hpd(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::complex<double>> g(static_cast<std::size_t>(n) * n), a(g.size());
  for (auto& x : g) x = {dist(rng), dist(rng)};
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      std::complex<double> s = 0;
      for (int k = 0; k < n; ++k) s += g[i + static_cast<std::size_t>(k) * n] * std::conj(g[j + static_cast<std::size_t>(k) * n]);
      s = s / static_cast<double>(n) + 0.25 + (i == j ? 0.5 : 0.0);
      if (i == j) s.imag(0);
      const C rounded(static_cast<Real<C>>(s.real()), static_cast<Real<C>>(s.imag()));
      a[i + static_cast<std::size_t>(j) * n] = std::complex<double>(rounded.real(), rounded.imag());
      a[j + static_cast<std::size_t>(i) * n] = std::conj(a[i + static_cast<std::size_t>(j) * n]);
    }
  return a;
}

// One member of a test batch: its full matrix (spoiled where it must fail) and the info expected.
struct Member {
  int n;
  std::vector<std::complex<double>> a;
  int expected_info;
};

// The column member k must fail at (0: it must not), spoiling its matrix accordingly.
int spoil(int k, int batch, Member& m) {
  const int n = m.n;
  auto at = [&](int i) -> std::complex<double>& { return m.a[i + static_cast<std::size_t>(i) * n]; };
  if (batch >= 3 && k == 1) {
    at(n / 2) = -1.0;
    return n / 2 + 1;
  }
  if (batch >= 8 && k == batch / 2) {
    at(0) = {std::nan(""), 0.0};
    return 1;
  }
  if (batch >= 12 && k == batch - 2) {
    at(n - 1) = 0.0;
    return n;
  }
  return 0;
}

template <class C>
std::vector<Member> make_members(const std::vector<int>& orders, std::mt19937_64& rng) {
  std::vector<Member> members;
  const int batch = static_cast<int>(orders.size());
  for (int k = 0; k < batch; ++k) {
    Member m{orders[k], random_hpd<C>(orders[k], rng), 0};
    if (m.n > 0) m.expected_info = spoil(k, batch, m);
    members.push_back(std::move(m));
  }
  return members;
}

bool referenced(tk::BatchUplo uplo, int i, int j) { return uplo == tk::BatchUplo::lower ? i >= j : i <= j; }

// The referenced triangle of member m into `data` at `offset` (leading dimension ld), with garbage
// in the diagonal's imaginary parts (LAPACK does not read them).
template <class C>
void place(const Member& m, tk::BatchUplo uplo, std::vector<C>& data, long long offset, int ld) {
  for (int j = 0; j < m.n; ++j)
    for (int i = 0; i < m.n; ++i)
      if (referenced(uplo, i, j)) {
        const std::complex<double> v = m.a[i + static_cast<std::size_t>(j) * m.n];
        data[offset + i + static_cast<std::size_t>(j) * ld] =
            C(static_cast<Real<C>>(v.real()), i == j ? Real<C>(7) : static_cast<Real<C>>(v.imag()));
      }
}

// The members in one strided array (member k at k * stride, leading dimension lda), their
// triangles `uplo` placed, `outside` (NaN unless given) everywhere else.
template <class C>
std::vector<C> strided_batch(const std::vector<Member>& members, tk::BatchUplo uplo, int lda, long long stride,
                             C outside = nan_complex<C>()) {
  std::vector<C> host(static_cast<std::size_t>(stride) * members.size(), outside);
  for (std::size_t k = 0; k < members.size(); ++k) place(members[k], uplo, host, static_cast<long long>(k) * stride, lda);
  return host;
}

// LAPACK's factor of member m (column-major, ld = n) in triangle uplo, and its info.
template <class C>
std::vector<C> reference_factor(const Member& m, tk::BatchUplo uplo, int& info) {
  std::vector<C> r(static_cast<std::size_t>(m.n) * m.n, C(0));
  place(m, uplo, r, 0, m.n);
  info = tessera::kernels::cpu::potrf(uplo == tk::BatchUplo::lower ? 'L' : 'U', m.n, r.data(), std::max(1, m.n));
  return r;
}

// Checks member k's factor at `offset` (leading dimension ld) against LAPACK's: info, the
// referenced triangle (all of it, or the leading (info-1) block of a failed matrix) within
// 50 n eps max|L|, a real positive diagonal, and (unless `whole` says the output is a whole
// matrix with zeros outside the triangle) NaN elsewhere in the member's columns.
template <class C>
void check_member(const std::vector<C>& out, const Member& m, int k, tk::BatchUplo uplo, long long offset, int ld,
                  int info, const std::string& where, bool zeros_outside = false) {
  int ref_info = 0;
  const std::vector<C> ref = reference_factor<C>(m, uplo, ref_info);
  ASSERT_EQ(ref_info, m.expected_info) << where << ": LAPACK's info for matrix " << k;
  ASSERT_EQ(info, m.expected_info) << where << ": info of matrix " << k << " (n = " << m.n << ")";
  const int good = m.expected_info == 0 ? m.n : m.expected_info - 1;
  double lmax = 1;
  for (int j = 0; j < good; ++j)
    for (int i = 0; i < good; ++i)
      if (referenced(uplo, i, j)) lmax = std::max(lmax, static_cast<double>(std::abs(ref[i + static_cast<std::size_t>(j) * m.n])));
  const double tolerance = 50.0 * std::max(m.n, 1) * eps<Real<C>>() * lmax;
  for (int j = 0; j < m.n; ++j)
    for (int i = 0; i < m.n; ++i) {
      const C got = out[offset + i + static_cast<std::size_t>(j) * ld];
      if (!referenced(uplo, i, j)) {
        if (zeros_outside)
          ASSERT_TRUE(got == C(0)) << where << ": matrix " << k << " element (" << i << ", " << j << ") outside the triangle";
        else
          ASSERT_TRUE(same_complex_bits(got, nan_complex<C>()))
              << where << ": matrix " << k << " element (" << i << ", " << j << ") outside the triangle was written";
        continue;
      }
      if (i >= good || j >= good) continue;
      const C want = ref[i + static_cast<std::size_t>(j) * m.n];
      ASSERT_LE(std::abs(std::complex<double>(got) - std::complex<double>(want)), tolerance)
          << where << ": matrix " << k << " (n = " << m.n << ") factor element (" << i << ", " << j << ") = " << got
          << ", LAPACK " << want;
      if (i == j) {
        ASSERT_GT(got.real(), Real<C>(0)) << where << ": diagonal " << i << " of matrix " << k;
        ASSERT_EQ(got.imag(), Real<C>(0)) << where << ": the imaginary part of diagonal " << i << " of matrix " << k;
      }
    }
}

template <class C>
class BatchedComplex : public GpuTest<C> {
 protected:
  std::mt19937_64 rng{20261129};

  // Orders 65 and 129 with more matrices than kFewMatricesPerSm per SM, the others with fewer:
  // the panel kernel's built-in shapes for many and for few matrices (potrf_batched_default_shape).
  int batch_for(int n) const {
    if (n == 65 || n == 129) return tk::kFewMatricesPerSm * current_sm_count() + 1;
    return n <= 64 ? 37 : 13;
  }

  // potrf_batched_blocked on `batch` members of order n (leading dimension n + pad, gaps between
  // them when padded), each member checked against LAPACK; zeros outside the triangles when the
  // options zero the opposite triangles, NaN (which must come back bit for bit) otherwise.
  void check_blocked(cublasHandle_t blas, tk::BatchUplo uplo, int n, int pad, int batch,
                     const tk::BatchedOptions& opts) {
    const int lda = n + pad;
    const long long stride = static_cast<long long>(lda) * n + (pad ? 5 : 0);
    const bool zero = opts.blocked_zero_opposite;
    const std::vector<Member> members = make_members<C>(std::vector<int>(batch, n), rng);
    DeviceArray<C> dA(strided_batch<C>(members, uplo, lda, stride, zero ? C(0) : nan_complex<C>()));
    DeviceArray<int> dinfo(poisoned_info(batch));
    tk::potrf_batched_blocked<C>(blas, uplo, n, dA.get(), lda, stride, batch, dinfo.get(), nullptr, opts);
    const std::vector<C> out = dA.download();
    const std::vector<int> info = dinfo.download();
    std::ostringstream where;
    where << "blocks of " << opts.blocked_width << (zero ? " zeroing " : " ")
          << (uplo == tk::BatchUplo::lower ? "lower" : "upper") << " n=" << n << " lda=" << lda << " batch=" << batch;
    for (int k = 0; k < batch; ++k) {
      check_member(out, members[k], k, uplo, k * stride, lda, info[k], where.str(), zero);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
};

using ComplexTypes = ::testing::Types<std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(BatchedComplex, ComplexTypes);

// Strided in place, tight (lda = n, stride = n * n) and padded (lda = n + 3, gaps between the
// matrices), then the solves with three right-hand sides against LAPACK's.
TYPED_TEST(BatchedComplex, StridedInPlaceAndSolve) {
  using C = TypeParam;
  for (int n : complex_orders())
    for (tk::BatchUplo uplo : kBothUplos)
      for (int pad : {0, 3}) {
        const int batch = this->batch_for(n);
        const int lda = n + pad;
        const long long stride = static_cast<long long>(lda) * n + (pad ? 5 : 0);
        const std::vector<Member> members = make_members<C>(std::vector<int>(batch, n), this->rng);
        const std::vector<C> host = strided_batch<C>(members, uplo, lda, stride);
        DeviceArray<C> dA(host);
        DeviceArray<int> dinfo(poisoned_info(batch));
        tk::potrf_batched<C>(uplo, n, dA.get(), lda, stride, batch, dinfo.get(), nullptr);
        const std::vector<C> out = dA.download();
        const std::vector<int> info = dinfo.download();
        std::ostringstream where;
        where << "strided " << (uplo == tk::BatchUplo::lower ? "lower" : "upper") << " n=" << n << " lda=" << lda;
        for (int k = 0; k < batch; ++k) {
          check_member(out, members[k], k, uplo, k * stride, lda, info[k], where.str());
          if (::testing::Test::HasFatalFailure()) return;
        }

        // Solves: matrices that failed keep their right-hand sides.
        const int nrhs = 3, ldb = n + pad;
        const long long strideB = static_cast<long long>(ldb) * nrhs;
        std::uniform_real_distribution<double> dist(-1, 1);
        std::vector<C> b(static_cast<std::size_t>(strideB) * batch, nan_complex<C>());
        for (int k = 0; k < batch; ++k)
          for (int c = 0; c < nrhs; ++c)
            for (int i = 0; i < n; ++i)
              b[k * strideB + i + static_cast<std::size_t>(c) * ldb] =
                  C(static_cast<Real<C>>(dist(this->rng)), static_cast<Real<C>>(dist(this->rng)));
        // Solves by every kernel (the staged and the lane one where the factor fits a block's shared
        // memory).
        for (tk::SolveKernel kernel : {tk::SolveKernel::streamed, tk::SolveKernel::staged, tk::SolveKernel::lanes}) {
          DeviceArray<C> dB(b);
          tk::BatchedSolveOptions solve_opts;
          solve_opts.kernel = kernel;
          tk::potrs_batched<C>(uplo, n, nrhs, dA.get(), lda, stride, dB.get(), ldb, strideB, batch, dinfo.get(),
                               nullptr, solve_opts);
          const std::vector<C> x = dB.download();
          for (int k = 0; k < batch; ++k) {
            std::vector<C> want(b.begin() + k * strideB, b.begin() + (k + 1) * strideB);
            if (info[k] == 0) {
              std::vector<C> factor(out.begin() + k * stride,
                                    out.begin() + k * stride + static_cast<std::size_t>(lda) * n);
              tessera::kernels::cpu::potrs(uplo == tk::BatchUplo::lower ? 'L' : 'U', n, nrhs, factor.data(), lda,
                                           want.data(), ldb);
            }
            double xmax = 1;
            for (int c = 0; c < nrhs; ++c)
              for (int i = 0; i < n; ++i)
                xmax = std::max(xmax, static_cast<double>(std::abs(want[i + static_cast<std::size_t>(c) * ldb])));
            const double tolerance = 200.0 * n * eps<Real<C>>() * xmax;
            for (int c = 0; c < nrhs; ++c)
              for (int i = 0; i < ldb; ++i) {
                const std::size_t e = i + static_cast<std::size_t>(c) * ldb;
                const C got = x[k * strideB + e];
                if (i >= n || info[k] != 0) {
                  ASSERT_TRUE(same_complex_bits(got, want[e]))
                      << where.str() << ": B of matrix " << k << " changed at " << e;
                } else {
                  ASSERT_LE(std::abs(std::complex<double>(got) - std::complex<double>(want[e])), tolerance)
                      << where.str()
                      << (kernel == tk::SolveKernel::staged  ? " staged"
                          : kernel == tk::SolveKernel::lanes ? " lanes"
                                                             : " streamed")
                      << ": solution of matrix " << k << " row " << i << " column " << c;
                }
              }
          }
        }
      }
}

// In blocks of columns (potrf_batched_blocked: cuBLAS's batched products update each block, the
// panel kernel factors it): orders across the block widths, the built-in width and 32, tight and
// padded, both triangles, and the infos of members failing in the first block, a middle one and
// the last; the opposite triangles the products overwrite come back bit for bit (NaN there).
TYPED_TEST(BatchedComplex, InBlocksOfColumns) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  for (int n : {33, 64, 65, 100, 129, 257})
    for (int width : {0, 32})
      for (int pad : {0, 3})
        for (tk::BatchUplo uplo : kBothUplos) {
          tk::BatchedOptions opts;
          opts.blocked_width = width;
          this->check_blocked(blas, uplo, n, pad, 13, opts);
          if (::testing::Test::HasFatalFailure()) {
            cublasDestroy(blas);
            return;
          }
        }
  cublasDestroy(blas);
}

// Stacks longer than the GPU has SMs, where the opposite triangles are copied out and back (or
// zeroed, from inputs with zeros there) on a second stream beside the first and the last panel
// kernels: every member's factor and info, and the triangles the products overwrite.
TYPED_TEST(BatchedComplex, InBlocksOfColumnsOnLongStacks) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const int batch = current_sm_count() + 1;
  for (int n : {65, 129})
    for (bool zero : {false, true})
      for (tk::BatchUplo uplo : kBothUplos) {
        tk::BatchedOptions opts;
        opts.blocked_width = 32;
        opts.blocked_zero_opposite = zero;
        this->check_blocked(blas, uplo, n, 1, batch, opts);
        if (::testing::Test::HasFatalFailure()) {
          cublasDestroy(blas);
          return;
        }
      }
  cublasDestroy(blas);
}

// Stacks with more matrices per SM than kFewMatricesPerSm: their blocks take the panel shapes
// potrf_batched_columns_shape picks for many matrices, block by block.
TYPED_TEST(BatchedComplex, InBlocksOfColumnsWithManyMatricesPerSm) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const int batch = tk::kFewMatricesPerSm * current_sm_count() + 1;
  for (int n : {129, 200})
    for (tk::BatchUplo uplo : kBothUplos) {
      this->check_blocked(blas, uplo, n, 1, batch, {});
      if (::testing::Test::HasFatalFailure()) {
        cublasDestroy(blas);
        return;
      }
    }
  cublasDestroy(blas);
}

// One block of columns (potrf_batched_columns) against the whole factorization (check_columns):
// counts from one column to all of them, both triangles, the broken members' infos where their
// column is among the first `count`, with few and with many matrices per SM.
TYPED_TEST(BatchedComplex, OneBlockOfColumns) {
  using C = TypeParam;
  const int many = tk::kFewMatricesPerSm * current_sm_count() + 1;
  for (int n : {33, 100, 257})
    for (int count : {1, 32, 64, n})
      for (int batch : {13, many})
        for (tk::BatchUplo uplo : kBothUplos) {
          if (count > n || (batch == many && n > 100)) continue;
          const int lda = n + 1;
          const long long stride = static_cast<long long>(lda) * n + 5;
          std::mt19937_64 same = this->rng;
          const std::vector<Member> members = make_members<C>(std::vector<int>(batch, n), this->rng);
          std::vector<Member> clean;
          std::vector<int> infos;
          for (const Member& m : members) {
            clean.push_back({n, random_hpd<C>(n, same), 0});
            infos.push_back(m.expected_info);
          }
          std::ostringstream where;
          where << "columns " << (uplo == tk::BatchUplo::lower ? "lower" : "upper") << " n=" << n
                << " count=" << count << " batch=" << batch;
          check_columns(uplo, n, count, strided_batch<C>(members, uplo, lda, stride),
                        strided_batch<C>(clean, uplo, lda, stride), lda, stride, infos, {}, where.str());
          if (::testing::Test::HasFailure()) return;
        }
}

// Solves with triangular factors whose diagonal is complex (a caller's factor, or one perturbed by
// an autograd check): every kernel divides by the complex element, conjugated in the solve with the
// factor's conjugate transpose, as LAPACK's ztrsm (zpotrs) does. The factors are diagonally
// dominant (|diagonal| in [2, 3] with any phase, off-diagonal parts below 1/n), so the solves are
// well conditioned; orders reach every kernel (registers, streamed, staged, lanes, global).
TYPED_TEST(BatchedComplex, SolvesDivideByTheComplexDiagonal) {
  using C = TypeParam;
  std::uniform_real_distribution<double> unit(-1, 1), phase(0, 6.283185307179586);
  for (int n : {1, 5, 17, 32, 33, 64, 100, 200, 600})
    for (tk::BatchUplo uplo : kBothUplos) {
      const int batch = 5, lda = n + 2, ldb = n + 1, nrhs = n == 64 ? 40 : 3;
      const long long stride = static_cast<long long>(lda) * n, strideB = static_cast<long long>(ldb) * nrhs;
      std::vector<C> factors(static_cast<std::size_t>(stride) * batch, nan_complex<C>());
      std::vector<C> b(static_cast<std::size_t>(strideB) * batch, nan_complex<C>());
      for (int k = 0; k < batch; ++k) {
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            if (!referenced(uplo, i, j)) continue;
            const std::complex<double> v = i == j ? std::polar(2.5 + 0.5 * unit(this->rng), phase(this->rng))
                                                  : std::complex<double>(unit(this->rng), unit(this->rng)) / (2.0 * n);
            factors[k * stride + i + static_cast<std::size_t>(j) * lda] =
                C(static_cast<Real<C>>(v.real()), static_cast<Real<C>>(v.imag()));
          }
        for (int c = 0; c < nrhs; ++c)
          for (int i = 0; i < n; ++i)
            b[k * strideB + i + static_cast<std::size_t>(c) * ldb] =
                C(static_cast<Real<C>>(unit(this->rng)), static_cast<Real<C>>(unit(this->rng)));
      }
      std::vector<C> want = b;
      for (int k = 0; k < batch; ++k)
        tessera::kernels::cpu::potrs(uplo == tk::BatchUplo::lower ? 'L' : 'U', n, nrhs, factors.data() + k * stride,
                                     lda, want.data() + k * strideB, ldb);
      const DeviceArray<C> dA(factors);
      for (tk::SolveKernel kernel :
           {tk::SolveKernel::automatic, tk::SolveKernel::streamed, tk::SolveKernel::staged, tk::SolveKernel::lanes}) {
        DeviceArray<C> dB(b);
        tk::BatchedSolveOptions opts;
        opts.kernel = kernel;
        tk::potrs_batched<C>(uplo, n, nrhs, dA.get(), lda, stride, dB.get(), ldb, strideB, batch, nullptr, nullptr,
                             opts);
        const std::vector<C> x = dB.download();
        for (std::size_t e = 0; e < x.size(); ++e) {
          const int i = static_cast<int>(e % strideB % ldb);
          if (i >= n) {
            ASSERT_TRUE(same_complex_bits(x[e], b[e])) << "element " << e << " past the rows was written";
            continue;
          }
          ASSERT_LE(std::abs(std::complex<double>(x[e]) - std::complex<double>(want[e])), 10.0 * n * eps<Real<C>>())
              << (uplo == tk::BatchUplo::lower ? "lower" : "upper") << " n=" << n << " kernel "
              << static_cast<int>(kernel) << ": element " << e << " = " << x[e] << ", LAPACK " << want[e];
        }
      }
    }
}

// Out of place from a Fortran-ordered and a C-ordered source: the factor in a whole output matrix
// (zeros outside the triangle), the source unchanged.
TYPED_TEST(BatchedComplex, OutOfPlace) {
  using C = TypeParam;
  for (int n : complex_orders())
    for (tk::BatchUplo uplo : kBothUplos)
      for (bool c_ordered : {false, true}) {
        const int batch = this->batch_for(n);
        const long long nn = static_cast<long long>(n) * n;
        const std::vector<Member> members = make_members<C>(std::vector<int>(batch, n), this->rng);
        std::vector<C> src(static_cast<std::size_t>(nn) * batch, nan_complex<C>());
        for (int k = 0; k < batch; ++k) {
          std::vector<C> full(static_cast<std::size_t>(nn), nan_complex<C>());
          place(members[k], uplo, full, 0, n);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
              src[k * nn + (c_ordered ? static_cast<long long>(i) * n + j : i + static_cast<long long>(j) * n)] =
                  full[i + static_cast<std::size_t>(j) * n];
        }
        DeviceArray<C> dA(src);
        DeviceArray<C> dL(static_cast<std::size_t>(nn) * batch);
        DeviceArray<int> dinfo(poisoned_info(batch));
        tk::potrf_batched<C>(uplo, n, dA.get(), c_ordered ? n : 1, c_ordered ? 1 : n, nn, dL.get(), n, nn, batch,
                             dinfo.get(), nullptr);
        const std::vector<C> out = dL.download();
        const std::vector<int> info = dinfo.download();
        const std::vector<C> after = dA.download();
        std::ostringstream where;
        where << "out of place " << (c_ordered ? "C" : "Fortran") << "-ordered "
              << (uplo == tk::BatchUplo::lower ? "lower" : "upper") << " n=" << n;
        for (std::size_t e = 0; e < src.size(); ++e)
          ASSERT_TRUE(same_complex_bits(src[e], after[e])) << where.str() << ": the source changed at " << e;
        for (int k = 0; k < batch; ++k) {
          if (info[k] != 0) {
            ASSERT_EQ(info[k], members[k].expected_info) << where.str() << ": info of matrix " << k;
            continue;  // the rest of a failed factor is unspecified
          }
          check_member(out, members[k], k, uplo, k * nn, n, info[k], where.str(), /*zeros_outside=*/true);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
}

// Arrays of pointers and variable sizes (every order of complex_orders in one batch, shuffled),
// factored and solved; then the interleaved layout for n <= 32.
TYPED_TEST(BatchedComplex, PointersVariableAndInterleaved) {
  using C = TypeParam;
  for (tk::BatchUplo uplo : kBothUplos) {
    std::vector<int> orders = complex_orders();
    orders.insert(orders.end(), complex_orders().begin(), complex_orders().end());
    std::shuffle(orders.begin(), orders.end(), this->rng);
    const int batch = static_cast<int>(orders.size());
    const int max_n = *std::max_element(orders.begin(), orders.end());
    const std::vector<Member> members = make_members<C>(orders, this->rng);
    std::vector<long long> offsets(batch);
    std::vector<int> lds(batch);
    long long total = 0;
    for (int k = 0; k < batch; ++k) {
      offsets[k] = total;
      lds[k] = orders[k] + (k % 3);
      total += static_cast<long long>(lds[k]) * orders[k] + 2;
    }
    std::vector<C> host(static_cast<std::size_t>(total), nan_complex<C>());
    for (int k = 0; k < batch; ++k) place(members[k], uplo, host, offsets[k], lds[k]);
    const std::string label = uplo == tk::BatchUplo::lower ? "lower" : "upper";

    {  // variable sizes, offsets
      DeviceArray<C> dA(host);
      DeviceArray<int> dn(orders), dlda(lds), dinfo(poisoned_info(batch));
      DeviceArray<long long> doff(offsets);
      tk::potrf_vbatched<C>(uplo, dn.get(), max_n, dA.get(), doff.get(), dlda.get(), batch, dinfo.get(), nullptr);
      const std::vector<C> out = dA.download();
      const std::vector<int> info = dinfo.download();
      for (int k = 0; k < batch; ++k) {
        check_member(out, members[k], k, uplo, offsets[k], lds[k], info[k], "vbatched " + label);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    {  // variable sizes, arrays of pointers
      DeviceArray<C> dA(host);
      std::vector<C*> pointers(batch);
      for (int k = 0; k < batch; ++k) pointers[k] = dA.get() + offsets[k];
      DeviceArray<C*> dptr(pointers);
      DeviceArray<int> dn(orders), dlda(lds), dinfo(poisoned_info(batch));
      tk::potrf_vbatched<C>(uplo, dn.get(), max_n, dptr.get(), dlda.get(), batch, dinfo.get(), nullptr);
      const std::vector<C> out = dA.download();
      const std::vector<int> info = dinfo.download();
      for (int k = 0; k < batch; ++k) {
        check_member(out, members[k], k, uplo, offsets[k], lds[k], info[k], "vbatched pointers " + label);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }

  for (int n : {1, 5, 16, 31, 32})
    for (tk::BatchUplo uplo : kBothUplos) {  // interleaved, and uniform arrays of pointers
      const int batch = 45;
      const long long nn = static_cast<long long>(n) * n;
      const std::vector<Member> members = make_members<C>(std::vector<int>(batch, n), this->rng);
      const std::vector<C> host = strided_batch<C>(members, uplo, n, nn);
      DeviceArray<C> dA(host), dAi(static_cast<std::size_t>(tk::interleaved_elements(n, batch)));
      DeviceArray<int> dinfo(poisoned_info(batch));
      tk::interleave_batched<C>(n, dA.get(), n, nn, batch, dAi.get(), nullptr);
      tk::potrf_batched_interleaved<C>(uplo, n, dAi.get(), batch, dinfo.get(), nullptr);
      tk::deinterleave_batched<C>(n, dAi.get(), batch, dA.get(), n, nn, nullptr);
      std::vector<C> out = dA.download();
      std::vector<int> info = dinfo.download();
      for (int k = 0; k < batch; ++k) {
        check_member(out, members[k], k, uplo, k * nn, n, info[k], "interleaved n=" + std::to_string(n));
        if (::testing::Test::HasFatalFailure()) return;
      }

      DeviceArray<C> dP(host);
      std::vector<C*> pointers(batch);
      for (int k = 0; k < batch; ++k) pointers[k] = dP.get() + k * nn;
      DeviceArray<C*> dptr(pointers);
      DeviceArray<int> dinfo2(poisoned_info(batch));
      tk::potrf_batched<C>(uplo, n, dptr.get(), n, batch, dinfo2.get(), nullptr);
      out = dP.download();
      info = dinfo2.download();
      for (int k = 0; k < batch; ++k) {
        check_member(out, members[k], k, uplo, k * nn, n, info[k], "pointers n=" + std::to_string(n));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
}

}  // namespace
