// The small CUDA helpers of matrix_utils.hpp: transpose_triangle in both directions, with
// leading dimensions larger than n, checked element by element (nothing outside the triangle
// written). Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

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

template <class T>
void check_transpose(tk::Triangle to, int n, int lds, int ldd) {
  const std::size_t src_size = static_cast<std::size_t>(lds) * n, dst_size = static_cast<std::size_t>(ldd) * n;
  std::vector<T> src(src_size), dst(dst_size, poison<T>());
  for (std::size_t e = 0; e < src_size; ++e) src[e] = static_cast<T>(e % 1000) + T(0.25);
  T* d_src = to_device(src);
  T* d_dst = to_device(dst);
  tk::transpose_triangle<T>(to, n, d_src, lds, d_dst, ldd, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> out = to_host(d_dst, dst_size);
  cudaFree(d_src);
  cudaFree(d_dst);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldd; ++i) {
      const T got = out[i + static_cast<std::size_t>(j) * ldd];
      if (i < n && in(to, i, j))
        ASSERT_EQ(got, src[j + static_cast<std::size_t>(i) * lds]) << "n=" << n << " (" << i << ", " << j << ")";
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

}  // namespace
