// The backend's side of the ScaLAPACK entry points (scalapack.cpp): ScaLAPACK's argument checks,
// made collectively over the BLACS grid as ScaLAPACK makes them, then the call on Tessera's
// distributed matrices (tessera/distributed.hpp) over the grid's own communicator.
//
// The grid's communicator. BLACS_GET(ctxt, 10) returns the system context of a grid: through the
// Fortran interface, the Fortran handle of the communicator BLACS made for the grid (its "all"
// scope). BLACS numbers that communicator's ranks row-major (rank = myrow * npcol + mycol) whatever
// order BLACS_GRIDINIT was given, which is Tessera's numbering; it is checked on every call.
//
// One Context per process. StarPU-MPI runs once per process, so the first grid that reaches Tessera
// keeps the Context (on a duplicate of its communicator) until MPI_Finalize, where an attribute of
// MPI_COMM_SELF ends it while MPI still runs; calls on a grid of other processes or another shape
// go to ScaLAPACK. Every decision that decides whether a rank runs Tessera or ScaLAPACK is reduced
// over the grid first, so that all of its ranks take the same path.
#include "scalapack_backend.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "tessera/distributed.hpp"
#include "tessera/error.hpp"

namespace tessera::lapack {

namespace {

// Descriptor entries, 1-based as in ScaLAPACK's sources.
constexpr int dtype_ = 1, ctxt_ = 2, m_ = 3, n_ = 4, mb_ = 5, nb_ = 6, rsrc_ = 7, csrc_ = 8, lld_ = 9;
constexpr int block_cyclic_2d = 1;
// ScaLAPACK's error encoding while checking: argument position * 100 for a scalar, position * 100 +
// entry for a descriptor entry; the smallest wins; none is `bignum`.
constexpr int descmult = 100;
constexpr int bignum = descmult * descmult;

int entry(const int* desc, int which) { return desc[which - 1]; }

// The encoded error as INFO: -position, or -(position * 100 + entry).
int info_of(int code) {
  if (code == bignum) return 0;
  return code % descmult == 0 ? -code / descmult : -code;
}

// ScaLAPACK's NUMROC: the rows (columns) of an n-row (column) matrix in nb blocks that process
// iproc of nprocs holds, the first block on process isrc.
int numroc(int n, int nb, int iproc, int isrc, int nprocs) {
  const int mydist = (nprocs + iproc - isrc) % nprocs;
  const int nblocks = n / nb;
  int count = (nblocks / nprocs) * nb;
  const int extra = nblocks % nprocs;
  if (mydist < extra)
    count += nb;
  else if (mydist == extra)
    count += n % nb;
  return count;
}

struct GridPosition {
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
};

// CHK1MAT: one distributed matrix's values from this process's view, folded into `code`.
int chk1mat(int ma, int mapos0, int na, int napos0, int ia, int ja, const int* desc, int descpos0, const GridPosition& g,
            int code) {
  const int mapos = mapos0 * descmult, napos = napos0 * descmult;
  const int iapos = (descpos0 - 2) * descmult, japos = (descpos0 - 1) * descmult;
  const int descpos = descpos0 * descmult;
  int info = code;
  if (entry(desc, dtype_) != block_cyclic_2d)
    info = std::min(info, descpos + dtype_);
  else if (ma < 0)
    info = std::min(info, mapos);
  else if (na < 0)
    info = std::min(info, napos);
  else if (ia < 1)
    info = std::min(info, iapos);
  else if (ja < 1)
    info = std::min(info, japos);
  else if (entry(desc, mb_) < 1)
    info = std::min(info, descpos + mb_);
  else if (entry(desc, nb_) < 1)
    info = std::min(info, descpos + nb_);
  else if (entry(desc, rsrc_) < 0 || entry(desc, rsrc_) >= g.nprow)
    info = std::min(info, descpos + rsrc_);
  else if (entry(desc, csrc_) < 0 || entry(desc, csrc_) >= g.npcol)
    info = std::min(info, descpos + csrc_);
  else if (entry(desc, lld_) < 1)
    info = std::min(info, descpos + lld_);
  else if (entry(desc, lld_) < numroc(entry(desc, m_), entry(desc, mb_), g.myrow, entry(desc, rsrc_), g.nprow) &&
           numroc(entry(desc, n_), entry(desc, nb_), g.mycol, entry(desc, csrc_), g.npcol) > 0)
    info = std::min(info, descpos + lld_);
  if (ma == 0 || na == 0) {
    if (entry(desc, m_) < 0) info = std::min(info, descpos + m_);
    if (entry(desc, n_) < 0) info = std::min(info, descpos + n_);
  } else if (entry(desc, m_) < 1) {
    info = std::min(info, descpos + m_);
  } else if (entry(desc, n_) < 1) {
    info = std::min(info, descpos + n_);
  } else if (ia > entry(desc, m_)) {
    info = std::min(info, iapos);
  } else if (ja > entry(desc, n_)) {
    info = std::min(info, japos);
  } else {
    if (ia + ma - 1 > entry(desc, m_)) info = std::min(info, mapos);
    if (ja + na - 1 > entry(desc, n_)) info = std::min(info, napos);
  }
  return info;
}

// INDXG2P: the process row (column) holding global row (column) index (1-based).
int indxg2p(int index, int nb, int isrc, int nprocs) { return (isrc + (index - 1) / nb) % nprocs; }

bool is_upper(char uplo) { return uplo == 'U' || uplo == 'u'; }
bool is_lower(char uplo) { return uplo == 'L' || uplo == 'l'; }

// Positions of the arguments: pxPOTRF(UPLO 1, N 2, A 3, IA 4, JA 5, DESCA 6, INFO 7);
// pxPOTRS and pxPOSV(UPLO 1, N 2, NRHS 3, A 4, IA 5, JA 6, DESCA 7, B 8, IB 9, JB 10, DESCB 11, INFO 12).
struct Positions {
  int desca, descb;
};
Positions positions_of(const ScalapackCall& call) {
  return call.operation == Operation::potrf ? Positions{6, 0} : Positions{7, 11};
}

// The local checks of the routine, in ScaLAPACK's order (CHK1MAT, then the routine's own).
int local_error(const ScalapackCall& c, const GridPosition& g) {
  const Positions pos = positions_of(c);
  int code = chk1mat(c.n, 2, c.n, 2, c.ia, c.ja, c.desca, pos.desca, g, bignum);
  // pxPOTRS checks B's values locally too; pxPOSV only compares them across the grid.
  if (c.operation == Operation::potrs) code = chk1mat(c.n, 2, c.nrhs, 3, c.ib, c.jb, c.descb, pos.descb, g, code);
  if (code != bignum) return code;
  const int* da = c.desca;
  if (!is_upper(c.uplo) && !is_lower(c.uplo)) return 1 * descmult;
  if ((c.ia - 1) % entry(da, mb_) != 0) return (pos.desca - 2) * descmult;
  if ((c.ja - 1) % entry(da, nb_) != 0) return (pos.desca - 1) * descmult;
  if (entry(da, mb_) != entry(da, nb_)) return pos.desca * descmult + nb_;
  if (c.operation != Operation::potrf) {
    const int* db = c.descb;
    const int iarow = indxg2p(c.ia, entry(da, mb_), entry(da, rsrc_), g.nprow);
    const int ibrow = indxg2p(c.ib, entry(db, mb_), entry(db, rsrc_), g.nprow);
    if ((c.ib - 1) % entry(db, mb_) != 0 || ibrow != iarow) return (pos.descb - 2) * descmult;
    // pxPOSV reports this one as -(1000 + NB_), as ScaLAPACK's sources do.
    if (entry(db, mb_) != entry(da, nb_))
      return (c.operation == Operation::posv ? 10 : pos.descb) * descmult + nb_;
  }
  return bignum;
}

// PCHK1MAT / PCHK2MAT: the values that must be the same on every process, with their positions
// (the uplo letter last, at position 1, as the routines pass it).
int global_values(const ScalapackCall& c, int values[23], int where[23]) {
  const Positions pos = positions_of(c);
  int k = 0;
  const auto add = [&](int value, int position) {
    values[k] = value;
    where[k] = position;
    ++k;
  };
  const auto add_matrix = [&](int rows, int rows_pos, int cols, int cols_pos, int i, int j, const int* desc, int descpos0) {
    add(rows, rows_pos * descmult);
    add(cols, cols_pos * descmult);
    add(i, (descpos0 - 2) * descmult);
    add(j, (descpos0 - 1) * descmult);
    for (const int e : {dtype_, m_, n_, mb_, nb_, rsrc_, csrc_}) add(entry(desc, e), descpos0 * descmult + e);
  };
  add_matrix(c.n, 2, c.n, 2, c.ia, c.ja, c.desca, pos.desca);
  if (c.operation != Operation::potrf) add_matrix(c.n, 2, c.nrhs, 3, c.ib, c.jb, c.descb, pos.descb);
  add(is_upper(c.uplo) ? 'U' : 'L', 1);
  return k;
}

// What Tessera's distributed matrices do not take, as the encoded position of the first such
// argument (bignum: all taken): sub-matrices (IA, JA, IB, JB other than 1), a distribution starting
// elsewhere than process (0, 0), B's blocks other than A's, a leading dimension below what the
// n x n (n x nrhs) matrix needs where ScaLAPACK would not look at it.
int unsupported(const ScalapackCall& c, const GridPosition& g) {
  const Positions pos = positions_of(c);
  const auto matrix = [&](int rows, int cols, int i, int j, const int* desc, int descpos0) {
    if (entry(desc, dtype_) != block_cyclic_2d) return descpos0 * descmult + dtype_;
    if (entry(desc, m_) < rows) return descpos0 * descmult + m_;
    if (entry(desc, n_) < cols) return descpos0 * descmult + n_;
    if (i != 1) return (descpos0 - 2) * descmult;
    if (j != 1) return (descpos0 - 1) * descmult;
    if (entry(desc, rsrc_) != 0) return descpos0 * descmult + rsrc_;
    if (entry(desc, csrc_) != 0) return descpos0 * descmult + csrc_;
    if (entry(desc, nb_) != entry(c.desca, nb_) || entry(desc, mb_) != entry(c.desca, nb_))
      return descpos0 * descmult + nb_;
    const int local_rows = numroc(rows, entry(desc, mb_), g.myrow, 0, g.nprow);
    if (cols > 0 && entry(desc, lld_) < std::max(1, local_rows)) return descpos0 * descmult + lld_;
    return bignum;
  };
  int code = matrix(c.n, c.n, c.ia, c.ja, c.desca, pos.desca);
  if (c.operation != Operation::potrf) code = std::min(code, matrix(c.n, c.nrhs, c.ib, c.jb, c.descb, pos.descb));
  return code;
}

template <std::size_t size>
void copy_text(char (&to)[size], const std::string& text) {
  std::snprintf(to, size, "%s", text.c_str());
}

// ---- the process's Context --------------------------------------------------------------------

struct DistributedState {
  std::mutex mutex;  // one ScaLAPACK call at a time in this process
  std::unique_ptr<distributed::Context> context;
  MPI_Comm key = MPI_COMM_NULL;  // a duplicate of the communicator the Context was made for
  bool finalize_hook = false;
};

DistributedState& state() {
  static DistributedState* s = new DistributedState;  // never destroyed: the Context ends at MPI_Finalize
  return *s;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still runs: the Context (StarPU-MPI)
// stops there, collectively, as every rank finalizes.
int end_context_at_finalize(MPI_Comm, int, void*, void*) {
  DistributedState& s = state();
  try {
    s.context.reset();
  } catch (...) {
  }
  if (s.key != MPI_COMM_NULL) MPI_Comm_free(&s.key);
  return MPI_SUCCESS;
}

void install_finalize_hook(DistributedState& s) {
  if (s.finalize_hook) return;
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, end_context_at_finalize, &keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
  s.finalize_hook = true;
}

// Whether this process's Context (if any) is on the same processes in the same order as `comm`.
bool context_fits(const DistributedState& s, MPI_Comm comm) {
  if (!s.context) return true;
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(s.key, comm, &result);
  return result == MPI_IDENT || result == MPI_CONGRUENT;
}

// ScaLAPACK's checks of the arguments: the local ones, then GLOBCHK (the values of process (0, 0)
// compared on every process, a collective call on comm); bignum where every one passes, else the
// smallest failing position's code.
int argument_error_code(const ScalapackCall& c, const GridPosition& g, MPI_Comm comm) {
  int code = local_error(c, g);
  int values[23], where[23], root_values[23];
  const int count = global_values(c, values, where);
  std::copy(values, values + count, root_values);
  MPI_Bcast(root_values, count, MPI_INT, 0, comm);
  for (int k = 0; k < count; ++k)
    if (values[k] != root_values[k]) code = std::min(code, where[k]);
  return code;
}

// Why Tessera cannot run on this process of the grid, as a reason to give (empty: it can). Local:
// nothing here is collective.
std::string why_tessera_cannot_run(const DistributedState& s, MPI_Comm comm, const GridPosition& g) {
  int rank = -1, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE)
    return "MPI was initialized without MPI_THREAD_MULTIPLE, which StarPU-MPI needs (with Open MPI, "
           "OMPI_MPI_THREAD_LEVEL=3 gives it to a program that calls MPI_Init)";
  if (rank != g.myrow * g.npcol + g.mycol || size != g.nprow * g.npcol)
    return "the grid's communicator does not number its processes row-major";
  // StarPU-MPI's shutdown synchronizes MPI_COMM_WORLD: every rank must hold the Context.
  if (int world = 0; MPI_Comm_size(MPI_COMM_WORLD, &world) == MPI_SUCCESS && world != size)
    return "the grid does not hold every process of MPI_COMM_WORLD";
  if (!context_fits(s, comm)) return "Tessera's distributed context belongs to another BLACS grid of this process";
  return {};
}

template <class T>
int run_on_grid(distributed::Context& context, const ScalapackCall& c, FactorOptions options) {
  const Uplo uplo = is_upper(c.uplo) ? Uplo::upper : Uplo::lower;
  options.uplo = uplo;
  const int nb = entry(c.desca, nb_);
  distributed::Matrix<T> A(context, c.n, nb, uplo);
  A.import_local(static_cast<const T*>(c.a), entry(c.desca, lld_));
  if (c.operation == Operation::potrf) {
    const int info = distributed::potrf(A, options);
    A.export_local(static_cast<T*>(c.a), entry(c.desca, lld_));
    return info;
  }
  distributed::Matrix<T> B(context, c.n, c.nrhs, nb);
  B.import_local(static_cast<const T*>(c.b), entry(c.descb, lld_));
  if (c.operation == Operation::potrs) {
    distributed::potrs(A, B, options);
    B.export_local(static_cast<T*>(c.b), entry(c.descb, lld_));
    return 0;
  }
  const int info = distributed::posv(A, B, options);
  A.export_local(static_cast<T*>(c.a), entry(c.desca, lld_));
  if (info == 0) B.export_local(static_cast<T*>(c.b), entry(c.descb, lld_));
  return info;
}

}  // namespace

BackendStatus run_scalapack(const ScalapackCall* call, BackendResult* result) {
  const ScalapackCall& c = *call;
  const auto decline = [&](const std::string& why) {
    copy_text(result->message, why);
    return c.have_next ? BackendStatus::declined : BackendStatus::cannot_run;
  };
  if (Runtime::shared_ended()) return decline("the process is exiting");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return decline("MPI is not running");

  GridPosition g;
  const int context_handle = entry(c.desca, ctxt_);
  c.blacs_gridinfo(&context_handle, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  if (g.nprow == -1) {
    // Not a grid this process belongs to: ScaLAPACK's INFO = -(desca * 100 + CTXT), decided locally.
    if (c.have_next) return decline("the context is not a grid of this process");
    result->info = -(positions_of(c).desca * descmult + ctxt_);
    return BackendStatus::rejected;
  }
  const int what_system_context = 10;
  int fortran_comm = 0;
  c.blacs_get(&context_handle, &what_system_context, &fortran_comm);
  MPI_Comm comm = MPI_Comm_f2c(fortran_comm);

  const int code = argument_error_code(c, g, comm);

  DistributedState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  std::string cannot = why_tessera_cannot_run(s, comm, g);
  Runtime* runtime = nullptr;
  FactorOptions options;
  if (cannot.empty()) {
    try {
      options = FactorOptions::from_environment();
      runtime = &Runtime::shared();
      copy_text(result->mode, to_string(runtime->resolve(options.mode)));
    } catch (const std::exception& e) {
      cannot = e.what();
    }
  }
  // One reduction decides for the whole grid: the smallest error, the first unsupported argument,
  // and whether any process cannot run Tessera.
  const int unsupported_code = code == bignum ? unsupported(c, g) : bignum;
  int local[3] = {code, unsupported_code, cannot.empty() ? 1 : 0};
  int global[3] = {0, 0, 0};
  MPI_Allreduce(local, global, 3, MPI_INT, MPI_MIN, comm);
  if (global[0] != bignum) {
    if (c.have_next) return decline("an argument ScaLAPACK refuses");
    result->info = info_of(global[0]);
    return BackendStatus::rejected;
  }
  if (global[1] != bignum) {
    const std::string what = "argument " + std::to_string(global[1] / descmult) +
                             (global[1] % descmult ? ", descriptor entry " + std::to_string(global[1] % descmult)
                                                   : std::string());
    if (c.have_next) return decline("not Tessera's layout (" + what + ")");
    result->info = info_of(global[1]);
    copy_text(result->message, "not Tessera's layout (" + what + "), and no ScaLAPACK follows to take it");
    return BackendStatus::rejected;
  }
  if (!global[2]) return decline(cannot.empty() ? "another process of the grid cannot run Tessera" : cannot);

  result->info = 0;
  // Quick returns, as ScaLAPACK's (pxPOSV without right-hand sides still factors A).
  if (c.n == 0 || (c.operation == Operation::potrs && c.nrhs == 0)) return BackendStatus::done;
  ScalapackCall factor_only = c;
  if (c.operation == Operation::posv && c.nrhs == 0) factor_only.operation = Operation::potrf;

  if (!s.context) {
    try {
      s.context = std::make_unique<distributed::Context>(*runtime, comm, distributed::Grid{g.nprow, g.npcol});
    } catch (const std::exception& e) {
      copy_text(result->message, std::string("Tessera's distributed context could not start: ") + e.what());
      return BackendStatus::failed_after_start;  // the other processes may have started theirs
    }
    MPI_Comm_dup(comm, &s.key);
    install_finalize_hook(s);
  }
  try {
    result->info = with_scalar_type(c.precision, [&](auto zero) {
      return run_on_grid<decltype(zero)>(*s.context, factor_only, options);
    });
    return BackendStatus::done;
  } catch (const std::exception& e) {
    copy_text(result->message, e.what());
    return BackendStatus::failed_after_start;
  }
}

}  // namespace tessera::lapack
