// Tile kernels (potf2, trsm_rlt, syrk_ln, gemm_nt) against CPU references (cblas / LAPACKE),
// for float and double, many sizes (1, 2, primes, partial tiles, lda > rows) and every tuning
// candidate configuration. Skipped where no CUDA device is present.
#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda/tile_kernels.hpp"
#include "cuda/tile_timing.hpp"
#include "kernel_test_support.hpp"
#include "tessera/error.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

// TESSERA_TILE_TEST_QUICK=1 keeps the small cases only (for runs under compute-sanitizer).
bool quick() {
  const char* v = std::getenv("TESSERA_TILE_TEST_QUICK");
  return v && v[0] == '1';
}
constexpr int kQuickMax = 130;

template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit DeviceArray(std::size_t n) : count(n) {
    if (n) EXPECT_EQ(cudaMalloc(&ptr, n * sizeof(T)), cudaSuccess);
  }
  ~DeviceArray() {
    if (ptr) cudaFree(ptr);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void upload(const std::vector<T>& h) {
    ASSERT_EQ(cudaMemcpy(ptr, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> h(count);
    EXPECT_EQ(cudaMemcpy(h.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

void sync_and_check() {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// ld x cols column-major storage, (-1, 1) entries in the rows x cols block, NaN padding.
template <class T>
std::vector<T> random_matrix(int rows, int cols, int ld, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(ld) * std::max(cols, 1), poison<T>());
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) a[r + static_cast<std::size_t>(c) * ld] = static_cast<T>(u(rng));
  return a;
}

// SPD n x n in double: G G^T / n + I, G random.
std::vector<double> random_spd(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> g(static_cast<std::size_t>(n) * n), a(static_cast<std::size_t>(n) * n, 0.0);
  for (double& x : g) x = u(rng);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, g.data(), n, 0.0, a.data(), n);
  for (int c = 0; c < n; ++c) {
    a[c + static_cast<std::size_t>(c) * n] += 1.0;
    for (int r = 0; r < c; ++r) a[r + static_cast<std::size_t>(c) * n] = a[c + static_cast<std::size_t>(r) * n];
  }
  return a;
}

template <class T>
std::vector<T> to_ld(const std::vector<double>& a, int n, int ld, bool lower_only) {
  std::vector<T> out(static_cast<std::size_t>(ld) * n, poison<T>());
  for (int c = 0; c < n; ++c)
    for (int r = lower_only ? c : 0; r < n; ++r)
      out[r + static_cast<std::size_t>(c) * ld] = static_cast<T>(a[r + static_cast<std::size_t>(c) * n]);
  return out;
}

std::string describe(const tk::TileKernelConfig& c) {
  return "ib=" + std::to_string(c.ib) + " threads=" + std::to_string(c.threads) +
         " tile=" + std::to_string(c.tile) + "x" + std::to_string(c.tile_n) +
         " variant=" + std::to_string(c.variant) + " crossover=" + std::to_string(c.crossover);
}

constexpr tessera::Precision kDouble = tessera::Precision::double_real;

template <class T>
class TileKernelTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TileKernelTyped, Precisions);

// ---- gemm / syrk ---------------------------------------------------------------------------

// C -= A B^T (lower triangle only when lower); checks every element against the double
// reference with the componentwise bound 4 (k + 2) eps (|A||B|^T + |C0|), and that everything
// the call must not write (strict upper triangle for syrk, padding rows) kept its bits.
template <class T>
void check_update(int m, int n, int k, bool lower, const tk::TileKernelConfig& cfg, int pad,
                  std::uint64_t seed) {
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
               " pad=" + std::to_string(pad) + " " + describe(cfg));
  std::mt19937_64 rng(seed);
  const int lda = m + pad, ldb = n + pad + (pad ? 2 : 0), ldc = m + pad + 1;
  std::vector<T> A = random_matrix<T>(m, k, lda, rng);
  std::vector<T> B = lower ? A : random_matrix<T>(n, k, ldb, rng);
  std::vector<T> C = random_matrix<T>(m, n, ldc, rng);
  if (lower)
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < c; ++r) C[r + static_cast<std::size_t>(c) * ldc] = poison<T>();

  DeviceArray<T> dA(A.size()), dB(B.size()), dC(C.size());
  dA.upload(A);
  dB.upload(B);
  dC.upload(C);
  if (lower)
    tk::syrk_ln<T>(n, k, dA.ptr, lda, dC.ptr, ldc, nullptr, cfg);
  else
    tk::gemm_nt<T>(m, n, k, dA.ptr, lda, dB.ptr, ldb, dC.ptr, ldc, nullptr, cfg);
  sync_and_check();
  const std::vector<T> out = dC.download();

  const int ldbb = lower ? lda : ldb;
  int bad = 0;
  for (int c = 0; c < n && bad < 5; ++c) {
    for (int r = 0; r < ldc && bad < 5; ++r) {
      const std::size_t idx = r + static_cast<std::size_t>(c) * ldc;
      const bool written = r < m && (!lower || r >= c);
      if (!written) {
        if (!same_bits(out[idx], C[idx])) {
          ADD_FAILURE() << "element (" << r << "," << c << ") must not be written";
          ++bad;
        }
        continue;
      }
      double ref = C[idx], bound = std::fabs(static_cast<double>(C[idx]));
      for (int p = 0; p < k; ++p) {
        const double a = A[r + static_cast<std::size_t>(p) * lda];
        const double b = B[c + static_cast<std::size_t>(p) * ldbb];
        ref -= a * b;
        bound += std::fabs(a * b);
      }
      const double tol = 4.0 * (k + 2) * eps<T>() * bound + std::numeric_limits<T>::min();
      if (!(std::fabs(out[idx] - ref) <= tol)) {
        ADD_FAILURE() << "C(" << r << "," << c << ") = " << out[idx] << ", expected " << ref
                      << " (tol " << tol << ")";
        ++bad;
      }
    }
  }
}

struct Mnk {
  int m, n, k;
};
const Mnk kGemmSizes[] = {{1, 1, 1},     {2, 3, 1},     {1, 7, 5},      {5, 1, 3},
                          {17, 13, 29},  {31, 33, 17},  {64, 64, 64},   {97, 61, 113},
                          {128, 128, 128}, {130, 127, 33}, {257, 129, 65}, {300, 37, 300},
                          {512, 512, 512}};

TYPED_TEST(TileKernelTyped, GemmDefaultConfigMatchesReference) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 100;
  for (const Mnk& s : kGemmSizes) {
    if (quick() && std::max({s.m, s.n, s.k}) > kQuickMax) continue;
    for (int pad : {0, 3}) check_update<TypeParam>(s.m, s.n, s.k, false, {}, pad, seed++);
  }
}

TYPED_TEST(TileKernelTyped, GemmEveryShapeMatchesReference) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 200;
  for (const tk::TileKernelConfig& cfg :
       tk::tile_kernel_candidates(tessera::precision_of<TypeParam>(), "gemm", 256))
    for (const Mnk& s : {Mnk{1, 1, 1}, Mnk{33, 65, 17}, Mnk{200, 131, 70}, Mnk{256, 256, 48}}) {
      if (quick() && std::max({s.m, s.n, s.k}) > kQuickMax) continue;
      for (int pad : {0, 1}) check_update<TypeParam>(s.m, s.n, s.k, false, cfg, pad, seed++);
    }
}

TYPED_TEST(TileKernelTyped, SyrkLowerOnlyMatchesReference) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 300;
  std::vector<tk::TileKernelConfig> cfgs = {tk::TileKernelConfig{}};
  for (const auto& c : tk::tile_kernel_candidates(tessera::precision_of<TypeParam>(), "syrk", 256)) cfgs.push_back(c);
  for (const tk::TileKernelConfig& cfg : cfgs)
    for (const auto& nk : {std::pair{1, 1}, std::pair{2, 5}, std::pair{3, 1}, std::pair{17, 31},
                           std::pair{33, 16}, std::pair{64, 64}, std::pair{97, 200},
                           std::pair{128, 128}, std::pair{255, 33}, std::pair{300, 300}}) {
      if (quick() && std::max(nk.first, nk.second) > kQuickMax) continue;
      for (int pad : {0, 1})
        check_update<TypeParam>(nk.first, nk.first, nk.second, true, cfg, pad, seed++);
    }
}

// ---- trsm ----------------------------------------------------------------------------------

// X = B L^{-T}: checks the componentwise residual |X L^T - B| <= 20 (n + 1) eps |X| |L|^T, that
// the strict upper part of L (NaN) was never read into X, and padding rows of B are untouched.
template <class T>
void check_trsm(int m, int n, const tk::TileKernelConfig& cfg, int pad, std::uint64_t seed) {
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " pad=" + std::to_string(pad) +
               " " + describe(cfg));
  std::mt19937_64 rng(seed);
  std::vector<double> spd = random_spd(n, rng);
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, spd.data(), n), 0);
  const int ldl = n + pad, ldb = m + pad;
  const std::vector<T> L = to_ld<T>(spd, n, ldl, true);
  const std::vector<T> B = random_matrix<T>(m, n, ldb, rng);

  DeviceArray<T> dL(L.size()), dB(B.size());
  dL.upload(L);
  dB.upload(B);
  const std::size_t ws = tk::trsm_rlt_workspace_bytes<T>(m, n, cfg);
  DeviceArray<unsigned char> dW(ws);
  tk::trsm_rlt<T>(m, n, dL.ptr, ldl, dB.ptr, ldb, dW.ptr, ws, nullptr, cfg);
  sync_and_check();
  const std::vector<T> X = dB.download();

  int bad = 0;
  for (int c = 0; c < n && bad < 5; ++c) {
    for (int r = 0; r < ldb && bad < 5; ++r) {
      const std::size_t idx = r + static_cast<std::size_t>(c) * ldb;
      if (r >= m) {
        if (!same_bits(X[idx], B[idx])) ADD_FAILURE() << "padding row " << r << " written", ++bad;
        continue;
      }
      double res = -static_cast<double>(B[idx]), bound = 0;
      for (int p = 0; p <= c; ++p) {  // (X L^T)(r, c) = sum_p X(r, p) L(c, p)
        const double xl = static_cast<double>(X[r + static_cast<std::size_t>(p) * ldb]) *
                          static_cast<double>(L[c + static_cast<std::size_t>(p) * ldl]);
        res += xl;
        bound += std::fabs(xl);
      }
      const double tol = 20.0 * (n + 1) * eps<T>() * bound + std::numeric_limits<T>::min();
      if (!(std::fabs(res) <= tol)) {
        ADD_FAILURE() << "residual at (" << r << "," << c << ") = " << res << " (tol " << tol << ")";
        ++bad;
      }
    }
  }
}

TYPED_TEST(TileKernelTyped, TrsmDefaultConfigSolves) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 400;
  for (const auto& mn : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 5}, std::pair{7, 3},
                         std::pair{31, 32}, std::pair{33, 33}, std::pair{64, 64},
                         std::pair{65, 65}, std::pair{100, 97}, std::pair{128, 128},
                         std::pair{129, 200}, std::pair{300, 257}, std::pair{256, 512}}) {
    if (quick() && std::max(mn.first, mn.second) > kQuickMax) continue;
    for (int pad : {0, 3}) check_trsm<TypeParam>(mn.first, mn.second, {}, pad, seed++);
  }
}

TYPED_TEST(TileKernelTyped, TrsmEveryVariantSolves) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 500;
  for (const tk::TileKernelConfig& cfg :
       tk::tile_kernel_candidates(tessera::precision_of<TypeParam>(), "trsm", 256))
    for (const auto& mn : {std::pair{1, 1}, std::pair{45, 31}, std::pair{70, 65},
                           std::pair{130, 200}, std::pair{64, 129}}) {
      if (quick() && std::max(mn.first, mn.second) > kQuickMax) continue;
      for (int pad : {0, 1}) check_trsm<TypeParam>(mn.first, mn.second, cfg, pad, seed++);
    }
}

// ---- potf2 ---------------------------------------------------------------------------------

// Residual |L L^T - A| <= 20 (n + 1) eps |L||L|^T on the leading `order` block (lower part).
template <class T>
void expect_cholesky_residual(const std::vector<double>& A, int n, const std::vector<T>& L, int ld,
                              int order) {
  int bad = 0;
  for (int c = 0; c < order && bad < 5; ++c) {
    for (int r = c; r < order && bad < 5; ++r) {
      double res = -A[r + static_cast<std::size_t>(c) * n], bound = 0;
      for (int p = 0; p <= c; ++p) {
        const double v = static_cast<double>(L[r + static_cast<std::size_t>(p) * ld]) *
                         static_cast<double>(L[c + static_cast<std::size_t>(p) * ld]);
        res += v;
        bound += std::fabs(v);
      }
      const double tol = 20.0 * (n + 1) * eps<T>() * bound;
      if (!(std::fabs(res) <= tol)) {
        ADD_FAILURE() << "residual at (" << r << "," << c << ") = " << res << " (tol " << tol << ")";
        ++bad;
      }
    }
  }
}

template <class T>
void check_potf2(int n, const tk::TileKernelConfig& cfg, int pad, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " pad=" + std::to_string(pad) + " " + describe(cfg));
  std::mt19937_64 rng(seed);
  std::vector<double> A = random_spd(n, rng);
  const int lda = n + pad;
  std::vector<T> hA = to_ld<T>(A, n, lda, true);  // strict upper and padding: NaN
  std::vector<double> Acast(A.size());
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < n; ++r)
      Acast[r + static_cast<std::size_t>(c) * n] =
          static_cast<T>(A[std::max(r, c) + static_cast<std::size_t>(std::min(r, c)) * n]);

  DeviceArray<T> dA(hA.size());
  DeviceArray<int> dinfo(1);
  dA.upload(hA);
  ASSERT_EQ(cudaMemset(dinfo.ptr, 0x7f, sizeof(int)), cudaSuccess);
  tk::potf2<T>(n, dA.ptr, lda, dinfo.ptr, nullptr, cfg);
  sync_and_check();
  const std::vector<T> L = dA.download();
  ASSERT_EQ(dinfo.download()[0], 0);
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < lda; ++r)
      if (r < c || r >= n)
        ASSERT_TRUE(same_bits(L[r + static_cast<std::size_t>(c) * lda], hA[r + static_cast<std::size_t>(c) * lda]))
            << "element (" << r << "," << c << ") outside the lower triangle was written";
  expect_cholesky_residual(Acast, n, L, lda, n);
}

std::vector<tk::TileKernelConfig> potf2_configs() {
  std::vector<tk::TileKernelConfig> out = {tk::TileKernelConfig{}};
  for (int ib : {16, 32})
    for (int threads : {128, 256})
      for (int cross : {48, 128}) {
        if (quick() && threads == 128) continue;
        tk::TileKernelConfig c;
        c.ib = ib, c.threads = threads, c.crossover = cross;
        out.push_back(c);
      }
  for (const auto& c : tk::tile_kernel_candidates(kDouble, "potf2", 256))
    if ((c.variant == 2 && !(quick() && c.tile > 96)) || (c.variant == 3 && !(quick() && c.crossover != 128)))
      out.push_back(c);
  return out;
}

TYPED_TEST(TileKernelTyped, Potf2FactorsSpdTiles) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 600;
  for (const tk::TileKernelConfig& cfg : potf2_configs())
    for (int n : {1, 2, 3, 7, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 96, 127, 128, 129, 161, 200, 300}) {
      if (quick() && (n > kQuickMax || n % 2 == 0)) continue;
      check_potf2<TypeParam>(n, cfg, n % 3 == 0 ? 5 : 0, seed++);
    }
}

TYPED_TEST(TileKernelTyped, Potf2LargeTilesDefaultConfig) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 700;
  for (int n : {256, 383, 512, 700}) {
    if (quick() && n > 256) continue;
    check_potf2<TypeParam>(n, {}, 1, seed++);
  }
}

// A non-SPD tile: diagonal entry of column `bad` replaced (by -1 or NaN); info must be bad + 1
// like LAPACK's, and the leading bad x bad block must be factored.
template <class T>
void check_potf2_info(int n, int bad, bool use_nan, const tk::TileKernelConfig& cfg,
                      std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " bad column=" + std::to_string(bad) +
               (use_nan ? " (NaN)" : " (-1)") + " " + describe(cfg));
  std::mt19937_64 rng(seed);
  std::vector<double> A = random_spd(n, rng);
  A[bad + static_cast<std::size_t>(bad) * n] = use_nan ? std::nan("") : -1.0;
  std::vector<T> hA = to_ld<T>(A, n, n, true);
  std::vector<T> lapack = to_ld<T>(A, n, n, false);
  lapack_int expected = 0;
  if constexpr (sizeof(T) == 8)
    expected = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, lapack.data(), n);
  else
    expected = LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', n, lapack.data(), n);
  if (!use_nan) ASSERT_EQ(expected, bad + 1) << "reference LAPACK disagrees with the test setup";

  DeviceArray<T> dA(hA.size());
  DeviceArray<int> dinfo(1);
  dA.upload(hA);
  tk::potf2<T>(n, dA.ptr, n, dinfo.ptr, nullptr, cfg);
  sync_and_check();
  EXPECT_EQ(dinfo.download()[0], bad + 1);
  std::vector<double> Acast(A.size());
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < n; ++r)
      Acast[r + static_cast<std::size_t>(c) * n] =
          static_cast<T>(A[std::max(r, c) + static_cast<std::size_t>(std::min(r, c)) * n]);
  expect_cholesky_residual(Acast, n, dA.download(), n, bad);
}

TYPED_TEST(TileKernelTyped, Potf2ReportsFirstBadPivot) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 800;
  for (const tk::TileKernelConfig& cfg : potf2_configs()) {
    for (int n : {1, 5, 40, 100, 300}) {
      if (quick() && n > kQuickMax) continue;
      const int ib = cfg.ib ? cfg.ib : 32, cross = cfg.crossover ? cfg.crossover : 128;
      for (int bad : {0, ib / 2 - 1, ib / 2, ib - 1, ib, n / 2, cross - 1, cross, cross + ib + 3, n - 1}) {
        if (bad < 0 || bad >= n) continue;
        check_potf2_info<TypeParam>(n, bad, false, cfg, seed++);
      }
      check_potf2_info<TypeParam>(n, n - 1, true, cfg, seed++);
      check_potf2_info<TypeParam>(n, 0, true, cfg, seed++);
    }
  }
}

// Variant 3 at its largest tile (64 block columns, thousands of tasks), a failing pivot near the
// end, and the order it refuses.
TYPED_TEST(TileKernelTyped, Potf2DataflowLargestTile) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  tk::TileKernelConfig cfg;
  cfg.variant = 3, cfg.ib = 32, cfg.tile = 96, cfg.threads = 128, cfg.crossover = 128;
  check_potf2<TypeParam>(2048, cfg, 3, 1000);
  if (!quick()) check_potf2_info<TypeParam>(2048, 2000, false, cfg, 1001);
  TypeParam* p = reinterpret_cast<TypeParam*>(std::uintptr_t{256});  // never dereferenced
  int* info = reinterpret_cast<int*>(std::uintptr_t{256});
  EXPECT_THROW(tk::potf2<TypeParam>(2049, p, 2049, info, nullptr, cfg), tessera::InvalidArgument);
  tk::TileKernelConfig unknown = cfg;
  unknown.crossover = 100;
  EXPECT_THROW(tk::potf2<TypeParam>(64, p, 64, info, nullptr, unknown), tessera::InvalidArgument);
}

TYPED_TEST(TileKernelTyped, Potf2WorkspaceOverloadMatchesPool) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 333;
  std::mt19937_64 rng(900);
  const std::vector<double> A = random_spd(n, rng);
  const std::vector<TypeParam> hA = to_ld<TypeParam>(A, n, n, true);
  DeviceArray<TypeParam> d1(hA.size()), d2(hA.size());
  DeviceArray<int> info(2);
  d1.upload(hA);
  d2.upload(hA);
  const std::size_t ws = tk::potf2_workspace_bytes<TypeParam>(n);
  DeviceArray<unsigned char> dW(ws);
  tk::potf2<TypeParam>(n, d1.ptr, n, info.ptr, nullptr);
  tk::potf2<TypeParam>(n, d2.ptr, n, info.ptr + 1, dW.ptr, ws, nullptr);
  sync_and_check();
  const std::vector<TypeParam> a = d1.download(), b = d2.download();
  const std::vector<int> inf = info.download();
  EXPECT_EQ(inf[0], 0);
  EXPECT_EQ(inf[1], 0);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_bits(a[i], b[i])) << "element " << i;
}

// ---- argument checks and the tuning table --------------------------------------------------

TEST(TileKernelArguments, RejectsBadLeadingDimensions) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  double* p = reinterpret_cast<double*>(std::uintptr_t{256});  // never dereferenced
  EXPECT_THROW(tk::gemm_nt<double>(10, 10, 10, p, 9, p, 10, p, 10, nullptr), tessera::InvalidArgument);
  EXPECT_THROW(tk::syrk_ln<double>(10, 4, p, 10, p, 9, nullptr), tessera::InvalidArgument);
  EXPECT_THROW(tk::trsm_rlt<double>(10, 10, p, 9, p, 10, nullptr, 0, nullptr), tessera::InvalidArgument);
  int* info = reinterpret_cast<int*>(std::uintptr_t{256});
  EXPECT_THROW(tk::potf2<double>(10, p, 9, info, nullptr), tessera::InvalidArgument);
  tk::TileKernelConfig bad;
  bad.tile = 48;
  EXPECT_THROW(tk::gemm_nt<double>(10, 10, 10, p, 10, p, 10, p, 10, nullptr, bad), tessera::InvalidArgument);
}

}  // namespace
