// Routing of intercepted LAPACK calls.
//
// Nested calls. Once libtessera_lapack is interposed, every call to dpotrf_ in the process
// resolves to it, including calls that Tessera itself causes: the CPU tile kernel calls
// LAPACKE_dpotrf_work, and LAPACKE calls the dpotrf_ symbol, on a StarPU worker thread. Running
// Tessera from there would start a task graph inside a task of another and wait on it, which
// deadlocks (or recurses without end). So a call made on a StarPU worker goes straight to the
// LAPACK Tessera is linked with (single-threaded while Tessera runs), and a call made while this
// thread is already inside an intercepted call (the next LAPACK's dposv_ calls dpotrf_ and
// dpotrs_, which resolve back here) goes straight to the next LAPACK; both unchecked and
// unreported. This guard is chosen over binding Tessera's kernel to OpenBLAS's own symbol because
// the offending call comes from liblapacke's PLT, not from libtessera (-Bsymbolic on libtessera
// could not change it), because libtessera stays an ordinary library that uses the process's
// LAPACK, and because the same guard also covers a host application's own StarPU tasks that call
// LAPACK and LAPACK's calls into itself.
#include "intercept.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "backend_loader.hpp"
#include "drop_in_environment.hpp"
#include "next_lapack.hpp"
#include "tessera/precision.hpp"
#include "tessera/tools/lapack_arguments.hpp"

namespace tessera::lapack {

namespace {

// ---- process-wide state ------------------------------------------------------------------
// LAPACK's interface has no handle to keep state in, so the interposer's state is per process:
// its options (read once, constant afterwards), whether Tessera was switched off after a failure,
// and call counters for the verbose summary. Each is initialized once or atomic, and trivially
// destructible, so that calls from exit handlers still find it.

struct Counters {
  std::atomic<long> through_tessera{0};
  std::atomic<long> to_next_lapack{0};
  std::atomic<long> nested{0};
};

Counters& counters() {
  static Counters counters;
  return counters;
}

std::atomic<bool>& tessera_switched_off() {
  static std::atomic<bool> off{false};
  return off;
}

// A child made by fork() has none of its parent's StarPU threads, so a task submitted there would
// never run: once the runtime has started, children send every call to the system LAPACK.
void switch_tessera_off_in_child() { tessera_switched_off().store(true); }

void note_runtime_started() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, switch_tessera_off_in_child); });
}

// Per thread: true while this thread runs an intercepted call.
thread_local bool inside_intercepted_call = false;

void print_summary() {
  const Counters& c = counters();
  std::fprintf(stderr,
               "tessera-lapack: %ld calls through Tessera, %ld to the system LAPACK, %ld nested calls passed on "
               "unchecked\n",
               c.through_tessera.load(), c.to_next_lapack.load(), c.nested.load());
}

// The backend's dlopen handle, loading it: asked for only where no other LAPACK can take a call
// (next_lapack.hpp), so that the calls the system LAPACK takes never load Tessera.
void* tessera_lapack_handle() { return loaded_backend().handle; }

// Read by this library itself: reading them loads nothing.
DropInOptions read_options() {
  std::string error;
  const DropInOptions read = drop_in_options_from_environment(&error);
  if (!error.empty())
    std::fprintf(stderr, "tessera-lapack: %s; using the defaults (TESSERA_LAPACK_MIN_N=%d, not verbose)\n",
                 error.c_str(), DropInOptions::default_min_n);
  return read;
}

const DropInOptions& options() {
  static const DropInOptions options = [] {
    const DropInOptions read = read_options();
    if (read.verbose) std::atexit(print_summary);
    return read;
  }();
  return options;
}

// The family's next LAPACK for a call from `caller`; the verbose startup line names its file.
template <class Family>
const LapackLibrary<Family>& next_for_call(const void* caller) {
  const LapackLibrary<Family>& next = next_lapack<Family>(caller, tessera_lapack_handle);
  static std::once_flag said;
  if (options().verbose)
    std::call_once(said, [&] {
      const char* where = *next.file ? next.file : "Tessera too (no other LAPACK in the search order)";
      if (std::is_same_v<Family, Lp64>)
        std::fprintf(stderr, "tessera-lapack: TESSERA_LAPACK_MIN_N=%d; smaller calls go to %s\n", options().min_n, where);
      else
        std::fprintf(stderr, "tessera-lapack: TESSERA_LAPACK_MIN_N=%d; smaller calls to %s go to %s\n", options().min_n,
                     symbol_of<Family>("*").c_str(), where);
    });
  return next;
}

// ---- one call --------------------------------------------------------------------------------

struct CallDescription {
  RoutineName name;
  std::string symbol;  // shown for the families other than LP64 ("scipy_dpotrf_64_")
  char uplo;
  long long n;
  long long nrhs;  // -1 for potrf
  double work;     // arithmetic, in flops
};

// Flops of a Cholesky factorization of order n, and of the two triangular solves with nrhs
// right-hand sides.
double factorization_work(long long n) { return static_cast<double>(n) * n * n / 3.0; }
double solve_work(long long n, long long nrhs) { return 2.0 * n * n * nrhs; }
// Real flops per multiply-add of T's, relative to a real one's: a complex one is four.
template <class T>
constexpr double work_scale() {
  return ScalarTraits<T>::is_complex ? 4.0 : 1.0;
}

template <class Family>
CallDescription describe_call(const RoutineName& name, char uplo, long long n, long long nrhs, double work) {
  return {name, std::is_same_v<Family, Lp64> ? std::string() : symbol_of<Family>(name.base_name), uplo, n, nrhs, work};
}

std::string describe(const CallDescription& call) {
  const std::size_t length = std::strcspn(call.name.xerbla_name, " ");
  std::string text(call.name.xerbla_name, length);
  text += " uplo=";
  text += (call.uplo >= 0x21 && call.uplo <= 0x7e) ? call.uplo : '?';
  text += " n=" + std::to_string(call.n);
  if (call.nrhs >= 0) text += " nrhs=" + std::to_string(call.nrhs);
  if (!call.symbol.empty()) text += " (" + call.symbol + ")";
  return text;
}

void report(const CallDescription& call, const std::string& path, long long info, double seconds) {
  if (!options().verbose) return;
  std::fprintf(stderr, "tessera-lapack: %s: %s, info=%lld, %.6f s\n", describe(call).c_str(), path.c_str(), info,
               seconds);
}

[[noreturn]] void fatal(const CallDescription& call, const std::string& why) {
  std::fprintf(stderr, "tessera-lapack: %s: %s\n", describe(call).c_str(), why.c_str());
  std::abort();
}

[[noreturn]] void fatal_nested(const std::string& symbol) {
  std::fprintf(stderr,
               "tessera-lapack: %s was called from a StarPU worker or from inside LAPACK, and no LAPACK follows "
               "libtessera_lapack in the search order to take it\n",
               symbol.c_str());
  std::abort();
}

void switch_tessera_off(const CallDescription& call, const char* why) {
  if (!tessera_switched_off().exchange(true))
    std::fprintf(stderr, "tessera-lapack: %s: Tessera cannot run (%s); this call and later ones go to the system LAPACK\n",
                 describe(call).c_str(), why);
}

bool on_runtime_worker() {
  const Backend* backend = backend_if_loaded();  // no backend, no runtime: never loaded from here
  return backend && backend->on_runtime_worker();
}

bool is_nested_call() { return inside_intercepted_call || on_runtime_worker(); }

// Where a nested call goes: from Tessera's tile kernels (on the runtime's workers), to the LAPACK
// Tessera is linked with where it has the family; from inside LAPACK, to the next LAPACK.
template <class Family, class T>
const LapackRoutines<T, typename Family::Int>& nested_routines(const void* caller) {
  if (!inside_intercepted_call && backend_if_loaded()) {
    const auto& own = tessera_own_lapack<Family>(loaded_backend().handle).template routines<T>();
    if (own.complete()) return own;
  }
  return next_lapack<Family>(caller, tessera_lapack_handle).template routines<T>();
}

class InterceptedCallScope {
 public:
  InterceptedCallScope() { inside_intercepted_call = true; }
  ~InterceptedCallScope() { inside_intercepted_call = false; }
  InterceptedCallScope(const InterceptedCallScope&) = delete;
  InterceptedCallScope& operator=(const InterceptedCallScope&) = delete;
};

// As LAPACK does with a bad argument: INFO = -position, XERBLA(name, position), return. Without
// any XERBLA in reach, reference XERBLA's message (but no STOP).
template <class Int>
void call_xerbla(const CallDescription& call, int position, XerblaRoutine<Int> xerbla) {
  const Int xerbla_info = position;
  if (xerbla)
    xerbla(call.name.xerbla_name, &xerbla_info, xerbla_name_length);
  else
    std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", call.name.xerbla_name,
                 position);
}

template <class Int>
bool reject_bad_argument(const CallDescription& call, int position, Int* info, XerblaRoutine<Int> xerbla) {
  if (position == 0) return false;
  *info = -position;
  report(call, "illegal value of argument " + std::to_string(position) + " (xerbla called)", *info, 0.0);
  call_xerbla(call, position, xerbla);
  return true;
}

enum class Route { next_lapack, tessera };

// A call goes through Tessera when it does at least the arithmetic of a factorization of order
// min_n: for xPOTRF that is n >= min_n; a solve with few right-hand sides stays on the system
// LAPACK, since Tessera would copy all of A into tiles for a memory-bound O(n^2) solve.
Route choose_route(const CallDescription& call, bool have_next) {
  if (!have_next) return Route::tessera;  // nothing else could take the call
  if (tessera_switched_off().load()) return Route::next_lapack;
  return call.work >= factorization_work(options().min_n) ? Route::tessera : Route::next_lapack;
}

// Through the backend (starting the shared runtime on first use). std::nullopt when Tessera did
// not take the call (the arrays are untouched): it goes to the next LAPACK. A failure once tasks
// ran may leave the arrays half written, which LAPACK's INFO cannot express: the process stops
// with the reason rather than return a wrong result.
std::optional<BackendResult> run_on_tessera(const CallDescription& call, const BackendCall& backend_call) {
  const LoadedBackend& loaded = loaded_backend();
  if (!loaded.backend) {
    switch_tessera_off(call, loaded.error);
    return std::nullopt;
  }
  BackendResult result;
  switch (loaded.backend->run(&backend_call, &result)) {
    case BackendStatus::done:
      note_runtime_started();
      return result;
    case BackendStatus::declined:  // the runtime stopped at exit: the next LAPACK, quietly
    case BackendStatus::rejected:  // (ScaLAPACK calls only)
      return std::nullopt;
    case BackendStatus::cannot_run:
      switch_tessera_off(call, result.message);
      return std::nullopt;
    case BackendStatus::failed_after_start:
      fatal(call, std::string("a Tessera task failed after the arrays started to change: ") + result.message);
  }
  return std::nullopt;
}

// What every routine does once LAPACK's checks passed and there is work: Tessera or the next
// LAPACK, then the verbose line. `refused_by_tessera` is the position of an argument that LAPACK
// accepts but Tessera does not (a size beyond int, a null array, B sharing memory with A): such a
// call goes to the next LAPACK, which does what LAPACK does with it, or is refused as LAPACK
// refuses a bad argument when there is none.
struct IgnoreResult {
  void operator()(const BackendResult&) const {}
};

template <class Int, class MakeBackendCall, class OnNext, class OnResult = IgnoreResult>
void dispatch(const CallDescription& call, bool have_next, int refused_by_tessera, MakeBackendCall&& make_backend_call,
              OnNext&& on_next, Int* info, XerblaRoutine<Int> xerbla, OnResult&& on_result = {}) {
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (refused_by_tessera && !have_next) {
    reject_bad_argument(call, refused_by_tessera, info, xerbla);
    return;
  }
  if (!refused_by_tessera && choose_route(call, have_next) == Route::tessera) {
    if (const std::optional<BackendResult> result = run_on_tessera(call, make_backend_call())) {
      *info = result->info;
      on_result(*result);
      counters().through_tessera++;
      report(call, std::string("tessera ") + result->mode, *info, seconds());
      return;
    }
  }
  if (!have_next) fatal(call, "Tessera could not run it and no other LAPACK follows libtessera_lapack");
  on_next();
  counters().to_next_lapack++;
  report(call, "system LAPACK", *info, seconds());
}

// A nested call goes straight to the routine that `routine_of` picks from the nested LAPACK,
// unchecked and unreported; false when the call is not nested.
template <class Family, class T, class RoutineOf, class... Arguments>
bool passed_on_when_nested(const RoutineName& name, RoutineOf routine_of, const void* caller,
                           Arguments... arguments) {
  if (!is_nested_call()) return false;
  const auto routine = routine_of(nested_routines<Family, T>(caller));
  if (!routine) fatal_nested(symbol_of<Family>(name.base_name));
  counters().nested++;
  routine(arguments...);
  return true;
}

// xPOTRS and xPOSV: the same arguments and checks. xPOSV factors A first (Matrix is T; const T
// for xPOTRS), and still does so without right-hand sides.
template <Operation operation, class Family, class T, class Matrix>
void solve(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, Matrix* a,
           const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
           fortran_strlen uplo_len, const void* caller) noexcept {
  constexpr bool factors = operation == Operation::posv;
  const RoutineName& name = factors ? RoutineNames<T>::posv : RoutineNames<T>::potrs;
  const auto routine_of = [](const auto& routines) {
    if constexpr (operation == Operation::posv)
      return routines.posv;
    else
      return routines.potrs;
  };
  if (passed_on_when_nested<Family, T>(name, routine_of, caller, uplo, n, nrhs, a, lda, b, ldb, info, uplo_len)) return;
  const InterceptedCallScope scope;
  const LapackLibrary<Family>& next = next_for_call<Family>(caller);
  const auto& routines = next.template routines<T>();
  const double work = work_scale<T>() * ((factors ? factorization_work(*n) : 0.0) + solve_work(*n, *nrhs));
  const CallDescription call = describe_call<Family>(name, *uplo, *n, *nrhs, work);
  const int lapack_refuses = factors ? reference_posv_argument_error(*uplo, *n, *nrhs, *lda, *ldb).position
                                     : reference_potrs_argument_error(*uplo, *n, *nrhs, *lda, *ldb).position;
  if (reject_bad_argument(call, lapack_refuses, info, next.xerbla)) return;
  *info = 0;
  if (*n == 0 || (!factors && *nrhs == 0)) return report(call, "quick return", 0, 0.0);
  const int tessera_refuses = factors ? posv_argument_error<T>(*uplo, *n, *nrhs, a, *lda, b, *ldb).position
                                      : potrs_argument_error<T>(*uplo, *n, *nrhs, a, *lda, b, *ldb).position;
  dispatch(
      call, routines.complete(), tessera_refuses,
      [&] {
        return BackendCall{operation, precision_of<T>(), *uplo, static_cast<int>(*n), static_cast<int>(*nrhs),
                           const_cast<T*>(a), static_cast<int>(*lda), b, static_cast<int>(*ldb)};
      },
      [&] { routine_of(routines)(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len); }, info, next.xerbla);
}

}  // namespace

// DSPOSV and ZCPOSV (rwork: ZCPOSV's RWORK, null for DSPOSV). The next LAPACK gets the caller's
// workspaces; Tessera allocates its own.
template <class Family, class T>
void posv_refined(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, T* a,
                  const typename Family::Int* lda, T* b, const typename Family::Int* ldb, T* x,
                  const typename Family::Int* ldx, T* work, SingleOf<T>* swork, double* rwork,
                  typename Family::Int* iter, typename Family::Int* info, fortran_strlen uplo_len,
                  const void* caller) noexcept {
  const auto routine_of = [](const auto& routines) { return routines.posv_refined; };
  const auto call_routine = [&](RefinedRoutine<T, typename Family::Int> routine) {
    if constexpr (std::is_same_v<T, double>)
      routine(uplo, n, nrhs, a, lda, b, ldb, x, ldx, work, swork, iter, info, uplo_len);
    else
      routine(uplo, n, nrhs, a, lda, b, ldb, x, ldx, work, swork, rwork, iter, info, uplo_len);
  };
  if (is_nested_call()) {
    const auto routine = routine_of(nested_routines<Family, T>(caller));
    if (!routine) fatal_nested(symbol_of<Family>(RoutineNames<T>::posv_refined.base_name));
    counters().nested++;
    return call_routine(routine);
  }
  const InterceptedCallScope scope;
  const LapackLibrary<Family>& next = next_for_call<Family>(caller);
  const auto routine = routine_of(next.template routines<T>());
  // The single-precision factorization's arithmetic, and three solves' (the first and two
  // refinement steps, the usual count).
  const double work_done = work_scale<T>() * (factorization_work(*n) + 3.0 * solve_work(*n, *nrhs));
  const CallDescription call = describe_call<Family>(RoutineNames<T>::posv_refined, *uplo, *n, *nrhs, work_done);
  *iter = 0;
  if (reject_bad_argument(call, reference_posv_refined_argument_error(*uplo, *n, *nrhs, *lda, *ldb, *ldx).position,
                          info, next.xerbla))
    return;
  *info = 0;
  if (*n == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, routine != nullptr,
      posv_refined_argument_error<T>(*uplo, *n, *nrhs, a, *lda, b, *ldb, x, *ldx).position,
      [&] {
        BackendCall backend_call{Operation::posv_refined, precision_of<T>(), *uplo, static_cast<int>(*n),
                                 static_cast<int>(*nrhs), a, static_cast<int>(*lda), b, static_cast<int>(*ldb)};
        backend_call.x = x;
        backend_call.ldx = static_cast<int>(*ldx);
        return backend_call;
      },
      [&] { call_routine(routine); }, info, next.xerbla, [&](const BackendResult& result) { *iter = result.iter; });
}

LapackInterceptOptionsView intercept_options() { return {options().verbose}; }
bool in_nested_call() { return is_nested_call(); }
InterceptedCall::InterceptedCall() : outer_(!inside_intercepted_call) { inside_intercepted_call = true; }
InterceptedCall::~InterceptedCall() {
  if (outer_) inside_intercepted_call = false;
}
void count_call(bool through_tessera) {
  if (through_tessera)
    counters().through_tessera++;
  else
    counters().to_next_lapack++;
}
void count_nested_call() { counters().nested++; }
void note_tessera_started() { note_runtime_started(); }
bool tessera_is_switched_off() { return tessera_switched_off().load(); }

template <class Family, class T>
void potrf(const char* uplo, const typename Family::Int* n, T* a, const typename Family::Int* lda,
           typename Family::Int* info, fortran_strlen uplo_len, const void* caller) noexcept {
  const auto routine_of = [](const auto& routines) { return routines.potrf; };
  if (passed_on_when_nested<Family, T>(RoutineNames<T>::potrf, routine_of, caller, uplo, n, a, lda, info, uplo_len))
    return;
  const InterceptedCallScope scope;
  const LapackLibrary<Family>& next = next_for_call<Family>(caller);
  const auto& routines = next.template routines<T>();
  const CallDescription call =
      describe_call<Family>(RoutineNames<T>::potrf, *uplo, *n, -1, work_scale<T>() * factorization_work(*n));
  if (reject_bad_argument(call, reference_potrf_argument_error(*uplo, *n, *lda).position, info, next.xerbla)) return;
  *info = 0;
  if (*n == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, routines.complete(), potrf_argument_error<T>(*uplo, *n, a, *lda).position,
      [&] {
        return BackendCall{Operation::potrf, precision_of<T>(), *uplo, static_cast<int>(*n), 0, a,
                           static_cast<int>(*lda), nullptr, 1};
      },
      [&] { routines.potrf(uplo, n, a, lda, info, uplo_len); }, info, next.xerbla);
}

// The inverse does twice a factorization's arithmetic (xTRTRI and xLAUUM, n^3 / 3 each).
template <class Family, class T>
void potri(const char* uplo, const typename Family::Int* n, T* a, const typename Family::Int* lda,
           typename Family::Int* info, fortran_strlen uplo_len, const void* caller) noexcept {
  const auto routine_of = [](const auto& routines) { return routines.potri; };
  if (passed_on_when_nested<Family, T>(RoutineNames<T>::potri, routine_of, caller, uplo, n, a, lda, info, uplo_len))
    return;
  const InterceptedCallScope scope;
  const LapackLibrary<Family>& next = next_for_call<Family>(caller);
  const auto& routines = next.template routines<T>();
  const CallDescription call =
      describe_call<Family>(RoutineNames<T>::potri, *uplo, *n, -1, work_scale<T>() * 2.0 * factorization_work(*n));
  if (reject_bad_argument(call, reference_potrf_argument_error(*uplo, *n, *lda).position, info, next.xerbla)) return;
  *info = 0;
  if (*n == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, routines.potri != nullptr, potrf_argument_error<T>(*uplo, *n, a, *lda).position,
      [&] {
        return BackendCall{Operation::potri, precision_of<T>(), *uplo, static_cast<int>(*n), 0, a,
                           static_cast<int>(*lda), nullptr, 1};
      },
      [&] { routines.potri(uplo, n, a, lda, info, uplo_len); }, info, next.xerbla);
}

template <class Family, class T>
void potrs(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, const T* a,
           const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
           fortran_strlen uplo_len, const void* caller) noexcept {
  solve<Operation::potrs, Family, T>(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len, caller);
}

template <class Family, class T>
void posv(const char* uplo, const typename Family::Int* n, const typename Family::Int* nrhs, T* a,
          const typename Family::Int* lda, T* b, const typename Family::Int* ldb, typename Family::Int* info,
          fortran_strlen uplo_len, const void* caller) noexcept {
  solve<Operation::posv, Family, T>(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len, caller);
}

// Every family in every precision.
#define TESSERA_LAPACK_INSTANTIATE(Family, T)                                                                      \
  template void potrf<Family, T>(const char*, const Family::Int*, T*, const Family::Int*, Family::Int*,            \
                                 fortran_strlen, const void*) noexcept;                                             \
  template void potri<Family, T>(const char*, const Family::Int*, T*, const Family::Int*, Family::Int*,            \
                                 fortran_strlen, const void*) noexcept;                                             \
  template void potrs<Family, T>(const char*, const Family::Int*, const Family::Int*, const T*, const Family::Int*, \
                                 T*, const Family::Int*, Family::Int*, fortran_strlen, const void*) noexcept;       \
  template void posv<Family, T>(const char*, const Family::Int*, const Family::Int*, T*, const Family::Int*, T*,    \
                                const Family::Int*, Family::Int*, fortran_strlen, const void*) noexcept;
#define TESSERA_LAPACK_INSTANTIATE_FAMILIES(T) \
  TESSERA_LAPACK_INSTANTIATE(Lp64, T)          \
  TESSERA_LAPACK_INSTANTIATE(ScipyLp64, T)     \
  TESSERA_LAPACK_INSTANTIATE(Ilp64, T)         \
  TESSERA_LAPACK_INSTANTIATE(ScipyIlp64, T)
TESSERA_FOR_EACH_SCALAR(TESSERA_LAPACK_INSTANTIATE_FAMILIES)
#undef TESSERA_LAPACK_INSTANTIATE_FAMILIES
#undef TESSERA_LAPACK_INSTANTIATE

#define TESSERA_LAPACK_INSTANTIATE_REFINED(Family, T)                                                              \
  template void posv_refined<Family, T>(const char*, const Family::Int*, const Family::Int*, T*, const Family::Int*, \
                                        T*, const Family::Int*, T*, const Family::Int*, T*, SingleOf<T>*, double*,   \
                                        Family::Int*, Family::Int*, fortran_strlen, const void*) noexcept;
#define TESSERA_LAPACK_INSTANTIATE_REFINED_FAMILIES(T) \
  TESSERA_LAPACK_INSTANTIATE_REFINED(Lp64, T)          \
  TESSERA_LAPACK_INSTANTIATE_REFINED(ScipyLp64, T)     \
  TESSERA_LAPACK_INSTANTIATE_REFINED(Ilp64, T)         \
  TESSERA_LAPACK_INSTANTIATE_REFINED(ScipyIlp64, T)
TESSERA_LAPACK_INSTANTIATE_REFINED_FAMILIES(double)
TESSERA_LAPACK_INSTANTIATE_REFINED_FAMILIES(std::complex<double>)
#undef TESSERA_LAPACK_INSTANTIATE_REFINED_FAMILIES
#undef TESSERA_LAPACK_INSTANTIATE_REFINED

}  // namespace tessera::lapack
