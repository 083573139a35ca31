// Batched Cholesky kernels (potrf_batched, the interleaved layout, potrf_vbatched, potrs_batched,
// potrs_vbatched) against LAPACKE, for float and double, lower and upper, every n from 1 to 64
// and samples up to 600; batches hold non-SPD (and NaN) members at known positions, strides
// larger than n*n and lda > n. Everything outside the referenced triangles is poisoned with NaN
// and must come back bit-identical; info is poisoned and must be written for every matrix.
// Setting TESSERA_BATCHED_TEST_QUICK=1 trims sizes and batches (for compute-sanitizer runs).
// Skipped where no CUDA device is present.
#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/batched_kernels.hpp"
#include "kernel_test_support.hpp"
#include "tessera/error.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

// ---- environment ----------------------------------------------------------------------------

bool quick_mode() {
  const char* v = std::getenv("TESSERA_BATCHED_TEST_QUICK");
  return v && *v && std::string(v) != "0";
}

std::vector<int> small_orders() {
  if (quick_mode()) return {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 64};
  std::vector<int> all;
  for (int n = 1; n <= 64; ++n) all.push_back(n);
  return all;
}

std::vector<int> large_orders() {
  if (quick_mode()) return {65, 129, 300};
  return {77, 100, 128, 129, 200, 256, 300, 512};
}

const char* uplo_name(tk::BatchUplo u) { return u == tk::BatchUplo::lower ? "lower" : "upper"; }
constexpr tk::BatchUplo kUplos[] = {tk::BatchUplo::lower, tk::BatchUplo::upper};

// ---- device memory --------------------------------------------------------------------------

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    cuda_ok(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  void upload(const std::vector<T>& host) {
    cuda_ok(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            "upload");
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    cuda_ok(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

void synchronize() {
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cuda_ok(cudaGetLastError(), "kernel");
}

// ---- LAPACKE --------------------------------------------------------------------------------

int lapack_potrf(char uplo, int n, float* a, int lda) {
  return LAPACKE_spotrf(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
int lapack_potrf(char uplo, int n, double* a, int lda) {
  return LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
int lapack_potrs(char uplo, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
  return LAPACKE_spotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}
int lapack_potrs(char uplo, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
  return LAPACKE_dpotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}
char uplo_char(tk::BatchUplo u) { return u == tk::BatchUplo::lower ? 'L' : 'U'; }

// ---- test matrices --------------------------------------------------------------------------

// Random SPD matrix, full and symmetric, rounded to T: B B^T / n + 0.25 * ones + 0.5 * I with B
// uniform in [-1, 1]. The all-ones part couples every entry (no near-diagonal shortcut) and the
// condition number grows only like n / 2.
template <class T>
std::vector<double> random_spd(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> b(static_cast<std::size_t>(n) * n), a(b.size());
  for (double& x : b) x = dist(rng);
  if (n > 0)
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, b.data(), n, 0.0, a.data(), n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = static_cast<T>(a[i + static_cast<std::size_t>(j) * n] + 0.25 + (i == j ? 0.5 : 0.0));
      a[i + static_cast<std::size_t>(j) * n] = a[j + static_cast<std::size_t>(i) * n] = v;
    }
  return a;
}

// How a deliberately broken member fails, and the info it must report.
enum class Breakage { none, negative_middle_pivot, nan_first_pivot, zero_last_pivot };

// Spoils the full matrix a (order n); returns the expected 1-based info.
int spoil(std::vector<double>& a, int n, Breakage how) {
  switch (how) {
    case Breakage::negative_middle_pivot:
      a[n / 2 + (n / 2) * n] = -1.0;
      return n / 2 + 1;
    case Breakage::nan_first_pivot:
      a[0] = std::numeric_limits<double>::quiet_NaN();
      return 1;
    case Breakage::zero_last_pivot:
      // A zero diagonal entry: the pivot is 0 - (sum of squares) <= 0.
      a[(n - 1) + (n - 1) * n] = 0.0;
      return n;
    default:
      return 0;
  }
}

Breakage breakage_for(int k, int batch) {
  // Fixed positions: the first, an inner one, and the last matrix of the batch.
  if (batch >= 3 && k == 1) return Breakage::negative_middle_pivot;
  if (batch >= 8 && k == batch / 2) return Breakage::nan_first_pivot;
  if (batch >= 12 && k == batch - 2) return Breakage::zero_last_pivot;
  return Breakage::none;
}

bool in_triangle(tk::BatchUplo uplo, int i, int j) {
  return uplo == tk::BatchUplo::lower ? i >= j : i <= j;
}

// One matrix of a batch on the host: where it lives in the buffer and what it should become.
struct MatrixSpec {
  int n = 0;
  int ld = 1;
  long long offset = 0;
  int expected_info = 0;
  std::vector<double> a;      // the full symmetric matrix as uploaded (spoiled if broken)
  std::vector<double> clean;  // the same before spoiling
};

// A whole batch in one host buffer; every element outside the referenced triangles is NaN.
template <class T>
struct HostBatch {
  tk::BatchUplo uplo = tk::BatchUplo::lower;
  std::vector<MatrixSpec> mats;
  std::vector<T> data;
  std::vector<char> referenced;  // 1 where an element belongs to a referenced triangle
};

template <class T>
HostBatch<T> build_batch(tk::BatchUplo uplo, const std::vector<int>& orders,
                         const std::vector<int>& lds, const std::vector<long long>& offsets,
                         std::size_t total, std::mt19937_64& rng, bool with_failures) {
  HostBatch<T> hb;
  hb.uplo = uplo;
  hb.data.assign(total, poison<T>());
  hb.referenced.assign(total, 0);
  const int batch = static_cast<int>(orders.size());
  for (int k = 0; k < batch; ++k) {
    MatrixSpec m;
    m.n = orders[k];
    m.ld = lds[k];
    m.offset = offsets[k];
    m.a = random_spd<T>(m.n, rng);
    m.clean = m.a;
    if (with_failures && m.n > 0) m.expected_info = spoil(m.a, m.n, breakage_for(k, batch));
    for (int j = 0; j < m.n; ++j)
      for (int i = 0; i < m.n; ++i)
        if (in_triangle(uplo, i, j)) {
          const std::size_t at = m.offset + static_cast<std::size_t>(j) * m.ld + i;
          hb.data[at] = static_cast<T>(m.a[i + static_cast<std::size_t>(j) * m.n]);
          hb.referenced[at] = 1;
        }
    hb.mats.push_back(std::move(m));
  }
  return hb;
}

template <class T>
HostBatch<T> uniform_batch(tk::BatchUplo uplo, int n, int lda, long long stride, int batch,
                           std::mt19937_64& rng, bool with_failures = true) {
  std::vector<int> orders(batch, n), lds(batch, lda);
  std::vector<long long> offsets(batch);
  for (int k = 0; k < batch; ++k) offsets[k] = k * stride;
  const std::size_t total = batch == 0 ? 1 : static_cast<std::size_t>(stride) * (batch - 1) +
                                                 static_cast<std::size_t>(lda) * n + 1;
  return build_batch<T>(uplo, orders, lds, offsets, total, rng, with_failures);
}

// ---- checks ---------------------------------------------------------------------------------

// Factor entry (i, j) of the lower factor L as read from storage (upper storage holds L^T).
template <class T>
double factor_at(const std::vector<T>& out, const MatrixSpec& m, tk::BatchUplo uplo, int i,
                 int j) {
  const std::size_t at = uplo == tk::BatchUplo::lower
                             ? m.offset + static_cast<std::size_t>(j) * m.ld + i
                             : m.offset + static_cast<std::size_t>(i) * m.ld + j;
  return static_cast<double>(out[at]);
}

// Checks one factored matrix: info, then over the part that must be final (all of it, or the
// leading (info-1) x (info-1) block of a matrix that failed)
//   - backward error |A - L L^T| <= 4 (n + 1) eps max|A| entrywise, positive diagonal,
//   - agreement with LAPACKE's factor of the same (unspoiled) matrix to 50 n eps max|L|.
template <class T>
void check_factor(const HostBatch<T>& hb, int k, const std::vector<T>& out, int info,
                  const std::string& where) {
  const MatrixSpec& m = hb.mats[k];
  const int n = m.n;
  ASSERT_EQ(info, m.expected_info) << where << " matrix " << k << " (n=" << n << ")";
  // As LAPACK: after a failure only the leading (info-1) x (info-1) block is defined.
  const int good_cols = m.expected_info == 0 ? n : m.expected_info - 1;
  const int good_rows = m.expected_info == 0 ? n : good_cols;
  if (good_cols == 0) return;

  double amax = 0;
  for (double v : m.a)
    if (std::isfinite(v)) amax = std::max(amax, std::fabs(v));
  const double tol_backward = 4.0 * (n + 1) * eps<T>() * amax;

  // LAPACKE's factor of the unspoiled matrix: spoiling touches only entries of columns >=
  // good_cols, so its leading good_cols columns are what the batch must hold.
  std::vector<T> ref(static_cast<std::size_t>(n) * n);
  for (std::size_t e = 0; e < ref.size(); ++e) ref[e] = static_cast<T>(m.clean[e]);
  ASSERT_EQ(lapack_potrf('L', n, ref.data(), n), 0)
      << where << " reference factorization failed for matrix " << k;

  double lmax = 0;
  for (int j = 0; j < good_cols; ++j)
    for (int i = j; i < good_rows; ++i) lmax = std::max(lmax, std::fabs(static_cast<double>(ref[i + static_cast<std::size_t>(j) * n])));
  const double tol_ref = 50.0 * n * eps<T>() * std::max(lmax, 1.0);

  // The computed factor, densely (row-major lower part: l[i * n + c]).
  std::vector<double> l(static_cast<std::size_t>(n) * n, 0.0);
  for (int c = 0; c < good_cols; ++c)
    for (int i = c; i < good_rows; ++i) l[static_cast<std::size_t>(i) * n + c] = factor_at(out, m, hb.uplo, i, c);

  int bad = 0;
  std::ostringstream first;
  for (int j = 0; j < good_cols; ++j) {
    const double ljj = l[static_cast<std::size_t>(j) * n + j];
    if (!(ljj > 0)) {
      if (!bad++) first << "L(" << j << "," << j << ")=" << ljj << " not positive";
    }
    const double* lj = &l[static_cast<std::size_t>(j) * n];
    for (int i = j; i < good_rows; ++i) {
      const double* li = &l[static_cast<std::size_t>(i) * n];
      double s = 0;
      for (int c = 0; c <= j; ++c) s += li[c] * lj[c];
      const double lij = li[j];
      const double refij = static_cast<double>(ref[i + static_cast<std::size_t>(j) * n]);
      const double back = std::fabs(s - m.a[i + static_cast<std::size_t>(j) * n]);
      const double diff = std::fabs(lij - refij);
      if (!(back <= tol_backward) || !(diff <= tol_ref)) {
        if (!bad++)
          first << "L(" << i << "," << j << ")=" << lij << " lapack=" << refij
                << " |A-LL^T|=" << back << " (tol " << tol_backward << ", ref tol " << tol_ref << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << where << " matrix " << k << " (n=" << n << ", info " << info
                    << "): " << bad << " bad entries, first: " << first.str();
}

// Everything outside the referenced triangles must be bit-identical to the input.
template <class T>
void check_untouched(const HostBatch<T>& hb, const std::vector<T>& out, const std::string& where) {
  std::size_t bad = 0, first = 0;
  for (std::size_t e = 0; e < out.size(); ++e)
    if (!hb.referenced[e] && !same_bits(out[e], hb.data[e])) {
      if (!bad++) first = e;
    }
  EXPECT_EQ(bad, 0u) << where << ": " << bad << " elements outside the referenced triangles changed, first at "
                     << first << " (now " << (bad ? out[first] : T(0)) << ")";
}

template <class T>
void check_batch(const HostBatch<T>& hb, const std::vector<T>& out, const std::vector<int>& info,
                 const std::string& where) {
  for (std::size_t k = 0; k < hb.mats.size(); ++k) {
    check_factor(hb, static_cast<int>(k), out, info[k], where);
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_untouched(hb, out, where);
}

std::vector<int> poisoned_info(int batch) { return std::vector<int>(std::max(batch, 1), -77); }

template <class T>
void run_uniform_case(tk::BatchUplo uplo, int n, int lda, long long stride, int batch,
                      std::mt19937_64& rng, const tk::BatchedOptions& opts,
                      const std::string& label) {
  HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, stride, batch, rng);
  DeviceBuffer<T> dA(hb.data);
  DeviceBuffer<int> dinfo(poisoned_info(batch));
  tk::potrf_batched<T>(uplo, n, dA.get(), lda, stride, batch, dinfo.get(), nullptr, opts);
  synchronize();
  std::ostringstream where;
  where << label << " " << uplo_name(uplo) << " n=" << n << " lda=" << lda << " stride=" << stride
        << " batch=" << batch;
  check_batch(hb, dA.download(), dinfo.download(), where.str());
}

// For each n of orders, in both triangles: the tight layout (lda = n, stride = n*n), then a padded
// one (lda = n + pad, gap elements between the matrices). Stops at the first fatal failure.
template <class T>
void run_tight_and_padded(const std::vector<int>& orders, int pad, int gap, int batch, std::mt19937_64& rng) {
  for (int n : orders)
    for (tk::BatchUplo uplo : kUplos) {
      run_uniform_case<T>(uplo, n, n, static_cast<long long>(n) * n, batch, rng, {}, "tight");
      if (::testing::Test::HasFatalFailure()) return;
      run_uniform_case<T>(uplo, n, n + pad, static_cast<long long>(n + pad) * n + gap, batch, rng, {}, "padded");
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// ---- fixtures -------------------------------------------------------------------------------

template <class T>
class BatchedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = missing_gpu_reason();
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  }
  std::mt19937_64 rng{20240611};
};

using Precisions = ::testing::Types<float, double>;

// A suite of typed tests on BatchedTest in both precisions; the suites group the tests by kernel.
#define BATCHED_TYPED_SUITE(Name)          \
  template <class T>                       \
  class Name : public BatchedTest<T> {};   \
  TYPED_TEST_SUITE(Name, Precisions)

BATCHED_TYPED_SUITE(BatchedPotrf);
BATCHED_TYPED_SUITE(BatchedPotrfInterleaved);
BATCHED_TYPED_SUITE(BatchedPotrfVariable);
BATCHED_TYPED_SUITE(BatchedPotrs);
BATCHED_TYPED_SUITE(BatchedArguments);

// ---- potrf_batched --------------------------------------------------------------------------

// Every n from 1 to 64, tight (contiguous, vector staging) and padded (lda > n, stride > lda*n).
TYPED_TEST(BatchedPotrf, EverySmallOrderBothLayoutsOfStrides) {
  run_tight_and_padded<TypeParam>(small_orders(), 3, 5, quick_mode() ? 45 : 131, this->rng);
}

TYPED_TEST(BatchedPotrf, StrideLargerThanMatrixOnly) {
  using T = TypeParam;
  for (int n : {3, 8, 16, 32, 40, 100})
    for (tk::BatchUplo uplo : kUplos) {
      run_uniform_case<T>(uplo, n, n, static_cast<long long>(n) * n + 1, 37, this->rng, {},
                          "stride+1");
      if (this->HasFatalFailure()) return;
    }
}

TYPED_TEST(BatchedPotrf, SampledLargeOrders) {
  run_tight_and_padded<TypeParam>(large_orders(), 1, 3, quick_mode() ? 3 : 13, this->rng);
}

// Every thread-block size of the register kernel and every compiled panel shape (the tuning
// sweep may pick any of them).
TYPED_TEST(BatchedPotrf, EveryKernelShape) {
  using T = TypeParam;
  for (int threads : {32, 64, 128, 256})
    for (int n : {1, 5, 16, 27, 32}) {
      tk::BatchedOptions opts;
      opts.threads = threads;
      run_uniform_case<T>(tk::BatchUplo::lower, n, n, static_cast<long long>(n) * n, 75,
                          this->rng, opts, "threads=" + std::to_string(threads));
      if (this->HasFatalFailure()) return;
    }
  const tk::PanelShape* shapes = nullptr;
  const int count = tk::potrf_batched_panel_shapes(&shapes);
  ASSERT_GT(count, 0);
  const std::vector<int> orders = quick_mode() ? std::vector<int>{40} : std::vector<int>{40, 100, 300};
  for (int s = 0; s < count; ++s)
    for (int n : orders)
      for (tk::BatchUplo uplo : kUplos) {
        tk::BatchedOptions opts;
        opts.panel_width = shapes[s].panel_width;
        opts.threads = shapes[s].threads;
        opts.rows_per_thread = shapes[s].rows_per_thread;
        opts.update_width = shapes[s].update_width;
        std::ostringstream label;
        label << "shape(" << opts.panel_width << "," << opts.threads << ","
              << opts.rows_per_thread << "," << opts.update_width << ")";
        run_uniform_case<T>(uplo, n, n + 2, static_cast<long long>(n + 2) * n, 13, this->rng,
                            opts, label.str());
        if (this->HasFatalFailure()) return;
      }
}

// Approximate pivots: still a factorization, to a looser tolerance than the IEEE path.
TYPED_TEST(BatchedPotrf, FastMathStaysAccurate) {
  using T = TypeParam;
  tk::BatchedOptions opts;
  opts.fast_math = true;
  for (int n : {1, 5, 16, 32, 64, 128})
    for (tk::BatchUplo uplo : kUplos) {
      HostBatch<T> hb = uniform_batch<T>(uplo, n, n, static_cast<long long>(n) * n, 41, this->rng);
      DeviceBuffer<T> dA(hb.data);
      DeviceBuffer<int> dinfo(poisoned_info(41));
      tk::potrf_batched<T>(uplo, n, dA.get(), n, static_cast<long long>(n) * n, 41, dinfo.get(),
                           nullptr, opts);
      synchronize();
      const std::vector<T> out = dA.download();
      const std::vector<int> info = dinfo.download();
      // Relative backward error; approximate reciprocal square roots cost a few ulps in float
      // and about 1e-12 in double after one Newton step.
      const double tol = std::is_same_v<T, float> ? 8.0 * (n + 1) * eps<T>() : 1e-10;
      for (int k = 0; k < 41; ++k) {
        const MatrixSpec& m = hb.mats[k];
        ASSERT_EQ(info[k], m.expected_info) << "fast n=" << n << " matrix " << k;
        const int cols = m.expected_info ? m.expected_info - 1 : n;
        double worst = 0;
        for (int j = 0; j < cols; ++j)
          for (int i = j; i < (m.expected_info ? cols : n); ++i) {
            double s = 0;
            for (int c = 0; c <= j; ++c) s += factor_at(out, m, uplo, i, c) * factor_at(out, m, uplo, j, c);
            worst = std::max(worst, std::fabs(s - m.a[i + static_cast<std::size_t>(j) * n]));
          }
        EXPECT_LE(worst, tol * 2.0) << "fast n=" << n << " " << uplo_name(uplo) << " matrix " << k;
      }
      check_untouched(hb, out, "fast math");
    }
}

TYPED_TEST(BatchedPotrf, EmptyBatchAndOrderZero) {
  using T = TypeParam;
  DeviceBuffer<T> dA(4);
  DeviceBuffer<int> dinfo(poisoned_info(3));
  tk::potrf_batched<T>(tk::BatchUplo::lower, 0, dA.get(), 1, 1, 3, dinfo.get(), nullptr);
  tk::potrf_batched<T>(tk::BatchUplo::lower, 4, dA.get(), 4, 16, 0, nullptr, nullptr);
  synchronize();
  const std::vector<int> info = dinfo.download();
  for (int k = 0; k < 3; ++k) EXPECT_EQ(info[k], 0);
}

// ---- interleaved layout ---------------------------------------------------------------------

template <class T>
void run_interleaved_case(tk::BatchUplo uplo, int n, int batch, std::mt19937_64& rng,
                          const tk::BatchedOptions& opts) {
  const long long nn = static_cast<long long>(n) * n;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, n, nn, batch, rng);
  DeviceBuffer<T> dA(hb.data);
  // Interleaved buffer poisoned with a sentinel: the padding of the last chunk must keep it.
  const long long ni = tk::interleaved_elements(n, batch);
  const T sentinel = static_cast<T>(-12345.5);
  DeviceBuffer<T> dI(std::vector<T>(ni, sentinel));
  DeviceBuffer<int> dinfo(poisoned_info(batch));
  tk::interleave_batched<T>(n, dA.get(), n, nn, batch, dI.get(), nullptr);
  tk::potrf_batched_interleaved<T>(uplo, n, dI.get(), batch, dinfo.get(), nullptr, opts);
  DeviceBuffer<T> dOut(std::vector<T>(hb.data.size(), poison<T>()));
  tk::deinterleave_batched<T>(n, dI.get(), batch, dOut.get(), n, nn, nullptr);
  synchronize();
  const std::vector<T> inter = dI.download();
  long long touched_padding = 0;
  for (int b = batch; b < (batch + 31) / 32 * 32; ++b)
    for (long long e = 0; e < nn; ++e)
      if (!same_bits(inter[((b / 32) * nn + e) * 32 + b % 32], sentinel)) ++touched_padding;
  EXPECT_EQ(touched_padding, 0) << "interleaved padding written, n=" << n;
  std::ostringstream where;
  where << "interleaved " << uplo_name(uplo) << " n=" << n << " batch=" << batch;
  check_batch(hb, dOut.download(), dinfo.download(), where.str());
}

TYPED_TEST(BatchedPotrfInterleaved, RoundTripKeepsEveryElement) {
  using T = TypeParam;
  for (int n : {1, 3, 8, 17, 32, 45}) {
    const int batch = 70;
    const long long nn = static_cast<long long>(n) * n;
    std::vector<T> host(static_cast<std::size_t>(nn) * batch);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (T& v : host) v = static_cast<T>(dist(this->rng));
    DeviceBuffer<T> dA(host);
    DeviceBuffer<T> dI(tk::interleaved_elements(n, batch));
    DeviceBuffer<T> dB(host.size());
    tk::interleave_batched<T>(n, dA.get(), n, nn, batch, dI.get(), nullptr);
    tk::deinterleave_batched<T>(n, dI.get(), batch, dB.get(), n, nn, nullptr);
    synchronize();
    const std::vector<T> inter = dI.download();
    // Spot-check the documented address formula, then the round trip.
    for (int b : {0, 1, 31, 32, 69})
      for (long long e : {0LL, nn / 2, nn - 1}) {
        const int i = static_cast<int>(e % n), j = static_cast<int>(e / n);
        EXPECT_TRUE(same_bits(inter[((b / 32) * nn + j * n + i) * 32 + b % 32], host[b * nn + e]))
            << "n=" << n << " b=" << b << " e=" << e;
      }
    EXPECT_EQ(dB.download(), host) << "n=" << n;
  }
}

TYPED_TEST(BatchedPotrfInterleaved, EveryOrderUpTo32AndBeyond) {
  using T = TypeParam;
  std::vector<int> orders;
  for (int n : small_orders())
    if (n <= 40) orders.push_back(n);
  orders.push_back(64);
  const int batch = quick_mode() ? 45 : 77;  // two full chunks and a partial one
  for (int n : orders)
    for (tk::BatchUplo uplo : kUplos) {
      run_interleaved_case<T>(uplo, n, batch, this->rng, {});
      if (this->HasFatalFailure()) return;
    }
}

// ---- variable sizes -------------------------------------------------------------------------

template <class T>
struct VariableBatch {
  HostBatch<T> hb;
  std::vector<int> orders, lds;
  std::vector<long long> offsets;
  int max_n = 0;
};

// Orders drawn in [0, max_n] with 0, 1 and max_n always present; random leading dimensions
// and gaps between matrices.
template <class T>
VariableBatch<T> variable_batch(tk::BatchUplo uplo, int max_n, int batch, std::mt19937_64& rng) {
  VariableBatch<T> vb;
  std::uniform_int_distribution<int> order(0, max_n), pad(0, 3);
  long long at = 0;
  for (int k = 0; k < batch; ++k) {
    int n = order(rng);
    if (k == 0) n = 0;
    if (k == 2) n = 1;
    if (k == batch - 1) n = max_n;
    const int ld = std::max(1, n + pad(rng));
    vb.orders.push_back(n);
    vb.lds.push_back(ld);
    at += pad(rng);
    vb.offsets.push_back(at);
    at += static_cast<long long>(ld) * n;
  }
  vb.max_n = max_n;
  vb.hb = build_batch<T>(uplo, vb.orders, vb.lds, vb.offsets, static_cast<std::size_t>(at) + 3,
                         rng, true);
  return vb;
}

TYPED_TEST(BatchedPotrfVariable, MixedOrdersIncludingZeroAndOne) {
  using T = TypeParam;
  const int batch = quick_mode() ? 24 : 60;
  const std::vector<int> bounds = quick_mode() ? std::vector<int>{1, 8, 32, 100}
                                               : std::vector<int>{1, 8, 32, 33, 100, 300};
  for (int max_n : bounds)
    for (tk::BatchUplo uplo : kUplos)
      for (int extra_bound : {0, 7}) {  // max_n may be a loose bound
        VariableBatch<T> vb = variable_batch<T>(uplo, max_n, batch, this->rng);
        DeviceBuffer<T> dA(vb.hb.data);
        DeviceBuffer<int> dn(vb.orders), dld(vb.lds), dinfo(poisoned_info(batch));
        DeviceBuffer<long long> doff(vb.offsets);
        tk::potrf_vbatched<T>(uplo, dn.get(), max_n + extra_bound, dA.get(), doff.get(),
                              dld.get(), batch, dinfo.get(), nullptr);
        synchronize();
        std::ostringstream where;
        where << "vbatched " << uplo_name(uplo) << " max_n=" << max_n << "+" << extra_bound;
        check_batch(vb.hb, dA.download(), dinfo.download(), where.str());
        if (this->HasFatalFailure()) return;
      }
}

// ---- solves ---------------------------------------------------------------------------------

// Residual check of X against the original matrices: ||A x - b|| / (||A|| ||x|| + ||b||) per
// column, plus agreement with LAPACKE potrs on LAPACKE's own factor. Matrices that failed to
// factor must leave their B bit-identical, and so must every element outside the systems.
template <class T>
void check_solution(const HostBatch<T>& hb, const std::vector<T>& b_in, const std::vector<T>& b_out,
                    const std::vector<long long>& b_off, const std::vector<int>& b_ld, int nrhs,
                    const std::string& where) {
  std::vector<char> in_system(b_in.size(), 0);
  for (std::size_t k = 0; k < hb.mats.size(); ++k) {
    const MatrixSpec& m = hb.mats[k];
    const int n = m.n;
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) in_system[b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + i] = 1;
    if (m.expected_info != 0) {
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i) {
          const std::size_t at = b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + i;
          ASSERT_TRUE(same_bits(b_out[at], b_in[at]))
              << where << ": B of failed matrix " << k << " changed at row " << i;
        }
      continue;
    }
    if (n == 0) continue;
    // LAPACKE reference: factor and solve in T.
    std::vector<T> f(static_cast<std::size_t>(n) * n), x(static_cast<std::size_t>(n) * nrhs);
    for (std::size_t e = 0; e < f.size(); ++e) f[e] = static_cast<T>(m.a[e]);
    ASSERT_EQ(lapack_potrf(uplo_char(hb.uplo), n, f.data(), n), 0);
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) x[i + static_cast<std::size_t>(c) * n] = b_in[b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + i];
    ASSERT_EQ(lapack_potrs(uplo_char(hb.uplo), n, nrhs, f.data(), n, x.data(), n), 0);

    double anorm = 0;
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int j = 0; j < n; ++j) row += std::fabs(m.a[i + static_cast<std::size_t>(j) * n]);
      anorm = std::max(anorm, row);
    }
    for (int c = 0; c < nrhs; ++c) {
      double rnorm = 0, xnorm = 0, bnorm = 0, dnorm = 0, refnorm = 0;
      for (int i = 0; i < n; ++i) {
        double ax = 0;
        for (int j = 0; j < n; ++j)
          ax += m.a[i + static_cast<std::size_t>(j) * n] * static_cast<double>(b_out[b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + j]);
        const double bi = b_in[b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + i];
        const double xi = b_out[b_off[k] + static_cast<std::size_t>(c) * b_ld[k] + i];
        const double ri = x[i + static_cast<std::size_t>(c) * n];
        rnorm = std::max(rnorm, std::fabs(ax - bi));
        xnorm = std::max(xnorm, std::fabs(xi));
        bnorm = std::max(bnorm, std::fabs(bi));
        dnorm = std::max(dnorm, std::fabs(xi - ri));
        refnorm = std::max(refnorm, std::fabs(ri));
      }
      const double backward = rnorm / (anorm * xnorm + bnorm);
      EXPECT_LE(backward, 30.0 * n * eps<T>())
          << where << " matrix " << k << " rhs " << c << " (n=" << n << ")";
      EXPECT_LE(dnorm, 1e3 * n * eps<T>() * std::max(refnorm, 1.0))
          << where << " matrix " << k << " rhs " << c << " differs from LAPACKE potrs";
    }
  }
  std::size_t changed = 0;
  for (std::size_t e = 0; e < b_in.size(); ++e)
    if (!in_system[e] && !same_bits(b_in[e], b_out[e])) ++changed;
  EXPECT_EQ(changed, 0u) << where << ": elements of B outside the systems changed";
}

template <class T>
std::vector<T> random_rhs(std::size_t total, const std::vector<long long>& off,
                          const std::vector<int>& ld, const std::vector<int>& orders, int nrhs,
                          std::mt19937_64& rng) {
  std::vector<T> b(total, poison<T>());
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::size_t k = 0; k < orders.size(); ++k)
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < orders[k]; ++i)
        b[off[k] + static_cast<std::size_t>(c) * ld[k] + i] = static_cast<T>(dist(rng));
  return b;
}

template <class T>
void run_solve_case(tk::BatchUplo uplo, int n, int nrhs, int batch, bool pass_info,
                    std::mt19937_64& rng) {
  const int lda = n + 1, ldb = n + 2;
  const long long strideA = static_cast<long long>(lda) * n + 3;
  const long long strideB = static_cast<long long>(ldb) * nrhs + 1;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, strideA, batch, rng, pass_info);
  std::vector<long long> boff(batch);
  for (int k = 0; k < batch; ++k) boff[k] = k * strideB;
  const std::vector<int> bld(batch, ldb), orders(batch, n);
  const std::vector<T> b = random_rhs<T>(strideB * batch + 2, boff, bld, orders, nrhs, rng);
  DeviceBuffer<T> dA(hb.data), dB(b);
  DeviceBuffer<int> dinfo(poisoned_info(batch));
  tk::potrf_batched<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), nullptr);
  tk::potrs_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch,
                       pass_info ? dinfo.get() : nullptr, nullptr);
  synchronize();
  std::ostringstream where;
  where << "potrs " << uplo_name(uplo) << " n=" << n << " nrhs=" << nrhs
        << (pass_info ? "" : " (no info)");
  check_solution(hb, b, dB.download(), boff, bld, nrhs, where.str());
}

TYPED_TEST(BatchedPotrs, EverySmallOrderOneAndSeveralRightHandSides) {
  using T = TypeParam;
  const int batch = quick_mode() ? 14 : 40;
  for (int n : small_orders())
    for (tk::BatchUplo uplo : kUplos)
      for (int nrhs : {1, 3}) {
        run_solve_case<T>(uplo, n, nrhs, batch, true, this->rng);
        if (this->HasFatalFailure()) return;
      }
}

TYPED_TEST(BatchedPotrs, LargeOrdersIncludingGlobalMemoryPath) {
  using T = TypeParam;
  std::vector<int> orders = large_orders();
  orders.push_back(600);  // above 512 rows the right-hand side stays in global memory
  for (int n : orders)
    for (tk::BatchUplo uplo : kUplos) {
      run_solve_case<T>(uplo, n, 2, quick_mode() ? 3 : 13, true, this->rng);
      if (this->HasFatalFailure()) return;
    }
}

TYPED_TEST(BatchedPotrs, NullInfoSolvesEverything) {
  using T = TypeParam;
  for (int n : {4, 40})
    for (tk::BatchUplo uplo : kUplos) {
      run_solve_case<T>(uplo, n, 1, 9, false, this->rng);
      if (this->HasFatalFailure()) return;
    }
}

TYPED_TEST(BatchedPotrs, VariableOrders) {
  using T = TypeParam;
  const int batch = quick_mode() ? 20 : 50;
  for (int max_n : {20, 100, 600})
    for (tk::BatchUplo uplo : kUplos)
      for (int nrhs : {1, 2}) {
        if (quick_mode() && max_n == 600) continue;
        VariableBatch<T> vb = variable_batch<T>(uplo, max_n, batch, this->rng);
        std::vector<long long> boff;
        std::vector<int> bld;
        long long at = 1;
        for (int k = 0; k < batch; ++k) {
          bld.push_back(std::max(1, vb.orders[k] + k % 3));
          boff.push_back(at);
          at += static_cast<long long>(bld.back()) * nrhs + 2;
        }
        const std::vector<T> b = random_rhs<T>(at + 1, boff, bld, vb.orders, nrhs, this->rng);
        DeviceBuffer<T> dA(vb.hb.data), dB(b);
        DeviceBuffer<int> dn(vb.orders), dld(vb.lds), dldb(bld), dinfo(poisoned_info(batch));
        DeviceBuffer<long long> doff(vb.offsets), dboff(boff);
        tk::potrf_vbatched<T>(uplo, dn.get(), max_n, dA.get(), doff.get(), dld.get(), batch,
                              dinfo.get(), nullptr);
        tk::potrs_vbatched<T>(uplo, dn.get(), max_n, nrhs, dA.get(), doff.get(), dld.get(), dB.get(),
                              dboff.get(), dldb.get(), batch, dinfo.get(), nullptr);
        synchronize();
        std::ostringstream where;
        where << "potrs_vbatched " << uplo_name(uplo) << " max_n=" << max_n << " nrhs=" << nrhs;
        check_solution(vb.hb, b, dB.download(), boff, bld, nrhs, where.str());
        if (this->HasFatalFailure()) return;
      }
}

// ---- argument checks ------------------------------------------------------------------------

TYPED_TEST(BatchedArguments, InvalidArgumentsThrow) {
  using T = TypeParam;
  DeviceBuffer<T> dA(64);
  DeviceBuffer<int> dinfo(4);
  const auto lower = tk::BatchUplo::lower;
  EXPECT_THROW(tk::potrf_batched<T>(lower, -1, dA.get(), 1, 1, 1, dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrf_batched<T>(lower, 4, dA.get(), 3, 16, 1, dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrf_batched<T>(lower, 4, dA.get(), 4, 8, 2, dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrf_batched<T>(lower, 4, dA.get(), 4, 16, 2, nullptr, nullptr),
               tessera::InvalidArgument);
  tk::BatchedOptions bad_shape;
  bad_shape.panel_width = 24;
  EXPECT_THROW(tk::potrf_batched<T>(lower, 40, dA.get(), 40, 1600, 1, dinfo.get(), nullptr,
                                    bad_shape),
               tessera::InvalidArgument);
  tk::BatchedOptions bad_threads;
  bad_threads.threads = 96;
  EXPECT_THROW(tk::potrf_batched<T>(lower, 4, dA.get(), 4, 16, 1, dinfo.get(), nullptr,
                                    bad_threads),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrs_batched<T>(lower, 4, 1, dA.get(), 4, 16, dA.get(), 3, 4, 1,
                                    dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::interleave_batched<T>(4, dA.get(), 2, 16, 1, dA.get(), nullptr),
               tessera::InvalidArgument);
}

}  // namespace
