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

// xPOTRI: xPOTRF's arguments and checks.
template <class Family, class T>
void potri(const char* uplo, const typename Family::Int* n, T* a, const typename Family::Int* lda,
           typename Family::Int* info, fortran_strlen uplo_len, const void* caller) noexcept;

template <class Family, class T>
void potrs(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, const T* a,
           const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
           fortran_strlen uplo_len, const void* caller) noexcept;

template <class Family, class T>
void posv(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, T* a,
          const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
          fortran_strlen uplo_len, const void* caller) noexcept;

// DSPOSV (T double; rwork unused, null) and ZCPOSV (T std::complex<double>).
template <class Family, class T>
void posv_refined(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, T* a,
                  const typename Family::Int* lda, T* b, const typename Family::Int* ldb, T* x,
                  const typename Family::Int* ldx, T* work, SingleOf<T>* swork, double* rwork,
                  typename Family::Int* iter, typename Family::Int* info, fortran_strlen uplo_len,
                  const void* caller) noexcept;

// Shared with the ScaLAPACK entry points (scalapack.cpp).
struct LapackInterceptOptionsView {
  bool verbose;
};
// The drop-in's options (TESSERA_LAPACK_VERBOSE...), read once through the backend.
LapackInterceptOptionsView intercept_options();
// True on the runtime's workers and while this thread runs an intercepted call: such a call goes
// straight to the next library, unchecked and unreported.
bool in_nested_call();
// Marks this thread as running an intercepted call for its lifetime.
class InterceptedCall {
 public:
  InterceptedCall();
  ~InterceptedCall();
  InterceptedCall(const InterceptedCall&) = delete;
  InterceptedCall& operator=(const InterceptedCall&) = delete;

 private:
  bool outer_;
};
// The verbose summary's counters.
void count_call(bool through_tessera);
void count_nested_call();
// Children made by fork() after the runtime started send their calls elsewhere.
void note_tessera_started();
bool tessera_is_switched_off();

}  // namespace tessera::lapack
