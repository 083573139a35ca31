// A plain LAPACK program: times dpotrf_ (or spotrf_) on random SPD matrices of the given orders.
// It links the system LAPACK only; run it once as it is and once with
// LD_PRELOAD=libtessera_lapack.so to compare the system LAPACK with Tessera on the same calls
// (scripts/lapack-crossover.sh does both and prints the table).
//
//   bench_lapack_potrf [--sizes 100,200,500] [--reps 5] [--precision d|s] [--uplo L|U]
//                      [--routine potrf|posv] [--one-shot]
//
// Prints one line per order: n, best seconds, median seconds, info of the last call. posv solves
// one right-hand side. --one-shot times each order's first call alone: n, seconds, info. Given one
// order, that is the process's first call (under LD_PRELOAD the drop-in's runtime start included,
// as a program calling LAPACK once pays it).
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
void dposv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
            int* info, std::size_t uplo_len);
void sposv_(const char* uplo, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
            int* info, std::size_t uplo_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* beta, double* c, const int* ldc, std::size_t uplo_len, std::size_t trans_len);
}

namespace {

struct Settings {
  std::vector<int> sizes{100, 200, 300, 400, 500, 600, 800, 1000, 1200, 1500, 2000};
  int reps = 5;
  char precision = 'd';
  char uplo = 'L';
  bool posv = false;
  bool one_shot = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "bench_lapack_potrf: %s\nusage: bench_lapack_potrf [--sizes N,N,...] [--reps R] [--precision d|s] [--uplo L|U] [--routine potrf|posv] [--one-shot]\n", why);
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
    if (arg == "--one-shot") {
      settings.one_shot = true;
      continue;
    }
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--sizes") settings.sizes = parse_sizes(value);
    else if (arg == "--reps") settings.reps = std::max(1, std::atoi(value.c_str()));
    else if (arg == "--precision" && (value == "d" || value == "s")) settings.precision = value[0];
    else if (arg == "--uplo" && (value == "L" || value == "U")) settings.uplo = value[0];
    else if (arg == "--routine" && (value == "potrf" || value == "posv")) settings.posv = value == "posv";
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
void posv(char uplo, int n, double* a, double* b, int* info) {
  const int one = 1;
  dposv_(&uplo, &n, &one, a, &n, b, &n, info, 1);
}
void posv(char uplo, int n, float* a, float* b, int* info) {
  const int one = 1;
  sposv_(&uplo, &n, &one, a, &n, b, &n, info, 1);
}

// One call of the routine on a copy of `original` (posv: right-hand side all ones); its seconds.
template <class T>
double timed_call(const Settings& settings, int n, const std::vector<T>& original, int* info) {
  std::vector<T> a = original, b(static_cast<std::size_t>(n), T(1));
  const auto start = std::chrono::steady_clock::now();
  if (settings.posv)
    posv(settings.uplo, n, a.data(), b.data(), info);
  else
    potrf(settings.uplo, n, a.data(), info);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T>
void run(const Settings& settings) {
  for (const int n : settings.sizes) {
    const std::vector<T> original = random_spd<T>(n, 1234u + static_cast<unsigned>(n));
    int info = 0;
    if (settings.one_shot) {
      const double first = timed_call(settings, n, original, &info);
      std::printf("%d %.6f %d\n", n, first, info);
      std::fflush(stdout);
      continue;
    }
    timed_call(settings, n, original, &info);  // warm-up: starts a runtime, loads caches
    std::vector<double> seconds;
    for (int r = 0; r < settings.reps; ++r) seconds.push_back(timed_call(settings, n, original, &info));
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
