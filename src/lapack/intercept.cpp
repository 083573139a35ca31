// Routing of intercepted LAPACK calls.
//
// Nested calls. Once libtessera_lapack is interposed, every call to dpotrf_ in the process
// resolves to it, including calls that Tessera itself causes: the CPU tile kernel calls
// LAPACKE_dpotrf_work, and LAPACKE calls the dpotrf_ symbol, on a StarPU worker thread. Running
// Tessera from there would start a task graph inside a task of another and wait on it, which
// deadlocks (or recurses without end). So a call made on a StarPU worker, or made while this
// thread is already inside an intercepted call (the next LAPACK's dposv_ calls dpotrf_ and
// dpotrs_, which resolve back here), goes straight to the next LAPACK, unchecked and unreported.
// This guard is chosen over binding Tessera's kernel to OpenBLAS's own symbol because the
// offending call comes from liblapacke's PLT, not from libtessera (-Bsymbolic on libtessera could
// not change it), because libtessera stays an ordinary library that uses the process's LAPACK,
// and because the same guard also covers a host application's own StarPU tasks that call LAPACK
// and LAPACK's calls into itself.
#include "intercept.hpp"

#include <pthread.h>
#include <starpu.h>
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "intercept_options.hpp"
#include "next_lapack.hpp"
#include "tessera/cholesky.hpp"

namespace tessera::lapack {

namespace {

// ---- process-wide state ------------------------------------------------------------------
// LAPACK's interface has no handle to keep state in, so the interposer's state is per process:
// its options (read once, constant afterwards), whether Tessera was switched off after a failure,
// and call counters for the verbose summary. Each is initialized once or atomic.

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
               "tessera-lapack: %ld calls through Tessera, %ld to the system LAPACK, %ld nested calls passed to "
               "the system LAPACK\n",
               c.through_tessera.load(), c.to_next_lapack.load(), c.nested.load());
}

LapackInterceptOptions read_options() {
  try {
    return LapackInterceptOptions::from_environment();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-lapack: %s; using the defaults (TESSERA_LAPACK_MIN_N=%d, not verbose)\n", e.what(),
                 LapackInterceptOptions::default_min_n);
    return {};
  }
}

const LapackInterceptOptions& options() {
  static const LapackInterceptOptions options = [] {
    const LapackInterceptOptions read = read_options();
    if (read.verbose) {
      const std::string& next = next_lapack().library;
      std::fprintf(stderr, "tessera-lapack: TESSERA_LAPACK_MIN_N=%d; smaller calls go to %s\n", read.min_n,
                   next.empty() ? "Tessera too (no other LAPACK in the search order)" : next.c_str());
      std::atexit(print_summary);
    }
    return read;
  }();
  return options;
}

// ---- one call --------------------------------------------------------------------------------

struct CallDescription {
  RoutineName name;
  char uplo;
  int n;
  int nrhs;
  bool has_nrhs;  // false for potrf
  double work;    // arithmetic, in flops
};

// Flops of a Cholesky factorization of order n, and of the two triangular solves with nrhs
// right-hand sides.
double factorization_work(int n) { return static_cast<double>(n) * n * n / 3.0; }
double solve_work(int n, int nrhs) { return 2.0 * n * n * nrhs; }

std::string describe(const CallDescription& call) {
  const std::size_t length = std::strcspn(call.name.xerbla_name, " ");
  std::string text(call.name.xerbla_name, length);
  text += " uplo=";
  text += (call.uplo >= 0x21 && call.uplo <= 0x7e) ? call.uplo : '?';
  text += " n=" + std::to_string(call.n);
  if (call.has_nrhs) text += " nrhs=" + std::to_string(call.nrhs);
  return text;
}

void report(const CallDescription& call, const std::string& path, int info, double seconds) {
  if (!options().verbose) return;
  std::fprintf(stderr, "tessera-lapack: %s: %s, info=%d, %.6f s\n", describe(call).c_str(), path.c_str(), info,
               seconds);
}

[[noreturn]] void fatal(const CallDescription& call, const std::string& why) {
  std::fprintf(stderr, "tessera-lapack: %s: %s\n", describe(call).c_str(), why.c_str());
  std::abort();
}

[[noreturn]] void fatal_nested(const RoutineName& name) {
  std::fprintf(stderr,
               "tessera-lapack: %s was called from a StarPU worker or from inside LAPACK, and no LAPACK follows "
               "libtessera_lapack in the search order to take it\n",
               name.symbol);
  std::abort();
}

void switch_tessera_off(const CallDescription& call, const std::string& why) {
  if (!tessera_switched_off().exchange(true))
    std::fprintf(stderr, "tessera-lapack: %s: Tessera cannot run (%s); this call and later ones go to the system LAPACK\n",
                 describe(call).c_str(), why.c_str());
}

bool on_starpu_worker() { return starpu_is_initialized() && starpu_worker_get_id() >= 0; }

bool is_nested_call() { return inside_intercepted_call || on_starpu_worker(); }

class InterceptedCallScope {
 public:
  InterceptedCallScope() { inside_intercepted_call = true; }
  ~InterceptedCallScope() { inside_intercepted_call = false; }
  InterceptedCallScope(const InterceptedCallScope&) = delete;
  InterceptedCallScope& operator=(const InterceptedCallScope&) = delete;
};

// Between intercepted calls the program gets its cores back: StarPU's workers sleep instead of
// polling (Runtime::pause_workers), and OpenBLAS runs with the program's own thread count again
// (Tessera's CPU tasks need one thread each while they run). The first call in flight takes the
// cores, the last one to finish gives them back.
class CoresTaken {
 public:
  CoresTaken() {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().calls_in_flight++ == 0) state().program_blas_threads = openblas_get_num_threads();
  }
  // Once the runtime runs (Runtime::shared() starts it and sets one BLAS thread).
  void runtime_ready(Runtime& runtime) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().runtime = &runtime;
    if (state().paused) {
      runtime.resume_workers();
      state().paused = false;
    }
    openblas_set_num_threads(1);
  }
  ~CoresTaken() {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (--state().calls_in_flight > 0) return;
    if (state().runtime && !state().paused) {
      state().runtime->pause_workers();
      state().paused = true;
    }
    openblas_set_num_threads(state().program_blas_threads);
  }
  CoresTaken(const CoresTaken&) = delete;
  CoresTaken& operator=(const CoresTaken&) = delete;

 private:
  struct State {
    std::mutex mutex;
    int calls_in_flight = 0;
    int program_blas_threads = 1;
    Runtime* runtime = nullptr;
    bool paused = false;
  };
  static State& state() {
    static State s;
    return s;
  }
};

// LAPACK's LSAME: one character, case-insensitive.
bool same_letter(char c, char upper_case) { return c == upper_case || c == upper_case - 'A' + 'a'; }
bool valid_uplo(char uplo) { return same_letter(uplo, 'U') || same_letter(uplo, 'L'); }

// Reference LAPACK's checks of xPOTRF, in its order: the position of the first bad argument, or 0.
int potrf_bad_argument(char uplo, int n, int lda) {
  if (!valid_uplo(uplo)) return 1;
  if (n < 0) return 2;
  if (lda < std::max(1, n)) return 4;
  return 0;
}

// Reference LAPACK's checks of xPOTRS and xPOSV (the same arguments at the same positions).
int solve_bad_argument(char uplo, int n, int nrhs, int lda, int ldb) {
  if (!valid_uplo(uplo)) return 1;
  if (n < 0) return 2;
  if (nrhs < 0) return 3;
  if (lda < std::max(1, n)) return 5;
  if (ldb < std::max(1, n)) return 7;
  return 0;
}

// As LAPACK does with a bad argument: INFO = -position, XERBLA(name, position), return.
bool reject_bad_argument(const CallDescription& call, int position, fortran_int* info) {
  if (position == 0) return false;
  *info = -position;
  report(call, "illegal value of argument " + std::to_string(position) + " (xerbla_ called)", *info, 0.0);
  const fortran_int xerbla_info = position;
  xerbla_(call.name.xerbla_name, &xerbla_info, xerbla_name_length);
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

// Submits through Tessera (starting the shared runtime on first use) and waits; TESSERA_MODE,
// TESSERA_NB... are read for each call, as the C API does. std::nullopt when Tessera could not take
// the call: it failed before any task ran, so the arrays are untouched and the call goes to the
// next LAPACK. A failure once tasks ran may leave the arrays half written, which LAPACK's INFO
// cannot express: the process stops with the reason rather than return a wrong result.
template <class Submit>
std::optional<int> run_on_tessera(const CallDescription& call, Submit&& submit, Mode& resolved_mode) {
  CoresTaken cores;  // declared first: destroyed after the request, which may wait
  Request request;
  try {
    FactorOptions factor_options = FactorOptions::from_environment();
    factor_options.uplo = same_letter(call.uplo, 'U') ? Uplo::upper : Uplo::lower;
    Runtime& runtime = Runtime::shared();
    note_runtime_started();
    cores.runtime_ready(runtime);
    resolved_mode = runtime.resolve(factor_options.mode);
    request = submit(runtime, factor_options);
  } catch (const std::exception& e) {
    switch_tessera_off(call, e.what());
    return std::nullopt;
  }
  try {
    return request.wait();
  } catch (const std::exception& e) {
    fatal(call, std::string("a Tessera task failed after the arrays started to change: ") + e.what());
  }
}

// What every routine does once its arguments are valid and there is work: Tessera or the next
// LAPACK, then the verbose line.
template <class OnTessera, class OnNext>
void dispatch(const CallDescription& call, bool have_next, OnTessera&& on_tessera, OnNext&& on_next, fortran_int* info) {
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (choose_route(call, have_next) == Route::tessera) {
    Mode mode = Mode::cpu;
    if (const std::optional<int> result = run_on_tessera(call, on_tessera, mode)) {
      *info = *result;
      counters().through_tessera++;
      report(call, std::string("tessera ") + to_string(mode), *info, seconds());
      return;
    }
  }
  if (!have_next) fatal(call, "Tessera could not run it and no other LAPACK follows libtessera_lapack");
  on_next();
  counters().to_next_lapack++;
  report(call, "system LAPACK", *info, seconds());
}

}  // namespace

template <class T>
void potrf(const char* uplo, const fortran_int* n, T* a, const fortran_int* lda, fortran_int* info,
           fortran_strlen uplo_len) noexcept {
  const LapackRoutines<T>& next = next_lapack().routines<T>();
  if (is_nested_call()) {
    if (!next.potrf) fatal_nested(RoutineNames<T>::potrf);
    counters().nested++;
    next.potrf(uplo, n, a, lda, info, uplo_len);
    return;
  }
  const InterceptedCallScope scope;
  const CallDescription call{RoutineNames<T>::potrf, *uplo, *n, 0, false, factorization_work(*n)};
  if (reject_bad_argument(call, potrf_bad_argument(*uplo, *n, *lda), info)) return;
  *info = 0;
  if (*n == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, next.complete(),
      [&](Runtime& runtime, const FactorOptions& factor) { return potrf_async(runtime, *n, a, *lda, factor); },
      [&] { next.potrf(uplo, n, a, lda, info, uplo_len); }, info);
}

template <class T>
void potrs(const char* uplo, const fortran_int* n, const fortran_int* nrhs, const T* a, const fortran_int* lda, T* b,
           const fortran_int* ldb, fortran_int* info, fortran_strlen uplo_len) noexcept {
  const LapackRoutines<T>& next = next_lapack().routines<T>();
  if (is_nested_call()) {
    if (!next.potrs) fatal_nested(RoutineNames<T>::potrs);
    counters().nested++;
    next.potrs(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
    return;
  }
  const InterceptedCallScope scope;
  const CallDescription call{RoutineNames<T>::potrs, *uplo, *n, *nrhs, true, solve_work(*n, *nrhs)};
  if (reject_bad_argument(call, solve_bad_argument(*uplo, *n, *nrhs, *lda, *ldb), info)) return;
  *info = 0;
  if (*n == 0 || *nrhs == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, next.complete(),
      [&](Runtime& runtime, const FactorOptions& factor) {
        return potrs_async(runtime, *n, *nrhs, a, *lda, b, *ldb, factor);
      },
      [&] { next.potrs(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len); }, info);
}

template <class T>
void posv(const char* uplo, const fortran_int* n, const fortran_int* nrhs, T* a, const fortran_int* lda, T* b,
          const fortran_int* ldb, fortran_int* info, fortran_strlen uplo_len) noexcept {
  const LapackRoutines<T>& next = next_lapack().routines<T>();
  if (is_nested_call()) {
    if (!next.posv) fatal_nested(RoutineNames<T>::posv);
    counters().nested++;
    next.posv(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len);
    return;
  }
  const InterceptedCallScope scope;
  const CallDescription call{RoutineNames<T>::posv, *uplo, *n, *nrhs, true,
                             factorization_work(*n) + solve_work(*n, *nrhs)};
  if (reject_bad_argument(call, solve_bad_argument(*uplo, *n, *nrhs, *lda, *ldb), info)) return;
  *info = 0;
  if (*n == 0) return report(call, "quick return", 0, 0.0);
  dispatch(
      call, next.complete(),
      [&](Runtime& runtime, const FactorOptions& factor) {
        // With no right-hand side LAPACK's xPOSV only factors A.
        return *nrhs == 0 ? potrf_async(runtime, *n, a, *lda, factor)
                          : posv_async(runtime, *n, *nrhs, a, *lda, b, *ldb, factor);
      },
      [&] { next.posv(uplo, n, nrhs, a, lda, b, ldb, info, uplo_len); }, info);
}

template void potrf<double>(const char*, const fortran_int*, double*, const fortran_int*, fortran_int*,
                            fortran_strlen) noexcept;
template void potrf<float>(const char*, const fortran_int*, float*, const fortran_int*, fortran_int*,
                           fortran_strlen) noexcept;
template void potrs<double>(const char*, const fortran_int*, const fortran_int*, const double*, const fortran_int*,
                            double*, const fortran_int*, fortran_int*, fortran_strlen) noexcept;
template void potrs<float>(const char*, const fortran_int*, const fortran_int*, const float*, const fortran_int*,
                           float*, const fortran_int*, fortran_int*, fortran_strlen) noexcept;
template void posv<double>(const char*, const fortran_int*, const fortran_int*, double*, const fortran_int*, double*,
                           const fortran_int*, fortran_int*, fortran_strlen) noexcept;
template void posv<float>(const char*, const fortran_int*, const fortran_int*, float*, const fortran_int*, float*,
                          const fortran_int*, fortran_int*, fortran_strlen) noexcept;

}  // namespace tessera::lapack
