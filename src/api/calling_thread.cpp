#include "calling_thread.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "argument_errors.hpp"
#include "cuda_context.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/small_potrf.hpp"
#include "kernels/cpu/small_potri.hpp"
#include "operations.hpp"
#include "plan.hpp"
#include "plan_requests.hpp"
#include "process_state.hpp"
#include "submission.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"
#include "thresholds.hpp"

namespace tessera::detail {

namespace {

char letter(Uplo uplo) { return uplo == Uplo::upper ? 'U' : 'L'; }

// Whether the triangle `uplo` of the n x n matrix A holds a NaN or an infinity.
template <class T>
bool triangle_non_finite(Uplo uplo, int n, const T* A, int lda) {
  return uplo == Uplo::upper ? kernels::cpu::first_non_finite_column(true, n, n, A, lda) >= 0
                             : kernels::cpu::first_non_finite_row(true, n, n, A, lda) >= 0;
}

// The BLAS threads of a call on the calling thread. Matrices of order below
// kThresholds.calling_thread_threaded_blas_from_n with one: OpenBLAS threads the factorization of
// even a 64 x 64 matrix, which then takes longer. Larger ones with the program's threads, but with
// one where other threads of the process hold all the CPUs but one (blas_threads_with_a_cpu):
// threaded OpenBLAS synchronises its threads many times a call, each time waiting for a thread
// that shares its CPU with, say, NumPy's OpenBLAS threads spinning after NumPy's last call.
class CallingThreadBlas {
 public:
  explicit CallingThreadBlas(int n) : small_(n < kThresholds.calling_thread_threaded_blas_from_n) {
    if (small_ || blas_threads_with_a_cpu() == 1) one_thread_.emplace();
    one_thread_now_ = current_blas_threads() <= 1;
  }
  ~CallingThreadBlas() {
    if (!one_thread_) note_threaded_blas_call_end();
  }
  CallingThreadBlas(const CallingThreadBlas&) = delete;
  CallingThreadBlas& operator=(const CallingThreadBlas&) = delete;
  // Whether the matrices are small enough for one BLAS thread each (a stack's parallelism is then
  // in the stack).
  bool small() const { return small_; }
  // Whether the call runs on one BLAS thread: small, held at one by a runtime, or left one CPU.
  bool one_thread() const { return one_thread_now_; }

 private:
  bool small_;
  std::optional<SingleThreadedBlas> one_thread_;
  bool one_thread_now_ = true;
};

// f(i, j) for every entry of the strict lower triangle of an n x n matrix (i > j), in square
// blocks: a walk that strides a whole column per entry then touches 16 lines per block, which stay
// in the first-level cache even where lda is a power of two and they all fall into two of its sets
// (blocks of 32 took twice as long at order 256 as at 255).
template <class F>
void for_each_strict_lower_in_blocks(int n, const F& f) {
  constexpr int block = 16;
  for (int j0 = 0; j0 < n; j0 += block)
    for (int i0 = j0; i0 < n; i0 += block)
      for (int j = j0; j < std::min(j0 + block, n); ++j)
        for (int i = std::max(i0, j + 1); i < std::min(i0 + block, n); ++i) f(i, j);
}

// Swaps A's strict lower triangle with the adjoint of its strict upper one (A(i, j) and
// conj(A(j, i)) trade places), in place.
template <class T>
void swap_triangles(int n, T* A, int lda) {
  using kernels::cpu::adjoint_element;
  const auto at = [A, lda](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * lda]; };
  for_each_strict_lower_in_blocks(n, [&](int i, int j) {
    const T lower = at(i, j);
    at(i, j) = adjoint_element(at(j, i));
    at(j, i) = adjoint_element(lower);
  });
}

// The strict triangle opposite `uplo` := the adjoint of the strict triangle `uplo`: a Hermitian
// matrix whole from one of its triangles.
template <class T>
void mirror_triangle(Uplo uplo, int n, T* A, int lda) {
  using kernels::cpu::adjoint_element;
  const auto at = [A, lda](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * lda]; };
  if (uplo == Uplo::lower)
    for_each_strict_lower_in_blocks(n, [&](int i, int j) { at(j, i) = adjoint_element(at(i, j)); });
  else
    for_each_strict_lower_in_blocks(n, [&](int i, int j) { at(i, j) = adjoint_element(at(j, i)); });
}

// LAPACK's potrf of the triangle `uplo` of A (for the smallest orders its unblocked potf2, as
// Tessera's kernel). An upper triangle from kThresholds.calling_thread_upper_as_lower_from_n,
// where the call runs on one BLAS thread (with threaded BLAS OpenBLAS's upper potrf comes within
// about 10% of its lower one, less than the swaps cost), is factored as the lower triangle of the same
// Hermitian matrix: its adjoint is swapped into the lower triangle, whose entries wait in the upper one (potrf('L') leaves it alone) until
// the swap back puts them home and the factor L (L L^H = A: the same leading minors, LAPACK's
// info) where U = L^H belongs (U^H U = A). In place: a copy into a workspace cost more than the
// lower potrf saves.
template <class T>
int potrf_via_lower(Uplo uplo, int n, T* A, int lda, bool one_blas_thread) {
  if (n <= kThresholds.calling_thread_unblocked_potrf_max_n(kIsComplex<T>, uplo == Uplo::upper))
    return kernels::cpu::potrf_unblocked(letter(uplo), n, A, lda);
  if (uplo == Uplo::lower || !one_blas_thread ||
      !kThresholds.calling_thread_upper_as_lower(kIsComplex<T>, std::is_same_v<T, std::complex<double>>, n))
    return kernels::cpu::potrf(letter(uplo), n, A, lda);
  swap_triangles(n, A, lda);
  const int info = kernels::cpu::potrf('L', n, A, lda);
  swap_triangles(n, A, lda);
  return info;
}

// LAPACK's potri of the triangle `uplo` of A, for the smallest orders Tessera's unblocked one.
template <class T>
int potri_small_or_lapack(Uplo uplo, int n, T* A, int lda) {
  if (n <= kThresholds.calling_thread_unblocked_potri_max_n(kIsComplex<T>))
    return kernels::cpu::potri_unblocked(letter(uplo), n, A, lda);
  return kernels::cpu::potri(letter(uplo), n, A, lda);
}

}  // namespace

// LAPACK with the program's BLAS threads, as the program's own call would run (single-threaded
// while a runtime runs, which holds the process's BLAS threads at one), but for small matrices.
template <class T>
CallingThreadResult potrf_on_calling_thread(Uplo uplo, int n, T* A, int lda) {
  if (n == 0) return {};
  const bool non_finite = triangle_non_finite(uplo, n, A, lda);
  const CallingThreadBlas blas(n);
  return {potrf_via_lower(uplo, n, A, lda, blas.one_thread()), non_finite};
}

template <class T>
void potrs_on_calling_thread(Uplo uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb) {
  if (n == 0 || nrhs == 0) return;
  const CallingThreadBlas blas(n);
  kernels::cpu::potrs(letter(uplo), n, nrhs, A, lda, B, ldb);
}

template <class T>
CallingThreadResult posv_on_calling_thread(Uplo uplo, int n, int nrhs, T* A, int lda, T* B, int ldb) {
  const CallingThreadResult factored = potrf_on_calling_thread(uplo, n, A, lda);
  if (factored.info == 0) potrs_on_calling_thread(uplo, n, nrhs, A, lda, B, ldb);
  return factored;
}

template <class T>
int potri_on_calling_thread(Uplo uplo, int n, T* A, int lda) {
  return n == 0 ? 0 : potri_small_or_lapack(uplo, n, A, lda);
}

template <class T>
int first_zero_diagonal(int n, const T* A, int lda) {
  for (int j = 0; j < n; ++j)
    if (A[j + static_cast<std::size_t>(j) * lda] == T(0)) return j + 1;
  return 0;
}

// Matrices [first, last) of a batch, one after the other.
template <class T>
void batch_part(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb, long long strideB,
                int first, int last, int* info, bool factor, bool one_blas_thread) {
  for (int k = first; k < last; ++k) {
    T* a = A + k * strideA;
    const int matrix_info = factor ? potrf_via_lower(uplo, n, a, lda, one_blas_thread) : 0;
    if (factor) info[k] = matrix_info;
    // With no right-hand side B may be null: no pointer into it is formed.
    if (matrix_info == 0 && nrhs > 0) kernels::cpu::potrs(letter(uplo), n, nrhs, a, lda, B + k * strideB, ldb);
  }
}

// Into how many parts, each on a thread of its own, a batch is split: at most as many as the
// program's BLAS threads (the parallelism it allows a LAPACK call), each doing at least the work of
// a factorization of order kThresholds.calling_thread_split_from_n (worth a thread's start).
int batch_parts(int n, int nrhs, int batch) {
  const double work = double(batch) * n * n * (double(n) + 6.0 * std::max(nrhs, 0));
  const double split_from = kThresholds.calling_thread_split_from_n;
  const double worth = std::floor(work / (split_from * split_from * split_from));
  return static_cast<int>(std::max(1.0, std::min({double(program_blas_threads()), double(batch), worth})));
}

namespace {

// part(first, last) for `parts` consecutive ranges of a batch, on the calling thread and parts - 1
// others (fewer if the system refuses a thread; the calling thread then takes their ranges).
template <class Part>
void run_in_parts(int batch, int parts, const Part& part) {
  const auto bound = [&](int index) { return static_cast<int>(static_cast<long long>(batch) * index / parts); };
  std::vector<std::thread> others;
  int started = 1;
  for (; started < parts; ++started) {
    try {
      others.emplace_back(part, bound(started), bound(started + 1));
    } catch (const std::system_error&) {
      break;
    }
  }
  part(0, bound(1));
  part(bound(started), batch);
  for (std::thread& thread : others) thread.join();
}

// part(first, last, one_blas_thread) over a batch of order n, in the parts batch_parts gives work
// of nrhs right-hand sides (no more than have a CPU to themselves), each with one BLAS thread where
// the order is small.
template <class Part>
void run_batch(int n, int nrhs, int batch, const Part& part) {
  const CallingThreadBlas blas(n);
  int parts = blas.small() ? batch_parts(n, nrhs, batch) : 1;
  if (parts > 1) parts = std::min(parts, blas_threads_with_a_cpu());
  const bool one_thread = blas.one_thread();
  run_in_parts(batch, parts, [&](int first, int last) { part(first, last, one_thread); });
}

}  // namespace

// A batch of small matrices in parts, each with one BLAS thread: the parallelism of a stack of
// small matrices is in the stack, not in their factorizations.
template <class T>
void batch_on_calling_thread(Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                             long long strideB, int batch, int* info, bool factor) {
  if (n == 0) {  // matrices with no element: no memory to point into
    if (factor) std::fill(info, info + batch, 0);
    return;
  }
  run_batch(n, nrhs, batch, [&](int first, int last, bool one_blas_thread) {
    batch_part(uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, first, last, info, factor, one_blas_thread);
  });
}

namespace {

// a := the triangle `uplo` of source (n x n), the other triangle zero.
template <class T>
void copy_triangle(Uplo uplo, int n, const T* source, int source_ld, T* a, int lda) {
  for (int j = 0; j < n; ++j) {
    const T* from = source + static_cast<std::size_t>(j) * source_ld;
    T* to = a + static_cast<std::size_t>(j) * lda;
    const int first = uplo == Uplo::lower ? j : 0, end = uplo == Uplo::lower ? n : j + 1;
    std::fill(to, to + first, T(0));
    std::copy(from + first, from + end, to + first);
    std::fill(to + end, to + n, T(0));
  }
}

}  // namespace

template <class T>
void batch_into_on_calling_thread(Uplo uplo, int n, const T* source, int sourceLd, long long sourceStride, T* A,
                                  int lda, long long strideA, int batch, int* info) {
  if (n == 0) {
    std::fill(info, info + batch, 0);
    return;
  }
  run_batch(n, 0, batch, [&](int first, int last, bool one_blas_thread) {
    for (int k = first; k < last; ++k) {
      T* a = A + k * strideA;
      copy_triangle(uplo, n, source + k * sourceStride, sourceLd, a, lda);
      info[k] = potrf_via_lower(uplo, n, a, lda, one_blas_thread);
    }
  });
}

template <class T>
void inverse_batch_on_calling_thread(Uplo uplo, int n, T* A, int lda, long long strideA, int batch, int* info) {
  if (n == 0) {
    std::fill(info, info + batch, 0);
    return;
  }
  // xPOTRI does twice the arithmetic of xPOTRF: counted as n / 6 right-hand sides.
  run_batch(n, n / 6, batch, [&](int first, int last, bool) {
    for (int k = first; k < last; ++k) info[k] = potri_small_or_lapack(uplo, n, A + k * strideA, lda);
  });
}

template <class T>
void inverse_into_on_calling_thread(Uplo uplo, int n, const T* source, int sourceLd, long long sourceStride, T* X,
                                    int ldx, long long strideX, int batch, int* info) {
  if (n == 0) {
    std::fill(info, info + batch, 0);
    return;
  }
  run_batch(n, n / 6, batch, [&](int first, int last, bool) {
    for (int k = first; k < last; ++k) {
      T* x = X + k * strideX;
      copy_triangle(uplo, n, source + k * sourceStride, sourceLd, x, ldx);
      info[k] = potri_small_or_lapack(uplo, n, x, ldx);
      if (info[k] == 0) {
        mirror_triangle(uplo, n, x, ldx);
      } else {
        for (int j = 0; j < n; ++j) {
          T* column = x + static_cast<std::size_t>(j) * ldx;
          std::fill(column, column + n, T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
        }
      }
    }
  });
}

Request finished_request(const CallingThreadResult& result) {
  auto submission = std::make_shared<Submission>();
  if (result.info > 0) submission->record_not_positive_definite(result.info);
  if (result.non_finite) submission->record_non_finite(1);
  return Request(std::move(submission));
}

}  // namespace tessera::detail

// ---- the public forms without a runtime ---------------------------------------------------------

namespace tessera {

namespace {

// The request a view of host memory makes, as the calls with a runtime describe it; a batch of one
// matrix is that matrix.
template <class T>
detail::PlanRequest host_request(const MatrixView<T>& A, int nrhs, const FactorOptions& options) {
  detail::PlanRequest request;
  if (A.where() == MatrixIn::host_batch && A.count() != 1) {
    request = detail::batch_request<T>(A.rows(), A.rows() == 0 ? 0 : A.count(), options, nrhs);
  } else {
    request.precision = precision_of<T>();
    request.place = detail::DataPlace::host_array;
    request.n = A.rows();
    request.options = options;
    request.solves = nrhs > 0;
    request.nrhs = nrhs;
  }
  request.gpus_present = [] { return detail::gpus_could_take_work(); };
  return request;
}

bool on_host(MatrixIn where) { return where == MatrixIn::host || where == MatrixIn::host_batch; }

// Misuse that the calls with a runtime refuse as well (a view out of place, shapes that differ),
// and a request that would run tasks.
template <class T>
void require_calling_thread(const char* routine, const MatrixView<T>* A, const MatrixView<T>* B, int nrhs,
                            const FactorOptions& options) {
  const std::string name(routine);
  if (!on_host(A->where()) || (B && B->where() != A->where()))
    throw InvalidArgument(name + ": runs on the calling thread for host arrays and strided host batches only");
  if (A->rows() != A->cols()) throw InvalidArgument(name + ": A must be square");
  if (B && (B->rows() != A->rows() || B->count() != A->count()))
    throw InvalidArgument(name + ": B's rows or matrices differ from A's");
  detail::check_options(options);
  if (!detail::runs_on_calling_thread(host_request(*A, nrhs, options)))
    throw InvalidArgument(name + ": this request runs tasks, not on the calling thread (runs_on_calling_thread): "
                                 "call it with a Runtime");
}

// The out-of-place forms' arguments: two strided host batches of one shape, the source's checked
// as potrf_batched's A and the results' sizes, pointers and memory apart from the source's as the
// device form's out-of-place checks have them, and a request that runs on the calling thread.
template <class T>
void check_out_of_place_batches(const char* routine, const MatrixView<T>& source, const MatrixView<T>& results,
                                const FactorOptions& options) {
  const std::string name(routine);
  const char uplo = detail::uplo_letter(options.uplo);
  if (source.where() != MatrixIn::host_batch || results.where() != MatrixIn::host_batch)
    throw InvalidArgument(name + ": the out-of-place form on the calling thread takes two strided host batches");
  if (results.rows() != source.rows() || results.count() != source.count())
    throw InvalidArgument(name + ": the two batches differ in order or count");
  detail::throw_if_invalid(routine, potrf_batched_argument_error(uplo, source.rows(), source.data(), source.ld(),
                                                                 source.stride(), source.count(), results.info()));
  detail::throw_if_invalid(routine, potrf_batched_out_of_place_argument_error(
                                        uplo, source.rows(), source.data(), 1, source.ld(), source.stride(),
                                        results.data(), results.ld(), results.stride(), results.count(), results.info()));
  require_calling_thread<T>(routine, &results, nullptr, 0, options);
}

}  // namespace

template <class T>
bool runs_on_calling_thread(const MatrixView<T>& A, int nrhs, const FactorOptions& options) {
  return on_host(A.where()) && detail::runs_on_calling_thread(host_request(A, nrhs, options));
}

template <class T>
int potrf_on_calling_thread(const MatrixView<T>& A, const FactorOptions& options) {
  const char uplo = detail::uplo_letter(options.uplo);
  if (A.where() == MatrixIn::host_batch) {
    detail::throw_if_invalid("potrf_batched", potrf_batched_argument_error(uplo, A.rows(), A.data(), A.ld(), A.stride(),
                                                                           A.count(), A.info()));
    require_calling_thread<T>("potrf_batched", &A, nullptr, 0, options);
    detail::batch_on_calling_thread<T>(options.uplo, A.rows(), 0, A.data(), A.ld(), A.stride(), nullptr, 1, 0,
                                       A.count(), A.info(), true);
    if (options.log_determinant) detail::write_log_determinants(A, 0, options.log_determinant);
    return 0;
  }
  if (A.where() == MatrixIn::host)
    detail::throw_if_invalid("potrf", potrf_argument_error(uplo, A.rows(), A.data(), A.ld()));
  require_calling_thread<T>("potrf", &A, nullptr, 0, options);
  const int info = detail::potrf_on_calling_thread(options.uplo, A.rows(), A.data(), A.ld()).info;
  if (options.log_determinant) detail::write_log_determinants(A, info, options.log_determinant);
  return info;
}

template <class T>
int potrf_on_calling_thread(const MatrixView<T>& A, const MatrixView<T>& factors, const FactorOptions& options) {
  check_out_of_place_batches("potrf_batched", A, factors, options);
  detail::batch_into_on_calling_thread<T>(options.uplo, A.rows(), A.data(), A.ld(), A.stride(), factors.data(),
                                          factors.ld(), factors.stride(), factors.count(), factors.info());
  if (options.log_determinant) detail::write_log_determinants(factors, 0, options.log_determinant);
  return 0;
}

template <class T>
int potrs_on_calling_thread(const MatrixView<T>& factor, const MatrixView<T>& B, const FactorOptions& options) {
  const char uplo = detail::uplo_letter(options.uplo);
  const int n = factor.rows();
  if (factor.where() == MatrixIn::host_batch) {
    detail::throw_if_invalid("potrs_batched",
                             potrs_batched_argument_error<T>(uplo, n, B.cols(), factor.data(), factor.ld(),
                                                             factor.stride(), B.data(), B.ld(), B.stride(), factor.count()));
    require_calling_thread<T>("potrs_batched", &factor, &B, B.cols(), options);
    detail::batch_on_calling_thread<T>(options.uplo, n, B.cols(), factor.data(), factor.ld(), factor.stride(), B.data(),
                                       B.ld(), B.stride(), factor.count(), nullptr, false);
    return 0;
  }
  if (factor.where() == MatrixIn::host)
    detail::throw_if_invalid("potrs", potrs_argument_error<T>(uplo, n, B.cols(), factor.data(), factor.ld(), B.data(),
                                                              B.ld()));
  require_calling_thread<T>("potrs", &factor, &B, B.cols(), options);
  detail::potrs_on_calling_thread<T>(options.uplo, n, B.cols(), factor.data(), factor.ld(), B.data(), B.ld());
  return 0;
}

template <class T>
int posv_on_calling_thread(const MatrixView<T>& A, const MatrixView<T>& B, const FactorOptions& options) {
  const char uplo = detail::uplo_letter(options.uplo);
  const int n = A.rows();
  if (A.where() == MatrixIn::host_batch) {
    detail::throw_if_invalid("posv_batched", posv_batched_argument_error<T>(uplo, n, B.cols(), A.data(), A.ld(),
                                                                            A.stride(), B.data(), B.ld(), B.stride(),
                                                                            A.count(), A.info()));
    require_calling_thread<T>("posv_batched", &A, &B, B.cols(), options);
    detail::batch_on_calling_thread<T>(options.uplo, n, B.cols(), A.data(), A.ld(), A.stride(), B.data(), B.ld(),
                                       B.stride(), A.count(), A.info(), true);
    if (options.log_determinant) detail::write_log_determinants(A, 0, options.log_determinant);
    return 0;
  }
  if (A.where() == MatrixIn::host)
    detail::throw_if_invalid("posv", posv_argument_error<T>(uplo, n, B.cols(), A.data(), A.ld(), B.data(), B.ld()));
  require_calling_thread<T>("posv", &A, &B, B.cols(), options);
  const int info = detail::posv_on_calling_thread<T>(options.uplo, n, B.cols(), A.data(), A.ld(), B.data(), B.ld()).info;
  if (options.log_determinant) detail::write_log_determinants(A, info, options.log_determinant);
  return info;
}

template <class T>
int potri_on_calling_thread(const MatrixView<T>& factor, const FactorOptions& options) {
  if (factor.where() == MatrixIn::host_batch) {
    detail::throw_if_invalid("potri_batched",
                             potrf_batched_argument_error(detail::uplo_letter(options.uplo), factor.rows(), factor.data(),
                                                          factor.ld(), factor.stride(), factor.count(), factor.info()));
    require_calling_thread<T>("potri_batched", &factor, nullptr, 0, options);
    detail::inverse_batch_on_calling_thread<T>(options.uplo, factor.rows(), factor.data(), factor.ld(), factor.stride(),
                                               factor.count(), factor.info());
    return 0;
  }
  if (factor.where() == MatrixIn::host)
    detail::throw_if_invalid("potri", potrf_argument_error(detail::uplo_letter(options.uplo), factor.rows(),
                                                           factor.data(), factor.ld()));
  if (factor.where() != MatrixIn::host)
    throw InvalidArgument("potri: runs on the calling thread for host arrays and strided host batches only");
  require_calling_thread<T>("potri", &factor, nullptr, 0, options);
  return detail::potri_on_calling_thread(options.uplo, factor.rows(), factor.data(), factor.ld());
}

template <class T>
int potri_on_calling_thread(const MatrixView<T>& factors, const MatrixView<T>& inverses, const FactorOptions& options) {
  check_out_of_place_batches("potri_batched", factors, inverses, options);
  detail::inverse_into_on_calling_thread<T>(options.uplo, factors.rows(), factors.data(), factors.ld(),
                                            factors.stride(), inverses.data(), inverses.ld(), inverses.stride(),
                                            inverses.count(), inverses.info());
  return 0;
}

#define TESSERA_INSTANTIATE(T)                                                                                  \
  template int potri_on_calling_thread<T>(const MatrixView<T>&, const FactorOptions&);                          \
  template int potri_on_calling_thread<T>(const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&);    \
  template bool runs_on_calling_thread<T>(const MatrixView<T>&, int, const FactorOptions&);                     \
  template int potrf_on_calling_thread<T>(const MatrixView<T>&, const FactorOptions&);                          \
  template int potrf_on_calling_thread<T>(const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&);    \
  template int potrs_on_calling_thread<T>(const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&);    \
  template int posv_on_calling_thread<T>(const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera

namespace tessera::detail {

#define TESSERA_INSTANTIATE(T)                                                                               \
  template CallingThreadResult potrf_on_calling_thread<T>(Uplo, int, T*, int);                               \
  template void potrs_on_calling_thread<T>(Uplo, int, int, const T*, int, T*, int);                          \
  template CallingThreadResult posv_on_calling_thread<T>(Uplo, int, int, T*, int, T*, int);                  \
  template int potri_on_calling_thread<T>(Uplo, int, T*, int);                                              \
  template int first_zero_diagonal<T>(int, const T*, int);                                                   \
  template void batch_on_calling_thread<T>(Uplo, int, int, T*, int, long long, T*, int, long long, int, int*, bool); \
  template void batch_into_on_calling_thread<T>(Uplo, int, const T*, int, long long, T*, int, long long, int, int*); \
  template void inverse_batch_on_calling_thread<T>(Uplo, int, T*, int, long long, int, int*);                      \
  template void inverse_into_on_calling_thread<T>(Uplo, int, const T*, int, long long, T*, int, long long, int, int*);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
