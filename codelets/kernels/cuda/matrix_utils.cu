#include "check.hpp"
#include "matrix_utils.hpp"

namespace tessera::kernels::cuda {

namespace {

template <class T>
__global__ void copy_lower_kernel(int m, int n, const T* src, int lds, T* dst, int ldd) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < m && j < n) dst[i + static_cast<long>(j) * ldd] = i >= j ? src[i + static_cast<long>(j) * lds] : T(0);
}

}  // namespace

template <class T>
void copy_lower(int m, int n, const T* src, int lds, T* dst, int ldd, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 grid((m + 127) / 128, n);
  copy_lower_kernel<<<grid, 128, 0, stream>>>(m, n, src, lds, dst, ldd);
  TESSERA_CUDA_CHECK_LAUNCH();
}

template void copy_lower<float>(int, int, const float*, int, float*, int, cudaStream_t);
template void copy_lower<double>(int, int, const double*, int, double*, int, cudaStream_t);

}  // namespace tessera::kernels::cuda
