// What the batched Cholesky tests share, on the kernels (test_batched_kernels.cpp) and through the
// device-resident API (test_device_batched.cpp): device memory, LAPACKE references, batches of
// random SPD matrices poisoned with NaN outside the referenced triangles, right-hand sides, and the
// checks of factors, untouched elements and solutions.
#pragma once

#include <cblas.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/batched_kernels.hpp"
#include "kernel_test_support.hpp"

namespace tessera::test {

// ---- fixtures -----------------------------------------------------------------------------------------

using Precisions = ::testing::Types<float, double>;

// Typed tests that skip where no CUDA device is present.
template <class T>
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = missing_gpu_reason();
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  }
};

// Declares the typed suite Name on Fixture<T>, in float and double.
#define TYPED_SUITE_ON(Fixture, Name) \
  template <class T>                  \
  class Name : public Fixture<T> {};  \
  TYPED_TEST_SUITE(Name, ::tessera::test::Precisions)

// ---- device memory --------------------------------------------------------------------------------

inline void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// The current device's SM count (the batched kernels' shapes depend on matrices per SM).
inline int current_sm_count() {
  int device = 0, sms = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return sms;
}

// `count` elements of T in device memory. Copies run on `stream` (the legacy default stream where
// none is given); download() waits for that stream only.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    cuda_ok(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  void upload(const std::vector<T>& host, cudaStream_t stream = nullptr) {
    cuda_ok(cudaMemcpyAsync(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream), "upload");
  }
  std::vector<T> download(cudaStream_t stream = nullptr) const {
    std::vector<T> host(count_);
    cuda_ok(cudaMemcpyAsync(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost, stream), "download");
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

// info as uploaded before a call: every entry must be overwritten.
constexpr int kPoisonedInfo = -77;

inline std::vector<int> poisoned_info(int batch) { return std::vector<int>(std::max(batch, 1), kPoisonedInfo); }

// ---- LAPACKE ----------------------------------------------------------------------------------------

inline int lapack_potrf(char uplo, int n, float* a, int lda) {
  return LAPACKE_spotrf(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
inline int lapack_potrf(char uplo, int n, double* a, int lda) {
  return LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
inline int lapack_potrs(char uplo, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
  return LAPACKE_spotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}
inline int lapack_potrs(char uplo, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
  return LAPACKE_dpotrs(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}

// ---- triangles: tessera::Uplo and the kernels' BatchUplo alike ---------------------------------------

template <class Uplo>
char uplo_char(Uplo uplo) {
  return uplo == Uplo::lower ? 'L' : 'U';
}

template <class Uplo>
const char* uplo_name(Uplo uplo) {
  return uplo == Uplo::lower ? "lower" : "upper";
}

// Whether element (i, j) belongs to the triangle `uplo` ('L' or 'U') references.
inline bool in_triangle(char uplo, int i, int j) { return uplo == 'L' ? i >= j : i <= j; }

// ---- test matrices ------------------------------------------------------------------------------------

// Random SPD matrix, full and symmetric, rounded to T: G G^T / n + 0.25 * ones + 0.5 * I with G
// uniform in [-1, 1]. The all-ones part couples every entry (no near-diagonal shortcut) and the
// condition number grows only like n / 2.
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

// Matrix k of a batch: its order and place, the full matrix as uploaded, what must come back.
struct BatchMember {
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
  char uplo = 'L';  // the referenced triangle, as LAPACK names it
  std::vector<BatchMember> members;
  std::vector<T> data;
  std::vector<char> referenced;  // 1 where an element belongs to a referenced triangle

  std::vector<long long> offsets() const {
    std::vector<long long> o;
    for (const BatchMember& m : members) o.push_back(m.offset);
    return o;
  }
  int batch() const { return static_cast<int>(members.size()); }
};

// Random SPD matrices of the given orders and leading dimensions at the given offsets of an array
// of `total` elements. spoil_member(k, batch, a, n) may spoil the full matrix a of member k (n >= 1) and
// returns the info its factorization must report. refused_info[k] < 0 (where given) marks a member
// whose sizes the call refuses: it gets no matrix, keeps NaN and must report that info.
template <class T, class Spoil>
HostBatch<T> build_batch(char uplo, const std::vector<int>& orders, const std::vector<int>& lds,
                         const std::vector<long long>& offsets, std::size_t total, const std::vector<int>& refused_info,
                         std::mt19937_64& rng, Spoil spoil_member) {
  HostBatch<T> hb;
  hb.uplo = uplo;
  hb.data.assign(total, poison<T>());
  hb.referenced.assign(total, 0);
  const int batch = static_cast<int>(orders.size());
  for (int k = 0; k < batch; ++k) {
    BatchMember m;
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
    if (m.n > 0) m.expected_info = spoil_member(k, batch, m.a, m.n);
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

template <class T>
std::vector<int> expected_infos(const HostBatch<T>& hb) {
  std::vector<int> e;
  for (const BatchMember& m : hb.members) e.push_back(m.expected_info);
  return e;
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
  long long stride = 0;  // where the right-hand sides are strided: offset[k] = k * stride
};

template <class T>
HostRhs<T> build_rhs(const HostBatch<T>& hb, int nrhs, const std::vector<int>& ld,
                     const std::vector<long long>& offset, std::size_t total, const std::vector<char>& system,
                     std::mt19937_64& rng) {
  HostRhs<T> r{nrhs, ld, offset, system, std::vector<T>(total, poison<T>()), 0};
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int k = 0; k < hb.batch(); ++k)
    if (system[k])
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < hb.members[k].n; ++i)
          r.data[offset[k] + static_cast<std::size_t>(c) * ld[k] + i] = static_cast<T>(dist(rng));
  return r;
}

// ---- checks -------------------------------------------------------------------------------------------

// Factor entry L(i, j), i >= j, as stored (upper storage holds L^T).
template <class T>
double factor_at(const std::vector<T>& out, const BatchMember& m, char uplo, int i, int j) {
  const std::size_t at = uplo == 'L' ? m.offset + static_cast<std::size_t>(j) * m.ld + i
                                     : m.offset + static_cast<std::size_t>(i) * m.ld + j;
  return static_cast<double>(out[at]);
}

// Whether check_factor also bounds the backward error |A - L L^T|.
enum class BackwardError { skip, check };

// info, then the part of the factor that must be final (all of it, or the leading (info-1) x
// (info-1) block of a matrix that failed, as in LAPACK): a positive diagonal, agreement with
// LAPACKE's factor of the unspoiled matrix to 50 n eps max|L| and, where asked, the backward error
// |A - L L^T| <= 4 (n + 1) eps max|A| entrywise.
template <class T>
void check_factor(const HostBatch<T>& hb, int k, const std::vector<T>& out, int info, const std::string& where,
                  BackwardError backward) {
  const BatchMember& m = hb.members[k];
  ASSERT_EQ(info, m.expected_info) << where << ": info of matrix " << k << " (n = " << m.n << ")";
  if (m.expected_info < 0) return;
  const int n = m.n;
  const int good = m.expected_info == 0 ? n : m.expected_info - 1;
  if (good == 0) return;
  const auto column_major = [n](int i, int j) { return i + static_cast<std::size_t>(j) * n; };
  const auto row_major = [n](int i, int j) { return static_cast<std::size_t>(i) * n + j; };

  // Spoiling touches only columns >= good: the leading good columns of LAPACKE's factor of the
  // unspoiled matrix are what the batch must hold.
  std::vector<T> ref(static_cast<std::size_t>(n) * n);
  for (std::size_t e = 0; e < ref.size(); ++e) ref[e] = static_cast<T>(m.clean[e]);
  ASSERT_EQ(lapack_potrf('L', n, ref.data(), n), 0) << where << ": reference factorization of matrix " << k;
  double lmax = 1.0;
  for (int j = 0; j < good; ++j)
    for (int i = j; i < good; ++i) lmax = std::max(lmax, std::fabs(static_cast<double>(ref[column_major(i, j)])));
  const double tolerance = 50.0 * n * eps<T>() * lmax;

  // For the backward error: max|A| and the computed factor, densely (row-major lower part).
  double amax = 0;
  std::vector<double> l;
  if (backward == BackwardError::check) {
    for (double v : m.a)
      if (std::isfinite(v)) amax = std::max(amax, std::fabs(v));
    l.assign(static_cast<std::size_t>(n) * n, 0.0);
    for (int c = 0; c < good; ++c)
      for (int i = c; i < good; ++i) l[row_major(i, c)] = factor_at(out, m, hb.uplo, i, c);
  }
  const double backward_tolerance = 4.0 * (n + 1) * eps<T>() * amax;

  int bad = 0;
  std::ostringstream first;
  for (int j = 0; j < good; ++j)
    for (int i = j; i < good; ++i) {
      const double lij = factor_at(out, m, hb.uplo, i, j);
      const double rij = ref[column_major(i, j)];
      bool ok = std::fabs(lij - rij) <= tolerance && (i != j || lij > 0);
      double residual = 0;
      if (backward == BackwardError::check) {
        double s = 0;
        for (int c = 0; c <= j; ++c) s += l[row_major(i, c)] * l[row_major(j, c)];
        residual = std::fabs(s - m.a[column_major(i, j)]);
        ok = ok && residual <= backward_tolerance;
      }
      if (!ok && !bad++) {
        first << "L(" << i << ", " << j << ") = " << lij << ", LAPACKE " << rij << " (tolerance " << tolerance << ")";
        if (backward == BackwardError::check)
          first << ", |A - L L^T| = " << residual << " (tolerance " << backward_tolerance << ")";
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
                     << first << " (now " << (bad ? out[first] : T(0)) << ")";
}

// Every member's factor and info, then the elements outside the referenced triangles.
template <class T>
void check_factors(const HostBatch<T>& hb, const std::vector<T>& out, const std::vector<int>& info,
                   const std::string& where, BackwardError backward = BackwardError::skip) {
  ASSERT_EQ(info.size(), hb.members.size());
  for (int k = 0; k < hb.batch(); ++k) {
    check_factor(hb, k, out, info[k], where, backward);
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_untouched(hb, out, where);
}

// A solved system: backward error ||A x - b|| / (||A|| ||x|| + ||b||) <= 30 n eps per column (max
// norms) and agreement with LAPACKE potrs. A member that failed (info[k] != 0) or has no system
// keeps its B bit-identical, and so does every element outside the systems.
template <class T>
void check_solutions(const HostBatch<T>& hb, const HostRhs<T>& rhs, const std::vector<T>& b_out,
                     const std::vector<int>& info, const std::string& where) {
  std::vector<char> solved_element(rhs.data.size(), 0);
  const int nrhs = rhs.nrhs;
  const char uplo = hb.uplo;
  for (int k = 0; k < hb.batch(); ++k) {
    const BatchMember& m = hb.members[k];
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
    ASSERT_EQ(lapack_potrf(uplo, n, f.data(), n), 0) << where << ": reference of matrix " << k;
    ASSERT_EQ(lapack_potrs(uplo, n, nrhs, f.data(), n, x.data(), n), 0);
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

// ---- out-of-place factorization --------------------------------------------------------------------

// Where an out-of-place factorization reads its batch: element (i, j) of matrix k at
// base + k * stride + i * rs + j * cs of an array whose other elements are NaN.
struct SourceLayout {
  const char* name;
  long long rs;
  long long cs;
  long long stride;
  long long base;
};

// C-ordered and Fortran-ordered stacks (the 16-byte-vector paths), padded ones of both orders
// (element paths), and one with a negative column stride.
inline std::vector<SourceLayout> source_layouts(int n) {
  const long long nn = static_cast<long long>(n) * n;
  return {{"C-ordered", n, 1, nn, 0},
          {"Fortran-ordered", 1, n, nn, 0},
          {"padded Fortran-ordered", 1, n + 3, static_cast<long long>(n + 3) * n + 5, 2},
          {"padded C-ordered", n + 2, 1, static_cast<long long>(n + 2) * n + 1, 1},
          {"columns reversed", n, -1, nn + 2, n - 1}};
}

// The referenced triangles of hb's matrices (column-major at their offsets, hb.uplo) laid out as
// `layout` says; NaN everywhere else.
template <class T>
std::vector<T> source_for(const HostBatch<T>& hb, const SourceLayout& layout) {
  const int batch = hb.batch();
  const int n = batch ? hb.members.front().n : 0;
  const long long last = layout.base + layout.stride * std::max(batch - 1, 0) +
                         std::max<long long>(n - 1, 0) * (std::max<long long>(layout.rs, 0) + std::max<long long>(layout.cs, 0));
  std::vector<T> source(static_cast<std::size_t>(last + 3), poison<T>());
  for (int k = 0; k < batch; ++k) {
    const BatchMember& m = hb.members[k];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (in_triangle(hb.uplo, i, j))
          source[layout.base + k * layout.stride + i * layout.rs + j * layout.cs] =
              hb.data[m.offset + static_cast<std::size_t>(j) * m.ld + i];
  }
  return source;
}

// An out-of-place result L (ldl, strideL) against the in-place factorization of the same batch
// (hb's layout): the triangle bit-identical (the factor, and for a failed matrix what the in-place
// kernels leave), zeros in the strict other triangle, and every other element of L as it was.
template <class T>
// `in_place_info` given: another algorithm made `out` (cuSOLVER's where the kernels made
// `in_place`): the factors of the members that succeeded agree within rounding, and those of the
// members that failed (partial, as LAPACK leaves them) are not compared.
void check_out_of_place(const HostBatch<T>& hb, const std::vector<T>& in_place, const std::vector<T>& before,
                        const std::vector<T>& out, int ldl, long long strideL, const std::string& where,
                        const std::vector<int>* in_place_info = nullptr) {
  std::vector<char> written(out.size(), 0);
  std::size_t wrong = 0, not_zero = 0;
  std::string first;
  for (int k = 0; k < hb.batch(); ++k) {
    const BatchMember& m = hb.members[k];
    const bool compared = !in_place_info || (*in_place_info)[k] == 0;
    const double tolerance = 50.0 * std::max(m.n, 1) * std::numeric_limits<T>::epsilon();
    for (int j = 0; j < m.n; ++j)
      for (int i = 0; i < m.n; ++i) {
        const std::size_t at = k * strideL + static_cast<std::size_t>(j) * ldl + i;
        written[at] = 1;
        if (in_triangle(hb.uplo, i, j)) {
          const T expected = in_place[m.offset + static_cast<std::size_t>(j) * m.ld + i];
          const bool agrees = !compared || (in_place_info ? std::abs(double(out[at]) - double(expected)) <=
                                                                tolerance * (1.0 + std::abs(double(expected)))
                                                          : same_bits(out[at], expected));
          if (!agrees && !wrong++)
            first = "matrix " + std::to_string(k) + " (" + std::to_string(i) + ", " + std::to_string(j) +
                    ") = " + std::to_string(out[at]) + ", in place " + std::to_string(expected);
        } else if (!(out[at] == T(0))) {
          ++not_zero;
        }
      }
  }
  EXPECT_EQ(wrong, 0u) << where << ": " << wrong << " elements differ from the in-place factorization, first "
                       << first;
  EXPECT_EQ(not_zero, 0u) << where << ": " << not_zero << " elements of the opposite triangles are not zero";
  std::size_t changed = 0;
  for (std::size_t e = 0; e < out.size(); ++e)
    if (!written[e] && !same_bits(out[e], before[e])) ++changed;
  EXPECT_EQ(changed, 0u) << where << ": " << changed << " elements outside the factors were written";
}

// ---- one block of columns ------------------------------------------------------------------------------

// potrf_batched_columns(uplo, n, count) on `input` (member k at k * stride, leading dimension ld,
// NaN outside the triangles) against potrf_batched's factor of `clean` (the same matrices before
// any was spoiled, each positive definite): member k's info must be full_info[k] (the column its
// whole factorization fails at, 0 for none) where that column is among the first `count`, 0
// otherwise; the first `count` columns of its L (all their rows, or the leading (info-1) block of
// a member that failed) within 50 n eps max|L| of the whole factor's; every other element
// bit-identical to the input. Real and complex types.
template <class T>
void check_columns(kernels::cuda::BatchUplo uplo, int n, int count, const std::vector<T>& input,
                   const std::vector<T>& clean, int ld, long long stride, const std::vector<int>& full_info,
                   const kernels::cuda::BatchedOptions& opts, const std::string& where) {
  using Real = decltype(std::abs(T{}));
  const int batch = static_cast<int>(full_info.size());
  DeviceArray<T> whole(clean), columns(input);
  DeviceArray<int> whole_info(poisoned_info(batch)), columns_info(poisoned_info(batch));
  kernels::cuda::potrf_batched<T>(uplo, n, whole.get(), ld, stride, batch, whole_info.get(), nullptr);
  kernels::cuda::potrf_batched_columns<T>(uplo, n, count, columns.get(), ld, stride, batch, columns_info.get(), nullptr,
                                          opts);
  cuda_ok(cudaDeviceSynchronize(), "potrf_batched_columns");
  const std::vector<T> ref = whole.download(), out = columns.download();
  const std::vector<int> ref_info = whole_info.download(), info = columns_info.download();
  const bool lower = uplo == kernels::cuda::BatchUplo::lower;
  // L(i, j), i >= j, of member k as stored (upper storage holds L^H).
  const auto at = [&](int k, int i, int j) {
    return static_cast<std::size_t>(k) * stride + (lower ? i + static_cast<std::size_t>(j) * ld
                                                         : j + static_cast<std::size_t>(i) * ld);
  };
  std::vector<char> written(input.size(), 0);
  for (int k = 0; k < batch; ++k) {
    ASSERT_EQ(ref_info[k], 0) << where << ": the whole factorization of clean member " << k;
    const int expected = full_info[k] >= 1 && full_info[k] <= count ? full_info[k] : 0;
    ASSERT_EQ(info[k], expected) << where << ": info of member " << k << " (n = " << n << ", count = " << count << ")";
    const int good = expected == 0 ? count : expected - 1;
    const int rows = expected == 0 ? n : good;
    double lmax = 1;
    for (int j = 0; j < good; ++j)
      for (int i = j; i < rows; ++i) lmax = std::max(lmax, static_cast<double>(std::abs(ref[at(k, i, j)])));
    const double tolerance = 50.0 * n * std::numeric_limits<Real>::epsilon() * lmax;
    for (int j = 0; j < count; ++j)
      for (int i = j; i < n; ++i) written[at(k, i, j)] = 1;
    for (int j = 0; j < good; ++j)
      for (int i = j; i < rows; ++i) {
        const double diff = std::abs(out[at(k, i, j)] - ref[at(k, i, j)]);
        ASSERT_LE(diff, tolerance) << where << ": member " << k << " L(" << i << ", " << j << ") differs by " << diff
                                   << " from the whole factor's (n = " << n << ", count = " << count << ")";
      }
  }
  std::size_t changed = 0, first = 0;
  for (std::size_t e = 0; e < out.size(); ++e)
    if (!written[e] && std::memcmp(&out[e], &input[e], sizeof(T)) != 0)
      if (!changed++) first = e;
  EXPECT_EQ(changed, 0u) << where << ": " << changed << " elements past the first " << count
                         << " columns or outside the triangles were written, the first at " << first;
}

}  // namespace tessera::test
