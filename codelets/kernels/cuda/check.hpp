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

// One check per library's status type; the macros below pass the call's text and place.
inline void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess)
    throw_cuda_error("CUDA", static_cast<int>(status), cudaGetErrorString(status), expr, file,
                     line);
}

inline void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_cuda_error("cuBLAS", static_cast<int>(status), cublas_status_name(status), expr, file,
                     line);
}

inline void check_cusolver(cusolverStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw_cuda_error("cuSOLVER", static_cast<int>(status), cusolver_status_name(status), expr, file,
                     line);
}

}  // namespace tessera::cuda_detail

// The call is a function argument, so it is evaluated exactly once.
#define TESSERA_CUDA_CHECK(call) \
  ::tessera::cuda_detail::check_cuda((call), #call, __FILE__, __LINE__)

// Checks the launch just made (bad configuration, missing kernel image).
#define TESSERA_CUDA_CHECK_LAUNCH() TESSERA_CUDA_CHECK(cudaPeekAtLastError())

#define TESSERA_CUBLAS_CHECK(call) \
  ::tessera::cuda_detail::check_cublas((call), #call, __FILE__, __LINE__)

#define TESSERA_CUSOLVER_CHECK(call) \
  ::tessera::cuda_detail::check_cusolver((call), #call, __FILE__, __LINE__)
