// One thread factoring a stack of small matrices one after the other, as the calling thread does:
// LAPACK's potrf (OpenBLAS, through LAPACKE, one BLAS thread) against Tessera's unblocked potf2
// (kernels/cpu/small_potrf.hpp), then LAPACK's potri against Tessera's unblocked one
// (small_potri.hpp) on the factors, nanoseconds per matrix (fastest of the rounds, each restoring
// the stack first and timing that copy apart), both triangles, the four scalar types. The table's
// calling_thread_unblocked_potrf_max_n_* and _potri_max_n_* are where the ratios fall under 1.
//   bench_small_potrf [--sizes 1,2,3,4,6,8,10,12,14,16,20,24,32] [--rounds 11]
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <cblas.h>
#include <fmt/core.h>

#include "bench_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/small_potrf.hpp"
#include "kernels/cpu/small_potri.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  std::vector<int> sizes = {1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 32};
  int rounds = 11;
};

// Fastest of `rounds` runs of f, in seconds.
template <class F>
double fastest(int rounds, F&& f) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const Clock::time_point start = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// A stack of `count` diagonally dominant Hermitian matrices of order n, column-major.
template <class T>
std::vector<T> stack(int n, int count) {
  const std::size_t matrix = static_cast<std::size_t>(n) * n;
  std::vector<T> a(matrix * count);
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        a[k * matrix + i + static_cast<std::size_t>(j) * n] = i == j ? T(n + 1.0) : T(0.5 / (1 + std::abs(i - j)));
  return a;
}

template <class T>
void run(const Settings& s, const char* name) {
  namespace cpu = tessera::kernels::cpu;
  for (int n : s.sizes) {
    // About the same arithmetic per size, at least 200 matrices.
    const int count = std::max(200, static_cast<int>(4000000 / (static_cast<long long>(n) * n * n + 40)));
    const std::size_t matrix = static_cast<std::size_t>(n) * n;
    const std::vector<T> source = stack<T>(n, count);
    std::vector<T> work(source.size());
    const double copy = fastest(s.rounds, [&] { std::copy(source.begin(), source.end(), work.begin()); });
    // Seconds per pass of `op` over the stack restored from `from` (the restoring copy included).
    const auto pass = [&](const std::vector<T>& from, const auto& op) {
      return fastest(s.rounds, [&] {
        std::copy(from.begin(), from.end(), work.begin());
        for (int k = 0; k < count; ++k) op(work.data() + k * matrix);
      });
    };
    const double per = 1e9 / count;
    const auto print = [&](char uplo, double lapack, double unblocked, const char* what) {
      fmt::print("{:>8} {} {:>3} {:>7} | {:>9.1f} {:>11.1f} | {:>6.2f}{}\n", name, uplo, n, count, (lapack - copy) * per,
                 (unblocked - copy) * per, (lapack - copy) / (unblocked - copy), what);
    };
    for (char uplo : {'L', 'U'}) {
      print(uplo, pass(source, [&](T* a) { cpu::potrf(uplo, n, a, n); }),
            pass(source, [&](T* a) { cpu::potrf_unblocked(uplo, n, a, n); }), "");
      // The inverse from the factors (xPOTRI) alike, on the stack LAPACK factored.
      std::vector<T> factors = source;
      for (int k = 0; k < count; ++k) cpu::potrf(uplo, n, factors.data() + k * matrix, n);
      print(uplo, pass(factors, [&](T* a) { cpu::potri(uplo, n, a, n); }),
            pass(factors, [&](T* a) { cpu::potri_unblocked(uplo, n, a, n); }), " (potri)");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      if (args.option() == "--sizes")
        s.sizes = tessera::bench::parse_int_list(args.value());
      else if (args.option() == "--rounds")
        s.rounds = std::stoi(args.value());
      else
        throw std::runtime_error("unknown option " + args.option());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_small_potrf: %s\n", e.what());
    return 2;
  }
  openblas_set_num_threads(1);  // as the calling thread factors small matrices
  fmt::print("type uplo n count | LAPACK ns/matrix | unblocked ns/matrix | LAPACK / unblocked\n");
  run<double>(s, "double");
  run<float>(s, "float");
  run<std::complex<double>>(s, "zdouble");
  run<std::complex<float>>(s, "zfloat");
}
