// The device-resident batched API (tessera/device.hpp) on a GPU, through libtessera's exported
// symbols, against LAPACKE: strided, pointer-array and variable-size batches, float and double,
// lower and upper, orders 1, 7, 31, 32, 33, 64, 127 and 200, batches of 1 and 100 with lda > n.
// The batches of 100 hold matrices that fail at their first, a middle and their last column;
// their info must say so and the other matrices must be unaffected. Every element outside the
// referenced triangles (other triangle, rows past n, gaps between matrices) is NaN and must come
// back bit-identical. Every test runs on a stream created with cudaStreamNonBlocking: inputs are
// copied with cudaMemcpyAsync on it right before the call, and results read after synchronising
// that stream only. The out-of-place form must leave, bit for bit, what the in-place form leaves in A,
// with zeros in the opposite triangle, for C-ordered, Fortran-ordered, padded and reversed sources,
// and must not modify its source. The argument checks, which need no GPU, are in
// tests/test_device_api.cpp.
// Skipped where no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "batched_test_support.hpp"
#include "gpu_runtime.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/tessera.h"

namespace {

using tessera::Uplo;
using namespace tessera::test;  // kernel_test_support.hpp, batched_test_support.hpp
namespace device = tessera::device;

constexpr int kOrders[] = {1, 7, 31, 32, 33, 64, 127, 200};
constexpr int kBatches[] = {1, 100};
constexpr Uplo kUplos[] = {Uplo::lower, Uplo::upper};

// ---- pinned memory ----------------------------------------------------------------------------------------

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

// Device pointers to the matrices of one device array, as a device array of pointers.
template <class T>
std::vector<T*> pointers_into(T* base, const std::vector<long long>& offsets) {
  std::vector<T*> pointers;
  for (long long offset : offsets) pointers.push_back(base + offset);
  return pointers;
}

// ---- test matrices --------------------------------------------------------------------------------------

// Where a member of a batch of 100 stops being positive definite.
enum class Failure { none, first_column, middle_column, last_column };

Failure failure_at(int k, int batch) {
  if (batch < 3) return Failure::none;
  if (k == 1) return Failure::first_column;
  if (k == batch / 2) return Failure::middle_column;
  if (k == batch - 1) return Failure::last_column;
  return Failure::none;
}

// Spoils the full matrix a (order n >= 1) of member k as failure_at says; returns the info its
// factorization must report.
int spoil(int k, int batch, std::vector<double>& a, int n) {
  const auto diagonal = [&](int j) -> double& { return a[j + static_cast<std::size_t>(j) * n]; };
  switch (failure_at(k, batch)) {
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

// n x n matrices, lda = ld, at k * stride.
template <class T>
HostBatch<T> strided_batch(Uplo uplo, int n, int ld, long long stride, int batch, std::mt19937_64& rng) {
  std::size_t total = 0;
  const std::vector<long long> offsets = strided_offsets(stride, batch, span(n, n, ld), total);
  return build_batch<T>(uplo_char(uplo), std::vector<int>(batch, n), std::vector<int>(batch, ld), offsets, total, {},
                        rng, spoil);
}

// n x n matrices, lda = ld, scattered in a shuffled order (for arrays of pointers).
template <class T>
HostBatch<T> scattered_batch(Uplo uplo, int n, int ld, int batch, std::mt19937_64& rng) {
  std::size_t total = 0;
  const std::vector<long long> offsets =
      scattered_offsets(std::vector<long long>(batch, span(n, n, ld)), 5, rng, total);
  return build_batch<T>(uplo_char(uplo), std::vector<int>(batch, n), std::vector<int>(batch, ld), offsets, total, {},
                        rng, spoil);
}

// ---- right-hand sides ------------------------------------------------------------------------------------

// Strided right-hand sides (ldb = n + 1, gaps between them) for every member.
template <class T>
HostRhs<T> strided_rhs(const HostBatch<T>& hb, int nrhs, std::mt19937_64& rng) {
  const int n = hb.members.front().n;
  const int ldb = n + 1;
  const long long stride = static_cast<long long>(ldb) * nrhs + 2;
  std::size_t total = 0;
  const std::vector<long long> offsets = strided_offsets(stride, hb.batch(), span(n, nrhs, ldb), total);
  HostRhs<T> rhs = build_rhs(hb, nrhs, std::vector<int>(hb.batch(), ldb), offsets, total,
                             std::vector<char>(hb.batch(), 1), rng);
  rhs.stride = stride;
  return rhs;
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

// Members whose info reports a failure.
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

// ---- on the device --------------------------------------------------------------------------------------

// A batch on the device: A, info and, where right-hand sides are given, B; copied on one stream.
template <class T>
struct DeviceBatch {
  DeviceBatch(const HostBatch<T>& matrices, cudaStream_t copy_stream, const HostRhs<T>* right_hand_sides = nullptr)
      : hb(matrices),
        rhs(right_hand_sides),
        stream(copy_stream),
        a(hb.data.size()),
        b(rhs ? rhs->data.size() : 0),
        info(hb.batch()) {}

  // Fresh A (and B) and poisoned info, enqueued right before the call under test.
  void upload() {
    a.upload(hb.data, stream);
    if (rhs) b.upload(rhs->data, stream);
    info.upload(poisoned_info(hb.batch()), stream);
  }

  // After the call: the factors against `factored` (the info each member must report) and, with
  // right-hand sides, hb's systems solved where the reported info says so. Returns that info.
  std::vector<int> check(const HostBatch<T>& factored, const std::string& where) const {
    const std::vector<int> reported = info.download(stream);
    check_factors(factored, a.download(stream), reported, where);
    if (rhs) check_solutions(hb, *rhs, b.download(stream), reported, where);
    return reported;
  }
  std::vector<int> check(const std::string& where) const { return check(hb, where); }

  const HostBatch<T>& hb;
  const HostRhs<T>* rhs;
  cudaStream_t stream;
  DeviceArray<T> a, b;
  DeviceArray<int> info;
};

// ---- fixture --------------------------------------------------------------------------------------------

template <class T>
class DeviceBatched : public GpuTest<T> {
 protected:
  void SetUp() override {
    GpuTest<T>::SetUp();
    if (this->IsSkipped()) return;
    cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  void TearDown() override {
    if (stream) cudaStreamDestroy(stream);
  }

  cudaStream_t stream = nullptr;
  std::mt19937_64 rng{20261124};
};

TYPED_SUITE_ON(DeviceBatched, DeviceStrided);
TYPED_SUITE_ON(DeviceBatched, DevicePointerArrays);
TYPED_SUITE_ON(DeviceBatched, DeviceVariable);
TYPED_SUITE_ON(DeviceBatched, DeviceCheckingForms);
TYPED_SUITE_ON(DeviceBatched, DeviceZeroOppositeTriangle);
TYPED_SUITE_ON(DeviceBatched, DeviceStream);
TYPED_SUITE_ON(DeviceBatched, DeviceCApi);
TYPED_SUITE_ON(DeviceBatched, DeviceOutOfPlace);

// Runs run_case(n, batch, uplo) for every order, batch size and triangle, to the first fatal failure.
template <class Case>
void for_each_case(const Case& run_case) {
  for (int n : kOrders)
    for (int batch : kBatches)
      for (Uplo uplo : kUplos) {
        run_case(n, batch, uplo);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

// The same with 1 and 3 right-hand sides: run_case(n, batch, uplo, nrhs).
template <class Case>
void for_each_solve_case(const Case& run_case) {
  for_each_case([&](int n, int batch, Uplo uplo) {
    for (int nrhs : {1, 3}) {
      run_case(n, batch, uplo, nrhs);
      if (::testing::Test::HasFatalFailure()) return;
    }
  });
}

// ---- strided ----------------------------------------------------------------------------------------------

template <class T>
void run_strided_potrf(Uplo uplo, int n, int lda, long long stride, int batch, cudaStream_t stream,
                       std::mt19937_64& rng, const std::string& where) {
  const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, stride, batch, rng);
  DeviceBatch<T> on_gpu(hb, stream);
  on_gpu.upload();
  device::potrf_batched_ex<T>(uplo, n, on_gpu.a.get(), lda, stride, batch, on_gpu.info.get(), stream);
  on_gpu.check(where);
}

// lda > n with gaps between the matrices; and, for the batch of 100, the tight layout (lda = n,
// stride n * n), which the register kernel stages with 16-byte vectors.
TYPED_TEST(DeviceStrided, PotrfMatchesLapackWithFailuresAtKnownColumns) {
  using T = TypeParam;
  for_each_case([&](int n, int batch, Uplo uplo) {
    const int lda = n + 3;
    run_strided_potrf<T>(uplo, n, lda, static_cast<long long>(lda) * n + 5, batch, this->stream, this->rng,
                         describe("strided potrf", uplo, n, batch));
    if (this->HasFatalFailure() || batch == 1) return;
    run_strided_potrf<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->stream, this->rng,
                         describe("strided potrf, tight", uplo, n, batch));
  });
}

TYPED_TEST(DeviceStrided, PotrsAndPosvSolveAndSkipFailedMatrices) {
  using T = TypeParam;
  for_each_solve_case([&](int n, int batch, Uplo uplo, int nrhs) {
    const int lda = n + 2;
    const long long strideA = static_cast<long long>(lda) * n + 1;
    const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
    const HostRhs<T> rhs = strided_rhs(hb, nrhs, this->rng);
    const int ldb = rhs.ld.front();
    DeviceBatch<T> on_gpu(hb, this->stream, &rhs);

    // potrf, then potrs with its info.
    on_gpu.upload();
    device::potrf_batched_ex<T>(uplo, n, on_gpu.a.get(), lda, strideA, batch, on_gpu.info.get(), this->stream);
    device::potrs_batched_ex<T>(uplo, n, nrhs, on_gpu.a.get(), lda, strideA, on_gpu.b.get(), ldb, rhs.stride, batch,
                                on_gpu.info.get(), this->stream);
    on_gpu.check(describe("strided potrf+potrs", uplo, n, batch, nrhs));
    if (this->HasFatalFailure()) return;

    // posv on fresh copies.
    on_gpu.upload();
    device::posv_batched_ex<T>(uplo, n, nrhs, on_gpu.a.get(), lda, strideA, on_gpu.b.get(), ldb, rhs.stride, batch,
                               on_gpu.info.get(), this->stream);
    on_gpu.check(describe("strided posv", uplo, n, batch, nrhs));
  });
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
      const HostRhs<T> rhs = strided_rhs(hb, 2, this->rng);
      DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
      DeviceArray<int> dinfo(batch);
      dA.upload(hb.data, this->stream);
      dB.upload(rhs.data, this->stream);
      device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), this->stream);
      device::potrs_batched_ex<T>(uplo, n, 2, dA.get(), lda, strideA, dB.get(), rhs.ld.front(), rhs.stride, batch,
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
  for_each_case([&](int n, int batch, Uplo uplo) {
    const int lda = n + 2;
    const HostBatch<T> hb = scattered_batch<T>(uplo, n, lda, batch, this->rng);
    DeviceBatch<T> on_gpu(hb, this->stream);
    DeviceArray<T*> dA_array(batch);
    dA_array.upload(pointers_into(on_gpu.a.get(), hb.offsets()), this->stream);
    on_gpu.upload();
    device::potrf_batched_ex<T>(uplo, n, dA_array.get(), lda, batch, on_gpu.info.get(), this->stream);
    on_gpu.check(describe("pointer potrf", uplo, n, batch));
  });
}

TYPED_TEST(DevicePointerArrays, PotrsAndPosvSolveAndSkipFailedMatrices) {
  using T = TypeParam;
  for_each_solve_case([&](int n, int batch, Uplo uplo, int nrhs) {
    const int lda = n + 1;
    const HostBatch<T> hb = scattered_batch<T>(uplo, n, lda, batch, this->rng);
    const HostRhs<T> rhs = scattered_rhs(hb, nrhs, this->rng);
    const int ldb = rhs.ld.front();
    DeviceBatch<T> on_gpu(hb, this->stream, &rhs);
    DeviceArray<T*> dA_array(batch), dB_array(batch);
    dA_array.upload(pointers_into(on_gpu.a.get(), hb.offsets()), this->stream);
    dB_array.upload(pointers_into(on_gpu.b.get(), rhs.offset), this->stream);

    on_gpu.upload();
    device::potrf_batched_ex<T>(uplo, n, dA_array.get(), lda, batch, on_gpu.info.get(), this->stream);
    device::potrs_batched_ex<T>(uplo, n, nrhs, dA_array.get(), lda, dB_array.get(), ldb, batch, on_gpu.info.get(),
                                this->stream);
    on_gpu.check(describe("pointer potrf+potrs", uplo, n, batch, nrhs));
    if (this->HasFatalFailure()) return;

    on_gpu.upload();
    device::posv_batched_ex<T>(uplo, n, nrhs, dA_array.get(), lda, dB_array.get(), ldb, batch, on_gpu.info.get(),
                               this->stream);
    on_gpu.check(describe("pointer posv", uplo, n, batch, nrhs));
  });
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
  vb.hb = build_batch<T>(uplo_char(uplo), vb.orders, vb.lds, offsets, total, refused_info, rng, spoil);
  return vb;
}

constexpr int kVariableBounds[] = {7, 33, 200};

TYPED_TEST(DeviceVariable, PotrfFactorsValidMembersAndRefusesBadSizes) {
  using T = TypeParam;
  for (int max_n : kVariableBounds)
    for (Uplo uplo : kUplos) {
      const VariableBatch<T> vb = variable_batch<T>(uplo, max_n, 5, this->rng);
      const int batch = vb.hb.batch();
      DeviceBatch<T> on_gpu(vb.hb, this->stream);
      DeviceArray<T*> dA_array(batch);
      DeviceArray<int> dn(batch), dlda(batch);
      dA_array.upload(pointers_into(on_gpu.a.get(), vb.hb.offsets()), this->stream);
      dn.upload(vb.orders, this->stream);
      dlda.upload(vb.lds, this->stream);
      on_gpu.upload();
      device::potrf_vbatched_ex<T>(uplo, dn.get(), max_n, dA_array.get(), dlda.get(), batch, on_gpu.info.get(),
                                   this->stream);
      const std::vector<int> info = on_gpu.check(describe("vbatched potrf", uplo, max_n, batch));
      EXPECT_EQ(info[0], 0) << "a matrix of order 0";
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

        DeviceBatch<T> on_gpu(vb.hb, this->stream, &rhs);
        DeviceArray<T*> dA_array(batch), dB_array(batch);
        DeviceArray<int> dn(batch), dlda(batch), dldb(batch);
        dA_array.upload(pointers_into(on_gpu.a.get(), vb.hb.offsets()), this->stream);
        dB_array.upload(pointers_into(on_gpu.b.get(), b_offsets), this->stream);
        dn.upload(vb.orders, this->stream);
        dlda.upload(vb.lds, this->stream);
        dldb.upload(vb.ldbs, this->stream);

        // posv: every refused member reported, with its position in posv's list.
        on_gpu.upload();
        // short_ldb is refused as a whole: its triangle must stay as uploaded too.
        HostBatch<T> posv_expected = vb.hb;
        BatchMember& short_ldb = posv_expected.members[refused.short_ldb];
        short_ldb.expected_info = -8;
        for (int j = 0; j < short_ldb.n; ++j)
          for (int i = 0; i < short_ldb.n; ++i)
            posv_expected.referenced[short_ldb.offset + static_cast<std::size_t>(j) * short_ldb.ld + i] = 0;
        device::posv_vbatched_ex<T>(uplo, dn.get(), max_n, nrhs, dA_array.get(), dlda.get(), dB_array.get(),
                                    dldb.get(), batch, on_gpu.info.get(), this->stream);
        on_gpu.check(posv_expected, describe("vbatched posv", uplo, max_n, batch, nrhs));
        if (this->HasFatalFailure()) return;

        // potrf_vbatched (lda refused with -5), then potrs_vbatched with its info.
        HostBatch<T> potrf_expected = vb.hb;
        potrf_expected.members[refused.short_lda].expected_info = -5;
        on_gpu.upload();
        device::potrf_vbatched_ex<T>(uplo, dn.get(), max_n, dA_array.get(), dlda.get(), batch, on_gpu.info.get(),
                                     this->stream);
        device::potrs_vbatched_ex<T>(uplo, dn.get(), max_n, nrhs, dA_array.get(), dlda.get(), dB_array.get(),
                                     dldb.get(), batch, on_gpu.info.get(), this->stream);
        on_gpu.check(potrf_expected, describe("vbatched potrf+potrs", uplo, max_n, batch, nrhs));
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

      // The non-checking form's info, read back by read_info.
      DeviceArray<int> d_info(static_cast<std::size_t>(batch));
      dA.upload(hb.data, this->stream);
      device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, strideA, batch, d_info.get(), this->stream);
      host_info = poisoned_info(batch);
      EXPECT_EQ(device::read_info(d_info.get(), batch, host_info.data(), this->stream), 3);
      EXPECT_EQ(host_info, expected) << "read_info";
      check_factors(hb, dA.download(this->stream), host_info, describe("checking potrf", uplo, n, batch));

      dA.upload(hb.data, this->stream);
      EXPECT_EQ(device::potrf_batched<T>(uplo, n, dA.get(), lda, strideA, batch, nullptr, this->stream), 3)
          << "host_info null";
      check_factors(hb, dA.download(this->stream), expected, describe("checking potrf, no host info", uplo, n, batch));

      const HostRhs<T> rhs = strided_rhs(hb, nrhs, this->rng);
      DeviceArray<T> dB(rhs.data.size());
      host_info = poisoned_info(batch);
      dA.upload(hb.data, this->stream);
      dB.upload(rhs.data, this->stream);
      EXPECT_EQ(device::posv_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), rhs.ld.front(), rhs.stride,
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
              opposite[at] = !in_triangle(uplo_char(uplo), i, j);
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
  const HostRhs<T> rhs = strided_rhs(hb, nrhs, this->rng);
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
    device::posv_batched_ex<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, rhs.stride, batch, dinfo.get(),
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
    return device::posv_batched<T>(uplo, n, nrhs, dA.get(), lda, strideA, dB.get(), ldb, rhs.stride, batch,
                                   host_info.data(), this->stream);
  });
  EXPECT_EQ(failed, 3);
  EXPECT_EQ(host_info, expected_infos(hb));
  check_solutions(hb, rhs, b_out.values(), host_info, "posv_batched (checking) on the stream");
}

// ---- out of place ---------------------------------------------------------------------------------------------

int c_potrf_out_of_place(char u, int n, const double* A, long long rs, long long cs, long long sA, double* L, int ldl,
                         long long sL, int batch, int* info, void* s) {
  return tessera_dpotrf_batched_device_out_of_place_ex(u, n, A, rs, cs, sA, L, ldl, sL, batch, info, s);
}
int c_potrf_out_of_place(char u, int n, const float* A, long long rs, long long cs, long long sA, float* L, int ldl,
                         long long sL, int batch, int* info, void* s) {
  return tessera_spotrf_batched_device_out_of_place_ex(u, n, A, rs, cs, sA, L, ldl, sL, batch, info, s);
}

// hb (tight) factored in place, the reference, then out of place from every source layout through
// the C++ API and, for the C-ordered one, the C API, into factors with ldl = n + 1 and gaps.
// `nan_member` >= 0: that member gets a NaN on its diagonal at column n / 2 (info n / 2 + 1).

enum class OutOfPlaceForm { batched, c_api, stack };

template <class T>
void run_out_of_place(HostBatch<T>& hb, Uplo uplo, int n, int batch, int nan_member, cudaStream_t stream,
                      const std::string& label, bool stack_only = false) {
  const long long nn = static_cast<long long>(n) * n;
  if (nan_member >= 0) hb.data[hb.members[nan_member].offset + static_cast<std::size_t>(n / 2) * (n + 1)] = poison<T>();
  DeviceArray<T> dRef(hb.data.size());
  DeviceArray<int> dRefInfo(batch);
  dRef.upload(hb.data, stream);
  dRefInfo.upload(poisoned_info(batch), stream);
  device::potrf_batched_ex<T>(uplo, n, dRef.get(), n, nn, batch, dRefInfo.get(), stream);
  const std::vector<T> in_place = dRef.download(stream);
  const std::vector<int> in_place_info = dRefInfo.download(stream);
  if (nan_member >= 0) {
    ASSERT_EQ(in_place_info[nan_member], n / 2 + 1) << label << ": NaN on the diagonal";
  } else {
    check_factors(hb, in_place, in_place_info, "in place, " + label);
    if (::testing::Test::HasFatalFailure()) return;
  }

  const int ldl = n + 1;
  const long long strideL = static_cast<long long>(ldl) * n + 2;
  const std::vector<T> before(static_cast<std::size_t>(strideL) * batch + 1, poison<T>());
  for (const SourceLayout& layout : source_layouts(n))
    for (OutOfPlaceForm form : {OutOfPlaceForm::batched, OutOfPlaceForm::c_api, OutOfPlaceForm::stack}) {
      const bool c_api = form == OutOfPlaceForm::c_api;
      if ((c_api && layout.rs != n) || (stack_only && form != OutOfPlaceForm::stack)) continue;
      const std::string where = label + ", " + layout.name +
                                (c_api ? " (C API)" : form == OutOfPlaceForm::stack ? " (potrf_stack_ex)" : "");
      const std::vector<T> source = source_for(hb, layout);
      DeviceArray<T> dSource(source.size()), dL(before.size());
      DeviceArray<int> dinfo(batch);
      dSource.upload(source, stream);
      dL.upload(before, stream);
      dinfo.upload(poisoned_info(batch), stream);
      const T* A = dSource.get() + layout.base;
      if (c_api)
        ASSERT_EQ(c_potrf_out_of_place(uplo_char(uplo), n, A, layout.rs, layout.cs, layout.stride, dL.get(), ldl,
                                       strideL, batch, dinfo.get(), stream),
                  0)
            << where;
      else if (form == OutOfPlaceForm::stack) {
        tessera::FactorOptions options;
        options.uplo = uplo;
        options.mode = tessera::Mode::gpu;
        device::potrf_stack_ex<T>(gpu_runtime(), n, A, layout.rs, layout.cs, layout.stride, dL.get(), ldl, strideL,
                                  batch, dinfo.get(), stream, options);
      } else
        device::potrf_batched_ex<T>(uplo, n, A, layout.rs, layout.cs, layout.stride, dL.get(), ldl, strideL, batch,
                                    dinfo.get(), stream);
      EXPECT_EQ(dinfo.download(stream), in_place_info) << where << ": info";
      // The stack entry runs cuSOLVER (or the dense device API), not the kernels: equal within rounding.
      check_out_of_place(hb, in_place, before, dL.download(stream), ldl, strideL, where,
                         form == OutOfPlaceForm::stack ? &in_place_info : nullptr);
      const std::vector<T> after = dSource.download(stream);
      std::size_t changed = 0;
      for (std::size_t e = 0; e < source.size(); ++e) changed += !same_bits(source[e], after[e]);
      EXPECT_EQ(changed, 0u) << where << ": the source changed";
      if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(DeviceOutOfPlace, MatchesTheInPlaceFormFromEveryLayout) {
  using T = TypeParam;
  for_each_case([&](int n, int batch, Uplo uplo) {
    HostBatch<T> hb = strided_batch<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->rng);
    run_out_of_place(hb, uplo, n, batch, -1, this->stream, describe("out of place", uplo, n, batch));
  });
}

TYPED_TEST(DeviceOutOfPlace, NanOnTheDiagonalIsReportedWhereItIs) {
  using T = TypeParam;
  for (int n : {1, 9, 32, 33, 100})
    for (Uplo uplo : kUplos) {
      HostBatch<T> hb = strided_batch<T>(uplo, n, n, static_cast<long long>(n) * n, 7, this->rng);
      run_out_of_place(hb, uplo, n, 7, 4, this->stream, describe("out of place, NaN", uplo, n, 7));
      if (this->HasFailure()) return;
    }
}

// Stacks that cuSOLVER's batched potrf factors in one call (moderate orders, few matrices) and
// those that go one matrix at a time, with a NaN member: the same factors and info as the
// batched kernels' from every layout.
TYPED_TEST(DeviceOutOfPlace, StacksMatchTheBatchedKernels) {
  using T = TypeParam;
  for (const auto& [n, batch] : {std::pair{300, 3}, std::pair{129, 2}, std::pair{700, 9}, std::pair{1100, 2}})
    for (Uplo uplo : kUplos) {
      HostBatch<T> hb = strided_batch<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->rng);
      run_out_of_place(hb, uplo, n, batch, -1, this->stream, describe("stack", uplo, n, batch), true);
      HostBatch<T> with_nan = strided_batch<T>(uplo, n, n, static_cast<long long>(n) * n, batch, this->rng);
      const std::vector<int> expected = expected_infos(with_nan);
      const int clean = static_cast<int>(std::find(expected.begin(), expected.end(), 0) - expected.begin());
      if (clean < batch)  // a member that would factor gets the NaN
        run_out_of_place(with_nan, uplo, n, batch, clean, this->stream, describe("stack, NaN", uplo, n, batch), true);
      if (this->HasFailure()) return;
    }
}

// L == A in A's own layout: the in-place factorization, with zeros in the opposite triangle.
TYPED_TEST(DeviceOutOfPlace, SourceEqualToOutputFactorsInPlace) {
  using T = TypeParam;
  for (int n : {5, 32, 64})
    for (Uplo uplo : kUplos) {
      const int lda = n + 2;
      const long long stride = static_cast<long long>(lda) * n + 3;
      const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, stride, 100, this->rng);
      DeviceBatch<T> on_gpu(hb, this->stream);
      on_gpu.upload();
      device::potrf_batched_ex<T>(uplo, n, static_cast<const T*>(on_gpu.a.get()), 1, lda, stride, on_gpu.a.get(), lda,
                                  stride, 100, on_gpu.info.get(), this->stream);
      const std::vector<T> out = on_gpu.a.download(this->stream);
      const std::vector<int> info = on_gpu.info.download(this->stream);
      for (int k = 0; k < 100; ++k)
        check_factor(hb, k, out, info[k], describe("in place, out-of-place form", uplo, n, 100), BackwardError::skip);
      // Outside the triangles: zeros in the opposite ones, everything else as uploaded.
      std::vector<T> zeroed = hb.data;
      for (int k = 0; k < 100; ++k)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (!in_triangle(hb.uplo, i, j)) zeroed[k * stride + static_cast<std::size_t>(j) * lda + i] = T(0);
      std::size_t differ = 0;
      for (std::size_t e = 0; e < out.size(); ++e) differ += !hb.referenced[e] && !same_bits(out[e], zeroed[e]);
      EXPECT_EQ(differ, 0u) << "elements outside the triangles: zeros in the opposite one, the rest unchanged";
      if (this->HasFailure()) return;
    }
}

// potrs_stack_ex (the dense device API's stack of solves, on the caller's stream in gpu mode) with
// the batched kernels' factors, lda > n, gaps between matrices: every matrix solved, as LAPACK.
TYPED_TEST(DeviceOutOfPlace, PotrsStackSolvesEveryMatrix) {
  using T = TypeParam;
  for (int n : {7, 64, 200})
    for (Uplo uplo : kUplos) {
      const int batch = 2, nrhs = 3, lda = n + 1;  // failure_at spoils nothing below 3 matrices
      const long long strideA = static_cast<long long>(lda) * n + 2;
      const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
      const HostRhs<T> rhs = strided_rhs(hb, nrhs, this->rng);
      DeviceArray<T> dA(hb.data.size()), dB(rhs.data.size());
      DeviceArray<int> dinfo(batch);
      dA.upload(hb.data, this->stream);
      dB.upload(rhs.data, this->stream);
      device::potrf_batched_ex<T>(uplo, n, dA.get(), lda, strideA, batch, dinfo.get(), this->stream);
      tessera::FactorOptions options;
      options.uplo = uplo;
      options.mode = tessera::Mode::gpu;
      device::potrs_stack_ex<T>(gpu_runtime(), n, nrhs, dA.get(), lda, strideA, dB.get(), rhs.ld.front(), rhs.stride,
                                batch, this->stream, options);
      const std::vector<int> info = dinfo.download(this->stream);
      ASSERT_EQ(info, std::vector<int>(batch, 0));
      check_solutions(hb, rhs, dB.download(this->stream), info, describe("potrs_stack_ex", uplo, n, batch, nrhs));
      if (this->HasFatalFailure()) return;
    }
}

// ---- C API ------------------------------------------------------------------------------------------------

TYPED_TEST(DeviceCApi, StridedCallsOnAStream) {
  using T = TypeParam;
  for (Uplo uplo : kUplos) {
    const char u = uplo_char(uplo);
    const int n = 33, batch = 100, nrhs = 2, lda = n + 2;
    const long long strideA = static_cast<long long>(lda) * n + 1;
    const HostBatch<T> hb = strided_batch<T>(uplo, n, lda, strideA, batch, this->rng);
    const HostRhs<T> rhs = strided_rhs(hb, nrhs, this->rng);
    const int ldb = rhs.ld.front();
    DeviceBatch<T> on_gpu(hb, this->stream, &rhs);
    T* const dA = on_gpu.a.get();
    T* const dB = on_gpu.b.get();
    int* const dinfo = on_gpu.info.get();
    void* c_stream = this->stream;  // the C API takes a cudaStream_t as void*

    on_gpu.upload();
    ASSERT_EQ(c_potrf_ex(u, n, dA, lda, strideA, batch, dinfo, c_stream), 0);
    ASSERT_EQ(c_potrs_ex(u, n, nrhs, dA, lda, strideA, dB, ldb, rhs.stride, batch, dinfo, c_stream), 0);
    on_gpu.check(describe("C potrf_ex+potrs_ex", uplo, n, batch, nrhs));

    on_gpu.upload();
    ASSERT_EQ(c_posv_ex(u, n, nrhs, dA, lda, strideA, dB, ldb, rhs.stride, batch, dinfo, c_stream), 0);
    on_gpu.check(describe("C posv_ex", uplo, n, batch, nrhs));

    std::vector<int> host_info = poisoned_info(batch);
    on_gpu.a.upload(hb.data, this->stream);
    EXPECT_EQ(c_potrf_checking(u, n, dA, lda, strideA, batch, host_info.data(), c_stream), 3);
    EXPECT_EQ(host_info, expected_infos(hb));
    if (this->HasFatalFailure()) return;
  }
}

}  // namespace
