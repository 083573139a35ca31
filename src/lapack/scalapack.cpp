// ScaLAPACK's Cholesky routines (pxPOTRF, pxPOTRS, pxPOSV for x = s, d, c, z: real and complex
// Hermitian matrices) with
// ScaLAPACK's Fortran ABI, exported by libtessera_lapack next to LAPACK's: a ScaLAPACK program
// reaches Tessera's distributed matrices when this library comes before ScaLAPACK in the search
// order (LD_PRELOAD, or linked in front of -lscalapack).
//
// This side knows neither MPI nor Tessera: it finds the BLACS and the next ScaLAPACK routine
// (dlsym), and hands the call to the backend (scalapack_backend.cpp), which checks the arguments as
// ScaLAPACK does, collectively over the grid, and runs the call or declines it. A declined call
// (an argument error, a layout Tessera does not take, MPI without MPI_THREAD_MULTIPLE, another
// grid holding Tessera's context) goes to the next ScaLAPACK routine, unchanged. Calls from inside
// ScaLAPACK (its pxPOSV calls pxPOTRF and pxPOTRS) and from the runtime's workers go straight to
// it, as nested LAPACK calls do (intercept.cpp).
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend_loader.hpp"
#include "fortran_abi.hpp"
#include "intercept.hpp"

namespace tessera::lapack {

namespace {

template <class T>
using PpotrfRoutine = void (*)(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desca,
                               int* info, fortran_strlen uplo_len);
template <class T>
using PpotrsRoutine = void (*)(const char* uplo, const int* n, const int* nrhs, T* a, const int* ia, const int* ja,
                               const int* desca, T* b, const int* ib, const int* jb, const int* descb, int* info,
                               fortran_strlen uplo_len);
using PxerblaRoutine = void (*)(const int* context, const char* srname, const int* info, fortran_strlen srname_len);

struct Blacs {
  BlacsGridinfoRoutine gridinfo = nullptr;
  BlacsGetRoutine get = nullptr;
  PxerblaRoutine pxerbla = nullptr;
};

// The BLACS and PXERBLA of the process (ScaLAPACK's library holds them); looked up once.
const Blacs& blacs() {
  static const Blacs found{reinterpret_cast<BlacsGridinfoRoutine>(dlsym(RTLD_DEFAULT, "blacs_gridinfo_")),
                           reinterpret_cast<BlacsGetRoutine>(dlsym(RTLD_DEFAULT, "blacs_get_")),
                           reinterpret_cast<PxerblaRoutine>(dlsym(RTLD_DEFAULT, "pxerbla_"))};
  return found;
}

// A routine's name as ScaLAPACK gives it to PXERBLA ("PDPOSV"), and its symbol ("pdposv_").
struct ScalapackName {
  char name[8];
  char symbol[9];
};

// The ScaLAPACK routine P<letter><stem> of LAPACK's routine: the same name with a P before it.
constexpr ScalapackName scalapack_name(const RoutineName& lapack) {
  ScalapackName name{};
  name.name[0] = 'P';
  name.symbol[0] = 'p';
  int i = 0;
  for (; lapack.base_name[i] != '\0'; ++i) {
    name.name[i + 1] = lapack.xerbla_name[i];
    name.symbol[i + 1] = lapack.base_name[i];
  }
  name.symbol[i + 1] = '_';
  return name;
}

template <class T>
struct ScalapackNames {
  static constexpr ScalapackName potrf = scalapack_name(RoutineNames<T>::potrf);
  static constexpr ScalapackName potrs = scalapack_name(RoutineNames<T>::potrs);
  static constexpr ScalapackName posv = scalapack_name(RoutineNames<T>::posv);
};

std::string describe(const ScalapackName& name, const ScalapackCall& c) {
  std::string text = name.name;
  text += " uplo=";
  text += (c.uplo >= 0x21 && c.uplo <= 0x7e) ? c.uplo : '?';
  text += " n=" + std::to_string(c.n);
  if (c.operation != Operation::potrf) text += " nrhs=" + std::to_string(c.nrhs);
  text += " nb=" + std::to_string(c.desca[5]);
  const Blacs& b = blacs();
  if (b.gridinfo) {
    int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
    b.gridinfo(&c.desca[1], &nprow, &npcol, &myrow, &mycol);
    text += " grid=" + std::to_string(nprow) + "x" + std::to_string(npcol) + " process=(" + std::to_string(myrow) + "," +
            std::to_string(mycol) + ")";
  }
  return text;
}

void report(const ScalapackName& name, const ScalapackCall& c, const std::string& path, int info, double seconds) {
  if (!intercept_options().verbose) return;
  std::fprintf(stderr, "tessera-lapack: %s: %s, info=%d, %.6f s\n", describe(name, c).c_str(), path.c_str(), info,
               seconds);
}

[[noreturn]] void fatal(const ScalapackName& name, const ScalapackCall& c, const std::string& why) {
  std::fprintf(stderr, "tessera-lapack: %s: %s\n", describe(name, c).c_str(), why.c_str());
  std::abort();
}

// As ScaLAPACK reports a bad argument: PXERBLA(ICTXT, name, -INFO); without one, PXERBLA's message.
void call_pxerbla(const ScalapackName& name, const ScalapackCall& c, int info) {
  const int position = -info;
  const std::string srname = name.name;
  if (blacs().pxerbla) {
    blacs().pxerbla(&c.desca[1], srname.c_str(), &position, srname.size());
  } else {
    std::fprintf(stderr, "On entry to %s parameter number %4d had an illegal value\n", srname.c_str(), position);
  }
}

// One call: through Tessera, or to `next` (the next ScaLAPACK routine, called by `forward`).
template <class Forward>
void dispatch(const ScalapackName& name, const ScalapackCall& call, bool have_next, Forward&& forward, int* info) {
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const InterceptedCall scope;
  const Blacs& b = blacs();
  std::string why;
  if (!b.gridinfo || !b.get) {
    why = "no BLACS in the process";
  } else if (tessera_is_switched_off()) {
    why = "Tessera is switched off in this process";
  } else {
    const LoadedBackend& loaded = loaded_backend();
    if (!loaded.backend) {
      why = loaded.error;
    } else if (!loaded.backend->run_scalapack) {
      why = "this Tessera is built without StarPU-MPI";
    } else {
      BackendResult result;
      switch (loaded.backend->run_scalapack(&call, &result)) {
        case BackendStatus::done:
          note_tessera_started();
          *info = result.info;
          count_call(true);
          report(name, call, std::string("tessera ") + result.mode, *info, seconds());
          return;
        case BackendStatus::rejected:
          *info = result.info;
          report(name, call,
                 *result.message ? result.message
                                 : "illegal value of argument " + std::to_string(-*info) + " (pxerbla called)",
                 *info, seconds());
          call_pxerbla(name, call, *info);
          return;
        case BackendStatus::declined:
        case BackendStatus::cannot_run:
          why = result.message;
          break;
        case BackendStatus::failed_after_start:
          fatal(name, call, std::string("a Tessera task failed after the arrays started to change: ") + result.message);
      }
    }
  }
  if (!have_next) fatal(name, call, "Tessera cannot run it (" + why + ") and no ScaLAPACK follows libtessera_lapack");
  forward();
  count_call(false);
  report(name, call, "ScaLAPACK (" + why + ")", *info, seconds());
}

template <class Routine>
Routine next_routine(const char* symbol) {
  return reinterpret_cast<Routine>(dlsym(RTLD_NEXT, symbol));
}

}  // namespace

template <class T>
void pxpotrf(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desca, int* info,
             fortran_strlen uplo_len) noexcept {
  const ScalapackName& name = ScalapackNames<T>::potrf;
  static const auto next = next_routine<PpotrfRoutine<T>>(name.symbol);
  const auto forward = [&] { next(uplo, n, a, ia, ja, desca, info, uplo_len); };
  if (in_nested_call() && next) {
    count_nested_call();
    return forward();
  }
  const ScalapackCall call{Operation::potrf, precision_of<T>(), *uplo, *n, 0, a, *ia, *ja, desca,
                           nullptr, 1, 1, nullptr, next != nullptr, blacs().gridinfo, blacs().get};
  dispatch(name, call, next != nullptr, forward, info);
}

template <class T, Operation operation>
void pxsolve(const char* uplo, const int* n, const int* nrhs, T* a, const int* ia, const int* ja, const int* desca,
             T* b, const int* ib, const int* jb, const int* descb, int* info, fortran_strlen uplo_len) noexcept {
  const ScalapackName& name = operation == Operation::posv ? ScalapackNames<T>::posv : ScalapackNames<T>::potrs;
  static const auto next = next_routine<PpotrsRoutine<T>>(name.symbol);
  const auto forward = [&] { next(uplo, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, info, uplo_len); };
  if (in_nested_call() && next) {
    count_nested_call();
    return forward();
  }
  const ScalapackCall call{operation, precision_of<T>(), *uplo, *n, *nrhs, a, *ia, *ja, desca,
                           b, *ib, *jb, descb, next != nullptr, blacs().gridinfo, blacs().get};
  dispatch(name, call, next != nullptr, forward, info);
}

}  // namespace tessera::lapack

// The exported symbols: ScaLAPACK's Fortran ABI (every argument by reference, then the hidden
// length of UPLO, never read).
#define TESSERA_SCALAPACK_EXPORT extern "C" __attribute__((visibility("default")))
#define TESSERA_SCALAPACK_PRECISION(LETTER, T)                                                                      \
  TESSERA_SCALAPACK_EXPORT void p##LETTER##potrf_(const char* uplo, const int* n, T* a, const int* ia,              \
                                                  const int* ja, const int* desca, int* info,                       \
                                                  tessera::lapack::fortran_strlen uplo_len) {                       \
    tessera::lapack::pxpotrf<T>(uplo, n, a, ia, ja, desca, info, uplo_len);                                         \
  }                                                                                                                 \
  TESSERA_SCALAPACK_EXPORT void p##LETTER##potrs_(const char* uplo, const int* n, const int* nrhs, T* a,            \
                                                  const int* ia, const int* ja, const int* desca, T* b,            \
                                                  const int* ib, const int* jb, const int* descb, int* info,        \
                                                  tessera::lapack::fortran_strlen uplo_len) {                       \
    tessera::lapack::pxsolve<T, tessera::lapack::Operation::potrs>(uplo, n, nrhs, a, ia, ja, desca, b, ib, jb,     \
                                                                   descb, info, uplo_len);                          \
  }                                                                                                                 \
  TESSERA_SCALAPACK_EXPORT void p##LETTER##posv_(const char* uplo, const int* n, const int* nrhs, T* a,             \
                                                 const int* ia, const int* ja, const int* desca, T* b,             \
                                                 const int* ib, const int* jb, const int* descb, int* info,         \
                                                 tessera::lapack::fortran_strlen uplo_len) {                        \
    tessera::lapack::pxsolve<T, tessera::lapack::Operation::posv>(uplo, n, nrhs, a, ia, ja, desca, b, ib, jb,      \
                                                                  descb, info, uplo_len);                           \
  }

TESSERA_SCALAPACK_PRECISION(d, double)
TESSERA_SCALAPACK_PRECISION(s, float)
TESSERA_SCALAPACK_PRECISION(z, std::complex<double>)
TESSERA_SCALAPACK_PRECISION(c, std::complex<float>)
