#include "tensor_core_potrf.hpp"

#include <algorithm>
#include <string>

#include "check.hpp"
#include "matrix_utils.hpp"
#include "stream_memory.hpp"
#include "vendor.hpp"

namespace tessera::kernels::cuda {

namespace {

// Splits fall on multiples of this where they can: the products' shapes stay friendly to the
// tensor cores' tiles.
constexpr int kSplitAlignment = 256;

// The order of the first part of a split of n (n >= 2): half, rounded up to the alignment while
// that leaves a second part.
int first_part(int n) {
  const int aligned = (n / 2 + kSplitAlignment - 1) / kSplitAlignment * kSplitAlignment;
  return aligned < n ? aligned : n / 2;
}

bool rounds_operands(ProductOperands operands) { return operands != ProductOperands::tf32; }

// The leading dimension of a rounded operand of m rows: a multiple of 8 elements (16 bytes), so
// that every column starts where the tensor cores' loads want it.
std::size_t rounded_ld(int m) { return (std::size_t(m) + 7) / 8 * 8; }

// 16-bit elements each recursion needs at most at once (the operands of its largest product; the
// recursions run one after the other on one stream and reuse that room).
int trsm_leaf(const RecursionLeaves& leaves) { return leaves.trsm_by_inverse ? leaves.potrf : leaves.trsm; }

std::size_t trsm_room(int m, int k, const RecursionLeaves& leaves) {
  if (k <= trsm_leaf(leaves)) return 0;
  const int k1 = first_part(k), k2 = k - k1;
  const std::size_t product = rounded_ld(m) * k1 + rounded_ld(k2) * k1;
  return std::max({trsm_room(m, k1, leaves), product, trsm_room(m, k2, leaves)});
}
std::size_t potrf_room(int n, const RecursionLeaves& leaves) {
  if (n <= leaves.potrf) return 0;
  const int n1 = first_part(n), n2 = n - n1;
  return std::max({potrf_room(n1, leaves), trsm_room(n2, n1, leaves), rounded_ld(n2) * n1, potrf_room(n2, leaves)});
}

struct Layout {
  std::size_t leaf_info = 0, solver_work = 0, product = 0, room = 0, inverses = 0, solved = 0, bytes = 0;
  int lwork = 0;
};

int leaf_lwork(cusolverDnHandle_t solver, int order) {
  return std::max(vendor::potrf_workspace(solver, 'L', order, static_cast<float*>(nullptr), std::max(order, 1)), 1);
}

Layout layout_of(cusolverDnHandle_t solver, ProductOperands operands, int n, const RecursionLeaves& leaves) {
  Layout l;
  Carving c;
  l.lwork = leaf_lwork(solver, std::min(n, leaves.potrf));
  const std::size_t product_order = std::size_t(std::min(n, leaves.syrk));
  l.leaf_info = c.place(1, sizeof(int));
  l.solver_work = c.place(std::size_t(l.lwork), sizeof(float));
  l.product = c.place(product_order * product_order, sizeof(float));
  l.room = c.place(rounds_operands(operands) ? potrf_room(n, leaves) : 0, 2);
  // The leaves' inverses, n x leaves.potrf (the leaf at offset o in rows o...), and a solve's
  // product before it goes back into place (at most n x leaves.potrf).
  const std::size_t tall = leaves.trsm_by_inverse ? std::size_t(n) * std::min(n, leaves.potrf) : 0;
  l.inverses = c.place(tall, sizeof(float));
  l.solved = c.place(tall, sizeof(float));
  l.bytes = c.bytes();
  return l;
}

__global__ void note_leaf_info_kernel(const int* leaf_info, int offset, int* info) {
  if (*info == 0 && *leaf_info > 0) *info = offset + *leaf_info;
}

// A product's operand: FP32 (products in TF32) or rounded to 16 bits.
struct Operand {
  const void* data;
  int ld;
  bool sixteen_bit;
  Operand rows_from(int i) const {
    const std::size_t element = sixteen_bit ? 2 : sizeof(float);
    return {static_cast<const unsigned char*>(data) + element * std::size_t(i), ld, sixteen_bit};
  }
};

class Recursion {
 public:
  Recursion(cublasHandle_t blas, cusolverDnHandle_t solver, ProductOperands operands, RecursionLeaves leaves, int n,
            float* A, int lda, unsigned char* workspace, const Layout& layout, int* info, cudaStream_t stream)
      : blas_(blas), solver_(solver), operands_(operands), leaves_(leaves), n_(n), A_(A), lda_(lda),
        inverses_(reinterpret_cast<float*>(workspace + layout.inverses)),
        solved_(reinterpret_cast<float*>(workspace + layout.solved)),
        leaf_info_(reinterpret_cast<int*>(workspace + layout.leaf_info)),
        solver_work_(reinterpret_cast<float*>(workspace + layout.solver_work)), lwork_(layout.lwork),
        product_(reinterpret_cast<float*>(workspace + layout.product)), room_(workspace + layout.room), info_(info),
        stream_(stream) {}

  // The lower triangle of the diagonal block of order n at (offset, offset).
  void potrf(int offset, int n) {
    if (n <= leaves_.potrf) {
      const int needed = vendor::potrf_workspace(solver_, 'L', n, at(offset, offset), lda_);
      if (needed > lwork_)
        throw RuntimeError("potrf_lower_on_tensor_cores: cuSOLVER asks for " + std::to_string(needed) +
                            " elements of workspace at order " + std::to_string(n) + ", more than the " +
                            std::to_string(lwork_) + " reserved");
      vendor::potrf(solver_, 'L', n, at(offset, offset), lda_, solver_work_, lwork_, leaf_info_);
      note_leaf_info_kernel<<<1, 1, 0, stream_>>>(leaf_info_, offset, info_);
      TESSERA_CUDA_CHECK_LAUNCH();
      if (leaves_.trsm_by_inverse) invert_leaf(offset, n);
      return;
    }
    const int n1 = first_part(n), n2 = n - n1;
    potrf(offset, n1);
    trsm(at(offset + n1, offset), n2, offset, n1);
    syrk(at(offset + n1, offset + n1), n2, at(offset + n1, offset), n1);
    potrf(offset + n1, n2);
  }

 private:
  float* at(int i, int j) const { return A_ + i + std::size_t(j) * lda_; }

  // The inverse of the factor's leaf at (offset, offset), of order b, into the leaves' inverses.
  void invert_leaf(int offset, int b) {
    float* X = inverses_ + offset;
    set_identity(b, b, X, n_, stream_);
    vendor::trsm(blas_, true, 'L', Trans::no, b, b, 1.0f, at(offset, offset), lda_, X, n_);
  }

  // B (m x k) := B L^{-T}, L lower (k x k) the factor's diagonal block at (l, l), B with A's
  // leading dimension.
  void trsm(float* B, int m, int l, int k) {
    const float* L = at(l, l);
    if (k <= trsm_leaf(leaves_)) {
      if (!leaves_.trsm_by_inverse) {
        vendor::trsm(blas_, false, 'L', Trans::transpose, m, k, 1.0f, L, lda_, B, lda_);
        return;
      }
      vendor::gemm_tf32(blas_, Trans::no, Trans::transpose, m, k, k, 1.0f, B, lda_, inverses_ + l, n_, 0.0f, solved_,
                        m);
      TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(B, sizeof(float) * lda_, solved_, sizeof(float) * m, sizeof(float) * m, k,
                                           cudaMemcpyDeviceToDevice, stream_));
      return;
    }
    const int k1 = first_part(k), k2 = k - k1;
    trsm(B, m, l, k1);
    float* B2 = B + std::size_t(k1) * lda_;
    if (rounds_operands(operands_)) {
      const int ld_b1 = int(rounded_ld(m)), ld_l21 = int(rounded_ld(k2));
      void* b1 = room_;
      void* l21 = room_ + 2 * std::size_t(ld_b1) * k1;
      round_to_16bit(format(), m, k1, B, lda_, b1, ld_b1, stream_);
      round_to_16bit(format(), k2, k1, L + k1, lda_, l21, ld_l21, stream_);
      multiply(m, k2, k1, -1.0f, {b1, ld_b1, true}, {l21, ld_l21, true}, 1.0f, B2, lda_);
    } else {
      multiply(m, k2, k1, -1.0f, {B, lda_, false}, {L + k1, lda_, false}, 1.0f, B2, lda_);
    }
    trsm(B2, m, l + k1, k2);
  }

  // The lower triangle of C (m x m) -= X X^T, X m x k, both with A's leading dimension.
  void syrk(float* C, int m, const float* X, int k) {
    if (!rounds_operands(operands_)) {
      syrk(C, m, Operand{X, lda_, false}, k);
      return;
    }
    const int ld = int(rounded_ld(m));
    round_to_16bit(format(), m, k, X, lda_, room_, ld, stream_);
    syrk(C, m, Operand{room_, ld, true}, k);
  }
  void syrk(float* C, int m, Operand X, int k) {
    if (m <= leaves_.syrk) {
      multiply(m, m, k, 1.0f, X, X, 0.0f, product_, m);
      update_triangle(Triangle::lower, m, -1.0f, product_, m, 1.0f, C, lda_, stream_);
      return;
    }
    const int m1 = first_part(m), m2 = m - m1;
    multiply(m2, m1, k, -1.0f, X.rows_from(m1), X, 1.0f, C + m1, lda_);
    syrk(C, m1, X, k);
    syrk(C + m1 + std::size_t(m1) * lda_, m2, X.rows_from(m1), k);
  }

  // C (m x n) := alpha X Y^T + beta C, X m x k and Y n x k.
  void multiply(int m, int n, int k, float alpha, Operand X, Operand Y, float beta, float* C, int ldc) {
    if (X.sixteen_bit)
      vendor::gemm_16bit(blas_, operands_ == ProductOperands::bf16, Trans::no, Trans::transpose, m, n, k, alpha, X.data,
                         X.ld, Y.data, Y.ld, beta, C, ldc);
    else
      vendor::gemm_tf32(blas_, Trans::no, Trans::transpose, m, n, k, alpha, static_cast<const float*>(X.data), X.ld,
                        static_cast<const float*>(Y.data), Y.ld, beta, C, ldc);
  }

  Float16Format format() const {
    return operands_ == ProductOperands::bf16 ? Float16Format::bf16 : Float16Format::fp16;
  }

  cublasHandle_t blas_;
  cusolverDnHandle_t solver_;
  ProductOperands operands_;
  RecursionLeaves leaves_;
  int n_;
  float* A_;
  int lda_;
  float* inverses_;
  float* solved_;
  int* leaf_info_;
  float* solver_work_;
  int lwork_;
  float* product_;
  unsigned char* room_;
  int* info_;
  cudaStream_t stream_;
};

}  // namespace

std::size_t potrf_lower_on_tensor_cores_workspace(cusolverDnHandle_t solver, ProductOperands operands, int n,
                                                  RecursionLeaves leaves) {
  return layout_of(solver, operands, std::max(n, 1), leaves).bytes;
}

void potrf_lower_on_tensor_cores(cublasHandle_t blas, cusolverDnHandle_t solver, ProductOperands operands, int n,
                                 float* A, int lda, void* workspace, int* info, cudaStream_t stream,
                                 RecursionLeaves leaves) {
  if (leaves.potrf < 1 || leaves.trsm < 1 || leaves.syrk < 1)
    throw InvalidArgument("potrf_lower_on_tensor_cores: the recursion's leaves must have orders of 1 or more");
  TESSERA_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
  if (n <= 0) return;
  const Layout layout = layout_of(solver, operands, n, leaves);
  Recursion(blas, solver, operands, leaves, n, A, lda, static_cast<unsigned char*>(workspace), layout, info, stream)
      .potrf(0, n);
  check_potrf_info(n, A, lda, info, stream);
}

}  // namespace tessera::kernels::cuda
