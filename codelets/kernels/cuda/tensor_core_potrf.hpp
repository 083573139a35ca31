// A Cholesky factorization of an FP32 matrix whose products run on the tensor cores, recursive on
// one stream: A = [A11; A21 A22] is factored as L11 (recursively), L21 := A21 L11^{-T} (a
// recursive triangular solve whose products run on the tensor cores), A22 -= L21 L21^T (a
// recursive symmetric update made of such products), then L22 (recursively). Only the recursion's
// leaves run in FP32: cuSOLVER's potrf, cuBLAS's triangular solve, and the symmetric update's
// diagonal blocks, whose full products go to a workspace so that nothing outside the lower
// triangle is written. The tile DAG keeps every panel solve and diagonal factorization in FP32
// and waits on them; here they are mostly tensor-core products.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>

namespace tessera::kernels::cuda {

// The operands of the products: FP32 rounded to TF32 inside cuBLAS, or rounded to FP16 or BF16
// into the workspace first (FP32 accumulation throughout).
enum class ProductOperands { tf32, bf16, fp16 };

// The orders at which the recursions stop: the factorization, the triangular solve (its order,
// the triangle's) and the symmetric update (the updated block's order). trsm_by_inverse: the
// triangular solve's leaves are TF32 products with the inverses of the factorization's leaves
// (each inverted once, after its factorization) instead of cuBLAS's FP32 solves; its leaves are
// then the factorization's. The defaults are the fastest measured (docs/performance.md).
struct RecursionLeaves {
  int potrf = 1024;
  int trsm = 512;
  int syrk = 2048;
  bool trsm_by_inverse = true;
};

// Bytes of device workspace potrf_lower_on_tensor_cores takes for order n.
std::size_t potrf_lower_on_tensor_cores_workspace(cusolverDnHandle_t solver, ProductOperands operands, int n,
                                                  RecursionLeaves leaves = {});

// The lower triangle of A (n x n, lda, device memory, FP32) := its Cholesky factor, on the stream
// both handles are bound to; LAPACK's info (the first column whose pivot is not positive, or
// not a number; 0) into *info (device memory). Nothing outside the lower triangle is read or
// written. Values beyond FP16's range in a product's operand become infinite, and the
// factorization then fails with info > 0. `workspace`: potrf_lower_on_tensor_cores_workspace
// bytes.
void potrf_lower_on_tensor_cores(cublasHandle_t blas, cusolverDnHandle_t solver, ProductOperands operands, int n,
                                 float* A, int lda, void* workspace, int* info, cudaStream_t stream,
                                 RecursionLeaves leaves = {});

}  // namespace tessera::kernels::cuda
