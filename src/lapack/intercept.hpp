// The intercepted LAPACK routines, with LAPACK's Fortran arguments: LAPACK's argument checks and
// XERBLA calls, then the next LAPACK in the search order for small matrices and nested calls, or
// Tessera. lapack_interface.cpp exports them under LAPACK's symbols.
#pragma once

#include "fortran_abi.hpp"

namespace tessera::lapack {

template <class T>
void potrf(const char* uplo, const fortran_int* n, T* a, const fortran_int* lda, fortran_int* info,
           fortran_strlen uplo_len) noexcept;

template <class T>
void potrs(const char* uplo, const fortran_int* n, const fortran_int* nrhs, const T* a, const fortran_int* lda, T* b,
           const fortran_int* ldb, fortran_int* info, fortran_strlen uplo_len) noexcept;

template <class T>
void posv(const char* uplo, const fortran_int* n, const fortran_int* nrhs, T* a, const fortran_int* lda, T* b,
          const fortran_int* ldb, fortran_int* info, fortran_strlen uplo_len) noexcept;

}  // namespace tessera::lapack
