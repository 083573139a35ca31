// A fresh process's one-time CUDA costs, paid while StarPU starts instead of after it.
#pragma once

#include <thread>

namespace tessera::detail {

// On an H100 host a fresh process spends 0.22-0.36 s initializing the CUDA driver, then 40-115 ms
// in its first cuBLAS call, 4-27 ms in its first syrk, 6-13 in its first trsm and 10-70 in its
// first cuSOLVER potrf: the libraries' set-up, paid once per process whatever the handle. Left to
// the first factorization, they stalled its critical path (a 40-77 ms task early in every fresh
// process's trace). This thread initializes the driver and, on each of the first `devices` GPUs
// (all of them when negative; the driver alone when zero), makes the context and calls each
// vendor routine of the tile tasks once, in double precision, while starpu_init does its own work.
// Single precision is not warmed: its first sgemm alone takes 110-135 ms more, longer than what
// is left of StarPU's start, and done in the background it slowed a first double factorization.
// Best effort: a failure is left for StarPU's start to meet and report. The destructor waits.
class CudaWarmUp {
 public:
  explicit CudaWarmUp(int devices);
  CudaWarmUp(const CudaWarmUp&) = delete;
  CudaWarmUp& operator=(const CudaWarmUp&) = delete;
  ~CudaWarmUp();

 private:
  std::thread thread_;
};

}  // namespace tessera::detail
