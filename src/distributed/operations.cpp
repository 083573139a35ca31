// Factorization, solves and the backward-error check on distributed matrices: the tile
// algorithms of src/algorithms, inserted on every rank through StarPU-MPI.
#include <starpu_mpi.h>

#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collective.hpp"
#include "symmetric_norms.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::distributed {

struct Operation::Impl {
  template <class Insert>
  Impl(detail::ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert, std::shared_ptr<Trace> trace)
      : operation(context, mode, kernels, std::forward<Insert>(insert), std::move(trace)) {}
  detail::CollectiveOperation operation;
};

Operation::Operation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Operation::Operation(Operation&& other) noexcept = default;
Operation::~Operation() = default;
int Operation::wait() { return impl_->operation.wait(); }
bool Operation::done() const { return impl_->operation.done(); }
Progress Operation::progress() const { return impl_->operation.progress(); }

}  // namespace tessera::distributed

namespace tessera::detail {

template <class Insert>
distributed::Operation DistributedAccess::start(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                                                std::shared_ptr<Trace> trace) {
  return distributed::Operation(std::make_unique<distributed::Operation::Impl>(
      context, mode, kernels, std::forward<Insert>(insert), std::move(trace)));
}

void DistributedAccess::then(distributed::Operation& operation, std::function<void(int)> finish) {
  operation.impl_->operation.then(std::move(finish));
}

}  // namespace tessera::detail

namespace tessera::distributed {

namespace {

using detail::DistributedAccess;
using detail::MatrixState;
using detail::TaskContext;

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

template <class T>
MatrixState& state_of(const Matrix<T>& M) {
  return DistributedAccess::state(M);
}

template <class T>
void check_factor_and_rhs(const char* routine, const Matrix<T>& A, const Matrix<T>& B) {
  require(&A.context() == &B.context(), std::string(routine) + ": the matrices belong to different contexts");
  require(A.symmetric(), std::string(routine) + ": A must be a symmetric distributed matrix");
  require(!B.symmetric(), std::string(routine) + ": B must be a general distributed matrix");
  require(A.rows() == B.rows() && A.nb() == B.nb(), std::string(routine) + ": A is " + std::to_string(A.rows()) +
                                                       " x " + std::to_string(A.rows()) + " with nb " +
                                                       std::to_string(A.nb()) + ", B has " + std::to_string(B.rows()) +
                                                       " rows and nb " + std::to_string(B.nb()));
}

// The check's tasks need no order of their own.
TaskHints unranked(TaskKind kind) { return neutral_hints(kind, 0, 0, 0, 0); }

// sum over the lower tiles of M this rank owns: column c gets the column sums of the tiles in
// its tile column and the row sums of the tiles in its tile row (M symmetric).
template <class T>
struct SymmetricColumnSums {
  std::vector<std::vector<RealOf<T>>> per_tile;  // moduli for complex tiles
  std::vector<std::pair<int, int>> tiles;

  void insert(const TaskContext& local, const detail::DistributedTiles& M) {
    const detail::TileGrid& g = M.grid();
    for (int j = 0; j < g.tile_cols(); ++j)
      for (int i = j; i < g.tile_rows(); ++i) {
        if (!M.owns(i, j)) continue;
        per_tile.emplace_back(static_cast<std::size_t>(g.tile_height(i) + g.tile_width(j)), RealOf<T>(0));
        tiles.emplace_back(i, j);
        detail::insert_abs_sums<T>(local, g.ref(i, j), i == j, per_tile.back().data(), unranked(TaskKind::other));
      }
  }

  // The 1-norm: the column sums of every rank added up, then their largest.
  double one_norm(const detail::DistributedTiles& M) const {
    const detail::TileGrid& g = M.grid();
    std::vector<double> column(static_cast<std::size_t>(g.cols()), 0.0);
    for (std::size_t t = 0; t < tiles.size(); ++t) {
      const auto [i, j] = tiles[t];
      detail::add_lower_tile_sums(column, i, j, g.nb(), g.tile_height(i), g.tile_width(j), per_tile[t]);
    }
    MPI_Allreduce(MPI_IN_PLACE, column.data(), static_cast<int>(column.size()), MPI_DOUBLE, MPI_SUM, M.context().comm);
    return detail::largest_column_sum(column);
  }
};

}  // namespace

template <class T>
Operation potrf_async(Matrix<T>& A, const FactorOptions& options) {
  require(A.symmetric(), "distributed::potrf: A must be a symmetric distributed matrix");
  const MatrixState& a = state_of(A);
  const int nt = a.tiles.grid().tile_rows();
  // log det(A): each rank sums 2 log of the diagonal of the diagonal tiles it owns, one slot per
  // tile, then the ranks add their sums up.
  std::shared_ptr<std::vector<double>> slots;
  if (options.log_determinant) slots = std::make_shared<std::vector<double>>(static_cast<std::size_t>(nt), 0.0);
  Operation operation = DistributedAccess::start(
      *a.context, options.mode, options.gpu_kernels,
      [&](const TaskContext& distributed, const TaskContext& local) {
        detail::insert_cholesky<T>(distributed, a.tiles.grid(), options.hints);
        if (!slots) return;
        for (int k = 0; k < nt; ++k)
          if (a.tiles.owns(k, k))
            detail::insert_log_diagonal<T>(local, a.tiles.grid().ref(k, k), slots->data() + k,
                                           options.hints(TaskKind::other, k, k, k, nt));
      },
      options.trace);
  if (slots) {
    const MPI_Comm comm = a.context->comm;
    DistributedAccess::then(operation, [slots, comm, out = options.log_determinant](int info) {
      double sum = 0.0;
      for (double slot : *slots) sum += slot;
      MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
      *out = info == 0 ? sum : 0.0;
    });
  }
  return operation;
}

template <class T>
Operation potrs_async(const Matrix<T>& A, Matrix<T>& B, const FactorOptions& options) {
  check_factor_and_rhs("distributed::potrs", A, B);
  const MatrixState& a = state_of(A);
  const MatrixState& b = state_of(B);
  return DistributedAccess::start(*a.context, options.mode, options.gpu_kernels,
                                  [&](const TaskContext& distributed, const TaskContext&) {
                                    detail::insert_cholesky_solve<T>(distributed, a.tiles.grid(), b.tiles.grid(),
                                                                     options.hints);
                                  },
                                  options.trace);
}

template <class T>
int potrf(Matrix<T>& A, const FactorOptions& options) {
  return potrf_async(A, options).wait();
}

template <class T>
void potrs(const Matrix<T>& A, Matrix<T>& B, const FactorOptions& options) {
  potrs_async(A, B, options).wait();
}

template <class T>
int posv(Matrix<T>& A, Matrix<T>& B, const FactorOptions& options) {
  check_factor_and_rhs("distributed::posv", A, B);
  const int info = potrf(A, options);
  if (info == 0) potrs(A, B, options);
  return info;
}

template <class T>
double backward_error(const Matrix<T>& A, const Matrix<T>& L, Mode mode) {
  require(&A.context() == &L.context() && A.symmetric() && L.symmetric() && A.rows() == L.rows() &&
              A.nb() == L.nb() && A.uplo() == L.uplo(),
          "distributed::backward_error: A and L must be symmetric distributed matrices of one context, size, tile "
          "size and triangle");
  const int n = A.rows();
  if (n == 0) return 0.0;
  detail::ContextState& context = *state_of(A).context;
  const detail::DistributedTiles& a = state_of(A).tiles;
  const detail::DistributedTiles& l = state_of(L).tiles;
  // R = A - L L^T where A is; L's diagonal tiles with zeros above, where they are.
  detail::DistributedTiles R(context, n, n, A.nb(), TileStructure::symmetric_lower, A.uplo(), sizeof(T));
  detail::DistributedTiles diagonal(context, n, n, A.nb(), TileStructure::block_diagonal, Uplo::lower, sizeof(T));
  SymmetricColumnSums<T> r_sums, a_sums;
  const int nt = a.grid().tile_rows();
  auto factor = [&](int i, int k) { return i == k ? diagonal.grid().ref(k, k) : l.grid().ref(i, k); };
  detail::run_collective(context, mode, GpuKernels::vendor, [&](const TaskContext& distributed, const TaskContext& local) {
    for (int k = 0; k < nt; ++k)
      detail::insert_copy_tile<T>(distributed, l.grid().ref(k, k), factor(k, k), true, unranked(TaskKind::other));
    for (int j = 0; j < nt; ++j)
      for (int i = j; i < nt; ++i)
        detail::insert_copy_tile<T>(distributed, a.grid().ref(i, j), R.grid().ref(i, j), false, unranked(TaskKind::other));
    // R(i, j) -= sum_{k <= j} L(i, k) L(j, k)^T
    for (int k = 0; k < nt; ++k)
      for (int i = k; i < nt; ++i) {
        detail::insert_syrk<T>(distributed, T(-1), factor(i, k), T(1), R.grid().ref(i, i), unranked(TaskKind::syrk));
        for (int j = k; j < i; ++j)
          detail::insert_gemm<T>(distributed, Trans::no, Trans::conjugate_transpose, T(-1), factor(i, k), factor(j, k), T(1),
                                 R.grid().ref(i, j), unranked(TaskKind::gemm));
      }
    r_sums.insert(local, R);
    a_sums.insert(local, a);
  });
  return detail::scaled_backward_error(r_sums.one_norm(R), a_sums.one_norm(a), n,
                                      std::numeric_limits<RealOf<T>>::epsilon());
}

#define TESSERA_INSTANTIATE(T)                                                          \
  template Operation potrf_async<T>(Matrix<T>&, const FactorOptions&);                  \
  template Operation potrs_async<T>(const Matrix<T>&, Matrix<T>&, const FactorOptions&); \
  template int potrf<T>(Matrix<T>&, const FactorOptions&);                     \
  template void potrs<T>(const Matrix<T>&, Matrix<T>&, const FactorOptions&);  \
  template int posv<T>(Matrix<T>&, Matrix<T>&, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

#define TESSERA_INSTANTIATE(T) template double backward_error<T>(const Matrix<T>&, const Matrix<T>&, Mode);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::distributed
