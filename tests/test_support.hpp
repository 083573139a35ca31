// Shared helpers for the tests: a runtime for the whole test binary, random SPD matrices with
// fixed seeds, and residuals computed in double on the host.
#pragma once

#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "../src/testkit/residuals.hpp"
#include "../src/testkit/spd_matrices.hpp"
#include "tessera/tessera.hpp"

namespace tessera {
// Readable test names for parameterized tests.
inline void PrintTo(Uplo uplo, std::ostream* os) { *os << to_string(uplo); }
inline void PrintTo(Mode mode, std::ostream* os) { *os << to_string(mode); }
}  // namespace tessera

namespace tessera::test {

// The offset of element (i, j) in a column-major matrix of leading dimension ld.
inline std::size_t at(int i, int j, int ld) { return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * ld; }

// One runtime per test binary (StarPU runs once per process), two CPU workers by default.
inline Runtime& runtime() {
  static std::unique_ptr<Runtime> rt = [] {
    RuntimeOptions options = RuntimeOptions::from_environment();
    if (options.ncpus < 0) options.ncpus = 2;
    return std::make_unique<Runtime>(options);
  }();
  return *rt;
}

inline bool have_gpu() { return runtime().cuda_workers() > 0; }

// An order whose one host matrix runs as tasks on every machine, beyond the most work
// tessera::runs_on_calling_thread takes (test_plan.cpp checks it against the thresholds).
inline constexpr int kOrderThatRunsTasks = 2001;

#define TESSERA_SKIP_WITHOUT_GPU()                                                               \
  do {                                                                                           \
    if (!::tessera::test::have_gpu()) GTEST_SKIP() << "no CUDA worker: this machine has no usable GPU"; \
  } while (0)

// A random SPD matrix, column-major with leading dimension ld, both triangles filled:
// A = G G^T / n + I for a random G (well conditioned, full spectrum) up to n = 400; beyond, where
// that product would dominate the test's time, a random symmetric strictly diagonally dominant one.
template <class T>
std::vector<T> random_spd(int n, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> A(static_cast<std::size_t>(ld) * std::max(n, 1), T(-7));  // padding rows stay -7
  auto at = [&](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * ld]; };
  if (n > 400) {
    for (int j = 0; j < n; ++j) {
      at(j, j) = static_cast<T>(n);
      for (int i = j + 1; i < n; ++i) at(i, j) = at(j, i) = static_cast<T>(dist(gen));
    }
    return A;
  }
  std::vector<double> G(static_cast<std::size_t>(n) * n);
  for (double& g : G) g = dist(gen);
  testkit::gram_plus_identity(n, G, [&](int i, int j, double value) { at(i, j) = at(j, i) = static_cast<T>(value); });
  return A;
}

namespace condition_detail {
inline double conj_of(double x) { return x; }
inline std::complex<double> conj_of(const std::complex<double>& x) { return std::conj(x); }
template <class T>
T random_value(std::mt19937& gen) {
  std::uniform_real_distribution<double> part(-1.0, 1.0);
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    const double re = part(gen);
    return {re, part(gen)};
  } else {
    return part(gen);
  }
}
}  // namespace condition_detail

// Q D Q^H (T double or std::complex<double>, n x n, both triangles) with D's entries falling
// geometrically from 1 to 1 / condition and Q the product of two Householder reflections: the
// 2-norm condition number is `condition`.
template <class T>
std::vector<T> spd_with_condition(int n, double condition, unsigned seed) {
  using condition_detail::conj_of;
  std::mt19937 gen(seed);
  std::vector<T> A(static_cast<std::size_t>(n) * n, T(0));
  for (int i = 0; i < n; ++i) A[at(i, i, n)] = T(std::pow(condition, -double(i) / std::max(1, n - 1)));
  for (int reflection = 0; reflection < 2; ++reflection) {
    std::vector<T> v(n);
    double norm = 0;
    for (T& x : v) {
      x = condition_detail::random_value<T>(gen);
      norm += std::norm(x);
    }
    // A := H A H, H = I - 2 v v^H / (v^H v): A v and v^H A, then the rank-two update.
    std::vector<T> av(n, T(0)), vha(n, T(0));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        av[i] += A[at(i, j, n)] * v[j];
        vha[j] += conj_of(v[i]) * A[at(i, j, n)];
      }
    T vhav(0);
    for (int i = 0; i < n; ++i) vhav += conj_of(v[i]) * av[i];
    const double tau = 2 / norm;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        A[at(i, j, n)] += -tau * av[i] * conj_of(v[j]) - tau * v[i] * vha[j] + tau * tau * vhav * v[i] * conj_of(v[j]);
  }
  for (int i = 0; i < n; ++i) A[at(i, i, n)] = T(std::real(A[at(i, i, n)]));
  return A;
}

template <class T>
std::vector<T> random_matrix(int rows, int cols, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> B(static_cast<std::size_t>(ld) * std::max(cols, 1), T(-7));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) B[i + static_cast<std::size_t>(j) * ld] = static_cast<T>(dist(gen));
  return B;
}

// ||A - L L^T||_1 / (n ||A||_1 eps) with L the lower factor held in the triangle `uplo` of F
// (L = U^T for upper storage), computed in double with BLAS; the other triangle of F is ignored.
template <class T>
double factor_backward_error(Uplo uplo, int n, const std::vector<T>& A, const std::vector<T>& F, int ld) {
  if (n == 0) return 0.0;
  const std::size_t nn = static_cast<std::size_t>(n);
  std::vector<double> L(nn * nn, 0.0), R(nn * nn, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      L[i + j * nn] = uplo == Uplo::lower ? F[i + static_cast<std::size_t>(j) * ld] : F[j + static_cast<std::size_t>(i) * ld];
      R[i + j * nn] = A[i + static_cast<std::size_t>(j) * ld];  // lower triangle of the symmetric A
    }
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, -1.0, L.data(), n, 1.0, R.data(), n);
  // 1-norms of the symmetric R and A from their lower triangles.
  std::vector<double> colsum_r(nn, 0.0), colsum_a(nn, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double r = std::abs(R[i + j * nn]);
      const double a = std::abs(double(A[i + static_cast<std::size_t>(j) * ld]));
      colsum_r[j] += r;
      colsum_a[j] += a;
      if (i != j) {
        colsum_r[i] += r;
        colsum_a[i] += a;
      }
    }
  double nr = 0, na = 0;
  for (int j = 0; j < n; ++j) {
    if (std::isnan(colsum_r[j])) return std::nan("");
    nr = std::max(nr, colsum_r[j]);
    na = std::max(na, colsum_a[j]);
  }
  return nr / (n * na * std::numeric_limits<T>::epsilon());
}

// Built with CUDA, a device-API `call` throws InvalidArgument at `position` before it touches CUDA
// or the memory; built without, every device call throws RuntimeError.
template <class Call>
void expect_refused_at(int position, const char* what, Call&& call) {
#ifdef TESSERA_HAVE_CUDA
  try {
    call();
    ADD_FAILURE() << what << ": accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), position) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not an InvalidArgument: " << e.what();
  }
#else
  EXPECT_THROW(call(), RuntimeError) << what;
#endif
}

// Scaled residuals (backward errors in units of n eps) pass below this, as in LAPACK's own test
// suite: rounding alone can exceed 1 on tiny systems (at n = 1 a correct solve, a square root and
// two divisions, reaches about 2), a wrong answer is many orders above.
constexpr double kResidualThreshold = 30.0;

// ||A X - B||_1 / (||A||_1 ||X||_1 n eps), A symmetric (full storage): the formula of the
// command line's check, NaN for a NaN residual; a solve passes below kResidualThreshold.
template <class T>
double solve_backward_error(int n, int nrhs, const std::vector<T>& A, int lda, const std::vector<T>& X,
                            const std::vector<T>& B, int ldb) {
  return testkit::solve_backward_error(n, nrhs, A.data(), lda, X.data(), ldb, B.data(), ldb);
}

}  // namespace tessera::test
