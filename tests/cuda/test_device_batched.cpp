// The device-resident batched API (tessera/device.hpp) on a GPU, through libtessera's exported
// symbols, against LAPACKE: strided, pointer-array and variable-size batches, float and double,
// lower and upper, orders 1, 7, 31, 32, 33, 64, 127 and 200, batches of 1 and 100 with lda > n.
// The batches of 100 hold matrices that fail at their first, a middle and their last column;
// their info must say so and the other matrices must be unaffected. Every element outside the
// referenced triangles (other triangle, rows past n, gaps between matrices) is NaN and must come
// back bit-identical. Every test runs on a stream created with cudaStreamNonBlocking: inputs are
// copied with cudaMemcpyAsync on it right before the call, and results read after synchronising
// that stream only. The argument checks, which need no GPU, are in tests/test_device_api.cpp.
// Skipped where no CUDA device is present.
#include <cblas.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernel_test_support.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/tessera.h"

namespace {

using tessera::Uplo;
using namespace tessera::test;  // kernel_test_support.hpp
namespace device = tessera::device;

constexpr int kOrders[] = {1, 7, 31, 32, 33, 64, 127, 200};
constexpr int kBatches[] = {1, 100};
constexpr Uplo kUplos[] = {Uplo::lower, Uplo::upper};
constexpr int kPoisonedInfo = -77;

const char* uplo_name(Uplo uplo) { return uplo == Uplo::lower ? "lower" : "upper"; }
char uplo_char(Uplo uplo) { return uplo == Uplo::lower ? 'L' : 'U'; }

// ---- device and pinned memory -----------------------------------------------------------------------

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    cuda_ok(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  // Enqueued on `stream`, right before the call under test.
  void upload(const std::vector<T>& host, cudaStream_t stream) {
    cuda_ok(cudaMemcpyAsync(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream), "upload");
  }
  // After everything enqueued on `stream`, and only that stream.
  std::vector<T> download(cudaStream_t stream) const {
    std::vector<T> host(count_);
    cuda_ok(cudaMemcpyAsync(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost, stream), "download");
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

// Page-locked host memory, so that a cudaMemcpyAsync really is asynchronous.
template <class T>
class PinnedArray {
 public:
  explicit PinnedArray(const std::vector<T>& values) : count_(values.size()) {
    cuda_ok(cudaMallocHost(&ptr_, std::max<std::size_t>(count_, 1) * sizeof(T)), "cudaMallocHost");
    std::copy(values.begin(), values.end(), ptr_);
  }
  ~PinnedArray() { cudaFreeHost(ptr_); }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;

  T* get() const { return ptr_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  std::vector<T> values() const { return std::vector<T>(ptr_, ptr_ + count_); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

std::vector<int> poisoned_info(int batch) { return std::vector<int>(batch, kPoisonedInfo); }

// Device pointers to the matrices of one device array, as a device array of pointers.
template <class T>
std::vector<T*> pointers_into(T* base, const std::vector<long long>& offsets) {
  std::vector<T*> pointers;
  for (long long offset : offsets) pointers.push_back(base + offset);
  return pointers;
}

// ---- LAPACKE ------------------------------------------------------------------------------------------

int lapack_potrf(char uplo, int n, float* a, int lda) { return LAPACKE_spotrf(LAPACK_COL_MAJOR, uplo, n, a, lda); }
int lapack_potrf(char uplo, int n, double* a, int lda) { return LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo, n, a, lda); }
int lapack_potrs(char uplo, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
  return LAPACKE_spotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}
int lapack_potrs(char uplo, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
  return LAPACKE_dpotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}

// ---- test matrices --------------------------------------------------------------------------------------

// Random SPD matrix, full and symmetric, rounded to T: G G^T / n + 0.25 * ones + 0.5 * I with G
// uniform in [-1, 1] (condition number about n / 2).
template <class T>
std::vector<double> random_spd(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> g(static_cast<std::size_t>(n) * n), a(g.size());
  for (double& x : g) x = dist(rng);
  if (n > 0) cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, g.data(), n, 0.0, a.data(), n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = static_cast<T>(a[i + static_cast<std::size_t>(j) * n] + 0.25 + (i == j ? 0.5 : 0.0));
      a[i + static_cast<std::size_t>(j) * n] = a[j + static_cast<std::size_t>(i) * n] = v;
    }
  return a;
}

// Where a member of a batch of 100 stops being positive definite.
enum class Failure { none, first_column, middle_column, last_column };

Failure failure_at(int k, int batch) {
  if (batch < 3) return Failure::none;
  if (k == 1) return Failure::first_column;
  if (k == batch / 2) return Failure::middle_column;
  if (k == batch - 1) return Failure::last_column;
  return Failure::none;
}

// Spoils the full matrix a of order n >= 1; returns the info its factorization must report.
int spoil(std::vector<double>& a, int n, Failure failure) {
  const auto diagonal = [&](int j) -> double& { return a[j + static_cast<std::size_t>(j) * n]; };
  switch (failure) {
    case Failure::first_column:
      diagonal(0) = -1.0;
      return 1;
    case Failure::middle_column:
      diagonal(n / 2) = -1.0;  // pivot -1 - |L(m, 0:m)|^2 < 0
      return n / 2 + 1;
    case Failure::last_column:
      diagonal(n - 1) = 0.0;  // pivot 0 - |L(n-1, 0:n-1)|^2 <= 0
      return n;
    default:
      return 0;
  }
}

// Elements a column-major rows x cols block with leading dimension ld spans.
long long span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : static_cast<long long>(ld) * (cols - 1) + rows;
}

// Offsets of blocks of the given spans, laid out in a shuffled order with `gap` elements around
// each, so that the pointers to them are not in increasing order. `total` gets the array's size.
std::vector<long long> scattered_offsets(const std::vector<long long>& spans, int gap, std::mt19937_64& rng,
                                         std::size_t& total) {
  std::vector<int> order(spans.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<long long> offsets(spans.size());
  long long at = gap;
  for (int k : order) {
    offsets[k] = at;
    at += spans[k] + gap;
  }
  total = static_cast<std::size_t>(at);
  return offsets;
}

std::vector<long long> strided_offsets(long long stride, int batch, long long last_span, std::size_t& total) {
  std::vector<long long> offsets(batch);
  for (int k = 0; k < batch; ++k) offsets[k] = k * stride;
  total = static_cast<std::size_t>(stride * (batch - 1) + last_span + 3);
  return offsets;
}

bool in_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; }

// Matrix k of a batch: its order and place, the full matrix as uploaded, what must come back.
struct Member {
  int n = 0;
  int ld = 1;
  long long offset = 0;
  int expected_info = 0;      // < 0: sizes the call must refuse (the matrix stays as it is)
  std::vector<double> a;      // full symmetric matrix as uploaded (spoiled where it must fail)
  std::vector<double> clean;  // the same before spoiling
};

// A whole batch in one array: NaN outside the referenced triangles and between the matrices.
template <class T>
struct HostBatch {
  Uplo uplo = Uplo::lower;
  std::vector<Member> members;
  std::vector<T> data;
  std::vector<char> referenced;

  std::vector<long long> offsets() const {
    std::vector<long long> o;
    for (const Member& m : members) o.push_back(m.offset);
    return o;
  }
  int batch() const { return static_cast<int>(members.size()); }
};

// refused_info[k] < 0 marks a member whose sizes the call refuses: it keeps NaN and that info.
template <class T>
HostBatch<T> build_batch(Uplo uplo, const std::vector<int>& orders, const std::vector<int>& lds,
                         const std::vector<long long>& offsets, std::size_t total, const std::vector<int>& refused_info,
                         std::mt19937_64& rng) {
  HostBatch<T> hb;
  hb.uplo = uplo;
  hb.data.assign(total, poison<T>());
  hb.referenced.assign(total, 0);
  const int batch = static_cast<int>(orders.size());
  for (int k = 0; k < batch; ++k) {
    Member m;
    m.n = orders[k];
    m.ld = lds[k];
    m.offset = offsets[k];
    if (!refused_info.empty() && refused_info[k] < 0) {
      m.expected_info = refused_info[k];
      hb.members.push_back(std::move(m));
      continue;
    }
    m.a = random_spd<T>(m.n, rng);
    m.clean = m.a;
    if (m.n > 0) m.expected_info = spoil(m.a, m.n, failure_at(k, batch));
    for (int j = 0; j < m.n; ++j)
      for (int i = 0; i < m.n; ++i)
        if (in_triangle(uplo, i, j)) {
          const std::size_t at = m.offset + static_cast<std::size_t>(j) * m.ld + i;
          hb.data[at] = static_cast<T>(m.a[i + static_cast<std::size_t>(j) * m.n]);
          hb.referenced[at] = 1;
        }
    hb.members.push_back(std::move(m));
  }
  return hb;
}

// n x n matrices, lda = ld, at k * stride.
template <class T>
HostBatch<T> strided_batch(Uplo uplo, int n, int ld, long long stride, int batch, std::mt19937_64& rng) {
  std::size_t total = 0;
  const std::vector<long long> offsets = strided_offsets(stride, batch, span(n, n, ld), total);
  return build_batch<T>(uplo, std::vector<int>(batch, n), std::vector<int>(batch, ld), offsets, total, {}, rng);
}

// n x n matrices, lda = ld, scattered in a shuffled order (for arrays of pointers).
template <class T>
HostBatch<T> scattered_batch(Uplo uplo, int n, int ld, int batch, std::mt19937_64& rng) {
  std::size_t total = 0;
  const std::vector<long long> offsets =
      scattered_offsets(std::vector<long long>(batch, span(n, n, ld)), 5, rng, total);
  return build_batch<T>(uplo, std::vector<int>(batch, n), std::vector<int>(batch, ld), offsets, total, {}, rng);
}

// ---- checks ----------------------------------------------------------------------------------------------

// Factor entry L(i, j), i >= j, as stored (upper storage holds L^T).
template <class T>
double factor_at(const std::vector<T>& out, const Member& m, Uplo uplo, int i, int j) {
  const std::size_t at = uplo == Uplo::lower ? m.offset + static_cast<std::size_t>(j) * m.ld + i
                                             : m.offset + static_cast<std::size_t>(i) * m.ld + j;
  return static_cast<double>(out[at]);
}

// info, then the part of the factor that must be final (all of it, or the leading (info-1) x
// (info-1) block of a matrix that failed, as in LAPACK) against LAPACKE's factor of the unspoiled
// matrix, to 50 n eps max|L|; the diagonal must be positive.
template <class T>
void check_member(const HostBatch<T>& hb, int k, const std::vector<T>& out, int info, const std::string& where) {
  const Member& m = hb.members[k];
  ASSERT_EQ(info, m.expected_info) << where << ": info of matrix " << k << " (n = " << m.n << ")";
  if (m.expected_info < 0) return;
  const int n = m.n;
  const int good = m.expected_info == 0 ? n : m.expected_info - 1;
  if (good == 0) return;
  std::vector<T> ref(static_cast<std::size_t>(n) * n);
  for (std::size_t e = 0; e < ref.size(); ++e) ref[e] = static_cast<T>(m.clean[e]);
  ASSERT_EQ(lapack_potrf('L', n, ref.data(), n), 0) << where << ": reference factorization of matrix " << k;
  double lmax = 1.0;
  for (int j = 0; j < good; ++j)
    for (int i = j; i < good; ++i)
      lmax = std::max(lmax, std::fabs(static_cast<double>(ref[i + static_cast<std::size_t>(j) * n])));
  const double tolerance = 50.0 * n * eps<T>() * lmax;
  int bad = 0;
  std::ostringstream first;
  for (int j = 0; j < good; ++j)
    for (int i = j; i < good; ++i) {
      const double l = factor_at(out, m, hb.uplo, i, j);
      const double r = ref[i + static_cast<std::size_t>(j) * n];
      if (!(std::fabs(l - r) <= tolerance) || (i == j && !(l > 0))) {
        if (!bad++)
          first << "L(" << i << ", " << j << ") = " << l << ", LAPACKE " << r << " (tolerance " << tolerance << ")";
      }
    }
  EXPECT_EQ(bad, 0) << where << ": matrix " << k << " (n = " << n << ", info " << info << "): " << bad
                    << " wrong entries, first " << first.str();
}

// Everything outside the referenced triangles bit-identical to the input.
template <class T>
void check_untouched(const HostBatch<T>& hb, const std::vector<T>& out, const std::string& where) {
  std::size_t bad = 0, first = 0;
  for (std::size_t e = 0; e < out.size(); ++e)
    if (!hb.referenced[e] && !same_bits(out[e], hb.data[e]))
      if (!bad++) first = e;
  EXPECT_EQ(bad, 0u) << where << ": " << bad << " elements outside the referenced triangles changed, first at "
                     << first;
}

template <class T>
void check_factors(const HostBatch<T>& hb, const std::vector<T>& out, const std::vector<int>& info,
                   const std::string& where) {
  ASSERT_EQ(info.size(), hb.members.size());
  for (int k = 0; k < hb.batch(); ++k) {
    check_member(hb, k, out, info[k], where);
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_untouched(hb, out, where);
}

// Right-hand sides: B_k (n_k x nrhs, leading dimension ld[k]) at offset[k] of one array, random
// where a system is solved and NaN everywhere else.
template <class T>
struct HostRhs {
  int nrhs = 0;
  std::vector<int> ld;
  std::vector<long long> offset;
  std::vector<char> system;  // member k has a system to solve (sizes valid)
  std::vector<T> data;
};

template <class T>
HostRhs<T> build_rhs(const HostBatch<T>& hb, int nrhs, const std::vector<int>& ld,
                     const std::vector<long long>& offset, std::size_t total, const std::vector<char>& system,
                     std::mt19937_64& rng) {
  HostRhs<T> r{nrhs, ld, offset, system, std::vector<T>(total, poison<T>())};
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int k = 0; k < hb.batch(); ++k)
    if (system[k])
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < hb.members[k].n; ++i)
          r.data[offset[k] + static_cast<std::size_t>(c) * ld[k] + i] = static_cast<T>(dist(rng));
  return r;
}

// Strided right-hand sides (ldb = n + 1, gaps between them) for every member.
template <class T>
HostRhs<T> strided_rhs(const HostBatch<T>& hb, int nrhs, long long& strideB, std::mt19937_64& rng) {
  const int n = hb.members.front().n;
  const int ldb = n + 1;
  strideB = static_cast<long long>(ldb) * nrhs + 2;
  std::size_t total = 0;
  const std::vector<long long> offsets = strided_offsets(strideB, hb.batch(), span(n, nrhs, ldb), total);
  return build_rhs(hb, nrhs, std::vector<int>(hb.batch(), ldb), offsets, total, std::vector<char>(hb.batch(), 1),
                   rng);
}

// Scattered right-hand sides (ldb = n + 2) for every member.
template <class T>
HostRhs<T> scattered_rhs(const HostBatch<T>& hb, int nrhs, std::mt19937_64& rng) {
  const int n = hb.members.front().n;
  std::size_t total = 0;
  const std::vector<long long> offsets =
      scattered_offsets(std::vector<long long>(hb.batch(), span(n, nrhs, n + 2)), 3, rng, total);
  return build_rhs(hb, nrhs, std::vector<int>(hb.batch(), n + 2), offsets, total, std::vector<char>(hb.batch(), 1),
                   rng);
}

// A solved system: backward error ||A x - b|| / (||A|| ||x|| + ||b||) <= 30 n eps per column (max
// norms) and agreement with LAPACKE potrs. A member that failed (info[k] != 0) or has no system
// keeps its B bit-identical, and so does every element outside the systems.
template <class T>
void check_solutions(const HostBatch<T>& hb, const HostRhs<T>& rhs, const std::vector<T>& b_out,
                     const std::vector<int>& info, const std::string& where) {
  std::vector<char> solved_element(rhs.data.size(), 0);
  const int nrhs = rhs.nrhs;
  for (int k = 0; k < hb.batch(); ++k) {
    const Member& m = hb.members[k];
    const int n = m.n;
    const auto at = [&](int i, int c) { return rhs.offset[k] + static_cast<std::size_t>(c) * rhs.ld[k] + i; };
    if (!rhs.system[k] || n == 0) continue;
    if (info[k] != 0) {
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i)
          ASSERT_TRUE(same_bits(b_out[at(i, c)], rhs.data[at(i, c)]))
              << where << ": B of failed matrix " << k << " changed at (" << i << ", " << c << ")";
      continue;
    }
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) solved_element[at(i, c)] = 1;
    std::vector<T> f(static_cast<std::size_t>(n) * n), x(static_cast<std::size_t>(n) * nrhs);
    for (std::size_t e = 0; e < f.size(); ++e) f[e] = static_cast<T>(m.a[e]);
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) x[i + static_cast<std::size_t>(c) * n] = rhs.data[at(i, c)];
    ASSERT_EQ(lapack_potrf(uplo_char(hb.uplo), n, f.data(), n), 0) << where << ": reference of matrix " << k;
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
          ax += m.a[i + static_cast<std::size_t>(j) * n] * static_cast<double>(b_out[at(j, c)]);
        const double bi = rhs.data[at(i, c)], xi = b_out[at(i, c)], ri = x[i + static_cast<std::size_t>(c) * n];
        rnorm = std::max(rnorm, std::fabs(ax - bi));
        xnorm = std::max(xnorm, std::fabs(xi));
        bnorm = std::max(bnorm, std::fabs(bi));
        dnorm = std::max(dnorm, std::fabs(xi - ri));
        refnorm = std::max(refnorm, std::fabs(ri));
      }
      const double backward = rnorm / (anorm * xnorm + bnorm);
      ASSERT_LE(backward, 30.0 * n * eps<T>()) << where << ": matrix " << k << " rhs " << c << " (n = " << n << ")";
      ASSERT_LE(dnorm, 1e3 * n * eps<T>() * std::max(refnorm, 1.0))
          << where << ": matrix " << k << " rhs " << c << " differs from LAPACKE potrs";
    }
  }
  std::size_t changed = 0;
  for (std::size_t e = 0; e < rhs.data.size(); ++e)
    if (!solved_element[e] && !same_bits(rhs.data[e], b_out[e])) ++changed;
  EXPECT_EQ(changed, 0u) << where << ": elements of B outside the solved systems changed";
}

template <class T>
std::vector<int> expected_infos(const HostBatch<T>& hb) {
  std::vector<int> e;
  for (const Member& m : hb.members) e.push_back(m.expected_info);
  return e;
}

int failures(const std::vector<int>& info) {
  return static_cast<int>(std::count_if(info.begin(), info.end(), [](int v) { return v != 0; }));
}

std::string describe(const char* form, Uplo uplo, int n, int batch, int nrhs = 0) {
  std::ostringstream s;
  s << form << " " << uplo_name(uplo) << " n = " << n << " batch = " << batch;
  if (nrhs) s << " nrhs = " << nrhs;
  return s.str();
}

// ---- the C API, by precision ------------------------------------------------------------------------------

int c_potrf_ex(char u, int n, double* A, int lda, long long sA, int batch, int* info, void* s) {
  return tessera_dpotrf_batched_device_ex(u, n, A, lda, sA, batch, info, s);
}
int c_potrf_ex(char u, int n, float* A, int lda, long long sA, int batch, int* info, void* s) {
  return tessera_spotrf_batched_device_ex(u, n, A, lda, sA, batch, info, s);
}
int c_potrs_ex(char u, int n, int r, const double* A, int lda, long long sA, double* B, int ldb, long long sB,
               int batch, const int* info, void* s) {
  return tessera_dpotrs_batched_device_ex(u, n, r, A, lda, sA, B, ldb, sB, batch, info, s);
}
int c_potrs_ex(char u, int n, int r, const float* A, int lda, long long sA, float* B, int ldb, long long sB, int batch,
               const int* info, void* s) {
  return tessera_spotrs_batched_device_ex(u, n, r, A, lda, sA, B, ldb, sB, batch, info, s);
}
int c_posv_ex(char u, int n, int r, double* A, int lda, long long sA, double* B, int ldb, long long sB, int batch,
              int* info, void* s) {
  return tessera_dposv_batched_device_ex(u, n, r, A, lda, sA, B, ldb, sB, batch, info, s);
}
int c_posv_ex(char u, int n, int r, float* A, int lda, long long sA, float* B, int ldb, long long sB, int batch,
              int* info, void* s) {
  return tessera_sposv_batched_device_ex(u, n, r, A, lda, sA, B, ldb, sB, batch, info, s);
}
int c_potrf_checking(char u, int n, double* A, int lda, long long sA, int batch, int* host_info, void* s) {
  return tessera_dpotrf_batched_device(u, n, A, lda, sA, batch, host_info, s);
}
int c_potrf_checking(char u, int n, float* A, int lda, long long sA, int batch, int* host_info, void* s) {
  return tessera_spotrf_batched_device(u, n, A, lda, sA, batch, host_info, s);
}

// ---- fixture --------------------------------------------------------------------------------------------

template <class T>
class DeviceBatched : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = missing_gpu_reason();
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  void TearDown() override {
    if (stream) cudaStreamDestroy(stream);
  }

  cudaStream_t stream = nullptr;
  std::mt19937_64 rng{20261124};
};

using Precisions = ::testing::Types<float, double>;

#define DEVICE_TYPED_SUITE(Name)              \
  template <class T>                          \
  class Name : public DeviceBatched<T> {};    \
  TYPED_TEST_SUITE(Name, Precisions)

DEVICE_TYPED_SUITE(DeviceStrided);
DEVICE_TYPED_SUITE(DevicePointerArrays);
DEVICE_TYPED_SUITE(DeviceVariable);
DEVICE_TYPED_SUITE(DeviceCheckingForms);
DEVICE_TYPED_SUITE(DeviceZeroOppositeTriangle);
DEVICE_TYPED_SUITE(DeviceStream);
DEVICE_TYPED_SUITE(DeviceCApi);

// ---- strided ----------------------------------------------------------------------------------------------

template <class T>
void run_strided_potrf(Uplo uplo, int n, int lda, long long stride, int batch, cudaStream_t stream,
                       std::mt19937_64& rng, const std::string& where) {
  const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, stride, batch, rng);
  DeviceArray<T> dA(hb.data.size());
  DeviceArray<int> dinfo(batch);
  dA.upload(hb.data, stream);
  dinfo.upload(poisoned_info(batch), stream);
  device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, stride, batch, dinfo.get(), stream);
  check_factors(hb, dA.download(stream), dinfo.download(stream), where);
}

// lda > n with gaps between the matrices; and, for the batch of 100, the tight layout (lda = n,
// stride n * n), which the register kernel stages with 16-byte vectors.
TYPED_TEST(DeviceStrided, PotrfMatchesLapackWithFailuresAtKnownColumns) {
  using T = TypeParam;
  for (int n : kOrders)
    for (int batch : kBatches)
      for (Uplo uplo : kUplos) {
        const int lda = n + 3;
        run_strided_potrf<T>(uplo, n, lda, static_cast<long long>(lda) * n + 5, batch, this->stream, this->rng,
                             describe("strided potrf", uplo, n, batch));
        if (this->HasFatalFailure()) return;
        if (batch == 1) continue;
        run_strided_potrf<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->stream, this->rng,
                             describe("strided potrf, tight", uplo, n, batch));
        if (this->HasFatalFailure()) return;
      }
}

TYPED_TEST(DeviceStrided, PotrsAndPosvSolveAndSkipFailedMatrices) {
  using T = TypeParam;
  for (int n : kOrders)
    for (int batch : kBatches)
      for (Uplo uplo : kUplos)
        for (int nrhs : {1, 3}) {
          const int lda = n + 2;
          const long long strideA = static_cast<long long>(lda) * n + 1;
          const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
          long long strideB = 0;
          const HostRhs<T> rhs = strided_rhs(hb, nrhs, strideB, this->rng);
          const int ldb = rhs.ld.front();

          // potrf, then potrs with its info.
          DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
          DeviceArray<int> dinfo(batch);
          dA.upload(hb.data, this->stream);
          dB.upload(rhs.data, this->stream);
          dinfo.upload(poisoned_info(batch), this->stream);
          device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), this->stream);
          device::potrs_batched_ex<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch,
                                      dinfo.get(), this->stream);
          const std::vector<int> info = dinfo.download(this->stream);
          check_factors(hb, dA.download(this->stream), info, describe("strided potrf+potrs", uplo, n, batch, nrhs));
          check_solutions(hb, rhs, dB.download(this->stream), info, describe("strided potrs", uplo, n, batch, nrhs));
          if (this->HasFatalFailure()) return;

          // posv on fresh copies.
          dA.upload(hb.data, this->stream);
          dB.upload(rhs.data, this->stream);
          dinfo.upload(poisoned_info(batch), this->stream);
          device::posv_batched_ex<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch,
                                     dinfo.get(), this->stream);
          const std::vector<int> posv_info = dinfo.download(this->stream);
          check_factors(hb, dA.download(this->stream), posv_info, describe("strided posv", uplo, n, batch, nrhs));
          check_solutions(hb, rhs, dB.download(this->stream), posv_info,
                          describe("strided posv", uplo, n, batch, nrhs));
          if (this->HasFatalFailure()) return;
        }
}

// potrs with info = null solves every matrix (a batch without failures).
TYPED_TEST(DeviceStrided, PotrsWithoutInfoSolvesEveryMatrix) {
  using T = TypeParam;
  for (int n : {7, 64})
    for (Uplo uplo : kUplos) {
      const int batch = 2;  // failure_at spoils nothing below 3 matrices
      const int lda = n + 1;
      const long long strideA = static_cast<long long>(lda) * n;
      const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
      long long strideB = 0;
      const HostRhs<T> rhs = strided_rhs(hb, 2, strideB, this->rng);
      DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
      DeviceArray<int> dinfo(batch);
      dA.upload(hb.data, this->stream);
      dB.upload(rhs.data, this->stream);
      device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), this->stream);
      device::potrs_batched_ex<T>(uplo, n, 2, dA.get(), lda, strideA, dB.get(), rhs.ld.front(), strideB, batch,
                                  nullptr, this->stream);
      const std::vector<int> info = dinfo.download(this->stream);
      ASSERT_EQ(info, std::vector<int>(batch, 0));
      check_solutions(hb, rhs, dB.download(this->stream), info, describe("strided potrs, no info", uplo, n, batch, 2));
      if (this->HasFatalFailure()) return;
    }
}

// ---- arrays of pointers -----------------------------------------------------------------------------------

TYPED_TEST(DevicePointerArrays, PotrfMatchesLapackWithFailuresAtKnownColumns) {
  using T = TypeParam;
  for (int n : kOrders)
    for (int batch : kBatches)
      for (Uplo uplo : kUplos) {
        const int lda = n + 2;
        const HostBatch<T> hb = scattered_batch<T>(uplo, n, lda, batch, this->rng);
        DeviceArray<T> dA(hb.data.size());
        DeviceArray<T*> dA_array(batch);
        DeviceArray<int> dinfo(batch);
        dA.upload(hb.data, this->stream);
        dA_array.upload(pointers_into(dA.get(), hb.offsets()), this->stream);
        dinfo.upload(poisoned_info(batch), this->stream);
        device::potrf_batched_ex<T>(uplo, n, dA_array.get(), lda, batch, dinfo.get(), this->stream);
        check_factors(hb, dA.download(this->stream), dinfo.download(this->stream),
                      describe("pointer potrf", uplo, n, batch));
        if (this->HasFatalFailure()) return;
      }
}

TYPED_TEST(DevicePointerArrays, PotrsAndPosvSolveAndSkipFailedMatrices) {
  using T = TypeParam;
  for (int n : kOrders)
    for (int batch : kBatches)
      for (Uplo uplo : kUplos)
        for (int nrhs : {1, 3}) {
          const int lda = n + 1;
          const HostBatch<T> hb = scattered_batch<T>(uplo, n, lda, batch, this->rng);
          const HostRhs<T> rhs = scattered_rhs(hb, nrhs, this->rng);
          const int ldb = rhs.ld.front();
          DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
          DeviceArray<T*> dA_array(batch), dB_array(batch);
          DeviceArray<int> dinfo(batch);
          dA_array.upload(pointers_into(dA.get(), hb.offsets()), this->stream);
          dB_array.upload(pointers_into(dB.get(), rhs.offset), this->stream);

          dA.upload(hb.data, this->stream);
          dB.upload(rhs.data, this->stream);
          dinfo.upload(poisoned_info(batch), this->stream);
          device::potrf_batched_ex<T>(uplo, n, dA_array.get(), lda, batch, dinfo.get(), this->stream);
          device::potrs_batched_ex<T>(uplo, n, nrhs, dA_array.get(), lda, dB_array.get(), ldb, batch, dinfo.get(),
                                      this->stream);
          const std::vector<int> info = dinfo.download(this->stream);
          check_factors(hb, dA.download(this->stream), info, describe("pointer potrf+potrs", uplo, n, batch, nrhs));
          check_solutions(hb, rhs, dB.download(this->stream), info, describe("pointer potrs", uplo, n, batch, nrhs));
          if (this->HasFatalFailure()) return;

          dA.upload(hb.data, this->stream);
          dB.upload(rhs.data, this->stream);
          dinfo.upload(poisoned_info(batch), this->stream);
          device::posv_batched_ex<T>(uplo, n, nrhs, dA_array.get(), lda, dB_array.get(), ldb, batch, dinfo.get(),
                                     this->stream);
          const std::vector<int> posv_info = dinfo.download(this->stream);
          check_factors(hb, dA.download(this->stream), posv_info, describe("pointer posv", uplo, n, batch, nrhs));
          check_solutions(hb, rhs, dB.download(this->stream), posv_info,
                          describe("pointer posv", uplo, n, batch, nrhs));
          if (this->HasFatalFailure()) return;
        }
}

// ---- variable sizes ---------------------------------------------------------------------------------------

// Members the size screen must refuse, and the info each gets (tessera/device.hpp).
struct RefusedMembers {
  int negative_n = 10;     // n[k] = -1: info -2
  int beyond_max_n = 20;   // n[k] = max_n + 1: info -3
  int short_lda = 30;      // lda[k] = n[k] - 1: info -5 (potrf), -6 (posv)
  int short_ldb = 40;      // ldb[k] = n[k] - 1: info -8 (posv); potrf factors it, potrs skips it
};

// A batch of 100 with orders in [0, max_n]: zeros at k = 0, 33 and 98, the failing members of
// failure_at at k = 1, 50, 99 (order >= 1), the refused members above, random lda >= n and
// shuffled places. A short lda is refused with -lda_position (potrf 5, posv 6).
template <class T>
struct VariableBatch {
  HostBatch<T> hb;
  int max_n = 0;
  std::vector<int> orders, lds, ldbs;
};

template <class T>
VariableBatch<T> variable_batch(Uplo uplo, int max_n, int lda_position, std::mt19937_64& rng) {
  const int batch = 100;
  const RefusedMembers refused;
  std::uniform_int_distribution<int> order(0, max_n), pad(0, 3);
  VariableBatch<T> vb;
  vb.max_n = max_n;
  std::vector<int> refused_info(batch, 0);
  std::vector<long long> spans;
  for (int k = 0; k < batch; ++k) {
    int n = order(rng);
    if (k == 0 || k == 33 || k == batch - 2) n = 0;
    if (failure_at(k, batch) != Failure::none) n = std::max(n, 1);
    if (k == refused.short_lda || k == refused.short_ldb) n = max_n;  // max_n >= 2: n - 1 >= 1
    int ld = std::max(1, n + pad(rng));
    int ldb = std::max(1, n + pad(rng));
    if (k == refused.negative_n) {
      n = -1;
      refused_info[k] = -2;
    } else if (k == refused.beyond_max_n) {
      n = max_n + 1;
      ld = ldb = n;
      refused_info[k] = -3;
    } else if (k == refused.short_lda) {
      ld = n - 1;
      refused_info[k] = -lda_position;
    } else if (k == refused.short_ldb) {
      ldb = n - 1;
    }
    vb.orders.push_back(n);
    vb.lds.push_back(ld);
    vb.ldbs.push_back(ldb);
    spans.push_back(span(n, n, ld));
  }
  std::size_t total = 0;
  const std::vector<long long> offsets = scattered_offsets(spans, 4, rng, total);
  vb.hb = build_batch<T>(uplo, vb.orders, vb.lds, offsets, total, refused_info, rng);
  return vb;
}

constexpr int kVariableBounds[] = {7, 33, 200};

TYPED_TEST(DeviceVariable, PotrfFactorsValidMembersAndRefusesBadSizes) {
  using T = TypeParam;
  for (int max_n : kVariableBounds)
    for (Uplo uplo : kUplos) {
      const VariableBatch<T> vb = variable_batch<T>(uplo, max_n, 5, this->rng);
      const int batch = vb.hb.batch();
      DeviceArray<T> dA(vb.hb.data.size());
      DeviceArray<T*> dA_array(batch);
      DeviceArray<int> dn(batch), dlda(batch), dinfo(batch);
      dA.upload(vb.hb.data, this->stream);
      dA_array.upload(pointers_into(dA.get(), vb.hb.offsets()), this->stream);
      dn.upload(vb.orders, this->stream);
      dlda.upload(vb.lds, this->stream);
      dinfo.upload(poisoned_info(batch), this->stream);
      device::potrf_vbatched_ex<T>(uplo, dn.get(), max_n, dA_array.get(), dlda.get(), batch, dinfo.get(),
                                   this->stream);
      const std::vector<int> info = dinfo.download(this->stream);
      EXPECT_EQ(info[0], 0) << "a matrix of order 0";
      check_factors(vb.hb, dA.download(this->stream), info, describe("vbatched potrf", uplo, max_n, batch));
      if (this->HasFatalFailure()) return;
    }
}

TYPED_TEST(DeviceVariable, PotrsAndPosvSolveValidMembers) {
  using T = TypeParam;
  const RefusedMembers refused;
  for (int max_n : kVariableBounds)
    for (Uplo uplo : kUplos)
      for (int nrhs : {1, 2}) {
        // posv refuses short_lda with -6 and short_ldb with -8; potrf+potrs factor short_ldb and skip its solve.
        VariableBatch<T> vb = variable_batch<T>(uplo, max_n, 6, this->rng);
        const int batch = vb.hb.batch();
        std::vector<char> system(batch, 1);
        for (int k : {refused.negative_n, refused.beyond_max_n, refused.short_lda, refused.short_ldb}) system[k] = 0;
        std::vector<long long> b_spans;
        for (int k = 0; k < batch; ++k) b_spans.push_back(span(vb.orders[k], nrhs, vb.ldbs[k]));
        std::size_t b_total = 0;
        const std::vector<long long> b_offsets = scattered_offsets(b_spans, 2, this->rng, b_total);
        const HostRhs<T> rhs = build_rhs(vb.hb, nrhs, vb.ldbs, b_offsets, b_total, system, this->rng);

        DeviceArray<T> dA(vb.hb.data.size()), dB(rhs.data.size());
        DeviceArray<T*> dA_array(batch), dB_array(batch);
        DeviceArray<int> dn(batch), dlda(batch), dldb(batch), dinfo(batch);
        dA_array.upload(pointers_into(dA.get(), vb.hb.offsets()), this->stream);
        dB_array.upload(pointers_into(dB.get(), b_offsets), this->stream);
        dn.upload(vb.orders, this->stream);
        dlda.upload(vb.lds, this->stream);
        dldb.upload(vb.ldbs, this->stream);

        // posv: every refused member reported, with its position in posv's list.
        dA.upload(vb.hb.data, this->stream);
        dB.upload(rhs.data, this->stream);
        dinfo.upload(poisoned_info(batch), this->stream);
        // short_ldb is refused as a whole: its triangle must stay as uploaded too.
        HostBatch<T> posv_expected = vb.hb;
        Member& short_ldb = posv_expected.members[refused.short_ldb];
        short_ldb.expected_info = -8;
        for (int j = 0; j < short_ldb.n; ++j)
          for (int i = 0; i < short_ldb.n; ++i)
            posv_expected.referenced[short_ldb.offset + static_cast<std::size_t>(j) * short_ldb.ld + i] = 0;
        device::posv_vbatched_ex<T>(uplo, dn.get(), max_n, nrhs, dA_array.get(), dlda.get(), dB_array.get(),
                                    dldb.get(), batch, dinfo.get(), this->stream);
        const std::vector<int> posv_info = dinfo.download(this->stream);
        const std::string posv_where = describe("vbatched posv", uplo, max_n, batch, nrhs);
        check_factors(posv_expected, dA.download(this->stream), posv_info, posv_where);
        check_solutions(vb.hb, rhs, dB.download(this->stream), posv_info, posv_where);
        if (this->HasFatalFailure()) return;

        // potrf_vbatched (lda refused with -5), then potrs_vbatched with its info.
        HostBatch<T> potrf_expected = vb.hb;
        potrf_expected.members[refused.short_lda].expected_info = -5;
        dA.upload(vb.hb.data, this->stream);
        dB.upload(rhs.data, this->stream);
        dinfo.upload(poisoned_info(batch), this->stream);
        device::potrf_vbatched_ex<T>(uplo, dn.get(), max_n, dA_array.get(), dlda.get(), batch, dinfo.get(),
                                     this->stream);
        device::potrs_vbatched_ex<T>(uplo, dn.get(), max_n, nrhs, dA_array.get(), dlda.get(), dB_array.get(),
                                     dldb.get(), batch, dinfo.get(), this->stream);
        const std::vector<int> info = dinfo.download(this->stream);
        const std::string where = describe("vbatched potrf+potrs", uplo, max_n, batch, nrhs);
        check_factors(potrf_expected, dA.download(this->stream), info, where);
        check_solutions(vb.hb, rhs, dB.download(this->stream), info, where);
        if (this->HasFatalFailure()) return;
      }
}

// ---- checking forms ---------------------------------------------------------------------------------------

TYPED_TEST(DeviceCheckingForms, ReturnTheNumberOfFailedMatricesAndTheirInfo) {
  using T = TypeParam;
  for (int n : {7, 64})
    for (Uplo uplo : kUplos) {
      const int batch = 100, lda = n + 1, nrhs = 2;
      const long long strideA = static_cast<long long>(lda) * n + 3;
      const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
      const std::vector<int> expected = expected_infos(hb);
      ASSERT_EQ(failures(expected), 3);
      DeviceArray<T> dA(hb.data.size());

      std::vector<int> host_info = poisoned_info(batch);
      dA.upload(hb.data, this->stream);
      EXPECT_EQ(device::potrf_batched<T>(uplo, n, dA.get(), lda, strideA, batch, host_info.data(), this->stream), 3);
      EXPECT_EQ(host_info, expected);
      check_factors(hb, dA.download(this->stream), host_info, describe("checking potrf", uplo, n, batch));

      dA.upload(hb.data, this->stream);
      EXPECT_EQ(device::potrf_batched<T>(uplo, n, dA.get(), lda, strideA, batch, nullptr, this->stream), 3)
          << "host_info null";
      check_factors(hb, dA.download(this->stream), expected, describe("checking potrf, no host info", uplo, n, batch));

      long long strideB = 0;
      const HostRhs<T> rhs = strided_rhs(hb, nrhs, strideB, this->rng);
      DeviceArray<T> dB(rhs.data.size());
      host_info = poisoned_info(batch);
      dA.upload(hb.data, this->stream);
      dB.upload(rhs.data, this->stream);
      EXPECT_EQ(device::posv_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), rhs.ld.front(), strideB,
                                        batch, host_info.data(), this->stream),
                3);
      EXPECT_EQ(host_info, expected);
      check_solutions(hb, rhs, dB.download(this->stream), host_info, describe("checking posv", uplo, n, batch, nrhs));
      if (this->HasFatalFailure()) return;
    }
}

// ---- zero_opposite_triangle -------------------------------------------------------------------------------

TYPED_TEST(DeviceZeroOppositeTriangle, ZerosTheStrictOppositeTriangleOnly) {
  using T = TypeParam;
  std::uniform_real_distribution<double> dist(1.0, 2.0);
  for (int n : {1, 7, 33, 200})
    for (int batch : kBatches)
      for (Uplo uplo : kUplos) {
        const int lda = n + 2;
        const long long stride = static_cast<long long>(lda) * n + 3;
        std::size_t total = 0;
        const std::vector<long long> offsets = strided_offsets(stride, batch, span(n, n, lda), total);
        std::vector<T> data(total, poison<T>());
        std::vector<char> opposite(total, 0);
        for (int k = 0; k < batch; ++k)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
              const std::size_t at = offsets[k] + static_cast<std::size_t>(j) * lda + i;
              data[at] = static_cast<T>(dist(this->rng));
              opposite[at] = !in_triangle(uplo, i, j);
            }
        DeviceArray<T> dA(total);
        dA.upload(data, this->stream);
        device::zero_opposite_triangle<T>(uplo, n, dA.get(), lda, stride, batch, this->stream);
        const std::vector<T> out = dA.download(this->stream);
        std::size_t not_zeroed = 0, changed = 0;
        for (std::size_t e = 0; e < total; ++e) {
          if (opposite[e] && out[e] != T(0)) ++not_zeroed;
          if (!opposite[e] && !same_bits(out[e], data[e])) ++changed;
        }
        EXPECT_EQ(not_zeroed, 0u) << describe("zero_opposite_triangle", uplo, n, batch);
        EXPECT_EQ(changed, 0u) << describe("zero_opposite_triangle", uplo, n, batch)
                               << ": the triangle, the rows past n or the gaps changed";
      }
}

// ---- the caller's stream ----------------------------------------------------------------------------------

// Holds the stream on the host for a while: work that does not wait for the stream runs first.
void CUDART_CB hold_the_stream(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

// The device memory holds NaN until the copies enqueued on the stream, behind a 200 ms host
// function, land in it; a call that did not wait for the stream would factor NaN (info 1). The
// results are read with copies on the same stream and one cudaStreamSynchronize of it.
TYPED_TEST(DeviceStream, WorkIsOrderedOnTheCallersStream) {
  using T = TypeParam;
  const Uplo uplo = Uplo::lower;
  const int n = 64, batch = 100, nrhs = 2, lda = n + 1;
  const long long strideA = static_cast<long long>(lda) * n;
  const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
  long long strideB = 0;
  const HostRhs<T> rhs = strided_rhs(hb, nrhs, strideB, this->rng);
  const int ldb = rhs.ld.front();
  const PinnedArray<T> a_in(hb.data), b_in(rhs.data), a_out(hb.data), b_out(rhs.data);
  const PinnedArray<int> info_out(poisoned_info(batch));
  DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
  DeviceArray<int> dinfo(batch), dn(batch), dld(batch), dldb(batch);
  DeviceArray<T*> dA_array(batch), dB_array(batch);

  // Enqueues the inputs behind the host function, then reads everything back after `enqueue`.
  const auto run = [&](const auto& enqueue) {
    cuda_ok(cudaMemset(dA.get(), 0xff, hb.data.size() * sizeof(T)), "cudaMemset");  // NaN
    cuda_ok(cudaMemset(dB.get(), 0xff, rhs.data.size() * sizeof(T)), "cudaMemset");
    cuda_ok(cudaMemset(dinfo.get(), 0xff, batch * sizeof(int)), "cudaMemset");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda_ok(cudaLaunchHostFunc(this->stream, hold_the_stream, nullptr), "cudaLaunchHostFunc");
    cuda_ok(cudaMemcpyAsync(dA.get(), a_in.get(), a_in.bytes(), cudaMemcpyHostToDevice, this->stream), "copy A");
    cuda_ok(cudaMemcpyAsync(dB.get(), b_in.get(), b_in.bytes(), cudaMemcpyHostToDevice, this->stream), "copy B");
    const int checked = enqueue();
    cuda_ok(cudaMemcpyAsync(a_out.get(), dA.get(), a_out.bytes(), cudaMemcpyDeviceToHost, this->stream), "read A");
    cuda_ok(cudaMemcpyAsync(b_out.get(), dB.get(), b_out.bytes(), cudaMemcpyDeviceToHost, this->stream), "read B");
    cuda_ok(cudaMemcpyAsync(info_out.get(), dinfo.get(), info_out.bytes(), cudaMemcpyDeviceToHost, this->stream),
            "read info");
    cuda_ok(cudaStreamSynchronize(this->stream), "cudaStreamSynchronize");
    return checked;
  };

  run([&] {
    device::posv_batched_ex<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch, dinfo.get(),
                               this->stream);
    return 0;
  });
  check_factors(hb, a_out.values(), info_out.values(), "posv_batched_ex on the stream");
  check_solutions(hb, rhs, b_out.values(), info_out.values(), "posv_batched_ex on the stream");

  // The variable-size form, whose size screen runs in stream-ordered workspace.
  dA_array.upload(pointers_into(dA.get(), hb.offsets()), this->stream);
  dB_array.upload(pointers_into(dB.get(), rhs.offset), this->stream);
  dn.upload(std::vector<int>(batch, n), this->stream);
  dld.upload(std::vector<int>(batch, lda), this->stream);
  dldb.upload(std::vector<int>(batch, ldb), this->stream);
  run([&] {
    device::posv_vbatched_ex<T>(uplo, dn.get(), n, nrhs, dA_array.get(), dld.get(), dB_array.get(), dldb.get(), batch,
                                dinfo.get(), this->stream);
    return 0;
  });
  check_factors(hb, a_out.values(), info_out.values(), "posv_vbatched_ex on the stream");
  check_solutions(hb, rhs, b_out.values(), info_out.values(), "posv_vbatched_ex on the stream");

  // The checking form waits for the stream itself.
  std::vector<int> host_info = poisoned_info(batch);
  const int failed = run([&] {
    return device::posv_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch,
                                   host_info.data(), this->stream);
  });
  EXPECT_EQ(failed, 3);
  EXPECT_EQ(host_info, expected_infos(hb));
  check_solutions(hb, rhs, b_out.values(), host_info, "posv_batched (checking) on the stream");
}

// ---- C API ------------------------------------------------------------------------------------------------

TYPED_TEST(DeviceCApi, StridedCallsOnAStream) {
  using T = TypeParam;
  for (Uplo uplo : kUplos) {
    const char u = uplo_char(uplo);
    const int n = 33, batch = 100, nrhs = 2, lda = n + 2;
    const long long strideA = static_cast<long long>(lda) * n + 1;
    const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
    long long strideB = 0;
    const HostRhs<T> rhs = strided_rhs(hb, nrhs, strideB, this->rng);
    const int ldb = rhs.ld.front();
    DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
    DeviceArray<int> dinfo(batch);
    void* c_stream = this->stream;  // the C API takes a cudaStream_t as void*

    dA.upload(hb.data, this->stream);
    dB.upload(rhs.data, this->stream);
    dinfo.upload(poisoned_info(batch), this->stream);
    ASSERT_EQ(c_potrf_ex(u, n, dA.get(), lda, strideA, batch, dinfo.get(), c_stream), 0);
    ASSERT_EQ(c_potrs_ex(u, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch, dinfo.get(), c_stream), 0);
    std::vector<int> info = dinfo.download(this->stream);
    check_factors(hb, dA.download(this->stream), info, describe("C potrf_ex+potrs_ex", uplo, n, batch, nrhs));
    check_solutions(hb, rhs, dB.download(this->stream), info, describe("C potrs_ex", uplo, n, batch, nrhs));

    dA.upload(hb.data, this->stream);
    dB.upload(rhs.data, this->stream);
    dinfo.upload(poisoned_info(batch), this->stream);
    ASSERT_EQ(c_posv_ex(u, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, strideB, batch, dinfo.get(), c_stream), 0);
    info = dinfo.download(this->stream);
    check_factors(hb, dA.download(this->stream), info, describe("C posv_ex", uplo, n, batch, nrhs));
    check_solutions(hb, rhs, dB.download(this->stream), info, describe("C posv_ex", uplo, n, batch, nrhs));

    std::vector<int> host_info = poisoned_info(batch);
    dA.upload(hb.data, this->stream);
    EXPECT_EQ(c_potrf_checking(u, n, dA.get(), lda, strideA, batch, host_info.data(), c_stream), 3);
    EXPECT_EQ(host_info, expected_infos(hb));
    if (this->HasFatalFailure()) return;
  }
}

}  // namespace
