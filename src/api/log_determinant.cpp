// FactorOptions::log_determinant: log det(A) = 2 sum log(diag(L)), given by Request::wait() once
// the factorization is done (Submission::set_completion): summed from one task's share per
// diagonal tile (tile factorizations: the diagonal read where the tile is, while it is there), or
// read off the factor (GPU arrays: one kernel; batches and the calling thread: their small
// matrices' diagonals).
#include <cmath>
#include <memory>
#include <vector>
#include <string>

#include "device_memory.hpp"
#include "operations.hpp"
#include "request_support.hpp"
#include "submission.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::detail {

namespace {

// 2 sum log(d) over the n diagonal entries d[k * step] of a factor, in double.
template <class T>
double log_determinant_of(int n, const T* diagonal, long long step) {
  double sum = 0.0;
  // A factor's diagonal is real (for complex scalars, the real parts).
  for (int k = 0; k < n; ++k) sum += std::log(static_cast<double>(std::real(diagonal[k * step])));
  return 2.0 * sum;
}

}  // namespace

template <class T>
void write_log_determinants(const MatrixView<T>& A, int info, double* out) {
  switch (A.where()) {
    case MatrixIn::host:
      *out = info == 0 ? log_determinant_of(A.rows(), A.data(), A.ld() + 1LL) : 0.0;
      return;
    case MatrixIn::device: {
      *out = 0.0;
      if (info != 0 || A.rows() == 0) return;
#ifdef TESSERA_HAVE_CUDA
      *out = log_determinant_on_stream(A.rows(), A.data(), A.ld(), A.stream());
#endif
      return;
    }
    case MatrixIn::host_batch:
      for (int k = 0; k < A.count(); ++k)
        out[k] = A.info()[k] == 0 ? log_determinant_of(A.rows(), A.data() + k * A.stride(), A.ld() + 1LL) : 0.0;
      return;
    case MatrixIn::host_variable_batch:
      for (int k = 0; k < A.count(); ++k)
        out[k] = A.info()[k] == 0 ? log_determinant_of(A.variable_rows()[k], A.data() + A.offsets()[k],
                                                      A.variable_ld()[k] + 1LL)
                                  : 0.0;
      return;
    case MatrixIn::tiles: break;  // log_diagonal_slots
  }
}

double* log_diagonal_slots(Submission& submission, int tiles, double* out) {
  if (!out) return nullptr;
  auto slots = std::make_shared<std::vector<double>>(static_cast<std::size_t>(tiles), 0.0);
  submission.set_completion([slots, out](int info) {
    double sum = 0.0;
    for (double slot : *slots) sum += slot;
    *out = info == 0 ? sum : 0.0;
  });
  return slots->data();
}

template <class T>
Request with_log_determinant(Request request, const MatrixView<T>& A, const FactorOptions& options) {
  const bool read_off_the_array = A.where() == MatrixIn::device || A.where() == MatrixIn::host_batch ||
                                  A.where() == MatrixIn::host_variable_batch;
  if (!options.log_determinant || !read_off_the_array) return request;
  double* out = options.log_determinant;
  RequestAccess::submission(request)->set_completion([A, out](int info) { write_log_determinants(A, info, out); });
  return request;
}

#define TESSERA_INSTANTIATE(T)                                                                        \
  template void write_log_determinants<T>(const MatrixView<T>&, int, double*);                          \
  template Request with_log_determinant<T>(Request, const MatrixView<T>&, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
