// The C API: the argument checks of tessera/tools/lapack_arguments.hpp (-position, as LAPACK's info), then
// the C++ API on the shared runtime.
#include "tessera/tessera.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/tools/lapack_arguments.hpp"
#include "refined_solve.hpp"

namespace {

using tessera::ArgumentError;
using tessera::FactorOptions;
using tessera::Runtime;

tessera::Uplo uplo_of(char uplo) { return (uplo == 'U' || uplo == 'u') ? tessera::Uplo::upper : tessera::Uplo::lower; }

// This thread's progress report (tessera_set_progress).
struct ProgressSetting {
  tessera_progress_callback callback = nullptr;
  void* user_data = nullptr;
  int interval_ms = 100;
};
thread_local ProgressSetting progress_setting;

tessera::ProgressReport progress_report() {
  const ProgressSetting setting = progress_setting;
  if (!setting.callback) return {};
  return [setting](const tessera::Progress& progress) { setting.callback(progress.fraction(), setting.user_data); };
}

FactorOptions options_for(char uplo) {
  FactorOptions options = FactorOptions::from_environment();
  options.uplo = uplo_of(uplo);
  options.progress = progress_report();
  options.progress_interval = std::chrono::milliseconds(progress_setting.interval_ms);
  return options;
}

// The reason for the last negative value a C call returned on this thread (tessera_last_error).
thread_local std::string last_error;

// Whether failures are printed too (RuntimeOptions::verbose, TESSERA_VERBOSE=1): the library prints
// nothing unless asked.
bool verbose() noexcept {
  try {
    return tessera::RuntimeOptions::from_environment().verbose;
  } catch (...) {
    return false;
  }
}

int failed(std::string reason, int status) {
  last_error = std::move(reason);
  if (verbose()) std::fprintf(stderr, "tessera: %s\n", last_error.c_str());
  return status;
}

// Runs a call, turning exceptions into a status: C callers never see one. A call that returns
// nothing succeeded with 0.
template <class Call>
int guarded(const char* routine, Call&& call) {
  last_error.clear();
  try {
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      return 0;
    } else {
      return call();
    }
  } catch (const tessera::InvalidArgument& e) {
    return failed(std::string(routine) + ": " + e.what(), e.position() > 0 ? -e.position() : TESSERA_RUNTIME_FAILURE);
  } catch (const std::exception& e) {
    return failed(std::string(routine) + ": " + e.what(), TESSERA_RUNTIME_FAILURE);
  }
}

// -position where the argument checks refuse the call, else the call, guarded.
template <class Call>
int checked_call(const char* routine, const ArgumentError& error, Call&& call) {
  if (error) return failed(tessera::describe(routine, error), -error.position);
  return guarded(routine, std::forward<Call>(call));
}

// Small work runs on the calling thread (tessera::runs_on_calling_thread) without starting the
// shared runtime; the rest on the shared runtime.
// With log_determinant, log det(A) is written there (0 when the factorization fails).
template <class T>
int potrf(const char* routine, char uplo, int n, T* A, int lda, double* log_determinant = nullptr) {
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    if (n == 0) {  // LAPACK's quick return, before the environment is read
      if (log_determinant) *log_determinant = 0.0;
      return 0;
    }
    FactorOptions options = options_for(uplo);
    options.log_determinant = log_determinant;
    const auto view = tessera::MatrixView<T>::host(n, n, A, lda);
    if (tessera::runs_on_calling_thread(view, 0, options)) return tessera::potrf_on_calling_thread(view, options);
    return tessera::potrf(Runtime::shared(), view, options);
  });
}

// potrf with log det(A) into *logdet; a null logdet is argument 5, checked after LAPACK's arguments.
template <class T>
int potrf_logdet(const char* routine, char uplo, int n, T* A, int lda, double* logdet) {
  if (logdet == nullptr && !tessera::potrf_argument_error(uplo, n, A, lda))
    return failed(std::string(routine) + ": logdet (argument 5) is null", -5);
  return potrf(routine, uplo, n, A, lda, logdet);
}

// potrf with FactorOptions::accuracy: as tasks on the shared runtime whatever n (the plan never
// runs it on the calling thread); accuracy outside (0, 1), NaN included, is argument 5.
int potrf_adaptive(const char* routine, char uplo, int n, double* A, int lda, double accuracy, long long* tiles,
                   double* logdet) {
  if (!tessera::potrf_argument_error(uplo, n, A, lda) && !(accuracy > 0 && accuracy < 1))
    return failed(fmt::format("{}: accuracy (argument 5) must lie in (0, 1), not {}", routine, accuracy), -5);
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    tessera::TileArithmeticMap map;
    int info = 0;
    if (n > 0) {
      FactorOptions options = options_for(uplo);
      options.log_determinant = logdet;
      options.accuracy = accuracy;
      options.tile_arithmetic = &map;
      info = tessera::potrf(Runtime::shared(), tessera::MatrixView<double>::host(n, n, A, lda), options);
    } else if (logdet) {
      *logdet = 0.0;
    }
    if (tiles) {
      tiles[0] = map.count(tessera::TileArithmetic::fp16);
      tiles[1] = map.count(tessera::TileArithmetic::fp32);
      tiles[2] = map.count(tessera::TileArithmetic::fp64);
    }
    return info;
  });
}

template <class T>
int potri(const char* routine, char uplo, int n, T* A, int lda) {
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    if (n == 0) return 0;
    const FactorOptions options = options_for(uplo);
    const auto view = tessera::MatrixView<T>::host(n, n, A, lda);
    if (tessera::runs_on_calling_thread(view, 0, options)) return tessera::potri_on_calling_thread(view, options);
    return tessera::potri(Runtime::shared(), view, options);
  });
}

template <class T>
int potrs(const char* routine, char uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb) {
  return checked_call(routine, tessera::potrs_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb), [&] {
    if (n == 0 || nrhs == 0) return 0;
    const FactorOptions options = options_for(uplo);
    const auto factor = tessera::MatrixView<T>::host(n, n, const_cast<T*>(A), lda);
    const auto rhs = tessera::MatrixView<T>::host(n, nrhs, B, ldb);
    if (tessera::runs_on_calling_thread(factor, nrhs, options))
      return tessera::potrs_on_calling_thread(factor, rhs, options);
    return tessera::potrs(Runtime::shared(), factor, rhs, options);
  });
}

template <class T>
int posv(const char* routine, char uplo, int n, int nrhs, T* A, int lda, T* B, int ldb) {
  return checked_call(routine, tessera::posv_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb), [&] {
    if (n == 0) return 0;
    const FactorOptions options = options_for(uplo);
    const auto matrix = tessera::MatrixView<T>::host(n, n, A, lda);
    const auto rhs = tessera::MatrixView<T>::host(n, nrhs, B, ldb);
    if (tessera::runs_on_calling_thread(matrix, nrhs, options)) return tessera::posv_on_calling_thread(matrix, rhs, options);
    return tessera::posv(Runtime::shared(), matrix, rhs, options);
  });
}

// LAPACK's xSPOSV arguments, then iter (argument 10); small work on the calling thread.
template <class T>
int posv_refined(const char* routine, char uplo, int n, int nrhs, T* A, int lda, const T* B, int ldb, T* X, int ldx,
                 int* iter) {
  tessera::ArgumentError error = tessera::posv_refined_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb, X, ldx);
  if (!error && iter == nullptr) error = {10, "iter", "must not be null"};
  return checked_call(routine, error, [&] {
    *iter = 0;
    if (n == 0) return 0;
    const tessera::RefinedSolve result = tessera::detail::posv_refined<T>(
        [] () -> Runtime& { return Runtime::shared(); }, tessera::MatrixView<T>::host(n, n, A, lda),
        tessera::MatrixView<T>::host(n, nrhs, const_cast<T*>(B), ldb), tessera::MatrixView<T>::host(n, nrhs, X, ldx),
        options_for(uplo));
    *iter = result.iter;
    return result.info;
  });
}

// The device forms: the same checks and zero sizes as the host forms above, then the C++ device
// API (which also refuses a host pointer, at its position).
tessera::device::Stream as_stream(void* stream) { return static_cast<tessera::device::Stream>(stream); }

template <class T>
int potrf_device(const char* routine, char uplo, int n, T* A, int lda, void* stream) {
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    return n == 0 ? 0 : tessera::device::potrf(Runtime::shared(), n, A, lda, as_stream(stream), options_for(uplo));
  });
}

template <class T>
int potrf_device_ex(const char* routine, char uplo, int n, T* A, int lda, int* info, void* stream) {
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    tessera::device::potrf_ex(Runtime::shared(), n, A, lda, info, as_stream(stream), options_for(uplo));
    return 0;
  });
}

template <class T>
int potrs_device(const char* routine, char uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb, void* stream) {
  return checked_call(routine, tessera::potrs_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb), [&] {
    return n == 0 || nrhs == 0
               ? 0
               : tessera::device::potrs(Runtime::shared(), n, nrhs, A, lda, B, ldb, as_stream(stream), options_for(uplo));
  });
}

template <class T>
int posv_device(const char* routine, char uplo, int n, int nrhs, T* A, int lda, T* B, int ldb, void* stream) {
  return checked_call(routine, tessera::posv_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb), [&] {
    return n == 0 ? 0
                  : tessera::device::posv(Runtime::shared(), n, nrhs, A, lda, B, ldb, as_stream(stream), options_for(uplo));
  });
}

template <class T>
int potri_device(const char* routine, char uplo, int n, T* A, int lda, void* stream) {
  return checked_call(routine, tessera::potrf_argument_error(uplo, n, A, lda), [&] {
    return n == 0 ? 0 : tessera::device::potri(Runtime::shared(), n, A, lda, as_stream(stream), options_for(uplo));
  });
}

// The refined solve on the GPU: the host form's checks, then the C++ device API.
template <class T>
int posv_refined_device(const char* routine, char uplo, int n, int nrhs, T* A, int lda, const T* B, int ldb, T* X,
                        int ldx, int* iter, int tensor_cores, void* stream) {
  tessera::ArgumentError error = tessera::posv_refined_argument_error<T>(uplo, n, nrhs, A, lda, B, ldb, X, ldx);
  if (!error && iter == nullptr) error = {10, "iter", "must not be null"};
  if (!error && (tensor_cores < TESSERA_TENSOR_CORES_OFF || tensor_cores > TESSERA_TENSOR_CORES_FP16))
    error = {11, "tensor_cores", "must be TESSERA_TENSOR_CORES_OFF, _TF32, _BF16 or _FP16 (0 to 3)"};
  return checked_call(routine, error, [&] {
    *iter = 0;
    if (n == 0) return 0;
    FactorOptions options = options_for(uplo);
    constexpr tessera::TensorCores kByNumber[] = {tessera::TensorCores::off, tessera::TensorCores::tf32,
                                                  tessera::TensorCores::bf16, tessera::TensorCores::fp16};
    options.tensor_cores = kByNumber[tensor_cores];
    const tessera::RefinedSolve result =
        tessera::device::posv_refined(Runtime::shared(), n, nrhs, A, lda, B, ldb, X, ldx, as_stream(stream), options);
    *iter = result.iter;
    return result.info;
  });
}

tessera::BatchOptions batch_options_for(char uplo) {
  const FactorOptions factor = options_for(uplo);
  tessera::BatchOptions options;
  options.uplo = factor.uplo;
  options.mode = factor.mode;
  options.progress = factor.progress;
  options.progress_interval = factor.progress_interval;
  return options;
}

// The factorizations (potrf) or the inverses from the factors (potri) of a strided host batch: on
// the calling thread where the plan runs it there, else as tasks on the shared runtime.
enum class BatchedOperation { potrf, potri };

template <class T>
int factor_or_invert_batched(const char* routine, BatchedOperation operation, char uplo, int n, T* A, int lda,
                             long long strideA, int batch, int* info) {
  return checked_call(routine, tessera::potrf_batched_argument_error(uplo, n, A, lda, strideA, batch, info), [&] {
    const FactorOptions options = batch_options_for(uplo).as_factor_options();
    const auto view = tessera::MatrixView<T>::host_batch(n, n, A, lda, strideA, batch, info);
    const bool inverse = operation == BatchedOperation::potri;
    if (tessera::runs_on_calling_thread(view, 0, options))
      return inverse ? tessera::potri_on_calling_thread(view, options) : tessera::potrf_on_calling_thread(view, options);
    return inverse ? tessera::potri(Runtime::shared(), view, options) : tessera::potrf(Runtime::shared(), view, options);
  });
}

template <class T>
int posv_batched(const char* routine, char uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                 long long strideB, int batch, int* info) {
  const ArgumentError error =
      tessera::posv_batched_argument_error<T>(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
  return checked_call(routine, error, [&] {
    const FactorOptions options = batch_options_for(uplo).as_factor_options();
    const auto matrices = tessera::MatrixView<T>::host_batch(n, n, A, lda, strideA, batch, info);
    const auto rhs = tessera::MatrixView<T>::host_batch(n, nrhs, B, ldb, strideB, batch);
    if (tessera::runs_on_calling_thread(matrices, nrhs, options))
      return tessera::posv_on_calling_thread(matrices, rhs, options);
    tessera::posv_batched(Runtime::shared(), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, batch_options_for(uplo));
    return 0;
  });
}

// ---- device-resident batches: no runtime, the kernels on the caller's stream ----------------------

// The factorizations (potrf) or the inverses from the factors (potri) of a strided batch in device
// memory, in place or out of place, enqueued on the caller's stream.
template <class T>
int factor_or_invert_batched_device_ex(const char* routine, BatchedOperation operation, char uplo, int n, T* A,
                                       int lda, long long strideA, int batch, int* info, void* stream) {
  return checked_call(routine, tessera::potrf_batched_argument_error(uplo, n, A, lda, strideA, batch, info), [&] {
    if (operation == BatchedOperation::potri)
      tessera::device::potri_batched_ex(uplo_of(uplo), n, A, lda, strideA, batch, info, as_stream(stream));
    else
      tessera::device::potrf_batched_ex(uplo_of(uplo), n, A, lda, strideA, batch, info, as_stream(stream));
  });
}

template <class T>
int factor_or_invert_batched_device_out_of_place_ex(const char* routine, BatchedOperation operation, char uplo, int n,
                                                    const T* A, long long rowStrideA, long long colStrideA,
                                                    long long strideA, T* L, int ldl, long long strideL, int batch,
                                                    int* info, void* stream) {
  const ArgumentError error =
      operation == BatchedOperation::potri
          ? tessera::out_of_place_matrices_argument_error(uplo, n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL,
                                                          batch)
          : tessera::potrf_batched_out_of_place_argument_error(uplo, n, A, rowStrideA, colStrideA, strideA, L, ldl,
                                                               strideL, batch, info);
  return checked_call(routine, error, [&] {
    if (operation == BatchedOperation::potri)
      tessera::device::potri_batched_ex(uplo_of(uplo), n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch,
                                        info, as_stream(stream));
    else
      tessera::device::potrf_batched_ex(uplo_of(uplo), n, A, rowStrideA, colStrideA, strideA, L, ldl, strideL, batch,
                                        info, as_stream(stream));
  });
}

template <class T>
int potrs_batched_device_ex(const char* routine, char uplo, int n, int nrhs, const T* A, int lda, long long strideA,
                            T* B, int ldb, long long strideB, int batch, const int* info, void* stream) {
  const ArgumentError error =
      tessera::potrs_batched_argument_error<T>(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch);
  return checked_call(routine, error, [&] {
    tessera::device::potrs_batched_ex(uplo_of(uplo), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info,
                                      as_stream(stream));
  });
}

template <class T>
int posv_batched_device_ex(const char* routine, char uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B,
                           int ldb, long long strideB, int batch, int* info, void* stream) {
  const ArgumentError error =
      tessera::posv_batched_argument_error<T>(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
  return checked_call(routine, error, [&] {
    tessera::device::posv_batched_ex(uplo_of(uplo), n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info,
                                     as_stream(stream));
  });
}

// The checking forms return the number of matrices that failed.
template <class T>
int factor_or_invert_batched_device(const char* routine, BatchedOperation operation, char uplo, int n, T* A, int lda,
                                    long long strideA, int batch, int* host_info, void* stream) {
  return checked_call(routine, tessera::strided_matrices_argument_error(uplo, n, A, lda, strideA, batch), [&] {
    return operation == BatchedOperation::potri
               ? tessera::device::potri_batched(uplo_of(uplo), n, A, lda, strideA, batch, host_info, as_stream(stream))
               : tessera::device::potrf_batched(uplo_of(uplo), n, A, lda, strideA, batch, host_info, as_stream(stream));
  });
}

}  // namespace

extern "C" {

int tessera_dpotrf_batched_device_ex(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_dpotrf_batched_device_ex", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_spotrf_batched_device_ex(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_spotrf_batched_device_ex", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_dpotrf_batched_device_out_of_place_ex(char uplo, int n, const double* A, long long rowStrideA,
                                                  long long colStrideA, long long strideA, double* L, int ldl,
                                                  long long strideL, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_dpotrf_batched_device_out_of_place_ex", BatchedOperation::potrf, uplo, n, A, rowStrideA,
                                              colStrideA, strideA, L, ldl, strideL, batch, info, stream);
}
int tessera_spotrf_batched_device_out_of_place_ex(char uplo, int n, const float* A, long long rowStrideA,
                                                  long long colStrideA, long long strideA, float* L, int ldl,
                                                  long long strideL, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_spotrf_batched_device_out_of_place_ex", BatchedOperation::potrf, uplo, n, A, rowStrideA,
                                              colStrideA, strideA, L, ldl, strideL, batch, info, stream);
}
int tessera_dpotrs_batched_device_ex(char uplo, int n, int nrhs, const double* A, int lda, long long strideA,
                                     double* B, int ldb, long long strideB, int batch, const int* info, void* stream) {
  return potrs_batched_device_ex("tessera_dpotrs_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                 batch, info, stream);
}
int tessera_spotrs_batched_device_ex(char uplo, int n, int nrhs, const float* A, int lda, long long strideA, float* B,
                                     int ldb, long long strideB, int batch, const int* info, void* stream) {
  return potrs_batched_device_ex("tessera_spotrs_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                 batch, info, stream);
}
int tessera_dposv_batched_device_ex(char uplo, int n, int nrhs, double* A, int lda, long long strideA, double* B,
                                    int ldb, long long strideB, int batch, int* info, void* stream) {
  return posv_batched_device_ex("tessera_dposv_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                batch, info, stream);
}
int tessera_sposv_batched_device_ex(char uplo, int n, int nrhs, float* A, int lda, long long strideA, float* B,
                                    int ldb, long long strideB, int batch, int* info, void* stream) {
  return posv_batched_device_ex("tessera_sposv_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                batch, info, stream);
}
int tessera_dpotrf_batched_device(char uplo, int n, double* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_dpotrf_batched_device", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_spotrf_batched_device(char uplo, int n, float* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_spotrf_batched_device", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_zpotrf_batched_device_ex(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch,
                                     int* info, void* stream) {
  return factor_or_invert_batched_device_ex("tessera_zpotrf_batched_device_ex", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_zpotrs_batched_device_ex(char uplo, int n, int nrhs, const tessera_complex_double* A, int lda, long long strideA,
                                     tessera_complex_double* B, int ldb, long long strideB, int batch, const int* info, void* stream) {
  return potrs_batched_device_ex("tessera_zpotrs_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                 batch, info, stream);
}
int tessera_zposv_batched_device_ex(char uplo, int n, int nrhs, tessera_complex_double* A, int lda, long long strideA, tessera_complex_double* B,
                                    int ldb, long long strideB, int batch, int* info, void* stream) {
  return posv_batched_device_ex("tessera_zposv_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                batch, info, stream);
}
int tessera_zpotrf_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_double* A, long long rowStrideA,
                                                  long long colStrideA, long long strideA, tessera_complex_double* L, int ldl,
                                                  long long strideL, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_zpotrf_batched_device_out_of_place_ex", BatchedOperation::potrf, uplo, n, A, rowStrideA,
                                              colStrideA, strideA, L, ldl, strideL, batch, info, stream);
}
int tessera_zpotrf_batched_device(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_zpotrf_batched_device", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_cpotrf_batched_device_ex(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch,
                                     int* info, void* stream) {
  return factor_or_invert_batched_device_ex("tessera_cpotrf_batched_device_ex", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_cpotrs_batched_device_ex(char uplo, int n, int nrhs, const tessera_complex_float* A, int lda, long long strideA,
                                     tessera_complex_float* B, int ldb, long long strideB, int batch, const int* info, void* stream) {
  return potrs_batched_device_ex("tessera_cpotrs_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                 batch, info, stream);
}
int tessera_cposv_batched_device_ex(char uplo, int n, int nrhs, tessera_complex_float* A, int lda, long long strideA, tessera_complex_float* B,
                                    int ldb, long long strideB, int batch, int* info, void* stream) {
  return posv_batched_device_ex("tessera_cposv_batched_device_ex", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB,
                                batch, info, stream);
}
int tessera_cpotrf_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_float* A, long long rowStrideA,
                                                  long long colStrideA, long long strideA, tessera_complex_float* L, int ldl,
                                                  long long strideL, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_cpotrf_batched_device_out_of_place_ex", BatchedOperation::potrf, uplo, n, A, rowStrideA,
                                              colStrideA, strideA, L, ldl, strideL, batch, info, stream);
}
int tessera_cpotrf_batched_device(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_cpotrf_batched_device", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, host_info, stream);
}


int tessera_dpotrf_batched(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_dpotrf_batched", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info);
}
int tessera_spotrf_batched(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_spotrf_batched", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info);
}
int tessera_dposv_batched(char uplo, int n, int nrhs, double* A, int lda, long long strideA, double* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_dposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}
int tessera_sposv_batched(char uplo, int n, int nrhs, float* A, int lda, long long strideA, float* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_sposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}
int tessera_zpotrf_batched(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_zpotrf_batched", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info);
}
int tessera_zposv_batched(char uplo, int n, int nrhs, tessera_complex_double* A, int lda, long long strideA, tessera_complex_double* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_zposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}
int tessera_cpotrf_batched(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_cpotrf_batched", BatchedOperation::potrf, uplo, n, A, lda, strideA, batch, info);
}
int tessera_cposv_batched(char uplo, int n, int nrhs, tessera_complex_float* A, int lda, long long strideA, tessera_complex_float* B, int ldb,
                          long long strideB, int batch, int* info) {
  return posv_batched("tessera_cposv_batched", uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info);
}
int tessera_dpotri_batched(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_dpotri_batched", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info);
}
int tessera_spotri_batched(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_spotri_batched", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info);
}
int tessera_zpotri_batched(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_zpotri_batched", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info);
}
int tessera_cpotri_batched(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch, int* info) {
  return factor_or_invert_batched("tessera_cpotri_batched", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info);
}
int tessera_dpotri_batched_device_ex(char uplo, int n, double* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_dpotri_batched_device_ex", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_dpotri_batched_device_out_of_place_ex(char uplo, int n, const double* L, long long rowStrideL,
                                                  long long colStrideL, long long strideL, double* X, int ldx,
                                                  long long strideX, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_dpotri_batched_device_out_of_place_ex", BatchedOperation::potri, uplo, n, L, rowStrideL,
                                              colStrideL, strideL, X, ldx, strideX, batch, info, stream);
}
int tessera_dpotri_batched_device(char uplo, int n, double* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_dpotri_batched_device", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_spotri_batched_device_ex(char uplo, int n, float* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_spotri_batched_device_ex", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_spotri_batched_device_out_of_place_ex(char uplo, int n, const float* L, long long rowStrideL,
                                                  long long colStrideL, long long strideL, float* X, int ldx,
                                                  long long strideX, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_spotri_batched_device_out_of_place_ex", BatchedOperation::potri, uplo, n, L, rowStrideL,
                                              colStrideL, strideL, X, ldx, strideX, batch, info, stream);
}
int tessera_spotri_batched_device(char uplo, int n, float* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_spotri_batched_device", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_zpotri_batched_device_ex(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_zpotri_batched_device_ex", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_zpotri_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_double* L, long long rowStrideL,
                                                  long long colStrideL, long long strideL, tessera_complex_double* X, int ldx,
                                                  long long strideX, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_zpotri_batched_device_out_of_place_ex", BatchedOperation::potri, uplo, n, L, rowStrideL,
                                              colStrideL, strideL, X, ldx, strideX, batch, info, stream);
}
int tessera_zpotri_batched_device(char uplo, int n, tessera_complex_double* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_zpotri_batched_device", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, host_info, stream);
}
int tessera_cpotri_batched_device_ex(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch, int* info,
                                     void* stream) {
  return factor_or_invert_batched_device_ex("tessera_cpotri_batched_device_ex", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, info, stream);
}
int tessera_cpotri_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_float* L, long long rowStrideL,
                                                  long long colStrideL, long long strideL, tessera_complex_float* X, int ldx,
                                                  long long strideX, int batch, int* info, void* stream) {
  return factor_or_invert_batched_device_out_of_place_ex("tessera_cpotri_batched_device_out_of_place_ex", BatchedOperation::potri, uplo, n, L, rowStrideL,
                                              colStrideL, strideL, X, ldx, strideX, batch, info, stream);
}
int tessera_cpotri_batched_device(char uplo, int n, tessera_complex_float* A, int lda, long long strideA, int batch, int* host_info,
                                  void* stream) {
  return factor_or_invert_batched_device("tessera_cpotri_batched_device", BatchedOperation::potri, uplo, n, A, lda, strideA, batch, host_info, stream);
}

int tessera_dpotrf(char uplo, int n, double* A, int lda) { return potrf("tessera_dpotrf", uplo, n, A, lda); }
int tessera_spotrf(char uplo, int n, float* A, int lda) { return potrf("tessera_spotrf", uplo, n, A, lda); }
int tessera_dpotrf_logdet(char uplo, int n, double* A, int lda, double* logdet) {
  return potrf_logdet("tessera_dpotrf_logdet", uplo, n, A, lda, logdet);
}
int tessera_spotrf_logdet(char uplo, int n, float* A, int lda, double* logdet) {
  return potrf_logdet("tessera_spotrf_logdet", uplo, n, A, lda, logdet);
}
int tessera_dpotrf_adaptive(char uplo, int n, double* A, int lda, double accuracy, long long* tiles, double* logdet) {
  return potrf_adaptive("tessera_dpotrf_adaptive", uplo, n, A, lda, accuracy, tiles, logdet);
}
int tessera_dpotri(char uplo, int n, double* A, int lda) { return potri("tessera_dpotri", uplo, n, A, lda); }
int tessera_zpotrf(char uplo, int n, tessera_complex_double* A, int lda) {
  return potrf("tessera_zpotrf", uplo, n, A, lda);
}
int tessera_cpotrf(char uplo, int n, tessera_complex_float* A, int lda) {
  return potrf("tessera_cpotrf", uplo, n, A, lda);
}
int tessera_zpotrs(char uplo, int n, int nrhs, const tessera_complex_double* A, int lda, tessera_complex_double* B,
                   int ldb) {
  return potrs("tessera_zpotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_cpotrs(char uplo, int n, int nrhs, const tessera_complex_float* A, int lda, tessera_complex_float* B,
                   int ldb) {
  return potrs("tessera_cpotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_dsposv(char uplo, int n, int nrhs, double* A, int lda, const double* B, int ldb, double* X, int ldx,
                   int* iter) {
  return posv_refined("tessera_dsposv", uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter);
}
int tessera_zcposv(char uplo, int n, int nrhs, tessera_complex_double* A, int lda, const tessera_complex_double* B,
                   int ldb, tessera_complex_double* X, int ldx, int* iter) {
  return posv_refined("tessera_zcposv", uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter);
}
int tessera_zposv(char uplo, int n, int nrhs, tessera_complex_double* A, int lda, tessera_complex_double* B, int ldb) {
  return posv("tessera_zposv", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_cposv(char uplo, int n, int nrhs, tessera_complex_float* A, int lda, tessera_complex_float* B, int ldb) {
  return posv("tessera_cposv", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_zpotrf_logdet(char uplo, int n, tessera_complex_double* A, int lda, double* logdet) {
  return potrf_logdet("tessera_zpotrf_logdet", uplo, n, A, lda, logdet);
}
int tessera_cpotrf_logdet(char uplo, int n, tessera_complex_float* A, int lda, double* logdet) {
  return potrf_logdet("tessera_cpotrf_logdet", uplo, n, A, lda, logdet);
}
int tessera_zpotri(char uplo, int n, tessera_complex_double* A, int lda) { return potri("tessera_zpotri", uplo, n, A, lda); }
int tessera_cpotri(char uplo, int n, tessera_complex_float* A, int lda) { return potri("tessera_cpotri", uplo, n, A, lda); }
int tessera_spotri(char uplo, int n, float* A, int lda) { return potri("tessera_spotri", uplo, n, A, lda); }
int tessera_dpotrs(char uplo, int n, int nrhs, const double* A, int lda, double* B, int ldb) {
  return potrs("tessera_dpotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_spotrs(char uplo, int n, int nrhs, const float* A, int lda, float* B, int ldb) {
  return potrs("tessera_spotrs", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_dposv(char uplo, int n, int nrhs, double* A, int lda, double* B, int ldb) {
  return posv("tessera_dposv", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_sposv(char uplo, int n, int nrhs, float* A, int lda, float* B, int ldb) {
  return posv("tessera_sposv", uplo, n, nrhs, A, lda, B, ldb);
}
int tessera_dpotrf_device(char uplo, int n, double* A, int lda, void* stream) {
  return potrf_device("tessera_dpotrf_device", uplo, n, A, lda, stream);
}
int tessera_spotrf_device(char uplo, int n, float* A, int lda, void* stream) {
  return potrf_device("tessera_spotrf_device", uplo, n, A, lda, stream);
}
int tessera_dpotrf_device_ex(char uplo, int n, double* A, int lda, int* info, void* stream) {
  return potrf_device_ex("tessera_dpotrf_device_ex", uplo, n, A, lda, info, stream);
}
int tessera_spotrf_device_ex(char uplo, int n, float* A, int lda, int* info, void* stream) {
  return potrf_device_ex("tessera_spotrf_device_ex", uplo, n, A, lda, info, stream);
}
int tessera_dpotrs_device(char uplo, int n, int nrhs, const double* A, int lda, double* B, int ldb, void* stream) {
  return potrs_device("tessera_dpotrs_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_spotrs_device(char uplo, int n, int nrhs, const float* A, int lda, float* B, int ldb, void* stream) {
  return potrs_device("tessera_spotrs_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_dsposv_device(char uplo, int n, int nrhs, double* A, int lda, const double* B, int ldb, double* X, int ldx,
                          int* iter, int tensor_cores, void* stream) {
  return posv_refined_device("tessera_dsposv_device", uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter, tensor_cores,
                             stream);
}
int tessera_zcposv_device(char uplo, int n, int nrhs, tessera_complex_double* A, int lda,
                          const tessera_complex_double* B, int ldb, tessera_complex_double* X, int ldx, int* iter,
                          void* stream) {
  return posv_refined_device("tessera_zcposv_device", uplo, n, nrhs, A, lda, B, ldb, X, ldx, iter,
                             TESSERA_TENSOR_CORES_OFF, stream);
}
int tessera_dposv_device(char uplo, int n, int nrhs, double* A, int lda, double* B, int ldb, void* stream) {
  return posv_device("tessera_dposv_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_sposv_device(char uplo, int n, int nrhs, float* A, int lda, float* B, int ldb, void* stream) {
  return posv_device("tessera_sposv_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_dpotri_device(char uplo, int n, double* A, int lda, void* stream) {
  return potri_device("tessera_dpotri_device", uplo, n, A, lda, stream);
}
int tessera_spotri_device(char uplo, int n, float* A, int lda, void* stream) {
  return potri_device("tessera_spotri_device", uplo, n, A, lda, stream);
}
int tessera_zpotri_device(char uplo, int n, tessera_complex_double* A, int lda, void* stream) {
  return potri_device("tessera_zpotri_device", uplo, n, A, lda, stream);
}
int tessera_cpotri_device(char uplo, int n, tessera_complex_float* A, int lda, void* stream) {
  return potri_device("tessera_cpotri_device", uplo, n, A, lda, stream);
}
int tessera_zpotrf_device(char uplo, int n, tessera_complex_double* A, int lda, void* stream) {
  return potrf_device("tessera_zpotrf_device", uplo, n, A, lda, stream);
}
int tessera_zpotrf_device_ex(char uplo, int n, tessera_complex_double* A, int lda, int* info, void* stream) {
  return potrf_device_ex("tessera_zpotrf_device_ex", uplo, n, A, lda, info, stream);
}
int tessera_zpotrs_device(char uplo, int n, int nrhs, const tessera_complex_double* A, int lda, tessera_complex_double* B, int ldb,
                          void* stream) {
  return potrs_device("tessera_zpotrs_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_zposv_device(char uplo, int n, int nrhs, tessera_complex_double* A, int lda, tessera_complex_double* B, int ldb, void* stream) {
  return posv_device("tessera_zposv_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_cpotrf_device(char uplo, int n, tessera_complex_float* A, int lda, void* stream) {
  return potrf_device("tessera_cpotrf_device", uplo, n, A, lda, stream);
}
int tessera_cpotrf_device_ex(char uplo, int n, tessera_complex_float* A, int lda, int* info, void* stream) {
  return potrf_device_ex("tessera_cpotrf_device_ex", uplo, n, A, lda, info, stream);
}
int tessera_cpotrs_device(char uplo, int n, int nrhs, const tessera_complex_float* A, int lda, tessera_complex_float* B, int ldb,
                          void* stream) {
  return potrs_device("tessera_cpotrs_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
int tessera_cposv_device(char uplo, int n, int nrhs, tessera_complex_float* A, int lda, tessera_complex_float* B, int ldb, void* stream) {
  return posv_device("tessera_cposv_device", uplo, n, nrhs, A, lda, B, ldb, stream);
}
const char* tessera_version(void) { return tessera::version(); }

const char* tessera_last_error(void) { return last_error.c_str(); }

int tessera_set_progress(tessera_progress_callback callback, void* user_data, int interval_ms) {
  if (interval_ms < 1)
    return failed("tessera_set_progress: interval_ms (argument 3) must be >= 1, not " + std::to_string(interval_ms), -3);
  last_error.clear();
  progress_setting = {callback, user_data, interval_ms};
  return 0;
}

}  // extern "C"
