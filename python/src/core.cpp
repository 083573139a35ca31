// The Python package's native module: thin bindings of Tessera's C++ API. The Python layer
// (tessera/__init__.py) shapes every input into a C-ordered stack of matrices (batch, rows, cols)
// before it gets here, so these functions see one layout: matrix k at k * rows * cols elements,
// row-major, which Tessera reads as the column-major transpose (the caller flips uplo for that).
// The exception is the out-of-place batched factorization, which reads a GPU stack through the
// strides its array has.
// Host arrays arrive as numpy arrays; device arrays as raw device pointers with their stream, so
// that a call costs no more than a kernel launch. The GIL is released while Tessera works.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>
#include <string>

#include "tessera/batched.hpp"
#include "tessera/blas.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/refinement.hpp"
#include "tessera/policies.hpp"
#include "tessera/precision.hpp"
#include "tessera/runtime.hpp"
#include "tessera/version.h"

#include "calling_thread_gate.hpp"
#include "py_runtime.hpp"
#include "routes.hpp"
#ifdef TESSERA_HAVE_JAX_FFI
#include "jax_ffi.hpp"
#endif

namespace nb = nanobind;

namespace tessera_python {

// Both made afresh in a forked child: the parent's mutexes may have been held by a thread that does
// not exist there (the old objects are left, never destroyed).
CallingThreadGate* calling_thread_gate = new CallingThreadGate();
PublishedRuntime* published_runtime = new PublishedRuntime();

}  // namespace tessera_python

namespace {

using tessera_python::CallingThreadGate;
using tessera_python::calling_thread_gate;
using tessera_python::PublishedRuntime;
using tessera_python::published_runtime;
using tessera_python::PyRuntime;

using HostStack = nb::ndarray<nb::device::cpu, nb::c_contig, nb::ndim<3>>;
using ReadOnlyHostStack = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig, nb::ndim<3>>;
using HostInfo = nb::ndarray<int32_t, nb::device::cpu, nb::c_contig, nb::ndim<1>>;

tessera::Uplo parse_stored_uplo(const std::string& uplo) { return tessera::parse_uplo(uplo); }

int checked_int(size_t value, const char* what) {
  if (value > static_cast<size_t>(INT32_MAX)) throw tessera::InvalidArgument(std::string(what) + " exceeds 2^31 - 1");
  return static_cast<int>(value);
}

// A stack of square matrices: its order and count.
struct StackShape {
  int n;
  int batch;
};

template <class Stack>
StackShape square_stack(const Stack& a) {
  if (a.shape(1) != a.shape(2)) throw tessera::InvalidArgument("the matrices must be square");
  return {checked_int(a.shape(1), "the matrix order"), checked_int(a.shape(0), "the number of matrices")};
}

tessera::RuntimeOptions runtime_options(int ncpu, int ncuda, const std::string& policy, bool verbose) {
  tessera::RuntimeOptions o = tessera::RuntimeOptions::from_environment();
  if (ncpu >= 0) o.ncpus = ncpu;
  if (ncuda >= 0) o.ncuda = ncuda;
  if (!policy.empty()) o.scheduler = policy;
  o.verbose = verbose;
  return o;
}

// Zeros the strict triangle of each column-major n x n matrix of the stack other than `uplo`'s.
template <class T>
void zero_other_triangle(T* data, int n, long long batch, tessera::Uplo uplo) {
  for (long long k = 0; k < batch; ++k) {
    T* m = data + k * n * n;
    for (int j = 0; j < n; ++j) {
      T* column = m + static_cast<long long>(j) * n;
      if (uplo == tessera::Uplo::lower)
        std::fill(column, column + j, T(0));
      else
        std::fill(column + j + 1, column + n, T(0));
    }
  }
}

tessera::FactorOptions options_of(tessera::Uplo uplo, const std::string& mode) {
  tessera::FactorOptions o = tessera::FactorOptions::from_environment();
  o.uplo = uplo;
  if (!mode.empty()) o.mode = tessera::parse_mode(mode);
  return o;
}

// ---- the dense device API on GPU matrices, out of place -----------------------------------------

// The lower triangle of the matrix at `a` (element (i, j) at a + i * row_stride + j * col_stride, in
// elements) factored on `runtime` into the column-major n x n array at `l`, zeros above the
// diagonal; its info into the int at `info` (device memory), all in the order of `stream`. Never
// synchronises where the call is one vendor call (tessera::device::potrf_ex). `mode` "": the
// environment's.
template <class T>
void dense_potrf_into(tessera::Runtime& runtime, const std::string& mode, uintptr_t a, int64_t row_stride,
                      int64_t col_stride, uintptr_t l, int n, uintptr_t info, uintptr_t stream) {
  tessera::device::potrf_ex(runtime, n, reinterpret_cast<const T*>(a), row_stride, col_stride, reinterpret_cast<T*>(l),
                            std::max(1, n), reinterpret_cast<int*>(info),
                            reinterpret_cast<tessera::device::Stream>(stream), options_of(tessera::Uplo::lower, mode));
}

// The whole inverse from the factor at `c` (element (i, j) at c + i * row_stride + j * col_stride; its
// triangle `upper` or lower) on `runtime` into the column-major n x n array at `x`, NaN where the
// factor has a zero on its diagonal (tessera::device::potri_ex: on `stream` up to the plan's order,
// never synchronising then). `mode` "": the environment's.
template <class T>
void dense_potri_into(tessera::Runtime& runtime, const std::string& mode, uintptr_t c, int64_t row_stride,
                      int64_t col_stride, uintptr_t x, int n, bool upper, uintptr_t stream) {
  tessera::device::potri_ex(runtime, n, reinterpret_cast<const T*>(c), row_stride, col_stride, reinterpret_cast<T*>(x),
                            std::max(1, n), nullptr, reinterpret_cast<tessera::device::Stream>(stream),
                            options_of(upper ? tessera::Uplo::upper : tessera::Uplo::lower, mode));
}

// dense_potrf_into, waiting for the factor: returns its info, read back through a word the runtime
// keeps (tessera::device::potrf's out-of-place form) instead of an info array of the caller's.
template <class T>
int dense_potrf_into_and_wait(tessera::Runtime& runtime, const std::string& mode, uintptr_t a, int64_t row_stride,
                              int64_t col_stride, uintptr_t l, int n, uintptr_t stream) {
  return tessera::device::potrf(runtime, n, reinterpret_cast<const T*>(a), row_stride, col_stride,
                                reinterpret_cast<T*>(l), std::max(1, n),
                                reinterpret_cast<tessera::device::Stream>(stream),
                                options_of(tessera::Uplo::lower, mode));
}

// A stack of `batch` such matrices, matrix k at a + k * step (elements), its factor at l + k * n * n
// and its info at info + k (tessera::device::potrf_stack_ex: one vendor batched call where the plan
// says so, never synchronising then).
template <class T>
void dense_potrf_stack_into(tessera::Runtime& runtime, const std::string& mode, uintptr_t a, int64_t row_stride,
                            int64_t col_stride, int64_t step, uintptr_t l, int n, int batch, uintptr_t info,
                            uintptr_t stream) {
  const long long ld = std::max(1, n);
  tessera::device::potrf_stack_ex(runtime, n, reinterpret_cast<const T*>(a), row_stride, col_stride, step,
                                  reinterpret_cast<T*>(l), static_cast<int>(ld), ld * n, batch,
                                  reinterpret_cast<int*>(info), reinterpret_cast<tessera::device::Stream>(stream),
                                  options_of(tessera::Uplo::lower, mode));
}

// The same calls on the runtime the Python layer published (PublishedRuntime), as the JAX handlers
// make them: without runtime_call()'s admission in Python (its lock, checks and call object, a
// share of a small matrix's call), admitted here instead. They return false (the waiting form
// None), having done nothing, where no runtime is published: the caller then goes through
// runtime_call(), which starts one. `mode` "": the published runtime's.
template <class T>
bool dense_potrf_into_published(uintptr_t a, int64_t row_stride, int64_t col_stride, int64_t step, uintptr_t l, int n,
                                int batch, const std::string& mode, uintptr_t info, uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  return published_runtime->run([&](tessera::Runtime& runtime, const std::string& runtime_mode) {
    const std::string& call_mode = mode.empty() ? runtime_mode : mode;
    if (batch > 1)
      dense_potrf_stack_into<T>(runtime, call_mode, a, row_stride, col_stride, step, l, n, batch, info, stream);
    else
      dense_potrf_into<T>(runtime, call_mode, a, row_stride, col_stride, l, n, info, stream);
  });
}

template <class T>
bool dense_potri_into_published(uintptr_t c, int64_t row_stride, int64_t col_stride, uintptr_t x, int n, bool upper,
                                const std::string& mode, uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  return published_runtime->run([&](tessera::Runtime& runtime, const std::string& runtime_mode) {
    dense_potri_into<T>(runtime, mode.empty() ? runtime_mode : mode, c, row_stride, col_stride, x, n, upper, stream);
  });
}

template <class T>
std::optional<int> dense_potrf_into_and_wait_published(uintptr_t a, int64_t row_stride, int64_t col_stride,
                                                       uintptr_t l, int n, const std::string& mode,
                                                       uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  std::optional<int> info;
  published_runtime->run([&](tessera::Runtime& runtime, const std::string& runtime_mode) {
    info = dense_potrf_into_and_wait<T>(runtime, mode.empty() ? runtime_mode : mode, a, row_stride, col_stride, l, n,
                                        stream);
  });
  return info;
}

// A request submitted with the GIL released (inserting its tasks takes a while on large matrices).
template <class Submit>
tessera::Request submit(Submit&& submit_request) {
  nb::gil_scoped_release unlocked;
  return submit_request();
}

// Waits for a request with the GIL released, a slice at a time: between slices the main thread
// runs Python's signal handlers, and an exception they raise (KeyboardInterrupt for Ctrl-C)
// cancels the request (its tasks not yet started return at once), which is waited for before the
// exception propagates. `progress`, when not None, is called with the fraction done (Python
// float in [0, 1]) every few slices and once at the end; an exception it raises cancels the
// request the same way. Returns the request's info.
int wait_interruptibly(tessera::Request& request, const nb::object& progress = nb::none()) {
  constexpr std::chrono::milliseconds kSlice{20};
  constexpr int kSlicesPerReport = 5;
  auto cancel_and_raise = [&] {
    request.cancel();
    {
      nb::gil_scoped_release unlocked;
      try {
        request.wait();
      } catch (const std::exception&) {  // Cancelled, or what a task raised before: Python's exception wins
      }
    }
  };
  for (int slice = 1;; ++slice) {
    bool done;
    {
      nb::gil_scoped_release unlocked;
      done = request.wait_for(kSlice);
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {
      cancel_and_raise();
      throw nb::python_error();
    }
    if (!progress.is_none() && slice % kSlicesPerReport == 0) {
      try {
        progress(request.progress().fraction());
      } catch (...) {
        cancel_and_raise();
        throw;
      }
    }
  }
  if (!progress.is_none()) progress(request.progress().fraction());
  nb::gil_scoped_release unlocked;
  return request.wait();
}

// One admitted call on a PyRuntime (a context manager in Python): the factorizations run through
// it, and the runtime stays up until it ends (end(), __exit__, or its destruction, whichever comes
// first). `mode` is the default mode of the calls made through it ("": the environment's).
class RuntimeCall {
 public:
  RuntimeCall(PyRuntime& owner, std::string mode) : owner_(&owner), runtime_(&owner.admit()), mode_(std::move(mode)) {}
  ~RuntimeCall() { end(); }
  RuntimeCall(const RuntimeCall&) = delete;
  RuntimeCall& operator=(const RuntimeCall&) = delete;

  void end() noexcept {
    if (owner_) owner_->leave();
    owner_ = nullptr;
    runtime_ = nullptr;
  }
  const std::string& mode() const { return mode_; }
  // Called with the fraction done while this call's host work waits (None: nothing reported).
  nb::object progress_ = nb::none();

  // Each matrix of the stack factored in place, the other triangle than `uplo` zeroed (as numpy's
  // and SciPy's factors have it). Ctrl-C cancels it (wait_interruptibly).
  template <class T>
  void potrf(HostStack a, const std::string& uplo, const std::string& mode, HostInfo info) {
    const StackShape s = square_stack(a);
    if (info.shape(0) != static_cast<size_t>(s.batch)) throw tessera::InvalidArgument("info has the wrong length");
    T* data = static_cast<T*>(a.data());
    tessera::Runtime& rt = runtime();
    if (s.batch == 1) {
      std::vector<tessera::Request> requests;
      for (int k = 0; k < s.batch; ++k)
        requests.push_back(submit([&] {
          return tessera::potrf_async(rt, s.n, data + k * stride(s.n, s.n), std::max(1, s.n), factor_options(uplo, mode));
        }));
      for (int k = 0; k < s.batch; ++k) info.data()[k] = wait_interruptibly(requests[static_cast<size_t>(k)], progress_);
    } else {
      tessera::Request request = submit([&] {
        return tessera::potrf_batched_async(rt, s.n, data, std::max(1, s.n), stride(s.n, s.n), s.batch, info.data(),
                                            batch_options(uplo, mode));
      });
      wait_interruptibly(request, progress_);
    }
    nb::gil_scoped_release unlocked;
    zero_other_triangle(data, s.n, s.batch, parse_stored_uplo(uplo));
  }

  // One double matrix (a stack of one) factored with adaptive precision (FactorOptions::accuracy);
  // returns the tiles below the diagonal that took fp16, fp32 and fp64.
  std::tuple<long long, long long, long long> potrf_adaptive(HostStack a, const std::string& uplo,
                                                             const std::string& mode, double accuracy, HostInfo info) {
    const StackShape s = square_stack(a);
    if (s.batch != 1 || info.shape(0) != 1) throw tessera::InvalidArgument("accuracy takes one matrix, not a stack");
    auto* data = static_cast<double*>(a.data());
    tessera::FactorOptions options = factor_options(uplo, mode);
    options.accuracy = accuracy;
    tessera::TileArithmeticMap map;
    options.tile_arithmetic = &map;
    tessera::Request request = submit([&] { return tessera::potrf_async(runtime(), s.n, data, std::max(1, s.n), options); });
    info.data()[0] = wait_interruptibly(request, progress_);
    nb::gil_scoped_release unlocked;
    zero_other_triangle(data, s.n, 1, parse_stored_uplo(uplo));
    return {map.count(tessera::TileArithmetic::fp16), map.count(tessera::TileArithmetic::fp32),
            map.count(tessera::TileArithmetic::fp64)};
  }

  // X_k := A_k^{-1} B_k in mixed precision (tessera::posv_refined: LAPACK's DSPOSV/ZCPOSV, or with
  // GMRES-IR under refinement "gmres") for each matrix of a stack in host memory (one matrix: a
  // stack of one), one after the other: a (batch, n, n) with
  // each matrix column-major (a C-ordered stack of the matrices' transposes), b and x (batch, nrhs,
  // n) each block column-major; info[k] and iter[k] each matrix's INFO and ITER. A matrix that falls
  // back to double precision gets its factor in its slot of a (a copy the caller owns).
  template <class T>
  void posv_refined_stack(HostStack a, ReadOnlyHostStack b, HostStack x, const std::string& uplo,
                          const std::string& mode, const std::string& tensor_cores, const std::string& refinement,
                          HostInfo info, HostInfo iter) {
    const StackShape s = square_stack(a);
    if (b.shape(0) != a.shape(0) || b.shape(2) != a.shape(1) || x.shape(0) != b.shape(0) || x.shape(1) != b.shape(1) ||
        x.shape(2) != b.shape(2))
      throw tessera::InvalidArgument("the right-hand sides or the solutions do not match the matrices");
    if (info.shape(0) != static_cast<size_t>(s.batch) || iter.shape(0) != static_cast<size_t>(s.batch))
      throw tessera::InvalidArgument("info or iter has the wrong length");
    const int nrhs = checked_int(b.shape(1), "the number of right-hand sides");
    tessera::Runtime& rt = runtime();
    tessera::FactorOptions options = factor_options(uplo, mode);
    options.tensor_cores = tessera::parse_tensor_cores(tensor_cores);
    options.refinement = tessera::parse_refinement(refinement);
    T* matrices = static_cast<T*>(a.data());
    const T* rhs = static_cast<const T*>(b.data());
    T* solutions = static_cast<T*>(x.data());
    nb::gil_scoped_release unlocked;
    const int ld = std::max(1, s.n);
    for (int k = 0; k < s.batch; ++k) {
      const auto view = [&](const T* p, int cols) {
        return tessera::MatrixView<T>::host(s.n, cols, const_cast<T*>(p), ld);
      };
      const tessera::RefinedSolve solved =
          tessera::posv_refined(rt, view(matrices + k * stride(s.n, s.n), s.n), view(rhs + k * stride(s.n, nrhs), nrhs),
                                view(solutions + k * stride(s.n, nrhs), nrhs), options);
      info.data()[k] = solved.info;
      iter.data()[k] = solved.iter;
    }
  }

  // The same on double-precision matrices in GPU memory (tessera::device::posv_refined; T double
  // or complex<double>), in the order of `stream`.
  template <class T>
  std::pair<int, int> posv_refined_device(uintptr_t a, uintptr_t b, uintptr_t x, int n, int nrhs,
                                          const std::string& uplo, const std::string& mode,
                                          const std::string& tensor_cores, const std::string& refinement,
                                          uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    tessera::FactorOptions options = factor_options(uplo, mode);
    options.tensor_cores = tessera::parse_tensor_cores(tensor_cores);
    options.refinement = tessera::parse_refinement(refinement);
    nb::gil_scoped_release unlocked;
    const int ld = std::max(1, n);
    const tessera::RefinedSolve solved = tessera::device::posv_refined(
        rt, n, nrhs, reinterpret_cast<T*>(a), ld, reinterpret_cast<const T*>(b), ld, reinterpret_cast<T*>(x), ld,
        reinterpret_cast<tessera::device::Stream>(stream), options);
    return {solved.info, solved.iter};
  }

  // Each factor of the stack replaced in place by the triangle `uplo` of its matrix's inverse
  // (LAPACK's xPOTRI), info[k] its info (a zero on the factor's diagonal): a stack of orders the
  // batched inverse kernel takes (the library's plan) as one batched request, else each matrix as
  // its tile task graph (all submitted before the first wait). Ctrl-C cancels it.
  template <class T>
  void potri(HostStack a, const std::string& uplo, const std::string& mode, HostInfo info) {
    const StackShape s = square_stack(a);
    if (info.shape(0) != static_cast<size_t>(s.batch)) throw tessera::InvalidArgument("info has the wrong length");
    T* data = static_cast<T*>(a.data());
    tessera::Runtime& rt = runtime();
    const int ld = std::max(1, s.n);
    const tessera::Precision precision = tessera::ScalarTraits<T>::precision;
    if (s.batch == 1 || !tessera::device::inverse_takes_batched_kernel(s.n, s.batch, precision)) {
      std::vector<tessera::Request> requests;
      for (int k = 0; k < s.batch; ++k)
        requests.push_back(submit([&] {
          return tessera::potri_async(rt, s.n, data + k * stride(s.n, s.n), ld, factor_options(uplo, mode));
        }));
      for (int k = 0; k < s.batch; ++k) info.data()[k] = wait_interruptibly(requests[static_cast<size_t>(k)], progress_);
      return;
    }
    tessera::Request request = submit([&] {
      return tessera::potri_batched_async(rt, s.n, data, ld, stride(s.n, s.n), s.batch, info.data(),
                                          batch_options(uplo, mode));
    });
    wait_interruptibly(request, progress_);
  }

  // b holds each right-hand side block column-major (batch, nrhs, n); c the factors. Ctrl-C
  // cancels it.
  template <class T>
  void potrs(ReadOnlyHostStack c, HostStack b, const std::string& uplo, const std::string& mode) {
    const StackShape s = square_stack(c);
    if (b.shape(0) != c.shape(0) || b.shape(2) != c.shape(1))
      throw tessera::InvalidArgument("the right-hand sides do not match the factors");
    const int nrhs = checked_int(b.shape(1), "the number of right-hand sides");
    const T* factors = static_cast<const T*>(c.data());
    T* rhs = static_cast<T*>(b.data());
    const int ld = std::max(1, s.n);
    tessera::Runtime& rt = runtime();
    if (s.batch == 1) {
      std::vector<tessera::Request> requests;
      for (int k = 0; k < s.batch; ++k)
        requests.push_back(submit([&] {
          return tessera::potrs_async(rt, s.n, nrhs, factors + k * stride(s.n, s.n), ld, rhs + k * stride(s.n, nrhs), ld,
                                      factor_options(uplo, mode));
        }));
      for (tessera::Request& request : requests) wait_interruptibly(request, progress_);
    } else {
      tessera::Request request = submit([&] {
        return tessera::potrs_batched_async(rt, s.n, nrhs, factors, ld, stride(s.n, s.n), rhs, ld, stride(s.n, nrhs),
                                            s.batch, batch_options(uplo, mode));
      });
      wait_interruptibly(request, progress_);
    }
  }

  // The dense calls on GPU matrices (dense_potrf_into, dense_potrf_into_and_wait, dense_potri_into) on this call's
  // runtime.
  template <class T>
  void potrf_device_into(uintptr_t a, int64_t row_stride, int64_t col_stride, uintptr_t l, int n,
                         const std::string& mode, uintptr_t info, uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    nb::gil_scoped_release unlocked;
    dense_potrf_into<T>(rt, mode, a, row_stride, col_stride, l, n, info, stream);
  }

  template <class T>
  void potri_device_into(uintptr_t c, int64_t row_stride, int64_t col_stride, uintptr_t x, int n, bool upper,
                         const std::string& mode, uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    nb::gil_scoped_release unlocked;
    dense_potri_into<T>(rt, mode, c, row_stride, col_stride, x, n, upper, stream);
  }

  template <class T>
  int potrf_device_into_and_wait(uintptr_t a, int64_t row_stride, int64_t col_stride, uintptr_t l, int n,
                                 const std::string& mode, uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    nb::gil_scoped_release unlocked;
    return dense_potrf_into_and_wait<T>(rt, mode, a, row_stride, col_stride, l, n, stream);
  }

  // potrf_device_into_and_wait with adaptive precision (FactorOptions::accuracy: one double matrix
  // as the tile DAG on the GPU); returns the info and the tiles below the diagonal that took fp16,
  // fp32 and fp64.
  std::tuple<int, long long, long long, long long> potrf_adaptive_device_into_and_wait(
      uintptr_t a, int64_t row_stride, int64_t col_stride, uintptr_t l, int n, const std::string& mode,
      uintptr_t stream, double accuracy) {
    tessera::Runtime& rt = runtime();
    tessera::FactorOptions options = factor_options("lower", mode);
    options.accuracy = accuracy;
    tessera::TileArithmeticMap map;
    options.tile_arithmetic = &map;
    nb::gil_scoped_release unlocked;
    const int info = tessera::device::potrf(rt, n, reinterpret_cast<const double*>(a), row_stride, col_stride,
                                            reinterpret_cast<double*>(l), std::max(1, n),
                                            reinterpret_cast<tessera::device::Stream>(stream), options);
    return {info, map.count(tessera::TileArithmetic::fp16), map.count(tessera::TileArithmetic::fp32),
            map.count(tessera::TileArithmetic::fp64)};
  }

  // dense_potrf_stack_into on this call's runtime.
  template <class T>
  void potrf_stack_device_into(uintptr_t a, int64_t row_stride, int64_t col_stride, int64_t step, uintptr_t l, int n,
                               int batch, const std::string& mode, uintptr_t info, uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    nb::gil_scoped_release unlocked;
    dense_potrf_stack_into<T>(rt, mode, a, row_stride, col_stride, step, l, n, batch, info, stream);
  }

  // The solves with a stack of `batch` factors at c (n x n each, column-major) of the right-hand
  // sides at b (n x nrhs each), in the order of `stream` (tessera::device::potrs_stack_ex: never
  // synchronising where the plan runs them on the caller's stream).
  template <class T>
  void potrs_stack_device(uintptr_t c, uintptr_t b, int n, int nrhs, int batch, const std::string& uplo,
                          const std::string& mode, uintptr_t stream) {
    tessera::Runtime& rt = runtime();
    nb::gil_scoped_release unlocked;
    const long long ld = std::max(1, n);
    tessera::device::potrs_stack_ex(rt, n, nrhs, reinterpret_cast<const T*>(c), static_cast<int>(ld), ld * n,
                                    reinterpret_cast<T*>(b), static_cast<int>(ld), ld * nrhs, batch,
                                    reinterpret_cast<tessera::device::Stream>(stream), factor_options(uplo, mode));
  }

 private:
  tessera::Runtime& runtime() const {
    if (!runtime_) throw tessera::RuntimeError("this call on the Tessera runtime has ended");
    return *runtime_;
  }
  static long long stride(int rows, int cols) { return static_cast<long long>(rows) * cols; }
  static tessera::FactorOptions factor_options(const std::string& uplo, const std::string& mode) {
    return options_of(parse_stored_uplo(uplo), mode);
  }
  static tessera::BatchOptions batch_options(const std::string& uplo, const std::string& mode) {
    tessera::BatchOptions o;
    o.uplo = parse_stored_uplo(uplo);
    o.mode = mode.empty() ? tessera::FactorOptions::from_environment().mode : tessera::parse_mode(mode);
    return o;
  }

  PyRuntime* owner_;
  tessera::Runtime* runtime_;
  std::string mode_;
};

// ---- small work on the calling thread, with no runtime ----------------------------------------

using AnyHostArray = nb::ndarray<nb::ro, nb::device::cpu>;


// Whether the array's elements lie one after the other in C order (strides in elements).
bool c_contiguous(const AnyHostArray& a) {
  int64_t expected = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(d));
  }
  return true;
}

// Whether the array's matrices lie column by column (Fortran order within each, one after the
// other, strides in elements) and not also row by row: their transposes are C-ordered.
bool stored_by_columns(const AnyHostArray& a) {
  const size_t ndim = a.ndim();
  const int64_t n = static_cast<int64_t>(a.shape(ndim - 1));
  if (n < 2 || a.stride(ndim - 2) != 1 || a.stride(ndim - 1) != n) return false;
  int64_t expected = n * n;
  for (size_t d = ndim - 2; d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(d));
  }
  return true;
}

// Uninitialised host memory for `elements` values of type T that a call writes whole: no zeros
// (make_unique's would be a pass over the whole stack before the one that writes it), and a large
// block aligned to 2 MiB and advised to take huge pages, as numpy's own large arrays are: each
// fresh 4 KiB page costs a fault at its first write, which for a stack of small matrices took as
// long as their factorization.
struct FreeMemory {
  void operator()(void* p) const noexcept { std::free(p); }
};
template <class T>
using HostBuffer = std::unique_ptr<T[], FreeMemory>;

template <class T>
HostBuffer<T> written_later(long long elements) {
  const size_t bytes = static_cast<size_t>(std::max<long long>(1, elements)) * sizeof(T);
  constexpr size_t huge_page = size_t{2} << 20;
  void* p = nullptr;
#ifdef MADV_HUGEPAGE
  if (bytes >= 2 * huge_page) {
    const size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
    if (posix_memalign(&p, huge_page, rounded) == 0)
      static_cast<void>(madvise(p, rounded, MADV_HUGEPAGE));  // advice only: normal pages if refused
    else
      p = nullptr;
  }
#endif
  if (!p) p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return HostBuffer<T>(static_cast<T*>(p));
}

// A host array of square matrices (..., n, n) of scalar type T as the library's strided host batch
// reads it: matrix k column-major at matrices() + k * n * n. Matrices stored by columns are read as
// they lie; C-ordered ones are read as their transposes; others are gathered (element by element)
// into a column-major copy of their transposes.
template <class T>
class HostStackSource {
 public:
  // None where `a` is not a stack of square matrices of type T.
  static std::optional<HostStackSource> of(const AnyHostArray& a) {
    const size_t ndim = a.ndim();
    if (a.dtype() != nb::dtype<T>() || ndim < 2 || a.shape(ndim - 1) != a.shape(ndim - 2)) return std::nullopt;
    HostStackSource source(a);
    return source;
  }

  int n() const { return n_; }
  int count() const { return count_; }
  long long matrix() const { return static_cast<long long>(n_) * n_; }
  // The library's triangle of the matrices whose triangle `lower` is given as the array holds them.
  tessera::Uplo uplo(bool lower) const { return lower != by_columns_ ? tessera::Uplo::upper : tessera::Uplo::lower; }

  // The matrices (read only), gathered first where they do not lie as the batch reads them.
  const T* matrices() {
    if (as_it_lies_) return static_cast<const T*>(a_.data());
    if (!gathered_) gather();
    return gathered_.get();
  }

  // A fresh array of `count` n x n results, written column-major by the library, with the array's
  // shape and its order: C strides, or each matrix's last two swapped for matrices stored by
  // columns (what the library wrote is then read as it wrote it).
  nb::object result(HostBuffer<T> data) const {
    std::vector<size_t> shape(a_.shape_ptr(), a_.shape_ptr() + a_.ndim());
    std::vector<int64_t> strides(shape.size());
    int64_t step = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = step;
      step *= static_cast<int64_t>(shape[d]);
    }
    if (by_columns_) std::swap(strides[shape.size() - 1], strides[shape.size() - 2]);
    T* raw = data.release();
    nb::capsule owner(raw, [](void* p) noexcept { std::free(p); });
    return nb::ndarray<nb::numpy, T>(raw, shape.size(), shape.data(), owner, strides.data()).cast();
  }
  // A fresh int32 array of the leading shape (...) holding `info`.
  nb::object info_result(HostBuffer<int32_t> info) const {
    const std::vector<size_t> shape(a_.shape_ptr(), a_.shape_ptr() + a_.ndim() - 2);
    int32_t* raw = info.release();
    nb::capsule owner(raw, [](void* p) noexcept { std::free(p); });
    return nb::ndarray<nb::numpy, int32_t>(raw, shape.size(), shape.data(), owner).cast();
  }

 private:
  explicit HostStackSource(const AnyHostArray& a) : a_(a) {
    const size_t ndim = a.ndim();
    n_ = checked_int(a.shape(ndim - 1), "the matrix order");
    size_t batch = 1;
    for (size_t d = 0; d + 2 < ndim; ++d) batch *= a.shape(d);
    count_ = checked_int(batch, "the number of matrices");
    by_columns_ = stored_by_columns(a);
    as_it_lies_ = n_ > 0 && (by_columns_ || c_contiguous(a));
  }

  // Matrix k's element (r, c) as the array holds it is element (c, r) of its column-major copy.
  void gather() {
    const size_t ndim = a_.ndim();
    gathered_ = written_later<T>(matrix() * count_);
    const T* source = static_cast<const T*>(a_.data());
    std::vector<size_t> index(ndim, 0);
    const int64_t row_stride = a_.stride(ndim - 2), col_stride = a_.stride(ndim - 1);
    for (int k = 0; k < count_; ++k) {
      long long offset = 0;
      for (size_t d = 0; d + 2 < ndim; ++d) offset += static_cast<long long>(index[d]) * a_.stride(d);
      T* out = gathered_.get() + k * matrix();
      for (int r = 0; r < n_; ++r)
        for (int c = 0; c < n_; ++c) out[c + static_cast<long long>(r) * n_] = source[offset + r * row_stride + c * col_stride];
      for (size_t d = ndim - 2; d-- > 0;) {  // the next matrix's index, last dimension fastest
        if (++index[d] < a_.shape(d)) break;
        index[d] = 0;
      }
    }
  }

  AnyHostArray a_;
  int n_ = 0;
  int count_ = 0;
  bool by_columns_ = false;
  bool as_it_lies_ = false;
  HostBuffer<T> gathered_;
};

// `run(source, results)` (two strided host batches: the stack as the library reads it, a fresh one
// to write) on the calling thread, where the plan runs `options`' request there; returns the
// results (in the source's order), the info per matrix (shape (...)) and whether any matrix
// failed, or None, having done nothing, where it runs tasks.
template <class T, class Run>
nb::object out_of_place_on_calling_thread(HostStackSource<T>& source, const tessera::FactorOptions& options,
                                          const Run& run) {
  const int n = source.n(), count = source.count();
  if (!tessera::runs_on_calling_thread(
          tessera::MatrixView<T>::host_batch(n, n, nullptr, std::max(1, n), source.matrix(), count), 0, options))
    return nb::none();
  HostBuffer<T> results = written_later<T>(source.matrix() * count);
  HostBuffer<int32_t> info = written_later<int32_t>(count);
  bool failed = false;
  {
    const T* matrices = n > 0 ? source.matrices() : nullptr;
    const CallingThreadGate::Pass pass(*calling_thread_gate);
    nb::gil_scoped_release unlocked;
    // The source is read only (the view's type is the library's one for batches).
    run(tessera::MatrixView<T>::host_batch(n, n, const_cast<T*>(matrices), std::max(1, n), source.matrix(), count),
        tessera::MatrixView<T>::host_batch(n, n, results.get(), std::max(1, n), source.matrix(), count, info.get()));
    failed = std::any_of(info.get(), info.get() + count, [](int32_t i) { return i != 0; });
  }
  return nb::make_tuple(source.result(std::move(results)), source.info_result(std::move(info)), failed);
}

// The Cholesky factors of a host array of square matrices (..., n, n) of scalar type T, where the
// plan runs the work on the calling thread (tessera::runs_on_calling_thread): a fresh array of the
// factors in the input's order (C, or Fortran for matrices stored by columns; the other triangle
// zero), the info per matrix (shape (...)) and whether any matrix failed, or None, having done
// nothing, where it runs tasks (or `a` is not of type T). `lower` is the triangle of the matrices
// as the array holds them. Each matrix's triangle is copied just before its factorization (the
// library's out-of-place form); `a` is read through its strides, copied only where it must be.
template <class T>
nb::object cholesky_on_calling_thread(AnyHostArray a, bool lower, const std::string& mode) {
  std::optional<HostStackSource<T>> source = HostStackSource<T>::of(a);
  if (!source) return nb::none();
  const tessera::FactorOptions options = options_of(source->uplo(lower), mode);
  return out_of_place_on_calling_thread(*source, options, [&](const auto& in, const auto& out) {
    tessera::potrf_on_calling_thread(in, out, options);
  });
}

// The inverses a^-1 from a host array of Cholesky factors (..., n, n) of scalar type T (their
// triangle `lower` as the array holds them), as cholesky_on_calling_thread: the whole Hermitian
// inverse of each (xPOTRI, then mirrored; NaN where a factor's diagonal has a zero, info[k] its
// xPOTRI info), or None. A C-ordered factor L is read as the upper factor L^T of conj(a), whose
// inverse conj(a^-1), written column-major and read C-ordered, is a^-1.
template <class T>
nb::object cholesky_inverse_on_calling_thread(AnyHostArray c, bool lower, const std::string& mode) {
  std::optional<HostStackSource<T>> source = HostStackSource<T>::of(c);
  if (!source) return nb::none();
  const tessera::FactorOptions options = options_of(source->uplo(lower), mode);
  return out_of_place_on_calling_thread(*source, options, [&](const auto& in, const auto& out) {
    tessera::potri_on_calling_thread(in, out, options);
  });
}

// x := A^{-1} x for each of the stack's factors, on the calling thread where the plan runs the work
// there (as cholesky_on_calling_thread); returns False, having done nothing, where it runs tasks.
// c and b as RuntimeCall::potrs takes them.
template <class T>
bool potrs_on_calling_thread(ReadOnlyHostStack c, HostStack b, const std::string& uplo, const std::string& mode) {
  const StackShape s = square_stack(c);
  if (b.shape(0) != c.shape(0) || b.shape(2) != c.shape(1))
    throw tessera::InvalidArgument("the right-hand sides do not match the factors");
  const int nrhs = checked_int(b.shape(1), "the number of right-hand sides");
  const tessera::FactorOptions options = options_of(parse_stored_uplo(uplo), mode);
  const int ld = std::max(1, s.n);
  const auto factors = tessera::MatrixView<T>::host_batch(s.n, s.n, static_cast<T*>(const_cast<void*>(c.data())), ld,
                                                          static_cast<long long>(s.n) * s.n, s.batch);
  const auto rhs = tessera::MatrixView<T>::host_batch(s.n, nrhs, static_cast<T*>(b.data()), ld,
                                                      static_cast<long long>(s.n) * nrhs, s.batch);
  if (!tessera::runs_on_calling_thread(factors, nrhs, options)) return false;
  const CallingThreadGate::Pass pass(*calling_thread_gate);
  nb::gil_scoped_release unlocked;
  tessera::potrs_on_calling_thread(factors, rhs, options);
  return true;
}

// RuntimeCall::potri on the calling thread where the plan runs each matrix's inverse there;
// returns False, having done nothing, where it runs tasks.
template <class T>
bool potri_on_calling_thread(HostStack a, const std::string& uplo, const std::string& mode, HostInfo info) {
  const StackShape s = square_stack(a);
  if (info.shape(0) != static_cast<size_t>(s.batch)) throw tessera::InvalidArgument("info has the wrong length");
  const tessera::FactorOptions options = options_of(parse_stored_uplo(uplo), mode);
  const int ld = std::max(1, s.n);
  const long long matrix = static_cast<long long>(s.n) * s.n;
  const auto stack = tessera::MatrixView<T>::host_batch(s.n, s.n, static_cast<T*>(a.data()), ld, matrix, s.batch,
                                                       info.data());
  if (!tessera::runs_on_calling_thread(stack, 0, options)) return false;
  const CallingThreadGate::Pass pass(*calling_thread_gate);
  nb::gil_scoped_release unlocked;
  tessera::potri_on_calling_thread(stack, options);
  return true;
}

// ---- device stacks: the batched kernels on the caller's stream, never synchronising -----------

// One kernel launch: matrix k read at a + k * stride (element (i, j) at i * row_stride + j * col_stride,
// in elements), its factor written column-major to the C-ordered stack l (n x n each) with zeros in
// the other triangle, info[k] its LAPACK info. Plain integers in, nothing parsed: the Python side
// calls it once per factorization of a GPU stack.
template <class T>
void potrf_batched_device_into(uintptr_t a, int64_t row_stride, int64_t col_stride, int64_t stride, uintptr_t l, int n,
                               int batch, bool upper, uintptr_t info, uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  tessera::device::potrf_batched_ex(upper ? tessera::Uplo::upper : tessera::Uplo::lower, n,
                                    reinterpret_cast<const T*>(a), row_stride, col_stride, stride,
                                    reinterpret_cast<T*>(l), std::max(1, n), static_cast<long long>(n) * n, batch,
                                    reinterpret_cast<int*>(info), reinterpret_cast<tessera::device::Stream>(stream));
}

// One kernel launch: factor k read at c + k * stride through its element strides (its triangle
// `upper` or lower), the whole inverse written column-major to the C-ordered stack x (n x n each),
// info[k] xPOTRI's info, or none where info is 0 (a failed matrix's inverse is NaN either way).
template <class T>
void potri_batched_device_into(uintptr_t c, int64_t row_stride, int64_t col_stride, int64_t stride, uintptr_t x, int n,
                               int batch, bool upper, uintptr_t info, uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  tessera::device::potri_batched_ex(upper ? tessera::Uplo::upper : tessera::Uplo::lower, n,
                                    reinterpret_cast<const T*>(c), row_stride, col_stride, stride,
                                    reinterpret_cast<T*>(x), std::max(1, n), static_cast<long long>(n) * n, batch,
                                    reinterpret_cast<int*>(info), reinterpret_cast<tessera::device::Stream>(stream));
}

template <class T>
void potrs_batched_device(uintptr_t c, uintptr_t b, int n, int nrhs, int batch, const std::string& uplo,
                          uintptr_t stream) {
  nb::gil_scoped_release unlocked;
  tessera::device::potrs_batched_ex(parse_stored_uplo(uplo), n, nrhs, reinterpret_cast<const T*>(c), std::max(1, n),
                                    static_cast<long long>(n) * n, reinterpret_cast<T*>(b), std::max(1, n),
                                    static_cast<long long>(n) * nrhs, batch, nullptr,
                                    reinterpret_cast<tessera::device::Stream>(stream));
}

// device::posv_refined_batched on C-ordered stacks whose matrices and blocks are column-major: a
// (batch, n, n), b and x (batch, nrhs, n); info and iter (host) each matrix's INFO and ITER. A
// matrix that falls back to double precision gets its factor in its slot of a (the caller's copy).
template <class T>
void posv_refined_batched_device(uintptr_t a, uintptr_t b, uintptr_t x, int n, int nrhs, int batch,
                                 const std::string& uplo, uintptr_t stream, HostInfo info, HostInfo iter) {
  if (info.shape(0) != static_cast<size_t>(batch) || iter.shape(0) != static_cast<size_t>(batch))
    throw tessera::InvalidArgument("info or iter has the wrong length");
  nb::gil_scoped_release unlocked;
  const int ld = std::max(1, n);
  const long long stride_a = static_cast<long long>(n) * n, stride_b = static_cast<long long>(n) * nrhs;
  tessera::device::posv_refined_batched(parse_stored_uplo(uplo), n, nrhs, reinterpret_cast<T*>(a), ld, stride_a,
                                        reinterpret_cast<const T*>(b), ld, stride_b, reinterpret_cast<T*>(x), ld,
                                        stride_b, batch, info.data(), iter.data(),
                                        reinterpret_cast<tessera::device::Stream>(stream));
}

// A host array's copy from this size on is split over threads: one thread moves a fraction of
// what the memory system can, most of all into a fresh array whose pages the copy touches first.
constexpr std::size_t kParallelCopyMinBytes = std::size_t{32} << 20;
constexpr std::size_t kParallelCopyBytesPerThread = std::size_t{16} << 20;

// dst := src, `bytes` bytes of host memory that do not overlap, in page-aligned slices over at
// most `cpus` threads (the calling thread takes the first), the GIL released.
void copy_host_bytes(uintptr_t dst, uintptr_t src, std::size_t bytes, int cpus) {
  nb::gil_scoped_release unlocked;
  auto* to = reinterpret_cast<unsigned char*>(dst);
  const auto* from = reinterpret_cast<const unsigned char*>(src);
  const std::size_t threads =
      std::clamp<std::size_t>(bytes / kParallelCopyBytesPerThread, 1, static_cast<std::size_t>(std::max(cpus, 1)));
  constexpr std::size_t kPage = 4096;
  const std::size_t slice = ((bytes + threads - 1) / threads + kPage - 1) / kPage * kPage;
  std::vector<std::thread> helpers;
  for (std::size_t begin = slice; begin < bytes; begin += slice)
    helpers.emplace_back([=] { std::memcpy(to + begin, from + begin, std::min(slice, bytes - begin)); });
  std::memcpy(to, from, std::min(slice, bytes));
  for (std::thread& helper : helpers) helper.join();
}

// numpy's code of a scalar type's dtype as the suffix of its functions: "_f4" (float), "_f8" (double).
template <class T>
std::string dtype_suffix() {
  return std::string(tessera::ScalarTraits<T>::is_complex ? "_c" : "_f") + std::to_string(sizeof(T));
}

// Binds f<T> as name + dtype_suffix<T>() for every scalar type Tessera factors ("_c8", "_c16" for
// the complex ones), or for the real ones.
template <class Bind>
void for_each_precision(Bind bind) {
#define TESSERA_BIND(T) bind(T{}, dtype_suffix<T>());
  TESSERA_FOR_EACH_SCALAR(TESSERA_BIND)
#undef TESSERA_BIND
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Tessera's native module (use the tessera package instead)";
  // Objects still held at exit (by daemon threads, say) would be reported on stderr, and the
  // library prints nothing unless asked.
  nb::set_leak_warnings(false);
  m.attr("library_version") = tessera::version();
  m.attr("starpu_version") = tessera::starpu_version();
  m.def("calling_thread_calls_begin_fork", [] { calling_thread_gate->begin_fork(); });
  m.def("calling_thread_calls_end_fork", [] { calling_thread_gate->end_fork(); });
  m.def("calling_thread_calls_reset_in_child", [] { calling_thread_gate = new CallingThreadGate(); });
  // The runtime the JAX FFI handlers take (tessera._runtime publishes it): None withdraws it.
  m.def(
      "publish_runtime", [](PyRuntime* runtime, const std::string& mode) { published_runtime->publish(runtime, mode); },
      nb::arg("runtime").none(), nb::arg("mode"));
  m.def("published_runtime_reset_in_child", [] { published_runtime = new PublishedRuntime(); });
  m.attr("parallel_copy_min_bytes") = kParallelCopyMinBytes;
  m.def("copy_host_bytes", &copy_host_bytes);
  m.def("blas_info", [] {
    const tessera::BlasInfo blas = tessera::blas_info();
    nb::dict info;
    info["library"] = blas.library;
    info["kernel"] = blas.kernel;
    info["kernel_from_environment"] = blas.kernel_from_environment;
    info["faster_kernel"] = blas.faster_kernel;
    return info;
  });
  m.def("policy_names", [] {
    std::vector<std::string> names;
    for (const tessera::PolicyInfo& p : tessera::scheduling_policies()) names.push_back(p.name);
    return names;
  });

  auto error = nb::exception<tessera::Error>(m, "TesseraError", PyExc_RuntimeError);
  nb::exception<tessera::InvalidArgument>(m, "InvalidArgumentError", PyExc_ValueError);
  nb::exception<tessera::ResourceError>(m, "ResourceError", error.ptr());
  nb::exception<tessera::CudaError>(m, "CudaError", error.ptr());
  nb::exception<tessera::RuntimeError>(m, "RuntimeStartError", error.ptr());

  nb::class_<PyRuntime>(m, "Runtime")
      .def(
          "__init__",
          [](PyRuntime* r, int ncpu, int ncuda, const std::string& policy, bool verbose) {
            new (r) PyRuntime(runtime_options(ncpu, ncuda, policy, verbose));
          },
          nb::arg("ncpu"), nb::arg("ncuda"), nb::arg("policy"), nb::arg("verbose"),
          nb::call_guard<nb::gil_scoped_release>())
      .def("close", &PyRuntime::close)
      // The call keeps its runtime object alive.
      .def(
          "call", [](PyRuntime& r, const std::string& mode) { return new RuntimeCall(r, mode); }, nb::arg("mode"),
          nb::keep_alive<0, 1>(), nb::rv_policy::take_ownership)
      .def_prop_ro("cpu_workers", [](PyRuntime& r) { return r.query([](tessera::Runtime& t) { return t.cpu_workers(); }); })
      .def_prop_ro("cuda_workers",
                   [](PyRuntime& r) { return r.query([](tessera::Runtime& t) { return t.cuda_workers(); }); })
      .def_prop_ro("scheduler", [](PyRuntime& r) { return r.query([](tessera::Runtime& t) { return t.scheduler(); }); })
      .def("resolve", [](PyRuntime& r, const std::string& mode) {
        const tessera::Mode requested = tessera::parse_mode(mode);
        return r.query([&](tessera::Runtime& t) { return std::string(tessera::to_string(t.resolve(requested))); });
      });

  auto call = nb::class_<RuntimeCall>(m, "RuntimeCall")
                  .def_prop_ro("mode", &RuntimeCall::mode)
                  .def(
                      "set_progress", [](RuntimeCall& c, nb::object report) { c.progress_ = std::move(report); },
                      nb::arg("report").none())
                  .def("end", &RuntimeCall::end)
                  .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
                  .def("__exit__", [](RuntimeCall& c, nb::args) { c.end(); });

  m.def("posv_refined_batched_device_d", &posv_refined_batched_device<double>);
  m.def("posv_refined_batched_device_z", &posv_refined_batched_device<std::complex<double>>);

  // Every entry in every precision: host arrays, GPU matrices in place and out of place, stacks and
  // the batched kernels.
  for_each_precision([&](auto zero, const std::string& s) {
    using T = decltype(zero);
    m.def(("potrf_batched_device_into" + s).c_str(), &potrf_batched_device_into<T>);
    m.def(("potrs_batched_device" + s).c_str(), &potrs_batched_device<T>);
    m.def(("potri_batched_device_into" + s).c_str(), &potri_batched_device_into<T>);
    m.def(("stack_takes_batched_kernels" + s).c_str(), [](int n, int batch) {
      return tessera::device::stack_takes_batched_kernels(n, batch, tessera::ScalarTraits<T>::precision);
    });
    m.def(("solve_takes_batched_kernels" + s).c_str(), &tessera_python::solve_takes_batched_kernels<T>);
    m.def(("inverse_takes_batched_kernel" + s).c_str(), [](int n, int batch) {
      return tessera::device::inverse_takes_batched_kernel(n, batch, tessera::ScalarTraits<T>::precision);
    });
    m.def(("inverse_takes_dense_call" + s).c_str(), [](int n, int batch) {
      return tessera::device::inverse_takes_dense_call(n, batch, tessera::ScalarTraits<T>::precision);
    });
    call.def(("potrf" + s).c_str(), &RuntimeCall::potrf<T>);
    call.def(("potrs" + s).c_str(), &RuntimeCall::potrs<T>);
    call.def(("potri" + s).c_str(), &RuntimeCall::potri<T>);
    m.def(("cholesky_on_calling_thread" + s).c_str(), &cholesky_on_calling_thread<T>, nb::arg("a").noconvert(),
          nb::arg("lower"), nb::arg("mode"));
    m.def(("cholesky_inverse_on_calling_thread" + s).c_str(), &cholesky_inverse_on_calling_thread<T>,
          nb::arg("c").noconvert(), nb::arg("lower"), nb::arg("mode"));
    m.def(("potrs_on_calling_thread" + s).c_str(), &potrs_on_calling_thread<T>);
    m.def(("potri_on_calling_thread" + s).c_str(), &potri_on_calling_thread<T>);
    m.def(("potrf_device_into_published" + s).c_str(), &dense_potrf_into_published<T>);
    m.def(("potrf_device_into_and_wait_published" + s).c_str(), &dense_potrf_into_and_wait_published<T>);
    call.def(("potrf_device_into" + s).c_str(), &RuntimeCall::potrf_device_into<T>);
    call.def(("potri_device_into" + s).c_str(), &RuntimeCall::potri_device_into<T>);
    m.def(("potri_device_into_published" + s).c_str(), &dense_potri_into_published<T>);
    call.def(("potrf_device_into_and_wait" + s).c_str(), &RuntimeCall::potrf_device_into_and_wait<T>);
    call.def(("potrf_stack_device_into" + s).c_str(), &RuntimeCall::potrf_stack_device_into<T>);
    call.def(("potrs_stack_device" + s).c_str(), &RuntimeCall::potrs_stack_device<T>);
  });
  call.def("potrf_adaptive_d", &RuntimeCall::potrf_adaptive);
  call.def("potrf_adaptive_device_into_and_wait_d", &RuntimeCall::potrf_adaptive_device_into_and_wait);
  call.def("posv_refined_stack_d", &RuntimeCall::posv_refined_stack<double>);
  call.def("posv_refined_stack_z", &RuntimeCall::posv_refined_stack<std::complex<double>>);
  call.def("posv_refined_device_d", &RuntimeCall::posv_refined_device<double>);
  call.def("posv_refined_device_z", &RuntimeCall::posv_refined_device<std::complex<double>>);
#ifdef TESSERA_HAVE_JAX_FFI
  tessera_python::define_jax_ffi(m);
#endif
}
