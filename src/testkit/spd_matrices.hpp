// Symmetric positive definite test matrices. The random ones depend on their seeds alone (not on
// the machine or its thread count) and fill on all hardware threads: the input of `tessera potrf`,
// and of the benchmarks, which thereby time the matrices the command line factors.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <random>
#include <thread>
#include <vector>

namespace tessera::testkit {

inline unsigned worker_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs body(k) for k in [0, count) on all hardware threads.
template <class Body>
void parallel_for(int count, Body&& body) {
  const int threads = static_cast<int>(worker_threads());
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int k = next++; k < count; k = next++) body(k);
    });
  for (auto& th : pool) th.join();
}

// A symmetric, strictly diagonally dominant matrix (hence SPD), both triangles: off-diagonal
// entries uniform in (-1, 1), diagonal n. Column j below the diagonal comes from a generator of
// its own, seeded column_seed(j), so that the columns fill in parallel.
template <class T, class ColumnSeed>
std::vector<T> dominant_spd(int n, ColumnSeed column_seed) {
  std::vector<T> A(static_cast<std::size_t>(n) * n);
  parallel_for(n, [&](int j) {
    std::mt19937_64 gen(column_seed(j));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    T* column = A.data() + static_cast<std::size_t>(j) * n;
    for (int i = j + 1; i < n; ++i) column[i] = static_cast<T>(dist(gen));
    column[j] = static_cast<T>(n);
  });
  // Mirror into the upper triangle in 64 x 64 blocks, a block row of the lower triangle per task:
  // a plain loop reads one cache line per element written and takes tens of seconds at n = 90000.
  constexpr int block = 64;
  parallel_for((n + block - 1) / block, [&](int b) {
    const int i0 = b * block, i1 = std::min(n, i0 + block);
    for (int j0 = 0; j0 < i1; j0 += block)
      for (int i = i0; i < i1; ++i)
        for (int j = j0; j < std::min(j0 + block, i); ++j)
          A[j + static_cast<std::size_t>(i) * n] = A[i + static_cast<std::size_t>(j) * n];
  });
  return A;
}

// A = G G^T / n + I (well conditioned, full spectrum) for the n x n G (column-major), both
// triangles, each entry written through set(i, j, value).
template <class Set>
void gram_plus_identity(int n, const std::vector<double>& G, Set&& set) {
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += G[i + static_cast<std::size_t>(k) * n] * G[j + static_cast<std::size_t>(k) * n];
      set(i, j, s / n + (i == j ? 1.0 : 0.0));
    }
}

// The matrix of `tessera potrf --n N --seed SEED`.
template <class T>
std::vector<T> potrf_input_matrix(int n, unsigned seed) {
  return dominant_spd<T>(n, [seed](int j) { return seed * 1000003ull + static_cast<unsigned long long>(j); });
}

}  // namespace tessera::testkit
