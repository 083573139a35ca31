// Status checks for CUDA, cuBLAS and cuSOLVER calls. Each macro evaluates its argument exactly
// once and throws tessera::CudaError with the call's text, file and line on failure; they stay
// active in every build type.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "tessera/error.hpp"

namespace tessera::cuda_detail {

[[noreturn]] void throw_cuda_error(const char* kind, int code, const char* detail, const char* expr,
                                   const char* file, int line);
const char* cublas_status_name(cublasStatus_t status);
const char* cusolver_status_name(cusolverStatus_t status);

}  // namespace tessera::cuda_detail

#define TESSERA_CUDA_CHECK(call)                                                               \
  do {                                                                                         \
    const cudaError_t tessera_status_ = (call);                                                \
    if (tessera_status_ != cudaSuccess)                                                        \
      ::tessera::cuda_detail::throw_cuda_error("CUDA", static_cast<int>(tessera_status_),      \
                                               cudaGetErrorString(tessera_status_), #call,     \
                                               __FILE__, __LINE__);                            \
  } while (0)

// Checks the launch just made (bad configuration, missing kernel image).
#define TESSERA_CUDA_CHECK_LAUNCH() TESSERA_CUDA_CHECK(cudaPeekAtLastError())

#define TESSERA_CUBLAS_CHECK(call)                                                             \
  do {                                                                                         \
    const cublasStatus_t tessera_status_ = (call);                                             \
    if (tessera_status_ != CUBLAS_STATUS_SUCCESS)                                              \
      ::tessera::cuda_detail::throw_cuda_error(                                                \
          "cuBLAS", static_cast<int>(tessera_status_),                                         \
          ::tessera::cuda_detail::cublas_status_name(tessera_status_), #call, __FILE__, __LINE__); \
  } while (0)

#define TESSERA_CUSOLVER_CHECK(call)                                                           \
  do {                                                                                         \
    const cusolverStatus_t tessera_status_ = (call);                                           \
    if (tessera_status_ != CUSOLVER_STATUS_SUCCESS)                                            \
      ::tessera::cuda_detail::throw_cuda_error(                                                \
          "cuSOLVER", static_cast<int>(tessera_status_),                                       \
          ::tessera::cuda_detail::cusolver_status_name(tessera_status_), #call, __FILE__,      \
          __LINE__);                                                                           \
  } while (0)
