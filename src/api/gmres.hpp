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
  bool preconditioner_failed = false;  // the preconditioner could not apply (d is then 0)
};

// GMRES on M^{-1} A d = M^{-1} r from d = 0 (T double or std::complex<double>), at most
// max_iterations steps (one cycle, no restart: each refinement step is a restart), until the
// preconditioned residual's 2-norm falls to `tolerance` times its start; the least-squares problem
// by Givens rotations on the host. The Krylov basis lives where `space` keeps it:
//   bool start(double* beta): v_0 := M^{-1} r, beta := ||v_0||, v_0 /= beta where beta > 0; false
//     where the preconditioner could not apply (a value beyond the low precision's range);
//   bool extend(int k, T* column): v_{k+1} := M^{-1} A v_k orthogonalised against v_0..v_k, the
//     coefficients in column[0..k], its norm in column[k + 1], normalised where that is > 0;
//     false as start's;
//   void add_combination(int k, const T* y): d += v_0 y_0 + ... + v_{k-1} y_{k-1}.
template <class T, class KrylovSpace>
GmresResult gmres(int n, KrylovSpace& space, int max_iterations, double tolerance) {
  using Rotation = gmres_detail::Rotation<T>;
  GmresResult result;
  const int m = std::max(1, std::min(max_iterations, n));
  double beta = 0;
  if (!space.start(&beta)) {
    result.preconditioner_failed = true;
    return result;
  }
  if (!(beta > 0) || !std::isfinite(beta)) {
    result.converged = beta == 0;
    return result;
  }
  // h: the Hessenberg matrix, column k at h[k * (m + 1)], reduced to triangular by the rotations;
  // g: the rotated right-hand side beta e_1.
  std::vector<T> h(static_cast<std::size_t>(m + 1) * m, T(0)), g(m + 1, T(0));
  std::vector<Rotation> rotations(m);
  g[0] = T(beta);
  int k = 0;
  while (k < m) {
    T* column = h.data() + static_cast<std::size_t>(k) * (m + 1);
    if (!space.extend(k, column)) {
      result.preconditioner_failed = true;
      return result;
    }
    const double next = std::abs(column[k + 1]);
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
  space.add_combination(k, y.data());
  return result;
}

// The Krylov space in host memory: Arnoldi with modified Gram-Schmidt. multiply(v, out): out :=
// A v; precondition(v, out): out := M^{-1} v, false where it could not.
template <class T, class Multiply, class Precondition>
class HostKrylovSpace {
 public:
  HostKrylovSpace(int n, int max_iterations, const T* r, T* d, const Multiply& multiply,
                  const Precondition& precondition)
      : length_(static_cast<std::size_t>(n)), r_(r), d_(d), multiply_(multiply), precondition_(precondition),
        basis_(length_ * (std::max(1, std::min(max_iterations, n)) + 1)), product_(length_) {}

  bool start(double* beta) {
    for (std::size_t i = 0; i < length_; ++i) d_[i] = T(0);
    if (!precondition_(r_, v(0))) return false;
    *beta = gmres_detail::norm2(int(length_), v(0));
    if (*beta > 0 && std::isfinite(*beta))
      for (std::size_t i = 0; i < length_; ++i) v(0)[i] /= *beta;
    return true;
  }

  bool extend(int k, T* column) {
    multiply_(v(k), product_.data());
    if (!precondition_(product_.data(), v(k + 1))) return false;
    T* w = v(k + 1);
    for (int i = 0; i <= k; ++i) {
      column[i] = gmres_detail::dot(int(length_), v(i), w);
      for (std::size_t e = 0; e < length_; ++e) w[e] -= column[i] * v(i)[e];
    }
    const double next = gmres_detail::norm2(int(length_), w);
    column[k + 1] = T(next);
    if (next > 0)
      for (std::size_t e = 0; e < length_; ++e) w[e] /= next;
    return true;
  }

  void add_combination(int k, const T* y) {
    for (int j = 0; j < k; ++j)
      for (std::size_t e = 0; e < length_; ++e) d_[e] += y[j] * v(j)[e];
  }

 private:
  T* v(int k) { return basis_.data() + length_ * k; }

  std::size_t length_;
  const T* r_;
  T* d_;
  const Multiply& multiply_;
  const Precondition& precondition_;
  std::vector<T> basis_, product_;
};

// d := an approximate solution of A d = r in host memory (n unknowns): gmres() on
// HostKrylovSpace.
template <class T, class Multiply, class Precondition>
GmresResult gmres(int n, const T* r, T* d, int max_iterations, double tolerance, const Multiply& multiply,
                  const Precondition& precondition) {
  HostKrylovSpace<T, Multiply, Precondition> space(n, max_iterations, r, d, multiply, precondition);
  return gmres<T>(n, space, max_iterations, tolerance);
}

}  // namespace tessera::detail
