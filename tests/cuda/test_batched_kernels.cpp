// Batched Cholesky kernels (potrf_batched, the interleaved layout, potrf_vbatched, potrs_batched,
// potrs_vbatched) against LAPACKE, for float and double, lower and upper, every n from 1 to 64
// and samples up to 600; batches hold non-SPD (and NaN) members at known positions, strides
// larger than n*n and lda > n. Everything outside the referenced triangles is poisoned with NaN
// and must come back bit-identical; info is poisoned and must be written for every matrix.
// The out-of-place form (strided source, separate output) must give, bit for bit, what the in-place
// form leaves in A, with zeros in the opposite triangle and the source unchanged.
// Setting TESSERA_BATCHED_TEST_QUICK=1 trims sizes and batches (for compute-sanitizer runs).
// Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batched_test_support.hpp"
#include "cuda/batched_kernels.hpp"
#include "tessera/error.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp, batched_test_support.hpp

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

// Samples, with the orders on either side of each change of the built-in panel shape (40, 160,
// 200, 224, 320: potrf_batched_default_shape), where another kernel takes over.
std::vector<int> large_orders() {
  if (quick_mode()) return {65, 129, 300};
  return {77, 100, 128, 129, 160, 161, 200, 201, 224, 225, 256, 300, 320, 321, 512};
}

constexpr tk::BatchUplo kUplos[] = {tk::BatchUplo::lower, tk::BatchUplo::upper};

// ---- kernel launches ------------------------------------------------------------------------

void synchronize() {
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cuda_ok(cudaGetLastError(), "kernel");
}

// ---- test matrices --------------------------------------------------------------------------

// How a deliberately broken member fails, and the info it must report.
enum class Breakage { none, negative_middle_pivot, nan_first_pivot, zero_last_pivot };

Breakage breakage_for(int k, int batch) {
  // Fixed positions: the first, an inner one, and the last matrix of the batch.
  if (batch >= 3 && k == 1) return Breakage::negative_middle_pivot;
  if (batch >= 8 && k == batch / 2) return Breakage::nan_first_pivot;
  if (batch >= 12 && k == batch - 2) return Breakage::zero_last_pivot;
  return Breakage::none;
}

// Spoils the full matrix a (order n) of member k as breakage_for says; returns the expected
// 1-based info.
int spoil(int k, int batch, std::vector<double>& a, int n) {
  switch (breakage_for(k, batch)) {
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

template <class T>
HostBatch<T> uniform_batch(tk::BatchUplo uplo, int n, int lda, long long stride, int batch,
                           std::mt19937_64& rng, bool with_failures = true) {
  std::vector<int> orders(batch, n), lds(batch, lda);
  std::vector<long long> offsets(batch);
  for (int k = 0; k < batch; ++k) offsets[k] = k * stride;
  const std::size_t total = batch == 0 ? 1 : static_cast<std::size_t>(stride) * (batch - 1) +
                                                 static_cast<std::size_t>(lda) * n + 1;
  return build_batch<T>(uplo_char(uplo), orders, lds, offsets, total, {}, rng,
                        [with_failures](int k, int b, std::vector<double>& a, int order) {
                          return with_failures ? spoil(k, b, a, order) : 0;
                        });
}

// ---- runs -----------------------------------------------------------------------------------

template <class T>
void run_uniform_case(tk::BatchUplo uplo, int n, int lda, long long stride, int batch,
                      std::mt19937_64& rng, const tk::BatchedOptions& opts,
                      const std::string& label) {
  HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, stride, batch, rng);
  DeviceArray<T> dA(hb.data);
  DeviceArray<int> dinfo(poisoned_info(batch));
  tk::potrf_batched<T>(uplo, n, dA.get(), lda, stride, batch, dinfo.get(), nullptr, opts);
  synchronize();
  std::ostringstream where;
  where << label << " " << uplo_name(uplo) << " n=" << n << " lda=" << lda << " stride=" << stride
        << " batch=" << batch;
  check_factors(hb, dA.download(), dinfo.download(), where.str(), BackwardError::check);
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
class BatchedTest : public GpuTest<T> {
 protected:
  std::mt19937_64 rng{20240611};
};

// The suites group the tests by kernel.
TYPED_SUITE_ON(BatchedTest, BatchedPotrf);
TYPED_SUITE_ON(BatchedTest, BatchedPotrfInterleaved);
TYPED_SUITE_ON(BatchedTest, BatchedPotrfVariable);
TYPED_SUITE_ON(BatchedTest, BatchedPotrs);
TYPED_SUITE_ON(BatchedTest, BatchedArguments);
TYPED_SUITE_ON(BatchedTest, BatchedPotrfOutOfPlace);

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

// A batch with few matrices per SM and one with more take different built-in panel shapes
// (potrf_batched_default_shape); both, in both triangles.
TYPED_TEST(BatchedPotrf, FewAndManyMatricesPerSm) {
  using T = TypeParam;
  const int sms = current_sm_count();
  const int many = tk::kFewMatricesPerSm * sms + 1;
  for (int n : {33, 48, 77, 129, 201}) {
    const tk::PanelShape few_shape = tk::potrf_batched_default_shape(n, static_cast<int>(sizeof(T)), false, 5, sms);
    const tk::PanelShape many_shape = tk::potrf_batched_default_shape(n, static_cast<int>(sizeof(T)), false, many, sms);
    EXPECT_FALSE(few_shape.threads == many_shape.threads && few_shape.panel_width == many_shape.panel_width)
        << "n=" << n;
    for (int batch : {5, many})
      for (tk::BatchUplo uplo : kUplos) {
        run_uniform_case<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->rng, {}, "few/many");
        if (this->HasFatalFailure()) return;
      }
  }
}

// potrf_batched_blocked on an uploaded batch: every member's factor and info, the rest untouched.
template <class T>
void run_blocked_case(cublasHandle_t blas, const HostBatch<T>& hb, tk::BatchUplo uplo, int n, int lda, long long stride,
                      const tk::BatchedOptions& opts, const std::string& where) {
  DeviceArray<T> dA(hb.data);
  DeviceArray<int> dinfo(poisoned_info(hb.batch()));
  tk::potrf_batched_blocked<T>(blas, uplo, n, dA.get(), lda, stride, hb.batch(), dinfo.get(), nullptr, opts);
  synchronize();
  check_factors(hb, dA.download(), dinfo.download(), where, BackwardError::check);
}

// potrf_batched_blocked on `batch` members of order n (leading dimension n + 1, gaps between
// them); when the options zero the opposite triangles, from inputs with zeros there, which must
// hold zeros again where the products wrote.
template <class T>
void run_blocked_stack(cublasHandle_t blas, tk::BatchUplo uplo, int n, int batch, const tk::BatchedOptions& opts,
                       std::mt19937_64& rng) {
  const int lda = n + 1;
  const long long stride = static_cast<long long>(lda) * n + 3;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, stride, batch, rng);
  if (opts.blocked_zero_opposite)
    for (const BatchMember& m : hb.members)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (uplo == tk::BatchUplo::lower ? i < j : i > j) hb.data[m.offset + i + static_cast<std::size_t>(j) * m.ld] = T(0);
  std::ostringstream where;
  where << "blocks of " << opts.blocked_width << (opts.blocked_zero_opposite ? " zeroing " : " ") << uplo_name(uplo)
        << " n=" << n << " batch=" << batch;
  run_blocked_case(blas, hb, uplo, n, lda, stride, opts, where.str());
}

// In blocks of columns (potrf_batched_blocked): orders below, at and across the block widths, widths
// that divide them and one that does not, tight and padded, both triangles, and the broken members'
// infos from failures in the first block, a middle one and the last; the opposite triangles that
// the products overwrite come back bit for bit (check_factors' untouched elements).
TYPED_TEST(BatchedPotrf, InBlocksOfColumns) {
  using T = TypeParam;
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const std::vector<int> orders =
      quick_mode() ? std::vector<int>{65, 200} : std::vector<int>{1, 33, 63, 64, 65, 100, 200, 257};
  for (int width : {0, 32, 48, 64})
    for (int n : orders)
      for (int pad : {0, 3})
        for (tk::BatchUplo uplo : kUplos) {
          const int lda = n + pad, batch = 13;
          const long long stride = static_cast<long long>(lda) * n + 2 * pad;
          const HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, stride, batch, this->rng);
          tk::BatchedOptions opts;
          opts.blocked_width = width;
          std::ostringstream where;
          where << "blocks of " << width << " " << uplo_name(uplo) << " n=" << n << " lda=" << lda;
          run_blocked_case(blas, hb, uplo, n, lda, stride, opts, where.str());
          if (this->HasFailure()) {
            cublasDestroy(blas);
            return;
          }
        }
  cublasDestroy(blas);
}

// The same with the diagonal blocks' opposite triangles zeroed rather than kept (the out-of-place
// stacks' form): from inputs with zeros in their opposite triangles, which must hold zeros again
// where the products wrote.
TYPED_TEST(BatchedPotrf, InBlocksOfColumnsZeroingTheOppositeTriangle) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  for (int n : {65, 200})
    for (tk::BatchUplo uplo : kUplos) {
      tk::BatchedOptions opts;
      opts.blocked_zero_opposite = true;
      run_blocked_stack<TypeParam>(blas, uplo, n, 13, opts, this->rng);
      if (this->HasFailure()) break;
    }
  cublasDestroy(blas);
}

// Stacks longer than the GPU has SMs, where the opposite triangles are copied out and back (or
// zeroed) on a second stream beside the first and the last panel kernels, in both forms.
TYPED_TEST(BatchedPotrf, InBlocksOfColumnsOnLongStacks) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const int batch = current_sm_count() + 1;
  for (int n : {65, 200})
    for (bool zero : {false, true})
      for (tk::BatchUplo uplo : kUplos) {
        tk::BatchedOptions opts;
        opts.blocked_width = 32;
        opts.blocked_zero_opposite = zero;
        run_blocked_stack<TypeParam>(blas, uplo, n, batch, opts, this->rng);
        if (this->HasFailure()) {
          cublasDestroy(blas);
          return;
        }
      }
  cublasDestroy(blas);
}

// Stacks with more matrices per SM than kFewMatricesPerSm, whose blocks take the panel shapes
// potrf_batched_columns_shape picks for many matrices, block by block (and, for comparisons, the
// whole kernel's shapes), at orders on either side of the wider blocks' threshold.
TYPED_TEST(BatchedPotrf, InBlocksOfColumnsWithManyMatricesPerSm) {
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const int batch = tk::kFewMatricesPerSm * current_sm_count() + 1;
  const std::vector<int> orders = quick_mode() ? std::vector<int>{200} : std::vector<int>{200, 449};
  for (int n : orders)
    for (bool table : {true, false})
      for (tk::BatchUplo uplo : kUplos) {
        tk::BatchedOptions opts;
        opts.columns_shape_table = table;
        run_blocked_stack<TypeParam>(blas, uplo, n, batch, opts, this->rng);
        if (this->HasFailure()) {
          cublasDestroy(blas);
          return;
        }
      }
  cublasDestroy(blas);
}

// The blocked path's table (host logic, no GPU needed): every shape it names is compiled for its
// type (the complex types have two), and stacks of few matrices per SM keep the whole kernel's shapes.
TEST(BatchedColumnsShape, NamesCompiledShapesAndKeepsTheShapesForFewMatrices) {
  const tk::PanelShape* shapes = nullptr;
  const int count = tk::potrf_batched_panel_shapes(&shapes);
  const auto same = [](const tk::PanelShape& a, const tk::PanelShape& b) {
    return a.panel_width == b.panel_width && a.threads == b.threads && a.rows_per_thread == b.rows_per_thread &&
           a.update_width == b.update_width;
  };
  const int sms = 132;
  for (int bytes : {4, 8})
    for (bool complex : {false, true})
      for (bool upper : {false, true})
        for (int columns : {16, 32, 64})
          for (long long batch : {10LL, 264LL, 265LL, 1000LL, 3168LL, 3169LL, 10000LL})
            for (int rows = 1; rows <= 1100; rows += 7) {
              const tk::PanelShape s = tk::potrf_batched_columns_shape(rows, columns, bytes, complex, upper, batch, sms);
              const std::string where = "bytes=" + std::to_string(bytes) + " complex=" + std::to_string(complex) +
                                        " upper=" + std::to_string(upper) + " columns=" + std::to_string(columns) +
                                        " batch=" + std::to_string(batch) + " rows=" + std::to_string(rows);
              EXPECT_TRUE(std::any_of(shapes, shapes + count, [&](const tk::PanelShape& c) { return same(c, s); }))
                  << where;
              if (complex)  // the two shapes compiled for complex matrices
                EXPECT_TRUE(same(s, {8, 32, 1, 8}) || same(s, {16, 64, 1, 8})) << where;
              if (batch <= tk::kFewMatricesPerSm * sms)
                EXPECT_TRUE(same(s, tk::potrf_batched_default_shape(rows, bytes, complex, batch, sms))) << where;
              if (::testing::Test::HasFailure()) return;
            }
}

// potrf_batched_columns on `batch` members of order n (leading dimension n + 1, gaps between them)
// against the whole factorization (check_columns), with the broken members of uniform_batch.
template <class T>
void run_columns_case(tk::BatchUplo uplo, int n, int count, int batch, const tk::BatchedOptions& opts,
                      const std::string& label, std::mt19937_64& rng) {
  const int lda = n + 1;
  const long long stride = static_cast<long long>(lda) * n + 3;
  std::mt19937_64 same = rng;
  const HostBatch<T> spoiled = uniform_batch<T>(uplo, n, lda, stride, batch, rng);
  const HostBatch<T> clean = uniform_batch<T>(uplo, n, lda, stride, batch, same, false);
  std::ostringstream where;
  where << label << " " << uplo_name(uplo) << " n=" << n << " count=" << count << " batch=" << batch;
  check_columns(uplo, n, count, spoiled.data, clean.data, lda, stride, expected_infos(spoiled), opts, where.str());
}

// One block of columns (potrf_batched_columns: what the blocked path's panel kernels compute)
// against the whole factorization: orders below, at and across the block widths, counts from one
// column to all of them, both triangles, the broken members' infos where their column is among the
// first `count` (0 where it is not), with few and with many matrices per SM.
TYPED_TEST(BatchedPotrf, OneBlockOfColumns) {
  const int many = tk::kFewMatricesPerSm * current_sm_count() + 1;
  const std::vector<int> orders =
      quick_mode() ? std::vector<int>{33, 100} : std::vector<int>{1, 31, 33, 64, 65, 100, 200, 257, 513};
  for (int n : orders) {
    std::vector<int> counts = {1, 32, 64};
    if (n != 1 && n != 32 && n != 64) counts.push_back(n);
    for (int count : counts) {
      if (count > n) continue;
      for (int batch : {13, many}) {
        if (batch == many && n > 257) continue;
        for (tk::BatchUplo uplo : kUplos) {
          run_columns_case<TypeParam>(uplo, n, count, batch, {}, "columns", this->rng);
          if (this->HasFailure()) return;
        }
      }
    }
  }
}

// Every compiled panel shape on one block of columns, which the blocked path's table may pick.
TYPED_TEST(BatchedPotrf, OneBlockOfColumnsInEveryShape) {
  const tk::PanelShape* shapes = nullptr;
  const int count = tk::potrf_batched_panel_shapes(&shapes);
  for (int s = 0; s < count; ++s)
    for (int columns : {32, 64})
      for (tk::BatchUplo uplo : kUplos) {
        tk::BatchedOptions opts;
        opts.panel_width = shapes[s].panel_width;
        opts.threads = shapes[s].threads;
        opts.rows_per_thread = shapes[s].rows_per_thread;
        opts.update_width = shapes[s].update_width;
        std::ostringstream label;
        label << "shape(" << opts.panel_width << "," << opts.threads << "," << opts.rows_per_thread << ","
              << opts.update_width << ")";
        run_columns_case<TypeParam>(uplo, 100, columns, 13, opts, label.str(), this->rng);
        if (this->HasFailure()) return;
      }
}

// Upper storage through the panel kernels that read it as lower storage is read (the comparison
// the benchmark makes), tight and padded.
TYPED_TEST(BatchedPotrf, UpperWithoutStagedRows) {
  using T = TypeParam;
  tk::BatchedOptions plain;
  plain.upper_rows = false;
  for (int n : {33, 100, 201, 321})
    for (int lda : {n, n + 1}) {
      run_uniform_case<T>(tk::BatchUplo::upper, n, lda, static_cast<long long>(lda) * n, 13, this->rng, plain,
                          "upper, plain kernels");
      if (this->HasFatalFailure()) return;
    }
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
      DeviceArray<T> dA(hb.data);
      DeviceArray<int> dinfo(poisoned_info(41));
      tk::potrf_batched<T>(uplo, n, dA.get(), n, static_cast<long long>(n) * n, 41, dinfo.get(),
                           nullptr, opts);
      synchronize();
      const std::vector<T> out = dA.download();
      const std::vector<int> info = dinfo.download();
      // Relative backward error; approximate reciprocal square roots cost a few ulps in float
      // and about 1e-12 in double after one Newton step.
      const double tol = std::is_same_v<T, float> ? 8.0 * (n + 1) * eps<T>() : 1e-10;
      for (int k = 0; k < 41; ++k) {
        const BatchMember& m = hb.members[k];
        ASSERT_EQ(info[k], m.expected_info) << "fast n=" << n << " matrix " << k;
        const int cols = m.expected_info ? m.expected_info - 1 : n;
        double worst = 0;
        for (int j = 0; j < cols; ++j)
          for (int i = j; i < (m.expected_info ? cols : n); ++i) {
            double s = 0;
            for (int c = 0; c <= j; ++c) s += factor_at(out, m, hb.uplo, i, c) * factor_at(out, m, hb.uplo, j, c);
            worst = std::max(worst, std::fabs(s - m.a[i + static_cast<std::size_t>(j) * n]));
          }
        EXPECT_LE(worst, tol * 2.0) << "fast n=" << n << " " << uplo_name(uplo) << " matrix " << k;
      }
      check_untouched(hb, out, "fast math");
    }
}

TYPED_TEST(BatchedPotrf, EmptyBatchAndOrderZero) {
  using T = TypeParam;
  DeviceArray<T> dA(4);
  DeviceArray<int> dinfo(poisoned_info(3));
  tk::potrf_batched<T>(tk::BatchUplo::lower, 0, dA.get(), 1, 1, 3, dinfo.get(), nullptr);
  tk::potrf_batched<T>(tk::BatchUplo::lower, 4, dA.get(), 4, 16, 0, nullptr, nullptr);
  synchronize();
  const std::vector<int> info = dinfo.download();
  for (int k = 0; k < 3; ++k) EXPECT_EQ(info[k], 0);
}

// ---- out of place ---------------------------------------------------------------------------

// Orders 1 to 33 (the register kernel's every group size and the first panel order), and the
// panel kernel around the edges of its built-in shapes (40, 160/200, 224/320 in float/double).
std::vector<int> out_of_place_orders() {
  std::vector<int> orders;
  for (int n = 1; n <= 33; ++n) orders.push_back(n);
  const std::vector<int> larger = quick_mode() ? std::vector<int>{40, 64, 128, 129}
                                               : std::vector<int>{40, 41, 63, 64, 65, 100, 127, 128, 129,
                                                                  160, 161, 200, 201, 224, 225, 321};
  orders.insert(orders.end(), larger.begin(), larger.end());
  return orders;
}

// One batch factored in place (tight column-major, the reference) and out of place from each source
// layout into an output with ldl = n + pad and a gap between the factors; failures at known
// columns (breakage_for) included.
template <class T>
void run_out_of_place_case(tk::BatchUplo uplo, int n, int batch, int pad, std::mt19937_64& rng,
                           const tk::BatchedOptions& opts = {}) {
  const long long nn = static_cast<long long>(n) * n;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, n, nn, batch, rng);
  DeviceArray<T> dRef(hb.data);
  DeviceArray<int> dRefInfo(poisoned_info(batch));
  tk::potrf_batched<T>(uplo, n, dRef.get(), n, nn, batch, dRefInfo.get(), nullptr, opts);
  synchronize();
  const std::vector<T> in_place = dRef.download();
  const std::vector<int> in_place_info = dRefInfo.download();
  std::ostringstream label;
  label << uplo_name(uplo) << " n=" << n << " batch=" << batch << " ldl=n+" << pad;
  check_factors(hb, in_place, in_place_info, "in place, " + label.str(), BackwardError::skip);
  if (::testing::Test::HasFatalFailure()) return;

  const int ldl = n + pad;
  const long long strideL = static_cast<long long>(ldl) * n + (pad ? 3 : 0);
  const std::vector<T> before(static_cast<std::size_t>(strideL) * batch + 2, poison<T>());
  for (const SourceLayout& layout : source_layouts(n)) {
    const std::string where = std::string(layout.name) + " " + label.str();
    const std::vector<T> source = source_for(hb, layout);
    DeviceArray<T> dSource(source);
    DeviceArray<T> dL(before);
    DeviceArray<int> dinfo(poisoned_info(batch));
    tk::potrf_batched<T>(uplo, n, dSource.get() + layout.base, layout.rs, layout.cs, layout.stride, dL.get(), ldl,
                         strideL, batch, dinfo.get(), nullptr, opts);
    synchronize();
    EXPECT_EQ(dinfo.download(), in_place_info) << where << ": info";
    check_out_of_place(hb, in_place, before, dL.download(), ldl, strideL, where);
    const std::vector<T> source_after = dSource.download();
    std::size_t changed = 0;
    for (std::size_t e = 0; e < source.size(); ++e) changed += !same_bits(source[e], source_after[e]);
    EXPECT_EQ(changed, 0u) << where << ": the source changed";
    if (::testing::Test::HasFailure()) return;
  }
}

TYPED_TEST(BatchedPotrfOutOfPlace, EveryLayoutMatchesTheInPlaceFactorization) {
  for (int n : out_of_place_orders())
    for (tk::BatchUplo uplo : kUplos)
      for (int pad : {0, 2}) {
        run_out_of_place_case<TypeParam>(uplo, n, n > 128 ? 13 : 37, pad, this->rng);
        if (this->HasFailure()) return;
      }
}

// One block's matrices and a partial last block, for every thread-block size of the register
// kernel and every built-in panel shape named explicitly.
TYPED_TEST(BatchedPotrfOutOfPlace, KernelShapes) {
  for (int threads : {32, 64, 128, 256})
    for (int n : {1, 4, 7, 16, 32}) {
      tk::BatchedOptions opts;
      opts.threads = threads;
      run_out_of_place_case<TypeParam>(tk::BatchUplo::upper, n, 75, 0, this->rng, opts);
      if (this->HasFailure()) return;
    }
  // The built-in shapes for many matrices per SM (batch 0) and for few (one matrix, one SM).
  for (int n : {40, 100, 300, 400})
    for (int few : {0, 1}) {
      tk::BatchedOptions opts;
      const tk::PanelShape shape = tk::potrf_batched_default_shape(n, static_cast<int>(sizeof(TypeParam)), false, few, few);
      opts.panel_width = shape.panel_width;
      opts.threads = shape.threads;
      opts.rows_per_thread = shape.rows_per_thread;
      opts.update_width = shape.update_width;
      run_out_of_place_case<TypeParam>(tk::BatchUplo::lower, n, 13, 1, this->rng, opts);
      if (this->HasFailure()) return;
    }
}

// The in-place layout through the out-of-place form: L == A, rowStride 1, colStride lda. The
// result is the in-place factorization with zeros in the opposite triangle; rows past n kept.
TYPED_TEST(BatchedPotrfOutOfPlace, SourceEqualToOutputFactorsInPlace) {
  using T = TypeParam;
  for (int n : {1, 6, 17, 32, 33, 64, 128})
    for (tk::BatchUplo uplo : kUplos) {
      const int lda = n + 1;
      const long long stride = static_cast<long long>(lda) * n + 2;
      const int batch = 37;
      HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, stride, batch, this->rng);
      DeviceArray<T> dRef(hb.data), dA(hb.data);
      DeviceArray<int> dRefInfo(poisoned_info(batch)), dinfo(poisoned_info(batch));
      tk::potrf_batched<T>(uplo, n, dRef.get(), lda, stride, batch, dRefInfo.get(), nullptr);
      tk::potrf_batched<T>(uplo, n, static_cast<const T*>(dA.get()), 1, lda, stride, dA.get(), lda, stride, batch,
                           dinfo.get(), nullptr);
      synchronize();
      const std::string where = std::string("in place through the out-of-place form, ") + uplo_name(uplo) +
                                " n=" + std::to_string(n);
      EXPECT_EQ(dinfo.download(), dRefInfo.download()) << where;
      // Outside the triangles: zeros in the opposite ones, the rest (rows past n, gaps) as uploaded.
      std::vector<T> before = hb.data;
      check_out_of_place(hb, dRef.download(), before, dA.download(), lda, stride, where);
      if (this->HasFailure()) return;
    }
}

TYPED_TEST(BatchedPotrfOutOfPlace, EmptyWorkAndArguments) {
  using T = TypeParam;
  DeviceArray<T> dA(64), dL(64);
  DeviceArray<int> dinfo(poisoned_info(3));
  const auto lower = tk::BatchUplo::lower;
  tk::potrf_batched<T>(lower, 0, static_cast<const T*>(dA.get()), 1, 1, 1, dL.get(), 1, 1, 3, dinfo.get(), nullptr);
  synchronize();
  EXPECT_EQ(dinfo.download(), std::vector<int>(3, 0));
  const T* A = dA.get();
  auto position = [](auto&& call) {
    try {
      call();
    } catch (const tessera::InvalidArgument& e) {
      return e.position();
    }
    return 0;
  };
  EXPECT_EQ(position([&] { tk::potrf_batched<T>(lower, -1, A, 1, 1, 1, dL.get(), 1, 1, 1, dinfo.get(), nullptr); }),
            2);
  EXPECT_EQ(position([&] { tk::potrf_batched<T>(lower, 4, A, 4, 1, 16, dL.get(), 3, 16, 1, dinfo.get(), nullptr); }),
            8);
  EXPECT_EQ(position([&] { tk::potrf_batched<T>(lower, 4, A, 4, 1, 16, dL.get(), 4, 8, 2, dinfo.get(), nullptr); }),
            9);
  EXPECT_EQ(position([&] { tk::potrf_batched<T>(lower, 4, A, 4, 1, 16, dL.get(), 4, 16, 2, nullptr, nullptr); }),
            11);
  // Out of place only the built-in panel shapes are compiled in.
  tk::BatchedOptions other_shape;
  other_shape.panel_width = 8;
  other_shape.threads = 64;
  other_shape.rows_per_thread = 1;
  other_shape.update_width = 16;
  EXPECT_THROW(tk::potrf_batched<T>(lower, 40, A, 40, 1, 1600, dL.get(), 40, 1600, 1, dinfo.get(), nullptr,
                                    other_shape),
               tessera::InvalidArgument);
}

// ---- interleaved layout ---------------------------------------------------------------------

template <class T>
void run_interleaved_case(tk::BatchUplo uplo, int n, int batch, std::mt19937_64& rng,
                          const tk::BatchedOptions& opts) {
  const long long nn = static_cast<long long>(n) * n;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, n, nn, batch, rng);
  DeviceArray<T> dA(hb.data);
  // Interleaved buffer poisoned with a sentinel: the padding of the last chunk must keep it.
  const long long ni = tk::interleaved_elements(n, batch);
  const T sentinel = static_cast<T>(-12345.5);
  DeviceArray<T> dI(std::vector<T>(ni, sentinel));
  DeviceArray<int> dinfo(poisoned_info(batch));
  tk::interleave_batched<T>(n, dA.get(), n, nn, batch, dI.get(), nullptr);
  tk::potrf_batched_interleaved<T>(uplo, n, dI.get(), batch, dinfo.get(), nullptr, opts);
  DeviceArray<T> dOut(std::vector<T>(hb.data.size(), poison<T>()));
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
  check_factors(hb, dOut.download(), dinfo.download(), where.str(), BackwardError::check);
}

TYPED_TEST(BatchedPotrfInterleaved, RoundTripKeepsEveryElement) {
  using T = TypeParam;
  for (int n : {1, 3, 8, 17, 32, 45}) {
    const int batch = 70;
    const long long nn = static_cast<long long>(n) * n;
    std::vector<T> host(static_cast<std::size_t>(nn) * batch);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (T& v : host) v = static_cast<T>(dist(this->rng));
    DeviceArray<T> dA(host);
    DeviceArray<T> dI(tk::interleaved_elements(n, batch));
    DeviceArray<T> dB(host.size());
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
  vb.hb = build_batch<T>(uplo_char(uplo), vb.orders, vb.lds, vb.offsets, static_cast<std::size_t>(at) + 3, {},
                         rng, spoil);
  return vb;
}

template <class T>
void run_variable_case(tk::BatchUplo uplo, int max_n, int extra_bound, int batch, std::mt19937_64& rng,
                       const tk::BatchedOptions& opts = {}) {
  VariableBatch<T> vb = variable_batch<T>(uplo, max_n, batch, rng);
  DeviceArray<T> dA(vb.hb.data);
  DeviceArray<int> dn(vb.orders), dld(vb.lds), dinfo(poisoned_info(batch));
  DeviceArray<long long> doff(vb.offsets);
  tk::potrf_vbatched<T>(uplo, dn.get(), max_n + extra_bound, dA.get(), doff.get(), dld.get(), batch, dinfo.get(),
                        nullptr, opts);
  synchronize();
  std::ostringstream where;
  where << "vbatched " << uplo_name(uplo) << " max_n=" << max_n << "+" << extra_bound << " batch=" << batch
        << (opts.order_classes ? "" : " (one class)");
  check_factors(vb.hb, dA.download(), dinfo.download(), where.str(), BackwardError::check);
}

TYPED_TEST(BatchedPotrfVariable, MixedOrdersIncludingZeroAndOne) {
  using T = TypeParam;
  const int batch = quick_mode() ? 24 : 60;
  // 20: in classes of orders (with the loose bound, 27: in one class).
  const std::vector<int> bounds = quick_mode() ? std::vector<int>{1, 8, 20, 32, 100}
                                               : std::vector<int>{1, 8, 20, 32, 33, 100, 300};
  for (int max_n : bounds)
    for (tk::BatchUplo uplo : kUplos)
      for (int extra_bound : {0, 7}) {  // max_n may be a loose bound
        run_variable_case<T>(uplo, max_n, extra_bound, batch, this->rng);
        if (this->HasFatalFailure()) return;
      }
}

// Enough matrices for several blocks of the pass that splits them into classes of orders, and
// every class full; a loose bound puts every order above 32 into the panel kernel's last class.
// The same batches with the orders left in one class.
TYPED_TEST(BatchedPotrfVariable, ManyMatricesInClassesOfOrders) {
  using T = TypeParam;
  const int batch = quick_mode() ? 2500 : 5000;
  for (int max_n : {40, 90})
    for (tk::BatchUplo uplo : kUplos)
      for (int extra_bound : {0, 1500})
        for (bool order_classes : {true, false}) {
          tk::BatchedOptions opts;
          opts.order_classes = order_classes;
          run_variable_case<T>(uplo, max_n, extra_bound, batch, this->rng, opts);
          if (this->HasFatalFailure()) return;
        }
}

// A matrix whose order is negative (as the device API's size screening marks one it refuses) is
// skipped: its info and its memory stay as they were, in one class of orders and in several.
TYPED_TEST(BatchedPotrfVariable, SkipsMatricesOfNegativeOrder) {
  using T = TypeParam;
  const int batch = quick_mode() ? 1500 : 3000;
  for (int max_n : {20, 90})
    for (tk::BatchUplo uplo : kUplos) {
      VariableBatch<T> vb = variable_batch<T>(uplo, max_n, batch, this->rng);
      std::vector<int> orders = vb.orders;
      for (int k = 5; k < batch; k += 7) {
        orders[k] = -1;
        vb.hb.members[k].expected_info = kPoisonedInfo;
      }
      DeviceArray<T> dA(vb.hb.data);
      DeviceArray<int> dn(orders), dld(vb.lds), dinfo(poisoned_info(batch));
      DeviceArray<long long> doff(vb.offsets);
      tk::potrf_vbatched<T>(uplo, dn.get(), max_n, dA.get(), doff.get(), dld.get(), batch, dinfo.get(), nullptr);
      synchronize();
      const std::vector<T> out = dA.download();
      const std::string where =
          std::string("vbatched with skipped matrices, ") + uplo_name(uplo) + " max_n=" + std::to_string(max_n);
      check_factors(vb.hb, out, dinfo.download(), where, BackwardError::check);
      if (this->HasFatalFailure()) return;
      for (int k = 5; k < batch; k += 7) {
        const BatchMember& m = vb.hb.members[k];
        const long long end = m.n == 0 ? m.offset : m.offset + static_cast<long long>(m.ld) * (m.n - 1) + m.n;
        for (long long e = m.offset; e < end; ++e)
          ASSERT_TRUE(same_bits(out[e], vb.hb.data[e])) << where << ": skipped matrix " << k << " changed";
      }
    }
}

// ---- solves ---------------------------------------------------------------------------------

template <class T>
void run_solve_case(tk::BatchUplo uplo, int n, int nrhs, int batch, bool pass_info, std::mt19937_64& rng,
                    tk::SolveKernel kernel = tk::SolveKernel::automatic) {
  const int lda = n + 1, ldb = n + 2;
  const long long strideA = static_cast<long long>(lda) * n + 3;
  const long long strideB = static_cast<long long>(ldb) * nrhs + 1;
  HostBatch<T> hb = uniform_batch<T>(uplo, n, lda, strideA, batch, rng, pass_info);
  std::vector<long long> boff(batch);
  for (int k = 0; k < batch; ++k) boff[k] = k * strideB;
  const HostRhs<T> rhs = build_rhs(hb, nrhs, std::vector<int>(batch, ldb), boff, strideB * batch + 2,
                                   std::vector<char>(batch, 1), rng);
  DeviceArray<T> dA(hb.data), dB(rhs.data);
  DeviceArray<int> dinfo(poisoned_info(batch));
  tk::potrf_batched<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), nullptr);
  tk::BatchedSolveOptions opts;
  opts.kernel = kernel;
  tk::potrs_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch,
                       pass_info ? dinfo.get() : nullptr, nullptr, opts);
  synchronize();
  std::ostringstream where;
  where << "potrs " << uplo_name(uplo) << " n=" << n << " nrhs=" << nrhs << (pass_info ? "" : " (no info)")
        << (kernel == tk::SolveKernel::staged     ? " staged"
            : kernel == tk::SolveKernel::streamed ? " streamed"
            : kernel == tk::SolveKernel::lanes    ? " lanes"
                                                  : "");
  check_solutions(hb, rhs, dB.download(), expected_infos(hb), where.str());
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

// The factor staged in shared memory and streamed from global memory, each forced, at orders
// around the register blocks' edges; nine right-hand sides span two staged blocks per matrix.
// Where the staged kernel cannot take an order (its factor larger than a block's shared memory)
// the automatic choice runs.
TYPED_TEST(BatchedPotrs, StagedAndStreamedFactors) {
  using T = TypeParam;
  const std::vector<int> orders = quick_mode() ? std::vector<int>{33, 64, 97, 129}
                                               : std::vector<int>{33, 40, 63, 64, 65, 96, 97, 127, 128, 129, 160, 200};
  for (int n : orders)
    for (tk::BatchUplo uplo : kUplos)
      for (int nrhs : {1, 9})
        for (tk::SolveKernel kernel : {tk::SolveKernel::staged, tk::SolveKernel::streamed}) {
          run_solve_case<T>(uplo, n, nrhs, 7, true, this->rng, kernel);
          if (this->HasFatalFailure()) return;
        }
  for (tk::BatchUplo uplo : kUplos) {
    run_solve_case<T>(uplo, 77, 2, 5, false, this->rng, tk::SolveKernel::staged);
    if (this->HasFatalFailure()) return;
  }
}

// A thread per right-hand side, forced: orders inside one register block of rows, on its edges
// (16 rows a block) and past it, one to 70 right-hand sides (33 and 70: blocks of 64 columns, one
// partly filled; 70 spans two blocks a matrix), failed matrices skipped, and without info. Where
// the factor and the columns do not fit a block's shared memory the automatic choice runs.
TYPED_TEST(BatchedPotrs, LaneSolves) {
  using T = TypeParam;
  const std::vector<int> orders =
      quick_mode() ? std::vector<int>{1, 15, 16, 17, 64, 97, 160}
                   : std::vector<int>{1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 48, 64, 65, 97, 127, 128, 129, 160, 200};
  for (int n : orders)
    for (tk::BatchUplo uplo : kUplos)
      for (int nrhs : {1, 5, 33, 70}) {
        run_solve_case<T>(uplo, n, nrhs, 6, true, this->rng, tk::SolveKernel::lanes);
        if (this->HasFatalFailure()) return;
      }
  for (tk::BatchUplo uplo : kUplos) {
    run_solve_case<T>(uplo, 37, 9, 5, false, this->rng, tk::SolveKernel::lanes);
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
      for (int nrhs : {1, 2, 40}) {
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
        const HostRhs<T> rhs = build_rhs(vb.hb, nrhs, bld, boff, at + 1, std::vector<char>(batch, 1), this->rng);
        DeviceArray<T> dA(vb.hb.data), dB(rhs.data);
        DeviceArray<int> dn(vb.orders), dld(vb.lds), dldb(bld), dinfo(poisoned_info(batch));
        DeviceArray<long long> doff(vb.offsets), dboff(boff);
        tk::potrf_vbatched<T>(uplo, dn.get(), max_n, dA.get(), doff.get(), dld.get(), batch,
                              dinfo.get(), nullptr);
        tk::BatchedSolveOptions opts;  // many right-hand sides: a thread per right-hand side where it fits
        if (nrhs > 2) opts.kernel = tk::SolveKernel::lanes;
        tk::potrs_vbatched<T>(uplo, dn.get(), max_n, nrhs, dA.get(), doff.get(), dld.get(), dB.get(), dboff.get(),
                              dldb.get(), batch, dinfo.get(), nullptr, opts);
        synchronize();
        std::ostringstream where;
        where << "potrs_vbatched " << uplo_name(uplo) << " max_n=" << max_n << " nrhs=" << nrhs;
        check_solutions(vb.hb, rhs, dB.download(), expected_infos(vb.hb), where.str());
        if (this->HasFatalFailure()) return;
      }
}

// ---- argument checks ------------------------------------------------------------------------

TYPED_TEST(BatchedArguments, InvalidArgumentsThrow) {
  using T = TypeParam;
  DeviceArray<T> dA(64);
  DeviceArray<int> dinfo(4);
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
  EXPECT_THROW(tk::potrf_batched_columns<T>(lower, 4, 5, dA.get(), 4, 16, 1, dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrf_batched_columns<T>(lower, 4, -1, dA.get(), 4, 16, 1, dinfo.get(), nullptr),
               tessera::InvalidArgument);
  EXPECT_THROW(tk::potrf_batched_columns<T>(lower, 4, 2, dA.get(), 3, 16, 1, dinfo.get(), nullptr),
               tessera::InvalidArgument);
}

}  // namespace
