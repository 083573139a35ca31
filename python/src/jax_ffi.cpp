// XLA FFI handlers through which tessera's functions run inside JAX programs (jax.jit, jax.vmap):
// one for host buffers, one for CUDA buffers on XLA's stream (tessera/_jax.py makes the calls).
// The routes that need no task runtime run here without Python: small host work on the calling
// thread (LAPACK), GPU stacks through the batched kernels (one launch on XLA's stream). So does the
// dense device API, on the runtime the Python layer publishes (py_runtime.hpp) once it has started
// one. The others (the task graph on host buffers, a call naming a policy, a GPU call before any
// runtime runs) go to tessera._jax.run_target with the GIL taken, their buffers as (address,
// shape, numpy type name).
// Built where XLA's FFI headers were found (python/CMakeLists.txt).
//
// Layouts (asked of XLA by tessera/_jax.py): cholesky's input row-major and its factor
// column-major or row-major (the column_major attribute); cho_solve's factor, right-hand sides and
// solution column-major, the solution in the right-hand sides' buffer. A factor is computed as the
// column-major factor of M, A's buffer read column-major (A^T, whose triangles are A's swapped)
// for a row-major result, or transposed into place (A itself) for a column-major one.
#include "jax_ffi.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calling_thread_gate.hpp"
#include "py_runtime.hpp"
#include "routes.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
namespace nb = nanobind;

namespace tessera_python {
namespace {

// The attributes of a call.
struct Call {
  std::string_view target;  // "cholesky" (fails where a matrix is not positive definite), "cholesky_ex", "cho_solve"
  bool lower;
  bool column_major;   // the factor's layout
  std::string mode;    // as the Python layer resolved it ("": the environment's)
  std::string policy;  // "": the default; another forces the task runtime
};

// A stack's order, its count and, for cho_solve, the right-hand sides per matrix.
struct Shape {
  int n = 0;
  int batch = 1;
  int nrhs = 0;
};

Shape square_stack(const ffi::AnyBuffer& a) {
  const auto dims = a.dimensions();
  Shape s;
  s.n = static_cast<int>(dims[dims.size() - 1]);
  for (size_t d = 0; d + 2 < dims.size(); ++d) s.batch *= static_cast<int>(dims[d]);
  return s;
}

Shape solve_stack(const ffi::AnyBuffer& x) {
  const auto dims = x.dimensions();
  Shape s;
  s.n = static_cast<int>(dims[dims.size() - 2]);
  s.nrhs = static_cast<int>(dims[dims.size() - 1]);
  for (size_t d = 0; d + 2 < dims.size(); ++d) s.batch *= static_cast<int>(dims[d]);
  return s;
}

tessera::FactorOptions options(tessera::Uplo uplo, const std::string& mode) {
  tessera::FactorOptions o = tessera::FactorOptions::from_environment();
  o.uplo = uplo;
  if (!mode.empty()) o.mode = tessera::parse_mode(mode);
  return o;
}

// ---- the routes without a runtime -----------------------------------------------------------------

// The triangle of M that the call factors, column-major: the one that holds A's triangle `lower`.
tessera::Uplo factored_triangle(const Call& call) {
  return call.column_major == call.lower ? tessera::Uplo::lower : tessera::Uplo::upper;
}

// Each matrix's M (A transposed into place for a column-major factor, else A's buffer as it lies)
// into the column-major factor storage: the triangle `uplo`, zeros in the other.
template <class T>
void load_triangle(const T* a, T* out, const Shape& s, bool transposed, tessera::Uplo uplo) {
  const long long n = s.n, matrix = n * n;
  const bool lower = uplo == tessera::Uplo::lower;
  for (long long k = 0; k < s.batch; ++k) {
    const T* from = a + k * matrix;
    T* to = out + k * matrix;
    for (long long j = 0; j < n; ++j)
      for (long long i = 0; i < n; ++i)
        to[i + j * n] = (lower ? i < j : i > j) ? T(0) : from[transposed ? i * n + j : i + j * n];
  }
}

// The factorization of host buffers on the calling thread where the plan runs it there; false,
// having done nothing, where it runs tasks.
template <class T>
bool factor_on_calling_thread(const ffi::AnyBuffer& a, ffi::AnyBuffer factor, int32_t* info, const Call& call) {
  if (!call.policy.empty()) return false;
  const Shape s = square_stack(a);
  const tessera::FactorOptions o = options(factored_triangle(call), call.mode);
  T* out = static_cast<T*>(factor.untyped_data());
  const long long matrix = static_cast<long long>(s.n) * s.n;
  const auto stack = tessera::MatrixView<T>::host_batch(s.n, s.n, out, std::max(1, s.n), matrix, s.batch, info);
  if (!tessera::runs_on_calling_thread(stack, 0, o)) return false;
  const CallingThreadGate::Pass pass(*calling_thread_gate);
  load_triangle(static_cast<const T*>(a.untyped_data()), out, s, call.column_major, o.uplo);
  tessera::potrf_on_calling_thread(stack, o);
  return true;
}

template <class T>
bool solve_on_calling_thread(const ffi::AnyBuffer& c, ffi::AnyBuffer x, const Call& call) {
  if (!call.policy.empty()) return false;
  const Shape s = solve_stack(x);
  const tessera::FactorOptions o = options(call.lower ? tessera::Uplo::lower : tessera::Uplo::upper, call.mode);
  const int ld = std::max(1, s.n);
  const auto factors = tessera::MatrixView<T>::host_batch(s.n, s.n, static_cast<T*>(c.untyped_data()), ld,
                                                          static_cast<long long>(s.n) * s.n, s.batch);
  const auto rhs = tessera::MatrixView<T>::host_batch(s.n, s.nrhs, static_cast<T*>(x.untyped_data()), ld,
                                                      static_cast<long long>(s.n) * s.nrhs, s.batch);
  if (!tessera::runs_on_calling_thread(factors, s.nrhs, o)) return false;
  const CallingThreadGate::Pass pass(*calling_thread_gate);
  tessera::potrs_on_calling_thread(factors, rhs, o);
  return true;
}

// A GPU stack through the batched kernels where the plan says so (one launch on XLA's stream,
// reading M through its strides); false otherwise.
template <class T>
bool factor_by_batched_kernels(const ffi::AnyBuffer& a, ffi::AnyBuffer factor, int32_t* info, const Call& call,
                               tessera::device::Stream stream) {
  const Shape s = square_stack(a);
  if (!tessera::device::stack_takes_batched_kernels(s.n, s.batch, tessera::ScalarTraits<T>::precision)) return false;
  const long long n = s.n;
  tessera::device::potrf_batched_ex<T>(factored_triangle(call), s.n, static_cast<const T*>(a.untyped_data()),
                                       call.column_major ? n : 1, call.column_major ? 1 : n, n * n,
                                       static_cast<T*>(factor.untyped_data()), std::max(1, s.n), n * n, s.batch, info,
                                       stream);
  return true;
}

template <class T>
bool solve_by_batched_kernels(const ffi::AnyBuffer& c, ffi::AnyBuffer x, const Call& call,
                              tessera::device::Stream stream) {
  const Shape s = solve_stack(x);
  if (!solve_takes_batched_kernels<T>(s.n, s.batch, s.nrhs)) return false;
  const long long n = s.n;
  tessera::device::potrs_batched_ex<T>(call.lower ? tessera::Uplo::lower : tessera::Uplo::upper, s.n, s.nrhs,
                                       static_cast<const T*>(c.untyped_data()), std::max(1, s.n), n * n,
                                       static_cast<T*>(x.untyped_data()), std::max(1, s.n), n * s.nrhs, s.batch,
                                       nullptr, stream);
  return true;
}

// ---- the dense device API on the published runtime ------------------------------------------------

// The mode of a call on the published runtime: the call's own, else the runtime's default.
const std::string& mode_on(const Call& call, const std::string& runtime_mode) {
  return call.mode.empty() ? runtime_mode : call.mode;
}

// A GPU stack through the dense device API on the runtime the Python layer published, reading A's
// lower triangle (a lower factor, column-major: A as its row-major buffer lies; an upper one,
// row-major: its transpose, whose column-major L read by rows is U); false, having done nothing,
// where a policy is asked for or no runtime is published (Python's route starts one).
template <class T>
bool factor_on_published_runtime(const ffi::AnyBuffer& a, ffi::AnyBuffer factor, int32_t* info, const Call& call,
                                 tessera::device::Stream stream) {
  if (!call.policy.empty() || call.column_major != call.lower) return false;
  const Shape s = square_stack(a);
  if (s.n == 0 || s.batch == 0) return true;
  const long long n = s.n, row = call.lower ? n : 1, col = call.lower ? 1 : n;
  const auto* A = static_cast<const T*>(a.untyped_data());
  auto* L = static_cast<T*>(factor.untyped_data());
  return published_runtime->run([&](tessera::Runtime& runtime, const std::string& mode) {
    const tessera::FactorOptions o = options(tessera::Uplo::lower, mode_on(call, mode));
    if (s.batch > 1)
      tessera::device::potrf_stack_ex<T>(runtime, s.n, A, row, col, n * n, L, s.n, n * n, s.batch, info, stream, o);
    else
      tessera::device::potrf_ex<T>(runtime, s.n, A, row, col, L, s.n, info, stream, o);
  });
}

// cho_solve of a GPU stack through the dense device API on the published runtime (the stack's
// solves enqueued on XLA's stream); false as above.
template <class T>
bool solve_on_published_runtime(const ffi::AnyBuffer& c, ffi::AnyBuffer x, const Call& call,
                                tessera::device::Stream stream) {
  if (!call.policy.empty()) return false;
  const Shape s = solve_stack(x);
  if (s.n == 0 || s.nrhs == 0 || s.batch == 0) return true;
  const long long n = s.n;
  return published_runtime->run([&](tessera::Runtime& runtime, const std::string& mode) {
    const tessera::FactorOptions o =
        options(call.lower ? tessera::Uplo::lower : tessera::Uplo::upper, mode_on(call, mode));
    tessera::device::potrs_stack_ex<T>(runtime, s.n, s.nrhs, static_cast<const T*>(c.untyped_data()), s.n, n * n,
                                       static_cast<T*>(x.untyped_data()), s.n, n * s.nrhs, s.batch, stream, o);
  });
}

// ---- Python: the routes through the runtime, and the message of a failure ---------------------------

const char* numpy_type_name(ffi::DataType type) {
  switch (type) {
    case ffi::DataType::F32: return "float32";
    case ffi::DataType::F64: return "float64";
    case ffi::DataType::C64: return "complex64";
    case ffi::DataType::C128: return "complex128";
    case ffi::DataType::S32: return "int32";
    default: return nullptr;
  }
}

// (address, shape, numpy type name) of a buffer.
nb::tuple describe(const ffi::AnyBuffer& buffer) {
  nb::list shape;
  for (int64_t d : buffer.dimensions()) shape.append(d);
  return nb::make_tuple(reinterpret_cast<uintptr_t>(buffer.untyped_data()), nb::tuple(shape),
                        numpy_type_name(buffer.element_type()));
}

// The error XLA reports for a Python exception: Ctrl-C cancels; misuse and numerical failure
// (NotPositiveDefiniteError is a ValueError) are invalid arguments.
ffi::Error error_of(nb::python_error& e) {
  ffi::ErrorCode code = ffi::ErrorCode::kInternal;
  if (e.matches(PyExc_KeyboardInterrupt))
    code = ffi::ErrorCode::kCancelled;
  else if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError))
    code = ffi::ErrorCode::kInvalidArgument;
  return ffi::Error(code, std::string("tessera: ") + nb::str(e.value()).c_str());
}

ffi::Error run_in_python(const char* platform, uintptr_t stream, const std::vector<ffi::AnyBuffer>& args,
                         const std::vector<ffi::AnyBuffer>& rets, const Call& call) {
  nb::gil_scoped_acquire gil;
  try {
    nb::list in, out;
    for (const ffi::AnyBuffer& b : args) in.append(describe(b));
    for (const ffi::AnyBuffer& b : rets) out.append(describe(b));
    nb::module_::import_("tessera._jax")
        .attr("run_target")(nb::str(call.target.data(), call.target.size()), platform, in, out, call.lower,
                            call.column_major, call.mode, call.policy, stream);
    return ffi::Error::Success();
  } catch (nb::python_error& e) {
    return error_of(e);
  }
}

// cholesky's failure where an info is not 0 (NotPositiveDefiniteError's message).
ffi::Error failure(const std::vector<int>& info, size_t rank) {
  if (std::all_of(info.begin(), info.end(), [](int i) { return i == 0; })) return ffi::Error::Success();
  nb::gil_scoped_acquire gil;
  try {
    nb::module_::import_("tessera._jax").attr("raise_not_positive_definite")(info, rank == 0);
  } catch (nb::python_error& e) {
    return error_of(e);
  }
  return ffi::Error::Internal("tessera: a matrix is not positive definite");
}

// ---- the handlers ---------------------------------------------------------------------------------

// Calls f(T{}) with T the buffer's scalar type; false for a type Tessera does not factor.
template <class F>
bool for_scalar_type(ffi::DataType type, F&& f) {
  switch (type) {
    case ffi::DataType::F32: f(float{}); return true;
    case ffi::DataType::F64: f(double{}); return true;
    case ffi::DataType::C64: f(std::complex<float>{}); return true;
    case ffi::DataType::C128: f(std::complex<double>{}); return true;
    default: return false;
  }
}

std::vector<ffi::AnyBuffer> buffers(const ffi::RemainingArgs& args) {
  std::vector<ffi::AnyBuffer> all;
  for (size_t i = 0; i < args.size(); ++i) {
    ffi::ErrorOr<ffi::AnyBuffer> buffer = args.get<ffi::AnyBuffer>(i);
    if (buffer.has_error()) throw tessera::InvalidArgument("an argument of tessera's JAX target is not a buffer");
    all.push_back(*buffer);
  }
  return all;
}

std::vector<ffi::AnyBuffer> buffers(const ffi::RemainingRets& rets) {
  std::vector<ffi::AnyBuffer> all;
  for (size_t i = 0; i < rets.size(); ++i) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> buffer = rets.get<ffi::AnyBuffer>(i);
    if (buffer.has_error()) throw tessera::InvalidArgument("a result of tessera's JAX target is not a buffer");
    all.push_back(**buffer);
  }
  return all;
}

bool is_factorization(const Call& call) { return call.target == "cholesky" || call.target == "cholesky_ex"; }

// One call: the route without a runtime where there is one, else Python's; then, for cholesky, the
// check of the infos whichever route wrote them.
ffi::Error run(const char* platform, tessera::device::Stream stream, const ffi::RemainingArgs& arguments,
               const ffi::RemainingRets& results, const Call& call) {
  try {
    const std::vector<ffi::AnyBuffer> args = buffers(arguments), rets = buffers(results);
    const bool on_gpu = std::string_view(platform) == "cuda";
    const bool factorization = is_factorization(call);
    if (!factorization && call.target != "cho_solve")
      throw tessera::InvalidArgument("tessera's JAX target has no operation " + std::string(call.target));
    if (args.empty() || rets.size() != (factorization ? 2u : 1u))
      throw tessera::InvalidArgument("tessera's JAX target got the wrong number of buffers");
    bool done = false;
    const bool typed = for_scalar_type(args[0].element_type(), [&](auto zero) {
      using T = decltype(zero);
      if (factorization) {
        auto* info = static_cast<int32_t*>(rets[1].untyped_data());
        done = on_gpu ? factor_by_batched_kernels<T>(args[0], rets[0], info, call, stream) ||
                            factor_on_published_runtime<T>(args[0], rets[0], info, call, stream)
                      : factor_on_calling_thread<T>(args[0], rets[0], info, call);
      } else {
        done = on_gpu ? solve_by_batched_kernels<T>(args[0], rets[0], call, stream) ||
                            solve_on_published_runtime<T>(args[0], rets[0], call, stream)
                      : solve_on_calling_thread<T>(args[0], rets[0], call);
      }
    });
    if (!typed) throw tessera::InvalidArgument("tessera's JAX target takes float32, float64, complex64 and complex128");
    if (!done) {
      ffi::Error ran = run_in_python(platform, reinterpret_cast<uintptr_t>(stream), args, rets, call);
      if (ran.failure()) return ran;
    }
    if (call.target != "cholesky") return ffi::Error::Success();
    const auto count = static_cast<int>(rets[1].element_count());
    std::vector<int> info(static_cast<size_t>(count));
    if (on_gpu)
      tessera::device::read_info(static_cast<const int*>(rets[1].untyped_data()), count, info.data(), stream);
    else
      std::memcpy(info.data(), rets[1].untyped_data(), sizeof(int) * info.size());
    return failure(info, rets[1].dimensions().size());
  } catch (const tessera::InvalidArgument& e) {
    return ffi::Error::InvalidArgument(std::string("tessera: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("tessera: ") + e.what());
  }
}

Call call_of(std::string_view target, bool lower, bool column_major, std::string_view mode,
             std::string_view policy) {
  return Call{target, lower, column_major, std::string(mode), std::string(policy)};
}

ffi::Error host_target(ffi::RemainingArgs args, ffi::RemainingRets rets, std::string_view target, bool lower,
                       bool column_major, std::string_view mode, std::string_view policy) {
  return run("cpu", nullptr, args, rets, call_of(target, lower, column_major, mode, policy));
}

ffi::Error cuda_target(tessera::device::Stream stream, ffi::RemainingArgs args, ffi::RemainingRets rets,
                       std::string_view target, bool lower, bool column_major, std::string_view mode,
                       std::string_view policy) {
  return run("cuda", stream, args, rets, call_of(target, lower, column_major, mode, policy));
}

// Both handlers' buffers and attributes, after what a binding has bound already.
template <class Binding>
auto buffers_and_attributes(Binding binding) {
  return std::move(binding)
      .RemainingArgs()
      .RemainingRets()
      .template Attr<std::string_view>("target")
      .template Attr<bool>("lower")
      .template Attr<bool>("column_major")
      .template Attr<std::string_view>("mode")
      .template Attr<std::string_view>("policy");
}

XLA_FFI_DEFINE_HANDLER(kHostTarget, host_target, buffers_and_attributes(ffi::Ffi::Bind()));

XLA_FFI_DEFINE_HANDLER(kCudaTarget, cuda_target,
                       buffers_and_attributes(ffi::Ffi::Bind().Ctx<ffi::PlatformStream<tessera::device::Stream>>()));

}  // namespace

void define_jax_ffi(nb::module_& m) {
  m.def("jax_ffi_targets", [] {
    nb::dict targets;
    targets["cpu"] = nb::capsule(reinterpret_cast<void*>(kHostTarget));
    targets["CUDA"] = nb::capsule(reinterpret_cast<void*>(kCudaTarget));
    return targets;
  });
}

}  // namespace tessera_python
