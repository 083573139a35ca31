// Warm cpu-mode calls with a given number of CPU workers; LAPACKE with 16 threads alongside.
#include <cblas.h>
#include <lapacke.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "tessera/tessera.hpp"
extern "C" void openblas_set_num_threads(int);
using Clock = std::chrono::steady_clock;
int main(int argc, char** argv) {
  int ncpus = atoi(argv[1]), n = atoi(argv[2]), reps = atoi(argv[3]);
  const char* trace = argc > 4 && argv[4][0] != 0 && argv[4][0] != 45 ? argv[4] : nullptr;
  const int lapack_threads = argc > 5 ? atoi(argv[5]) : 16;
  std::mt19937_64 gen(7); std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> A(size_t(n) * n);
  for (int j = 0; j < n; ++j) { A[j + size_t(j) * n] = n; for (int i = j + 1; i < n; ++i) A[i + size_t(j) * n] = A[j + size_t(i) * n] = d(gen); }
  std::vector<double> t;
  openblas_set_num_threads(lapack_threads);
  for (int r = 0; r < reps; ++r) { auto W = A; auto s = Clock::now(); LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, W.data(), n); t.push_back(std::chrono::duration<double>(Clock::now() - s).count()); }
  std::sort(t.begin(), t.end()); double lap = t[t.size() / 2];
  tessera::RuntimeOptions o; o.ncpus = ncpus; o.ncuda = 0;
  auto s0 = Clock::now();
  tessera::Runtime rt(o);
  double start = std::chrono::duration<double>(Clock::now() - s0).count();
  tessera::FactorOptions f; f.mode = tessera::Mode::cpu;
  std::vector<double> calls;
  for (int r = 0; r < reps + 1; ++r) {
    auto W = A;
    if (trace && r == reps) f.trace = std::make_shared<tessera::Trace>(trace);
    auto s = Clock::now(); int info = tessera::potrf(rt, n, W.data(), n, f);
    calls.push_back(std::chrono::duration<double>(Clock::now() - s).count());
    if (info) { printf("info %d\n", info); return 1; }
  }
  double first = calls[0]; std::vector<double> w(calls.begin() + 1, calls.end() - (trace ? 1 : 0)); std::sort(w.begin(), w.end());
  printf("ncpus %2d n %d: start %.4f first %.4f warm median %.4f (min %.4f max %.4f) LAPACKE(threads)  %.4f ratio %.3f\n", ncpus, n, start, first, w[w.size()/2], w.front(), w.back(), lap, lap / w[w.size()/2]);
}
