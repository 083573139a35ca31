#include "check.hpp"

#include <sstream>

namespace tessera::cuda_detail {

void throw_cuda_error(const char* kind, int code, const char* detail, const char* expr,
                      const char* file, int line) {
  std::ostringstream msg;
  msg << kind << " error " << code << " (" << (detail ? detail : "unknown") << ") in `" << expr
      << "` at " << file << ":" << line;
  throw CudaError(msg.str());
}

const char* cublas_status_name(cublasStatus_t status) { return cublasGetStatusName(status); }

const char* cusolver_status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "CUSOLVER_STATUS_OTHER";
  }
}

}  // namespace tessera::cuda_detail
