// The BLAS form of a tile task whose tiles may be stored transposed (TileRef::transposed): the
// task is written for the tiles it stands for (a lower triangular factor L, lower triangles of
// diagonal tiles), and the form says which call does it on the memory as stored. A transposed
// operand flips its transposition; a transposed result transposes the whole product.
#pragma once

#include "tasks.hpp"

namespace tessera::detail {

// op(A) on the tile S stored for A: a transposed tile holds S = A^H (the upper triangle of a
// Hermitian matrix holds the conjugate of its lower one; for real scalars A^H = A^T), so A = S^H
// and A^H = S. The algorithms ask for Trans::no and Trans::conjugate_transpose only; for real
// scalars Trans::transpose is the same op.
constexpr Trans flipped(Trans t) noexcept { return t == Trans::no ? Trans::conjugate_transpose : Trans::no; }

// C := alpha op(A) op(B) + beta C as the call gemm(transa, transb, a, b) on stored tiles.
struct GemmForm {
  const TileRef* a;
  const TileRef* b;
  Trans transa;
  Trans transb;
};

inline GemmForm gemm_form(Trans transa, Trans transb, const TileRef& A, const TileRef& B, const TileRef& C) noexcept {
  GemmForm form{&A, &B, transa, transb};
  if (C.transposed) form = {&B, &A, flipped(transb), flipped(transa)};  // C^T = op(B)^T op(A)^T
  if (form.a->transposed) form.transa = flipped(form.transa);
  if (form.b->transposed) form.transb = flipped(form.transb);
  return form;
}

// B := alpha op(L)^{-1} B (left) or alpha B op(L)^{-1} (right), L lower, as a trsm with a
// triangular tile of triangle `uplo`.
struct TrsmForm {
  Side side;
  Uplo uplo;
  Trans trans;
};

inline TrsmForm trsm_form(Side side, Trans trans, const TileRef& L, const TileRef& B) noexcept {
  TrsmForm form{side, Uplo::lower, trans};
  if (B.transposed) {  // (op(L)^{-1} B)^T = B^T op(L)^{-T}, and the other way round
    form.side = side == Side::left ? Side::right : Side::left;
    form.trans = flipped(form.trans);
  }
  if (L.transposed) {  // L is the upper triangle L^T as stored
    form.uplo = Uplo::upper;
    form.trans = flipped(form.trans);
  }
  return form;
}

// C := alpha op(A) op(A)^T + beta C on the lower triangle of the diagonal tile C, as syrk(uplo,
// trans): C's upper triangle when C is stored transposed (the same values), the other product of
// the stored A when A is.
struct SyrkForm {
  Uplo uplo;
  Trans trans;
};

inline SyrkForm syrk_form(const TileRef& A, const TileRef& C, Trans trans = Trans::no) noexcept {
  return {C.transposed ? Uplo::upper : Uplo::lower, A.transposed ? flipped(trans) : trans};
}

// The triangle in which a diagonal tile's own operations (potrf, trtri, lauum) run: the lower one,
// or the upper one of a transposed tile: U^T U = A there (U = L^T), U's inverse is L's transposed,
// and U U^T = L^T L.
inline Uplo diagonal_form(const TileRef& A) noexcept { return A.transposed ? Uplo::upper : Uplo::lower; }


}  // namespace tessera::detail
