// A plain LAPACK program: times dpotrf_ (or spotrf_) on random SPD matrices of the given orders.
// It links the system LAPACK only; run it once as it is and once with
// LD_PRELOAD=libtessera_lapack.so to compare the system LAPACK with Tessera on the same calls
// (scripts/lapack-crossover.sh does both and prints the table).
//
//   bench_lapack_potrf [--sizes 100,200,500] [--reps 5] [--precision d|s] [--uplo L|U]
//
// Prints one line per order: n, best seconds, median seconds, info of the last call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t uplo_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* beta, double* c, const int* ldc, std::size_t uplo_len, std::size_t trans_len);
}

namespace {

struct Settings {
  std::vector<int> sizes{100, 200, 300, 400, 500, 600, 800, 1000, 1200, 1500, 2000};
  int reps = 5;
  char precision = 'd';
  char uplo = 'L';
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "bench_lapack_potrf: %s\nusage: bench_lapack_potrf [--sizes N,N,...] [--reps R] [--precision d|s] [--uplo L|U]\n", why);
  std::exit(1);
}

std::vector<int> parse_sizes(const std::string& list) {
  std::vector<int> sizes;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const int n = std::atoi(item.c_str());
    if (n <= 0) usage("sizes must be positive integers");
    sizes.push_back(n);
  }
  return sizes;
}

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--sizes") settings.sizes = parse_sizes(value);
    else if (arg == "--reps") settings.reps = std::max(1, std::atoi(value.c_str()));
    else if (arg == "--precision" && (value == "d" || value == "s")) settings.precision = value[0];
    else if (arg == "--uplo" && (value == "L" || value == "U")) settings.uplo = value[0];
    else usage(("unknown option or value: " + arg + " " + value).c_str());
  }
  return settings;
}

// A = G G^T / n + I with G uniform in [-1, 1], column-major, both triangles (G G^T by BLAS dsyrk).
template <class T>
std::vector<T> random_spd(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> G(static_cast<std::size_t>(n) * n);
  for (double& g : G) g = dist(gen);
  std::vector<double> A(static_cast<std::size_t>(n) * n, 0.0);
  const char lower = 'L', no_transpose = 'N';
  const double scale = 1.0 / n, zero = 0.0;
  dsyrk_(&lower, &no_transpose, &n, &n, &scale, G.data(), &n, &zero, A.data(), &n, 1, 1);
  std::vector<T> out(A.size());
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = A[i + static_cast<std::size_t>(j) * n] + (i == j ? 1.0 : 0.0);
      out[i + static_cast<std::size_t>(j) * n] = static_cast<T>(v);
      out[j + static_cast<std::size_t>(i) * n] = static_cast<T>(v);
    }
  return out;
}

void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }

template <class T>
void run(const Settings& settings) {
  for (const int n : settings.sizes) {
    const std::vector<T> original = random_spd<T>(n, 1234u + static_cast<unsigned>(n));
    std::vector<T> a = original;
    int info = 0;
    potrf(settings.uplo, n, a.data(), &info);  // warm-up: starts a runtime, loads caches
    std::vector<double> seconds;
    for (int r = 0; r < settings.reps; ++r) {
      a = original;
      const auto start = std::chrono::steady_clock::now();
      potrf(settings.uplo, n, a.data(), &info);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    std::printf("%d %.6f %.6f %d\n", n, seconds.front(), seconds[seconds.size() / 2], info);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  if (settings.precision == 'd')
    run<double>(settings);
  else
    run<float>(settings);
  return 0;
}
