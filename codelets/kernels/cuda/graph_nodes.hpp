// Kernel launches as the kernel nodes of a CUDA graph: a graph replayed on other matrices takes
// each launch's new arguments through cudaGraphExecKernelNodeSetParams, which needs the kernel's
// function and its arguments' exact types, known only where the kernel is defined.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace tessera::kernels::cuda {

// One launch: its kernel, grid, block and arguments, the arguments' values held in the node
// itself (params().kernelParams points into it, so a node is neither copied nor moved).
class KernelNode {
 public:
  KernelNode() = default;
  KernelNode(const KernelNode&) = delete;
  KernelNode& operator=(const KernelNode&) = delete;

  // The launch of `kernel` (a __global__ function's address) with these arguments, each of the
  // type of the kernel's parameter at its position.
  template <class... Arguments>
  void set(const void* kernel, dim3 grid, dim3 block, const Arguments&... arguments) {
    used_ = 0;
    count_ = 0;
    (hold(arguments), ...);
    params_ = cudaKernelNodeParams{};
    params_.func = const_cast<void*>(kernel);
    params_.gridDim = grid;
    params_.blockDim = block;
    params_.kernelParams = pointers_;
  }

  const cudaKernelNodeParams& params() const { return params_; }

  // The launch on `stream` outside a graph.
  cudaError_t launch(cudaStream_t stream) const {
    return cudaLaunchKernel(params_.func, params_.gridDim, params_.blockDim, params_.kernelParams, 0, stream);
  }

 private:
  template <class Argument>
  void hold(const Argument& value) {
    static_assert(std::is_trivially_copyable_v<Argument>, "a kernel argument is copied byte for byte");
    const std::size_t at = (used_ + alignof(Argument) - 1) / alignof(Argument) * alignof(Argument);
    if (at + sizeof(Argument) > sizeof(storage_) || count_ == kMaxArguments)
      throw std::logic_error("KernelNode: more arguments than a node holds");
    std::memcpy(storage_ + at, &value, sizeof(Argument));
    pointers_[count_++] = storage_ + at;
    used_ = at + sizeof(Argument);
  }

  static constexpr int kMaxArguments = 12;
  alignas(16) unsigned char storage_[128] = {};
  void* pointers_[kMaxArguments] = {};
  std::size_t used_ = 0;
  int count_ = 0;
  cudaKernelNodeParams params_{};
};

// load_lower (matrix_utils.hpp) of one n x n matrix (n > 0) as a node.
template <class T>
void load_lower_node(KernelNode& node, int n, const T* src, long long row_stride, long long col_stride, T* dst, int ldd,
                     bool conjugate);

// potrf's lower factor in W (n x n, ldw; n > 0) stored into L (n x n, ldl, not overlapping W) as
// the lower factor or, with `upper`, as the upper one (U = L^H), zeros in the other triangle where
// `zero_other` (else that triangle is left as it is); and *info := LAPACK's info from cuSOLVER's
// *solver_info and the factor's diagonal, as check_potrf_info makes it (the first column whose
// diagonal entry is not positive where cuSOLVER let a failing pivot through). One launch.
template <class T>
void store_factor_node(KernelNode& node, int n, const T* W, int ldw, const int* solver_info, T* L, int ldl, bool upper,
                       bool zero_other, int* info);

}  // namespace tessera::kernels::cuda
