// Solves in mixed precision: LAPACK's DSPOSV and ZCPOSV. A double-precision symmetric (Hermitian)
// positive definite A is factored in single precision, where the factorization costs about half,
// and the single-precision solution is refined with residuals computed in double precision until
// it is as accurate as a double-precision solve; where that cannot work (a matrix too
// ill-conditioned for single precision, values beyond its range), A is factored in double
// precision instead, and the caller is told which way the solution came.
#pragma once

#include "tessera/export.h"

#include "tessera/matrix.hpp"
#include "tessera/options.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

// LAPACK's INFO and ITER of a refined solve.
struct RefinedSolve {
  // 0, or k > 0: the leading minor of order k of A is not positive definite (A in double
  // precision; X is then not computed).
  int info = 0;
  // >= 0: the refinement converged after this many iterations (classical steps and GMRES-IR
  //   steps, FactorOptions::refinement); A is unchanged.
  // < 0: A was factored in double precision (it holds the factor, as potrf leaves it) because
  //   -2  converting A or B (or a residual, or a Krylov vector) to single precision overflowed,
  //   -3  the single-precision factorization failed,
  //  -31  the refinement had not converged (after 30 classical iterations, or after GMRES-IR's
  //       steps too where it ran), or it diverged: X took a NaN or an infinity from a finite B
  //       (LAPACK's test lets such a solution through; here the double-precision solve follows).
  int iter = 0;
  // The products with A that GMRES-IR's Krylov steps took, over every step and column (0 where
  // classical refinement converged alone).
  int krylov_iterations = 0;
};

// X := A^{-1} B, A n x n (its triangle options.uplo), B and X n x nrhs, all in host memory
// (MatrixIn::host), T double or std::complex<double>; as LAPACK's DSPOSV/ZCPOSV (or, under
// options.refinement = Refinement::classical_then_gmres, with GMRES-IR where classical refinement
// stalls), with its convergence test: every column's residual r = b - A x has max|r_i| <= max|x_i| ||A||_inf eps
// sqrt(n) (eps of double; |.| of a complex value: |re| + |im|). The single-precision
// factorization and solves run as potrf and potrs of that precision do (options.mode, tile size,
// the calling thread for small work); the residuals on the calling thread. B is only read; X must
// not share memory with A or B. Misuse throws InvalidArgument (the position in LAPACK's argument
// list: uplo 1, n 2, nrhs 3, A 4, lda 5, B 6, ldb 7, X 8, ldx 9), as does
// FactorOptions::log_determinant, which a single-precision factor cannot give to double precision.
template <class T>
TESSERA_EXPORT RefinedSolve posv_refined(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B,
                                         const MatrixView<T>& X, const FactorOptions& options = {});

}  // namespace tessera
