// The intercepted LAPACK routines, with LAPACK's Fortran arguments in each symbol family
// (fortran_abi.hpp): LAPACK's argument checks and XERBLA calls, then the next LAPACK for small
// matrices and nested calls, or Tessera. lapack_interface.cpp exports them under LAPACK's symbols;
// `caller` is the return address of the exported function (whose LAPACK the call would have
// reached, next_lapack.hpp).
#pragma once

#include "fortran_abi.hpp"

namespace tessera::lapack {

template <class Family, class T>
void potrf(const char* uplo, const typename Family::Int* n, T* a, const typename Family::Int* lda,
           typename Family::Int* info, fortran_strlen uplo_len, const void* caller) noexcept;

template <class Family, class T>
void potrs(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, const T* a,
           const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
           fortran_strlen uplo_len, const void* caller) noexcept;

template <class Family, class T>
void posv(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, T* a,
          const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
          fortran_strlen uplo_len, const void* caller) noexcept;

}  // namespace tessera::lapack
