// Mixed-precision solves with iterative refinement (tessera/refinement.hpp), step by step as
// LAPACK's DSPOSV and ZCPOSV take them, so that ITER and INFO mean what they mean there.
#include "refined_solve.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "argument_errors.hpp"
#include "gmres.hpp"
#include "kernels/cpu/blas.hpp"
#include "process_state.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

// LAPACK's |.| in IxAMAX and its convergence test: |x| of a real x, |re| + |im| of a complex one.
double magnitude(double x) { return std::abs(x); }
double magnitude(const std::complex<double>& x) { return std::abs(x.real()) + std::abs(x.imag()); }

// xLAG2S's test: a value beyond single precision's range (a NaN is not).
bool overflows_single(double x) { return x < -FLT_MAX || x > FLT_MAX; }
bool overflows_single(const std::complex<double>& x) { return overflows_single(x.real()) || overflows_single(x.imag()); }

std::size_t at(int i, int j, long long ld) { return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * ld; }

// Row i's factor of a scale (1 where there is none).
double scale_at(const std::vector<double>& scale, int i) { return scale.empty() ? 1.0 : scale[static_cast<std::size_t>(i)]; }

// dst := S src (rows x cols), or S src S (the triangle uplo of an n x n src), in single precision,
// S = diag(scale) (the identity where scale is empty); false, with dst partly written, where a
// value overflows it (xLAG2S, xLAT2S).
template <class T>
bool narrow(int rows, int cols, const T* src, long long lds, SingleOf<T>* dst, long long ldd,
            const std::vector<double>& scale) {
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const T v = src[at(i, j, lds)] * scale_at(scale, i);
      if (overflows_single(v)) return false;
      dst[at(i, j, ldd)] = static_cast<SingleOf<T>>(v);
    }
  return true;
}
template <class T>
bool narrow_triangle(char uplo, int n, const T* src, long long lds, SingleOf<T>* dst, long long ldd,
                     const std::vector<double>& scale) {
  for (int j = 0; j < n; ++j)
    for (int i = uplo == 'U' ? 0 : j; i <= (uplo == 'U' ? j : n - 1); ++i) {
      const T v = src[at(i, j, lds)] * (scale_at(scale, i) * scale_at(scale, j));
      if (overflows_single(v)) return false;
      dst[at(i, j, ldd)] = static_cast<SingleOf<T>>(v);
    }
  return true;
}

// dst (+)= S src, rows x cols, widened to double precision (xLAG2D; with add, x += the correction).
template <class T>
void widen(bool add, int rows, int cols, const SingleOf<T>* src, long long lds, T* dst, long long ldd,
           const std::vector<double>& scale) {
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const T v = static_cast<T>(src[at(i, j, lds)]) * scale_at(scale, i);
      dst[at(i, j, ldd)] = add ? dst[at(i, j, ldd)] + v : v;
    }
}

// A tensor-core factor's operands are rounded to 16 bits, and FP16's range ends at 65504: its
// refinement works on S A S, S = diag(1 / sqrt(a_ii)), whose diagonal is 1 and whose other entries
// are at most 1 in magnitude where A is positive definite (A x = b is (S A S) y = S b, x = S y),
// as the refinement in GPU memory does. Empty (no scale) without tensor cores, where DSPOSV's
// steps are LAPACK's, and where a diagonal entry is not positive and finite: the factorization
// then fails in double precision, which gives LAPACK's info.
template <class T>
std::vector<double> unit_diagonal_scale(int n, const MatrixView<T>& A, const FactorOptions& options) {
  if constexpr (kIsComplex<T>) {
    return {};
  } else {
    if (options.tensor_cores == TensorCores::off) return {};
    std::vector<double> scale(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const double diagonal = A.data()[at(i, i, A.ld())];
      if (!(diagonal > 0) || !std::isfinite(diagonal)) return {};
      scale[static_cast<std::size_t>(i)] = 1.0 / std::sqrt(diagonal);
    }
    return scale;
  }
}

// The magnitude of the entry IxAMAX picks in x[0..n): the first, replaced only by a strictly larger
// one (so a NaN there is kept, and later NaNs are passed over, as in the reference BLAS).
template <class T>
double largest_magnitude(int n, const T* x) {
  double largest = magnitude(x[0]);
  for (int i = 1; i < n; ++i)
    if (magnitude(x[i]) > largest) largest = magnitude(x[i]);
  return largest;
}

// Whether a column's residual r of its solution x passes LAPACK's test max|r| <= max|x| * bound (a
// NaN in either passes it, as there).
template <class T>
bool column_converged(int n, const T* r, const T* x, double bound) {
  return !(largest_magnitude(n, r) > largest_magnitude(n, x) * bound);
}

// R := B - A X (R n x nrhs, leading dimension n); whether every column has converged
// (column_converged). `progress`, where given: the largest max|r| / max|x| over the columns. With
// one BLAS thread: between two requests the runtime's workers still hold the cores, and BLAS
// threads that spin on after the product would take them from the next request's tasks.
template <class T>
bool residual_converged(char uplo, int n, int nrhs, const MatrixView<T>& A, const MatrixView<T>& B,
                        const MatrixView<T>& X, T* R, double bound, double* progress = nullptr) {
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) R[at(i, j, n)] = B.data()[at(i, j, B.ld())];
  {
    const SingleThreadedBlas one_thread;
    kernels::cpu::symm(uplo, n, nrhs, T(-1), A.data(), A.ld(), X.data(), X.ld(), T(1), R, n);
  }
  bool converged = true;
  if (progress) *progress = 0;
  for (int j = 0; j < nrhs; ++j) {
    const T* r = R + at(0, j, n);
    const T* x = X.data() + at(0, j, X.ld());
    converged = converged && column_converged(n, r, x, bound);
    if (progress) *progress = std::max(*progress, largest_magnitude(n, r) / largest_magnitude(n, x));
  }
  return converged;
}

// Per column of M (n x cols): whether it holds a NaN or an infinity.
template <class T>
std::vector<bool> non_finite_columns(int n, int cols, const T* M, long long ld) {
  std::vector<bool> non_finite(static_cast<std::size_t>(cols));
  for (int j = 0; j < cols; ++j) non_finite[static_cast<std::size_t>(j)] = kernels::cpu::any_non_finite(M + at(0, j, ld), n);
  return non_finite;
}

// Whether the refinement diverged: a column of X holds a NaN or an infinity where B's column is
// finite. LAPACK's test lets such a column through (a NaN compares false); the solve then falls
// back as one that did not converge.
template <class T>
bool diverged(const MatrixView<T>& X, const std::vector<bool>& b_non_finite) {
  const std::vector<bool> x_non_finite = non_finite_columns(X.rows(), X.cols(), X.data(), X.ld());
  for (std::size_t j = 0; j < x_non_finite.size(); ++j)
    if (x_non_finite[j] && !b_non_finite[j]) return true;
  return false;
}

// potrf and potrs in one precision: on the calling thread where the work is small (no runtime is
// started for it), else through the runtime's tasks.
template <class S>
int factor(const RuntimeSource& runtime_of, const MatrixView<S>& A, const FactorOptions& options) {
  if (runs_on_calling_thread(A, 0, options)) return potrf_on_calling_thread(A, options);
  return potrf(runtime_of(), A, options);
}
template <class S>
void solve(const RuntimeSource& runtime_of, const MatrixView<S>& factor, const MatrixView<S>& B,
           const FactorOptions& options) {
  if (runs_on_calling_thread(factor, B.cols(), options))
    potrs_on_calling_thread(factor, B, options);
  else
    potrs(runtime_of(), factor, B, options);
}

// The single-precision factor of S A S and its solves, S the scale (the identity where empty).
template <class T>
struct SingleFactor {
  using S = SingleOf<T>;
  const RuntimeSource& runtime_of;
  const FactorOptions& options;
  int n;
  std::vector<double> scale;
  std::vector<S> matrix;  // n x n: the triangle of S A S, then its factor
  std::vector<S> rhs;     // n x nrhs: right-hand sides, then solutions

  MatrixView<S> factor_view() { return MatrixView<S>::host(n, n, matrix.data(), n); }
  MatrixView<S> rhs_view(int cols) { return MatrixView<S>::host(n, cols, rhs.data(), n); }

  // out (+)= S M^{-1} S v, cols columns, M = the factor's L L^H: a correction d ~ A^{-1} v; false
  // where S v overflows single precision (out is then not written).
  bool correct(int cols, const T* v, long long ldv, T* out, long long ldo, bool add) {
    if (!narrow(n, cols, v, ldv, rhs.data(), n, scale)) return false;
    solve(runtime_of, factor_view(), rhs_view(cols), options);
    widen<T>(add, n, cols, rhs.data(), n, out, ldo, scale);
    return true;
  }
};

// GMRES-IR from X and its residual R (n x nrhs): in each step, each column that has not converged
// gets the correction GMRES finds for A d = r, preconditioned by the single-precision factor. The
// solve's ITER (the `done` classical steps plus these), kNarrowingOverflowed or kNotConverged.
template <class T>
int refine_by_gmres(char uplo, const MatrixView<T>& A, const MatrixView<T>& B, const MatrixView<T>& X,
                    SingleFactor<T>& factor, std::vector<T>& residual, double bound,
                    const std::vector<bool>& b_non_finite, int done, int* krylov) {
  const int n = A.rows(), nrhs = B.cols();
  const auto multiply = [&](const T* v, T* out) {
    const SingleThreadedBlas one_thread;
    kernels::cpu::symm(uplo, n, 1, T(1), A.data(), A.ld(), v, n, T(0), out, n);
  };
  const auto precondition = [&](const T* v, T* out) { return factor.correct(1, v, n, out, n, false); };
  std::vector<T> d(static_cast<std::size_t>(n));
  for (int step = 1; step <= kMostGmresSteps; ++step) {
    for (int j = 0; j < nrhs; ++j) {
      const T* r = residual.data() + at(0, j, n);
      T* x = X.data() + at(0, j, X.ld());
      if (column_converged(n, r, x, bound)) continue;
      const GmresResult found = gmres(n, r, d.data(), kMostKrylovSteps, kKrylovTolerance, multiply, precondition);
      *krylov += found.iterations;
      if (found.preconditioner_failed) return kNarrowingOverflowed;
      for (int i = 0; i < n; ++i) x[i] += d[static_cast<std::size_t>(i)];
    }
    if (diverged(X, b_non_finite)) return kNotConverged;
    if (residual_converged(uplo, n, nrhs, A, B, X, residual.data(), bound)) return done + step;
  }
  return kNotConverged;
}

// The refinement in single precision: the solve's ITER (>= 0 converged, else the reason to fall
// back to double precision; a refinement that diverged (diverged()) as one that did not converge).
// A is not written. Classical refinement, LAPACK's; under
// Refinement::classical_then_gmres GMRES-IR takes over from the first step that does not halve the
// residual (max|r| / max|x| over the columns), where classical refinement contracts too slowly to
// be worth its steps (or diverges).
template <class T>
int refine(const RuntimeSource& runtime_of, char uplo, const MatrixView<T>& A, const MatrixView<T>& B,
           const MatrixView<T>& X, const FactorOptions& options, int* krylov) {
  const int n = A.rows(), nrhs = B.cols();
  std::vector<double> norm_work(n);
  const double bound =
      kernels::cpu::symmetric_inf_norm(uplo, n, A.data(), A.ld(), norm_work.data()) * DBL_EPSILON * std::sqrt(double(n));
  SingleFactor<T> factor{runtime_of, options, n, unit_diagonal_scale(n, A, options),
                         std::vector<SingleOf<T>>(static_cast<std::size_t>(n) * n),
                         std::vector<SingleOf<T>>(static_cast<std::size_t>(n) * nrhs)};
  if (options.tensor_cores != TensorCores::off && factor.scale.empty()) return kSingleFactorizationFailed;
  if (!narrow(n, nrhs, B.data(), B.ld(), factor.rhs.data(), n, factor.scale)) return kNarrowingOverflowed;
  if (!narrow_triangle(uplo, n, A.data(), A.ld(), factor.matrix.data(), n, factor.scale)) return kNarrowingOverflowed;
  if (detail::factor(runtime_of, factor.factor_view(), options) != 0) return kSingleFactorizationFailed;
  solve(runtime_of, factor.factor_view(), factor.rhs_view(nrhs), options);
  widen<T>(false, n, nrhs, factor.rhs.data(), n, X.data(), X.ld(), factor.scale);
  const std::vector<bool> b_non_finite = non_finite_columns(n, nrhs, B.data(), B.ld());
  if (diverged(X, b_non_finite)) return kNotConverged;
  std::vector<T> residual(static_cast<std::size_t>(n) * nrhs);
  double progress = 0;
  if (residual_converged(uplo, n, nrhs, A, B, X, residual.data(), bound, &progress)) return 0;
  for (int iteration = 1; iteration <= kMostIterations; ++iteration) {
    if (!factor.correct(nrhs, residual.data(), n, X.data(), X.ld(), true)) return kNarrowingOverflowed;
    if (diverged(X, b_non_finite)) return kNotConverged;
    const double previous = progress;
    if (residual_converged(uplo, n, nrhs, A, B, X, residual.data(), bound, &progress)) return iteration;
    if (options.refinement == Refinement::classical_then_gmres && !(progress <= kClassicalStepMostProgress * previous))
      return refine_by_gmres(uplo, A, B, X, factor, residual, bound, b_non_finite, iteration, krylov);
  }
  return kNotConverged;
}

template <class T>
void check_views(const MatrixView<T>& A, const MatrixView<T>& B, const MatrixView<T>& X, const FactorOptions& options) {
  if (A.where() != MatrixIn::host || B.where() != MatrixIn::host || X.where() != MatrixIn::host)
    throw InvalidArgument("posv_refined: A, B and X must be matrices in host memory (MatrixView::host)");
  if (A.rows() != A.cols()) throw InvalidArgument("posv_refined: A must be square", 4);
  if (B.rows() != A.rows()) throw InvalidArgument("posv_refined: B must have A's rows", 6);
  if (X.rows() != B.rows() || X.cols() != B.cols()) throw InvalidArgument("posv_refined: X must have B's shape", 8);
  if (options.log_determinant)
    throw InvalidArgument("posv_refined: FactorOptions::log_determinant is not taken (A is factored in single precision)");
  if (kIsComplex<T> && options.tensor_cores != TensorCores::off)
    throw InvalidArgument("posv_refined: FactorOptions::tensor_cores takes real matrices (zcposv factors in FP32)");
  throw_if_invalid("posv_refined",
                   posv_refined_argument_error<T>(uplo_letter(options.uplo), A.rows(), B.cols(), A.data(), A.ld(),
                                                  B.data(), B.ld(), X.data(), X.ld()));
}

}  // namespace

template <class T>
RefinedSolve posv_refined(const RuntimeSource& runtime_of, const MatrixView<T>& A, const MatrixView<T>& B,
                          const MatrixView<T>& X, const FactorOptions& options) {
  check_views(A, B, X, options);
  const int n = A.rows(), nrhs = B.cols();
  if (n == 0) return {};
  const char uplo = uplo_letter(options.uplo);
  RefinedSolve result;
  result.iter = refine(runtime_of, uplo, A, B, X, options, &result.krylov_iterations);
  if (result.iter >= 0) return result;
  // Double precision: A's factor, then X from B (tensor cores are the single-precision factor's).
  FactorOptions double_options = options;
  double_options.tensor_cores = TensorCores::off;
  result.info = factor(runtime_of, A, double_options);
  if (result.info != 0) return result;
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) X.data()[at(i, j, X.ld())] = B.data()[at(i, j, B.ld())];
  solve(runtime_of, MatrixView<T>::host(n, n, A.data(), A.ld()), X, double_options);
  return result;
}

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template RefinedSolve posv_refined<T>(const RuntimeSource&, const MatrixView<T>&, const MatrixView<T>&,         \
                                        const MatrixView<T>&, const FactorOptions&);
TESSERA_INSTANTIATE(double)
TESSERA_INSTANTIATE(std::complex<double>)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail

namespace tessera {

template <class T>
RefinedSolve posv_refined(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B, const MatrixView<T>& X,
                          const FactorOptions& options) {
  return detail::posv_refined([&runtime]() -> Runtime& { return runtime; }, A, B, X, options);
}

template RefinedSolve posv_refined<double>(Runtime&, const MatrixView<double>&,
                                                          const MatrixView<double>&, const MatrixView<double>&,
                                                          const FactorOptions&);
template RefinedSolve posv_refined<std::complex<double>>(Runtime&,
                                                                        const MatrixView<std::complex<double>>&,
                                                                        const MatrixView<std::complex<double>>&,
                                                                        const MatrixView<std::complex<double>>&,
                                                                        const FactorOptions&);

}  // namespace tessera
