// The small CUDA helpers of matrix_utils.hpp: copy_blocks, transpose_triangle in both directions and
// in place, with leading dimensions larger than n, checked element by element (nothing outside the
// triangle written); load_lower through any strides, launched directly and as a graph node;
// check_potrf_info against the host's rule for every position of a failing diagonal entry, and
// store_factor_node's info by the same rule, its copy of either triangle; round_to_16bit against
// the host's rounding. Skipped where no CUDA device is present.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/graph_nodes.hpp"
#include "cuda/matrix_utils.hpp"
#include "kernel_test_support.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

template <class T>
class MatrixUtilsTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixUtilsTyped, Precisions);

template <class T>
T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return device;
}

template <class T>
std::vector<T> to_host(const T* device, std::size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

bool in(tk::Triangle t, int i, int j) { return t == tk::Triangle::lower ? i >= j : i <= j; }

// A numbered source of lds x n elements, and what `launch(device source, device destination)`
// leaves in a destination of ldd x n elements that starts poisoned.
template <class T>
struct CopyRun {
  std::vector<T> src;
  std::vector<T> out;
};

template <class T, class Launch>
CopyRun<T> run_copy(int n, int lds, int ldd, Launch&& launch) {
  const std::size_t src_size = static_cast<std::size_t>(lds) * n, dst_size = static_cast<std::size_t>(ldd) * n;
  CopyRun<T> run{std::vector<T>(src_size), {}};
  for (std::size_t e = 0; e < src_size; ++e) run.src[e] = static_cast<T>(e % 1000) + T(0.25);
  T* d_src = to_device(run.src);
  T* d_dst = to_device(std::vector<T>(dst_size, poison<T>()));
  launch(d_src, d_dst);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  run.out = to_host(d_dst, dst_size);
  cudaFree(d_src);
  cudaFree(d_dst);
  return run;
}

template <class T>
void check_transpose(tk::Triangle to, int n, int lds, int ldd) {
  const CopyRun<T> run = run_copy<T>(n, lds, ldd, [&](const T* src, T* dst) {
    tk::transpose_triangle<T>(to, n, src, lds, dst, ldd, nullptr);
  });
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldd; ++i) {
      const T got = run.out[i + static_cast<std::size_t>(j) * ldd];
      if (i < n && in(to, i, j))
        ASSERT_EQ(got, run.src[j + static_cast<std::size_t>(i) * lds]) << "n=" << n << " (" << i << ", " << j << ")";
      else
        ASSERT_TRUE(same_bits(got, poison<T>())) << "written outside the triangle: n=" << n << " (" << i << ", " << j << ")";
    }
}

TYPED_TEST(MatrixUtilsTyped, TransposeTriangleBothWays) {
  const std::string why = missing_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (tk::Triangle to : {tk::Triangle::lower, tk::Triangle::upper})
    for (int n : {1, 2, 31, 32, 33, 64, 100, 257}) check_transpose<TypeParam>(to, n, n + 3, n + 7);
}

// In place (src == dst): the triangle `to` receives the other one transposed; the other triangle
// and the rows past n keep their values.
TYPED_TEST(MatrixUtilsTyped, TransposeTriangleInPlace) {
  using T = TypeParam;
  const std::string why = missing_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (tk::Triangle to : {tk::Triangle::lower, tk::Triangle::upper})
    for (int n : {1, 2, 31, 32, 33, 100, 257}) {
      const int ld = n + 3;
      std::vector<T> before(static_cast<std::size_t>(ld) * n);
      for (std::size_t e = 0; e < before.size(); ++e) before[e] = static_cast<T>(e % 1000) + T(0.5);
      T* d = to_device(before);
      tk::transpose_triangle<T>(to, n, d, ld, d, ld, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const std::vector<T> after = to_host(d, before.size());
      cudaFree(d);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < ld; ++i) {
          const std::size_t e = i + static_cast<std::size_t>(j) * ld;
          const T expected = i < n && in(to, i, j) ? before[j + static_cast<std::size_t>(i) * ld] : before[e];
          ASSERT_EQ(after[e], expected) << "n=" << n << " (" << i << ", " << j << ")";
        }
    }
}

// copy_blocks: many blocks of odd sizes and leading dimensions into one destination array, at
// 16-byte-aligned and unaligned addresses (the vector and the element paths), full or lower only,
// more than one launch's worth; every copied element right, nothing else of dst written.
template <class T>
void check_copy_blocks(int count, bool misaligned) {
  struct Shape {
    int m, n, lds, ldd;
    bool lower_only;
    std::size_t src_at, dst_at;
  };
  std::vector<Shape> shapes;
  std::size_t src_size = 0, dst_size = 0;
  for (int k = 0; k < count; ++k) {
    const int m = 1 + (k * 37) % 300, n = 1 + (k * 53) % 260;
    const int lds = m + (k % 3) * 2, ldd = m + (k % 4);
    const std::size_t pad = misaligned ? 1 : 0;
    shapes.push_back({m, n, lds, ldd, k % 5 == 1, src_size + pad, dst_size + pad});
    src_size += pad + static_cast<std::size_t>(lds) * n + 8;
    dst_size += pad + static_cast<std::size_t>(ldd) * n + 8;
  }
  std::vector<T> src(src_size);
  for (std::size_t e = 0; e < src_size; ++e) src[e] = static_cast<T>(e % 1009) + T(0.5);
  T* d_src = to_device(src);
  T* d_dst = to_device(std::vector<T>(dst_size, poison<T>()));
  std::vector<tk::BlockCopy<T>> copies;
  for (const Shape& b : shapes)
    copies.push_back({d_src + b.src_at, d_dst + b.dst_at, b.lds, b.ldd, b.m, b.n, b.lower_only});
  tk::copy_blocks<T>(copies.data(), count, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> out = to_host(d_dst, dst_size);
  cudaFree(d_src);
  cudaFree(d_dst);
  std::vector<bool> written(dst_size, false);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& b = shapes[k];
    for (int j = 0; j < b.n; ++j)
      for (int i = 0; i < b.m; ++i) {
        if (b.lower_only && i < j) continue;
        const std::size_t e = b.dst_at + i + static_cast<std::size_t>(j) * b.ldd;
        written[e] = true;
        ASSERT_EQ(out[e], src[b.src_at + i + static_cast<std::size_t>(j) * b.lds])
            << "copy " << k << " (" << b.m << " x " << b.n << ") at (" << i << ", " << j << ")";
      }
  }
  for (std::size_t e = 0; e < dst_size; ++e)
    if (!written[e]) ASSERT_TRUE(same_bits(out[e], poison<T>())) << "written outside every block at " << e;
}

TYPED_TEST(MatrixUtilsTyped, CopyBlocksCopiesEachBlockAlone) {
  const std::string why = missing_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (int count : {1, 7, 64, 65, 150})
    for (bool misaligned : {false, true}) check_copy_blocks<TypeParam>(count, misaligned);
}

// load_lower: dst's lower triangle from the strided source's lower triangle (whose strict upper
// triangle is NaN: never read), zeros above the diagonal, dst's rows past n untouched.
// `as_node`: the launch of load_lower_node.
template <class T>
void check_load_lower(int n, long long row_stride, long long col_stride, int ldd, bool as_node = false) {
  const std::string name = "n=" + std::to_string(n) + " strides " + std::to_string(row_stride) + ", " +
                           std::to_string(col_stride) + (as_node ? " (node)" : "");
  long long lowest = 0, highest = 0;
  for (long long corner : {0LL, (n - 1) * row_stride, (n - 1) * col_stride, (n - 1) * (row_stride + col_stride)}) {
    lowest = std::min(lowest, corner);
    highest = std::max(highest, corner);
  }
  std::vector<T> src(static_cast<std::size_t>(highest - lowest + 1), T(-3));
  auto at = [&](int i, int j) { return static_cast<std::size_t>(i * row_stride + j * col_stride - lowest); };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) src[at(i, j)] = i >= j ? T(1 + (i * 7 + j) % 997) : std::numeric_limits<T>::quiet_NaN();
  T* d_src = to_device(src);
  T* d_dst = to_device(std::vector<T>(static_cast<std::size_t>(ldd) * n, poison<T>()));
  if (as_node) {
    tk::KernelNode node;
    tk::load_lower_node<T>(node, n, d_src - lowest, row_stride, col_stride, d_dst, ldd, false);
    ASSERT_EQ(node.launch(nullptr), cudaSuccess) << name;
  } else {
    tk::load_lower<T>(n, d_src - lowest, row_stride, col_stride, d_dst, ldd, false, nullptr);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
  const std::vector<T> out = to_host(d_dst, static_cast<std::size_t>(ldd) * n);
  cudaFree(d_src);
  cudaFree(d_dst);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldd; ++i) {
      const T got = out[i + static_cast<std::size_t>(j) * ldd];
      if (i >= n)
        ASSERT_TRUE(same_bits(got, poison<T>())) << "written past row n: " << name << " (" << i << ", " << j << ")";
      else if (i >= j)
        ASSERT_EQ(got, src[at(i, j)]) << name << " (" << i << ", " << j << ")";
      else
        ASSERT_TRUE(same_bits(got, T(0))) << "not zero above the diagonal: " << name << " (" << i << ", " << j << ")";
    }
}

TYPED_TEST(MatrixUtilsTyped, LoadLowerReadsThroughStridesAndZerosAbove) {
  const std::string why = missing_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (bool as_node : {false, true})
    for (int n : {1, 2, 31, 32, 33, 100, 257}) {
      const long long ld = n + 3;
      check_load_lower<TypeParam>(n, ld, 1, n + 5, as_node);      // C-ordered
      check_load_lower<TypeParam>(n, 1, ld, n, as_node);          // Fortran-ordered
      check_load_lower<TypeParam>(n, 2 * ld, 2, n + 1, as_node);  // every other row and column
      check_load_lower<TypeParam>(n, -ld, -1, n + 2, as_node);    // flipped both ways
    }
}

// check_potrf_info on an n x n factor (leading dimension ld) whose diagonal is positive but at
// `bad` (0-based; -1: none), where it holds `value`, after a factorization that reported `reported`;
// with `by_store`, the info store_factor_node writes from that factor and report instead.
template <class T>
int checked_info(int n, int ld, int bad, T value, int reported, bool by_store) {
  std::vector<T> factor(static_cast<std::size_t>(ld) * n, T(-7));  // off the diagonal: never read as a pivot
  for (int j = 0; j < n; ++j) factor[j + static_cast<std::size_t>(j) * ld] = T(1) + T(j % 5);
  if (bad >= 0) factor[bad + static_cast<std::size_t>(bad) * ld] = value;
  T* d_factor = to_device(factor);
  int* d_info = to_device(std::vector<int>{reported, -99});
  T* d_stored = to_device(std::vector<T>(static_cast<std::size_t>(n) * n));
  if (by_store) {
    tk::KernelNode node;
    tk::store_factor_node<T>(node, n, d_factor, ld, d_info, d_stored, n, false, true, d_info + 1);
    EXPECT_EQ(node.launch(nullptr), cudaSuccess);
  } else {
    tk::check_potrf_info<T>(n, d_factor, ld, d_info, nullptr);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> infos = to_host(d_info, 2);
  cudaFree(d_factor);
  cudaFree(d_info);
  cudaFree(d_stored);
  if (by_store) EXPECT_EQ(infos[0], reported) << "the factorization's report was written";
  return infos[by_store ? 1 : 0];
}

// store_factor_node: L's lower triangle W's, or its upper one W's lower one conjugated and
// transposed (W's upper triangle NaN: never read), the other triangle zeros or (zero_other false)
// left, rows past n untouched.
template <class T>
void check_store_factor(int n, bool upper, bool zero_other) {
  const std::string name = "n=" + std::to_string(n) + (upper ? " upper" : " lower") +
                           (zero_other ? " zero_other" : "");
  const int ldw = n + 3, ldl = n + 2;
  std::vector<T> W(static_cast<std::size_t>(ldw) * n, T(std::numeric_limits<double>::quiet_NaN()));
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) W[i + static_cast<std::size_t>(j) * ldw] = T(1 + (i * 7 + j) % 997);
  if constexpr (!std::is_floating_point_v<T>)
    for (int j = 0; j < n; ++j)
      for (int i = j + 1; i < n; ++i) W[i + static_cast<std::size_t>(j) * ldw] += T(0, 1 + (i + 3 * j) % 11);
  const T kept(-11);
  const DeviceBuffer<T> d_W(W), d_L(std::vector<T>(static_cast<std::size_t>(ldl) * n, kept));
  const DeviceBuffer<int> d_infos(std::vector<int>{0, -99});
  tk::KernelNode node;
  tk::store_factor_node<T>(node, n, d_W.get(), ldw, d_infos.get(), d_L.get(), ldl, upper, zero_other,
                           d_infos.get() + 1);
  ASSERT_EQ(node.launch(nullptr), cudaSuccess) << name;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
  EXPECT_EQ(d_infos.to_host()[1], 0) << name;
  const std::vector<T> L = d_L.to_host();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldl; ++i) {
      const T got = L[i + static_cast<std::size_t>(j) * ldl];
      const bool in_factor = upper ? i <= j : i >= j;
      if (i >= n || (!in_factor && !zero_other))
        ASSERT_TRUE(same_bits(got, kept)) << "written: " << name << " (" << i << ", " << j << ")";
      else if (!in_factor)
        ASSERT_TRUE(same_bits(got, T(0))) << "not zero: " << name << " (" << i << ", " << j << ")";
      else if (upper)
        ASSERT_EQ(got, std::conj(W[j + static_cast<std::size_t>(i) * ldw])) << name << " (" << i << ", " << j << ")";
      else
        ASSERT_EQ(got, W[i + static_cast<std::size_t>(j) * ldw]) << name << " (" << i << ", " << j << ")";
    }
}

template <class T>
void check_store_factor_everywhere() {
  for (int n : {1, 2, 31, 32, 33, 100, 257})
    for (bool upper : {false, true})
      for (bool zero_other : {false, true}) check_store_factor<T>(n, upper, zero_other);
}

TYPED_TEST(MatrixUtilsTyped, StoreFactorNodeStoresEitherTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_store_factor_everywhere<TypeParam>();
}

TEST(MatrixUtilsComplex, StoreFactorNodeConjugatesTheUpperTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_store_factor_everywhere<std::complex<double>>();
  check_store_factor_everywhere<std::complex<float>>();
}

TYPED_TEST(MatrixUtilsTyped, PotrfInfoIsTheFirstFactoredColumnWithoutAPositiveDiagonal) {
  const std::string why = missing_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (bool by_store : {false, true})
    for (int n : {1, 2, 63, 64, 65, 1023, 1024, 1025, 2049}) {
    const int ld = n + 3;
    const auto info_of = [&](int order, int lead, int bad, T value, int reported) {
      return checked_info<T>(order, lead, bad, value, reported, by_store);
    };
    EXPECT_EQ(info_of(n, ld, -1, T(0), 0), 0) << "n=" << n;
    EXPECT_EQ(info_of(n, ld, -1, T(0), -4), -4) << "a negative info is kept, n=" << n;
    for (int bad : {0, 1, n / 2, n - 2, n - 1}) {
      if (bad < 0 || bad >= n) continue;
      for (T value : {T(0), T(-1), nan}) {
        // Nothing reported (a NaN let through on the last column), or a later column reported.
        EXPECT_EQ(info_of(n, ld, bad, value, 0), bad + 1) << "n=" << n << " bad=" << bad << " value=" << value;
        if (bad + 2 <= n)
          EXPECT_EQ(info_of(n, ld, bad, value, bad + 2), bad + 1) << "n=" << n << " bad=" << bad;
        // The reported column itself is not factored: its diagonal is not read.
        EXPECT_EQ(info_of(n, ld, bad, value, bad + 1), bad + 1) << "n=" << n << " bad=" << bad;
      }
      // A failure reported before a bad entry wins: the entries after it are not factored.
      if (bad >= 1) EXPECT_EQ(info_of(n, ld, bad, nan, bad), bad) << "n=" << n << " bad=" << bad;
    }
  }
}

}  // namespace

namespace {

// The 16-bit pattern of x rounded to nearest by the host's conversion.
std::uint16_t host_16bit(tk::Float16Format format, float x) {
  std::uint16_t bits = 0;
  if (format == tk::Float16Format::fp16) {
    const __half h = __float2half_rn(x);
    std::memcpy(&bits, &h, sizeof(bits));
  } else {
    const __nv_bfloat16 b = __float2bfloat16_rn(x);
    std::memcpy(&bits, &b, sizeof(bits));
  }
  return bits;
}

}  // namespace

// round_to_16bit: every element as the host rounds it (values between representable ones, tiny
// ones, and values beyond FP16's range, which FP16 makes infinite and BF16 keeps); odd row counts
// (the last row of a column goes alone) and destination leading dimensions odd and even (pairs
// stored as one word only where aligned); nothing past m rows written.
TEST(MatrixUtils, RoundTo16BitAsTheHostRounds) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  constexpr std::uint16_t kPoison = 0x7e5a;
  for (tk::Float16Format format : {tk::Float16Format::fp16, tk::Float16Format::bf16})
    for (int m : {1, 2, 37, 64, 513})
      for (int extra : {0, 1, 3}) {
        const int n = 29, lds = m + 5, ldd = m + extra;
        SCOPED_TRACE(testing::Message() << (format == tk::Float16Format::fp16 ? "fp16" : "bf16") << " m=" << m
                                        << " ldd=" << ldd);
        std::vector<float> src(static_cast<std::size_t>(lds) * n);
        for (std::size_t e = 0; e < src.size(); ++e) {
          const float scale = e % 7 == 0 ? 1e5f : e % 11 == 0 ? 3e-7f : 1.0f;
          src[e] = scale * (static_cast<float>(e % 1013) / 1013.0f - 0.5f + 1.0f / 3.0f);
        }
        DeviceBuffer<float> d_src(src);
        DeviceBuffer<std::uint16_t> d_dst(std::vector<std::uint16_t>(static_cast<std::size_t>(ldd) * n, kPoison));
        tk::round_to_16bit(format, m, n, d_src.get(), lds, d_dst.get(), ldd, nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<std::uint16_t> got = d_dst.to_host();
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < ldd; ++i) {
            const std::uint16_t bits = got[i + static_cast<std::size_t>(j) * ldd];
            const std::uint16_t expected = i < m ? host_16bit(format, src[i + static_cast<std::size_t>(j) * lds]) : kPoison;
            ASSERT_EQ(bits, expected) << "(" << i << ", " << j << ")";
          }
      }
  // The value that shows which format ran: 1e5 is infinite in FP16 (0x7c00), finite in BF16.
  EXPECT_EQ(host_16bit(tk::Float16Format::fp16, 1e5f), 0x7c00);
  EXPECT_NE(host_16bit(tk::Float16Format::bf16, 1e5f) & 0x7f80, 0x7f80);
}
