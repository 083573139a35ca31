// GMRES for the correction equation of iterative refinement (GMRES-IR, Carson and Higham, SIAM J.
// Sci. Comput. 2017-2018): A d = r solved in the working precision, left-preconditioned by the
// low-precision factor's solve M^{-1} ~ A^{-1}, so that the Krylov method sees M^{-1} A, whose
// condition stays moderate where A's is far beyond what the low precision resolves and classical
// refinement (d = M^{-1} r) stops contracting.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace gmres_detail {

using kernels::cpu::adjoint_element;

// sum conj(u_i) v_i
template <class T>
T dot(int n, const T* u, const T* v) {
  T sum(0);
  for (int i = 0; i < n; ++i) sum += adjoint_element(u[i]) * v[i];
  return sum;
}

template <class T>
double norm2(int n, const T* v) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::norm(v[i]);
  return std::sqrt(sum);
}

// The plane rotation [c s; -conj(s) c] (c real) that takes (a, b) to (rho, 0).
template <class T>
struct Rotation {
  double c = 1;
  T s = T(0);

  static Rotation zeroing(T a, T b, T* rho) {
    Rotation g;
    const double abs_a = std::abs(a), abs_b = std::abs(b);
    if (abs_b == 0) {
      *rho = a;
      return g;
    }
    if (abs_a == 0) {
      g.c = 0;
      g.s = adjoint_element(b) / abs_b;
      *rho = T(abs_b);
      return g;
    }
    const double length = std::hypot(abs_a, abs_b);
    const T phase = a / abs_a;
    g.c = abs_a / length;
    g.s = phase * adjoint_element(b) / length;
    *rho = phase * length;
    return g;
  }

  void apply(T* x, T* y) const {
    const T rotated_x = c * *x + s * *y;
    *y = -adjoint_element(s) * *x + c * *y;
    *x = rotated_x;
  }
};

}  // namespace gmres_detail

struct GmresResult {
  int iterations = 0;          // Krylov steps taken (products with A)
  bool converged = false;      // the preconditioned residual fell by `tolerance`
  bool preconditioner_failed = false;  // precondition() returned false: d is 0
};

// d := an approximate solution of A d = r (n unknowns, T double or std::complex<double>), from d = 0:
// GMRES on M^{-1} A d = M^{-1} r, at most max_iterations steps (one cycle, no restart: each
// refinement step is a restart), until the preconditioned residual's 2-norm falls to `tolerance`
// times its start. multiply(v, out): out := A v. precondition(v, out): out := M^{-1} v, false where
// it could not (a value beyond the low precision's range). Arnoldi with modified Gram-Schmidt,
// the least-squares problem by Givens rotations.
template <class T, class Multiply, class Precondition>
GmresResult gmres(int n, const T* r, T* d, int max_iterations, double tolerance, const Multiply& multiply,
                  const Precondition& precondition) {
  using gmres_detail::dot;
  using gmres_detail::norm2;
  using Rotation = gmres_detail::Rotation<T>;
  GmresResult result;
  const std::size_t length = static_cast<std::size_t>(n);
  const int m = std::max(1, std::min(max_iterations, n));
  std::vector<T> basis(length * (m + 1)), product(length);
  const auto v = [&](int k) { return basis.data() + length * k; };
  for (std::size_t i = 0; i < length; ++i) d[i] = T(0);
  if (!precondition(r, v(0))) {
    result.preconditioner_failed = true;
    return result;
  }
  const double beta = norm2(n, v(0));
  if (!(beta > 0) || !std::isfinite(beta)) {
    result.converged = beta == 0;
    return result;
  }
  for (std::size_t i = 0; i < length; ++i) v(0)[i] /= beta;
  // h: the Hessenberg matrix, column k at h[k * (m + 1)], reduced to triangular by the rotations;
  // g: the rotated right-hand side beta e_1.
  std::vector<T> h(static_cast<std::size_t>(m + 1) * m, T(0)), g(m + 1, T(0));
  std::vector<Rotation> rotations(m);
  g[0] = T(beta);
  int k = 0;
  while (k < m) {
    T* column = h.data() + static_cast<std::size_t>(k) * (m + 1);
    multiply(v(k), product.data());
    if (!precondition(product.data(), v(k + 1))) {
      result.preconditioner_failed = true;
      return result;
    }
    T* w = v(k + 1);
    for (int i = 0; i <= k; ++i) {
      column[i] = dot(n, v(i), w);
      for (std::size_t e = 0; e < length; ++e) w[e] -= column[i] * v(i)[e];
    }
    const double next = norm2(n, w);
    column[k + 1] = T(next);
    if (next > 0)
      for (std::size_t e = 0; e < length; ++e) w[e] /= next;
    for (int i = 0; i < k; ++i) rotations[i].apply(&column[i], &column[i + 1]);
    T rho;
    rotations[k] = Rotation::zeroing(column[k], column[k + 1], &rho);
    column[k] = rho;
    column[k + 1] = T(0);
    rotations[k].apply(&g[k], &g[k + 1]);
    ++k;
    if (std::abs(g[k]) <= tolerance * beta || !(next > 0)) {
      result.converged = true;
      break;
    }
  }
  result.iterations = k;
  // y := the triangular solve of the first k rows; d := V y.
  std::vector<T> y(k);
  for (int i = k - 1; i >= 0; --i) {
    T sum = g[i];
    for (int j = i + 1; j < k; ++j) sum -= h[static_cast<std::size_t>(j) * (m + 1) + i] * y[j];
    y[i] = sum / h[static_cast<std::size_t>(i) * (m + 1) + i];
  }
  for (int j = 0; j < k; ++j)
    for (std::size_t e = 0; e < length; ++e) d[e] += y[j] * v(j)[e];
  return result;
}

}  // namespace tessera::detail
