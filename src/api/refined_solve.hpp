// The refined solve of tessera/refinement.hpp for callers that start no runtime for small work
// (the C API): `runtime_of` is called only where a step needs the runtime's tasks.
#pragma once

#include <functional>

#include "tessera/refinement.hpp"

namespace tessera::detail {

using RuntimeSource = std::function<Runtime&()>;

// LAPACK's ITER limits and reasons (xSPOSV's ITERMAX, and ITER < 0).
constexpr int kMostIterations = 30;
// -1: double precision chosen before any single-precision step (LAPACK's "implementation- or
// machine-specific reasons"): where single precision cannot be the faster.
constexpr int kDoubleChosen = -1;
constexpr int kNarrowingOverflowed = -2;
constexpr int kSingleFactorizationFailed = -3;
constexpr int kNotConverged = -kMostIterations - 1;

// GMRES-IR's steps and the Krylov steps each may take (GMRES restarts at each refinement step),
// and the fall of the preconditioned residual at which a step's GMRES stops: each step then gains
// about six digits, so that two or three reach LAPACK's test. GMRES-IR takes over from the first
// classical step that does not halve max|r| / max|x| (Refinement::classical_then_gmres).
constexpr int kMostGmresSteps = 10;
constexpr int kMostKrylovSteps = 60;
constexpr double kKrylovTolerance = 1e-6;
constexpr double kClassicalStepMostProgress = 0.5;

template <class T>
RefinedSolve posv_refined(const RuntimeSource& runtime_of, const MatrixView<T>& A, const MatrixView<T>& B,
                          const MatrixView<T>& X, const FactorOptions& options);

}  // namespace tessera::detail
