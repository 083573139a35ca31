#include "recording_backend.hpp"

#include "tessera/precision.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <vector>

namespace tessera::detail {

// ---- the recorded graph ----------------------------------------------------------------------

void Submission::record(TaskKind kind, const TaskHints& hints, std::vector<RecordedAccess> accesses, std::function<void()> run) {
  const std::size_t id = tasks_.size();
  std::vector<std::size_t> predecessors;
  for (const RecordedAccess& access : accesses) {
    HandleState& state = handles_[access.handle];
    if (state.last_writer >= 0) predecessors.push_back(static_cast<std::size_t>(state.last_writer));
    if (access.writes) {
      predecessors.insert(predecessors.end(), state.readers_since.begin(), state.readers_since.end());
      state.last_writer = static_cast<long>(id);
      state.readers_since.clear();
    } else {
      state.readers_since.push_back(id);
    }
  }
  std::sort(predecessors.begin(), predecessors.end());
  predecessors.erase(std::unique(predecessors.begin(), predecessors.end()), predecessors.end());
  predecessors.erase(std::remove(predecessors.begin(), predecessors.end(), id), predecessors.end());
  tasks_.push_back({kind, hints, std::move(accesses), std::move(predecessors), std::move(run)});
}

void Submission::report_failure(int info) {
  if (info_ == 0 || info < info_) info_ = info;
}

void Submission::execute_in_random_order(std::mt19937& random) const {
  std::vector<std::size_t> waiting(tasks_.size());
  std::vector<std::vector<std::size_t>> successors(tasks_.size());
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    waiting[t] = tasks_[t].predecessors.size();
    for (std::size_t p : tasks_[t].predecessors) successors[p].push_back(t);
  }
  std::vector<std::size_t> ready;
  for (std::size_t t = 0; t < tasks_.size(); ++t)
    if (waiting[t] == 0) ready.push_back(t);
  std::size_t executed = 0;
  while (!ready.empty()) {
    const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(random);
    const std::size_t t = ready[pick];
    ready.erase(ready.begin() + static_cast<long>(pick));
    tasks_[t].run();
    ++executed;
    for (std::size_t s : successors[t])
      if (--waiting[s] == 0) ready.push_back(s);
  }
  if (executed != tasks_.size()) throw std::logic_error("the recorded graph has a cycle");
}

int Submission::longest_path() const {
  std::vector<int> depth(tasks_.size(), 1);  // predecessors always come earlier
  int longest = 0;
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    for (std::size_t p : tasks_[t].predecessors) depth[t] = std::max(depth[t], depth[p] + 1);
    longest = std::max(longest, depth[t]);
  }
  return longest;
}

void* Submission::scratch(std::size_t bytes) { return scratch_.emplace_back(bytes).data(); }

template <class T>
HostTiles<T>::HostTiles(int rows, int cols, int nb, TileStructure structure)
    : storage_(static_cast<std::size_t>(TileGrid::tiles(rows, nb)) * TileGrid::tiles(cols, nb)),
      grid_(rows, cols, nb, structure, {}) {
  const int tile_rows = TileGrid::tiles(rows, nb);
  std::vector<void*> handles(storage_.size(), nullptr);
  for (int j = 0; j < TileGrid::tiles(cols, nb); ++j)
    for (int i = 0; i < tile_rows; ++i) {
      if (!tile_stored(structure, i, j)) continue;
      std::vector<T>& tile = storage_[static_cast<std::size_t>(j) * tile_rows + i];
      tile.assign(static_cast<std::size_t>(grid_.tile_height(i)) * grid_.tile_width(j), T(0));
      handles[static_cast<std::size_t>(j) * tile_rows + i] = tile.data();
    }
  grid_ = TileGrid(rows, cols, nb, structure, std::move(handles));
}

#define TESSERA_INSTANTIATE(T) template class HostTiles<T>;
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

// ---- host implementations of the tile operations ---------------------------------------------

namespace {

// Element (r, c) of a tile (column-major, leading dimension = its height).
template <class T>
T& at(const TileRef& tile, int r, int c) {
  return static_cast<T*>(tile.handle)[r + static_cast<std::size_t>(c) * tile.rows];
}

RecordedAccess reads(const TileRef& tile) { return {tile.i, tile.j, tile.handle, false}; }
RecordedAccess writes(const TileRef& tile) { return {tile.i, tile.j, tile.handle, true}; }

// x's conjugate for complex scalars, x for real ones (the tasks' transposes are adjoints).
template <class T>
T conj_of(T x) {
  if constexpr (ScalarTraits<T>::is_complex)
    return std::conj(x);
  else
    return x;
}

// Element (r, c) of op(A): A's, or its adjoint's.
template <class T>
T op_element(const TileRef& A, Trans trans, int r, int c) {
  return trans == Trans::no ? at<T>(A, r, c) : conj_of(at<T>(A, c, r));
}

// Element (r, c) of op(L) for a lower triangular L.
template <class T>
T op_lower(const TileRef& L, Trans trans, int r, int c) {
  const int row = trans != Trans::no ? c : r;
  const int col = trans != Trans::no ? r : c;
  return row >= col ? op_element<T>(L, trans, r, c) : T(0);
}

// x := M^{-1} x for a triangular M of order n (lower or upper), M(r, c) = element(r, c); x has
// stride `step`.
template <class T, class Element>
void triangular_solve(int n, bool lower, Element element, T* x, std::ptrdiff_t step) {
  for (int s = 0; s < n; ++s) {
    const int r = lower ? s : n - 1 - s;
    T sum = x[r * step];
    for (int c = 0; c < n; ++c)
      if (lower ? c < r : c > r) sum -= element(r, c) * x[c * step];
    x[r * step] = sum / element(r, r);
  }
}

// x := op(L)^{-1} x.
template <class T>
void triangular_solve(const TileRef& L, Trans trans, T* x, std::ptrdiff_t step) {
  triangular_solve<T>(L.rows, trans == Trans::no, [&](int r, int c) { return op_lower<T>(L, trans, r, c); }, x, step);
}

}  // namespace

namespace {

// The tile operations' host implementations, shared by the tile tasks and the block-column ones.
// potrf_tile returns false (after reporting the failure) when a pivot is not positive.
template <class T>
bool potrf_tile(Submission& s, const TileRef& A) {
  for (int c = 0; c < A.rows; ++c) {
    // The diagonal's imaginary parts are not referenced, as in LAPACK.
    auto d = std::real(at<T>(A, c, c));
    for (int k = 0; k < c; ++k) d -= std::norm(at<T>(A, c, k));
    if (!(d > 0)) {
      s.report_failure(A.col0 + c + 1);
      return false;
    }
    at<T>(A, c, c) = T(std::sqrt(d));
    for (int r = c + 1; r < A.rows; ++r) {
      T v = at<T>(A, r, c);
      for (int k = 0; k < c; ++k) v -= at<T>(A, r, k) * conj_of(at<T>(A, c, k));
      at<T>(A, r, c) = v / at<T>(A, c, c);
    }
  }
  return true;
}

template <class T>
void trsm_tile(Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B) {
  T* b = static_cast<T*>(B.handle);
  for (int r = 0; r < B.rows; ++r)
    for (int c = 0; c < B.cols; ++c) at<T>(B, r, c) *= alpha;
  if (side == Side::left) {
    for (int c = 0; c < B.cols; ++c) triangular_solve<T>(L, trans, b + static_cast<std::size_t>(c) * B.rows, 1);
  } else {
    // X op(L) = B  <=>  op(L)^T X^T = B^T: each row of B against op(L)'s transpose (not its
    // adjoint: op(L)^T(r, c) = op(L)(c, r)).
    const auto transposed = [&](int r, int c) { return op_lower<T>(L, trans, c, r); };
    for (int r = 0; r < B.rows; ++r) triangular_solve<T>(L.rows, trans != Trans::no, transposed, b + r, B.rows);
  }
}

// C := alpha op(A) op(A)^H + beta C on C's lower triangle (herk for complex scalars: the
// diagonal's imaginary parts taken as zero and set to zero).
template <class T>
void syrk_tile(Trans trans, T alpha, const TileRef& A, T beta, const TileRef& C) {
  const int depth = trans == Trans::no ? A.cols : A.rows;
  const Trans other = trans == Trans::no ? Trans::conjugate_transpose : Trans::no;
  for (int c = 0; c < C.cols; ++c)
    for (int r = c; r < C.rows; ++r) {
      T sum = 0;
      for (int k = 0; k < depth; ++k) sum += op_element<T>(A, trans, r, k) * op_element<T>(A, other, k, c);
      const T old = r == c ? T(std::real(at<T>(C, r, c))) : at<T>(C, r, c);
      const T value = alpha * sum + beta * old;
      at<T>(C, r, c) = r == c ? T(std::real(value)) : value;
    }
}

template <class T>
void syrk_tile(T alpha, const TileRef& A, T beta, const TileRef& C) {
  syrk_tile<T>(Trans::no, alpha, A, beta, C);
}

// The lower triangle of the tile := L^{-1}, column by column from the identity's.
template <class T>
void trtri_tile(const TileRef& L) {
  const int n = L.rows;
  std::vector<T> inverse(static_cast<std::size_t>(n) * n, T(0));
  for (int c = 0; c < n; ++c) {
    T* x = inverse.data() + static_cast<std::size_t>(c) * n;
    x[c] = T(1);
    triangular_solve<T>(L, Trans::no, x, 1);
  }
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r) at<T>(L, r, c) = inverse[r + static_cast<std::size_t>(c) * n];
}

// The lower triangle of the tile := L^H L.
template <class T>
void lauum_tile(const TileRef& L) {
  const int n = L.rows;
  std::vector<T> product(static_cast<std::size_t>(n) * n, T(0));
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r)
      for (int k = r; k < n; ++k)
        product[r + static_cast<std::size_t>(c) * n] += conj_of(at<T>(L, k, r)) * at<T>(L, k, c);
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r) at<T>(L, r, c) = product[r + static_cast<std::size_t>(c) * n];
}

// B := alpha op(L) B (left) or alpha B op(L) (right).
template <class T>
void trmm_tile(Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B) {
  std::vector<T> product(static_cast<std::size_t>(B.rows) * B.cols, T(0));
  for (int c = 0; c < B.cols; ++c)
    for (int r = 0; r < B.rows; ++r) {
      T sum = 0;
      if (side == Side::left)
        for (int k = 0; k < B.rows; ++k) sum += op_lower<T>(L, trans, r, k) * at<T>(B, k, c);
      else
        for (int k = 0; k < B.cols; ++k) sum += at<T>(B, r, k) * op_lower<T>(L, trans, k, c);
      product[r + static_cast<std::size_t>(c) * B.rows] = alpha * sum;
    }
  for (int c = 0; c < B.cols; ++c)
    for (int r = 0; r < B.rows; ++r) at<T>(B, r, c) = product[r + static_cast<std::size_t>(c) * B.rows];
}

template <class T>
void gemm_tile(Trans transa, Trans transb, T alpha, const TileRef& A, const TileRef& B, T beta, const TileRef& C) {
  const int depth = transa == Trans::no ? A.cols : A.rows;
  for (int c = 0; c < C.cols; ++c)
    for (int r = 0; r < C.rows; ++r) {
      T sum = 0;
      for (int k = 0; k < depth; ++k) sum += op_element<T>(A, transa, r, k) * op_element<T>(B, transb, k, c);
      at<T>(C, r, c) = alpha * sum + beta * at<T>(C, r, c);
    }
}

}  // namespace

template <class T>
void insert_potrf(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  Submission& s = *ctx.submission;
  s.record(TaskKind::potrf, hints, {writes(A)}, [A, &s] { potrf_tile<T>(s, A); });
}

template <class T>
void insert_trsm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B, const TaskHints& hints) {
  ctx.submission->record(TaskKind::trsm, hints, {reads(L), writes(B)}, [=] { trsm_tile<T>(side, trans, alpha, L, B); });
}

template <class T>
void insert_syrk(const TaskContext& ctx, T alpha, const TileRef& A, T beta, const TileRef& C, const TaskHints& hints) {
  ctx.submission->record(TaskKind::syrk, hints, {reads(A), writes(C)}, [=] { syrk_tile<T>(alpha, A, beta, C); });
}

template <class T>
void insert_syrk(const TaskContext& ctx, Trans trans, T alpha, const TileRef& A, T beta, const TileRef& C,
                 const TaskHints& hints) {
  ctx.submission->record(TaskKind::syrk, hints, {reads(A), writes(C)}, [=] { syrk_tile<T>(trans, alpha, A, beta, C); });
}

template <class T>
void insert_trtri(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  ctx.submission->record(TaskKind::potrf, hints, {writes(A)}, [=] { trtri_tile<T>(A); });
}

template <class T>
void insert_log_diagonal(const TaskContext& ctx, const TileRef& A, double* sum, const TaskHints& hints) {
  ctx.submission->record(TaskKind::other, hints, {reads(A)}, [=] {
    double total = 0;
    for (int j = 0; j < A.rows; ++j) total += std::log(double(std::real(at<T>(A, j, j))));
    *sum = 2.0 * total;
  });
}

template <class T>
void insert_lauum(const TaskContext& ctx, const TileRef& A, const TaskHints& hints) {
  ctx.submission->record(TaskKind::potrf, hints, {writes(A)}, [=] { lauum_tile<T>(A); });
}

template <class T>
void insert_trmm(const TaskContext& ctx, Side side, Trans trans, T alpha, const TileRef& L, const TileRef& B,
                 const TaskHints& hints) {
  ctx.submission->record(TaskKind::trsm, hints, {reads(L), writes(B)}, [=] { trmm_tile<T>(side, trans, alpha, L, B); });
}

template <class T>
void insert_gemm(const TaskContext& ctx, Trans transa, Trans transb, T alpha, const TileRef& A, const TileRef& B, T beta,
                 const TileRef& C, const TaskHints& hints) {
  ctx.submission->record(TaskKind::gemm, hints, {reads(A), reads(B), writes(C)},
                         [=] { gemm_tile<T>(transa, transb, alpha, A, B, beta, C); });
}

template <class T>
void insert_panel(const TaskContext& ctx, const std::vector<TileRef>& column, const TaskHints& hints) {
  Submission& s = *ctx.submission;
  std::vector<RecordedAccess> accesses;
  for (const TileRef& tile : column) accesses.push_back(writes(tile));
  s.record(TaskKind::potrf, hints, std::move(accesses), [column, &s] {
    if (!potrf_tile<T>(s, column[0])) return;
    for (std::size_t i = 1; i < column.size(); ++i) trsm_tile<T>(Side::right, Trans::conjugate_transpose, T(1), column[0], column[i]);
  });
}

template <class T>
void insert_whole_factorization(const TaskContext& ctx, const std::vector<TileRef>& tiles, const TaskHints& hints) {
  Submission& s = *ctx.submission;
  std::vector<RecordedAccess> accesses;
  for (const TileRef& tile : tiles) accesses.push_back(writes(tile));
  int nt = 0;
  while (nt * (nt + 1) / 2 < static_cast<int>(tiles.size())) ++nt;
  // tiles: column by column from the diagonal down; tile (i, j), i >= j.
  auto at = [tiles, nt](int i, int j) { return tiles[static_cast<std::size_t>(j * nt - j * (j - 1) / 2 + (i - j))]; };
  s.record(TaskKind::potrf, hints, std::move(accesses), [at, nt, &s] {
    for (int k = 0; k < nt; ++k) {
      if (!potrf_tile<T>(s, at(k, k))) return;
      for (int i = k + 1; i < nt; ++i) trsm_tile<T>(Side::right, Trans::conjugate_transpose, T(1), at(k, k), at(i, k));
      for (int j = k + 1; j < nt; ++j) {
        syrk_tile<T>(T(-1), at(j, k), T(1), at(j, j));
        for (int i = j + 1; i < nt; ++i) gemm_tile<T>(Trans::no, Trans::conjugate_transpose, T(-1), at(i, k), at(j, k), T(1), at(i, j));
      }
    }
  });
}

template <class T>
void insert_column_update(const TaskContext& ctx, const std::vector<TileRef>& panel, const std::vector<TileRef>& column,
                          const TaskHints& hints) {
  if (panel.size() != column.size() || panel.empty()) throw std::logic_error("column update: mismatched tiles");
  std::vector<RecordedAccess> accesses;
  for (const TileRef& tile : panel) accesses.push_back(reads(tile));
  for (const TileRef& tile : column) accesses.push_back(writes(tile));
  ctx.submission->record(TaskKind::gemm, hints, std::move(accesses), [panel, column] {
    syrk_tile<T>(T(-1), panel[0], T(1), column[0]);
    for (std::size_t i = 1; i < column.size(); ++i)
      gemm_tile<T>(Trans::no, Trans::conjugate_transpose, T(-1), panel[i], panel[0], T(1), column[i]);
  });
}

namespace {

// The caller's element that tile element (r, c) corresponds to.
template <class T>
T& block_element(const BlockMap<T>& block, int r, int c) {
  const int row = block.transpose ? c : r;
  const int col = block.transpose ? r : c;
  return block.base[(block.row0 + row) + static_cast<std::size_t>(block.col0 + col) * block.ld];
}

}  // namespace

template <class T>
void insert_copy_in(const TaskContext& ctx, const BlockMap<T>& from, const TileRef& tile, const TaskHints& hints) {
  Submission& s = *ctx.submission;
  s.record(TaskKind::copy_in, hints, {writes(tile)}, [from, tile, &s] {
    for (int c = 0; c < tile.cols; ++c)
      for (int r = from.lower_only ? c : 0; r < tile.rows; ++r) {
        const T x = block_element(from, r, c);
        at<T>(tile, r, c) = from.transpose ? conj_of(x) : x;
        if (from.in_matrix && !(std::isfinite(std::real(x)) && std::isfinite(std::imag(x)))) s.report_failure(tile.row0 + r + 1);
      }
  });
}

template <class T>
void insert_copy_out(const TaskContext& ctx, const TileRef& tile, const BlockMap<T>& to, bool skip_after_failure, const TaskHints& hints) {
  Submission& s = *ctx.submission;
  s.record(TaskKind::copy_out, hints, {reads(tile)}, [tile, to, skip_after_failure, &s] {
    if (skip_after_failure && s.info() != 0) return;
    for (int c = 0; c < tile.cols; ++c)
      for (int r = to.lower_only ? c : 0; r < tile.rows; ++r)
        block_element(to, r, c) = to.transpose ? conj_of(at<T>(tile, r, c)) : at<T>(tile, r, c);
  });
}

// The panel solves of a tensor-core factorization (float tiles, in FP32 here): X := L^{-1}, lower
// with zeros above; B := B X^T.
void insert_invert_panel_factor(const TaskContext& ctx, const TileRef& L, const TileRef& X, const TaskHints& hints) {
  ctx.submission->record(TaskKind::potrf, hints, {reads(L), writes(X)}, [=] {
    const int n = L.rows;
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < n; ++r) at<float>(X, r, c) = r >= c ? at<float>(L, r, c) : 0.0f;
    trtri_tile<float>(X);  // L^{-1}, lower
  });
}

void insert_multiply_by_panel_inverse(const TaskContext& ctx, const TileRef& X, const TileRef& B,
                                      const TaskHints& hints) {
  ctx.submission->record(TaskKind::trsm, hints, {reads(X), writes(B)}, [=] {
    std::vector<double> product(static_cast<std::size_t>(B.rows) * B.cols, 0.0);
    for (int c = 0; c < B.cols; ++c)
      for (int r = 0; r < B.rows; ++r)
        for (int k = 0; k <= c; ++k)
          product[r + static_cast<std::size_t>(c) * B.rows] += double(at<float>(B, r, k)) * at<float>(X, c, k);
    for (int c = 0; c < B.cols; ++c)
      for (int r = 0; r < B.rows; ++r) at<float>(B, r, c) = float(product[r + static_cast<std::size_t>(c) * B.rows]);
  });
}

// Adaptive precision. The recorded graph runs after the insertion: the norms the insertion waits
// for are not known then (NaN, so every tile stays in FP64). The reduced updates compute in double
// on operands rounded to FP32; FP16 pieces are tiles of doubles holding the values rounded to FP32.
void insert_tile_norm(const TaskContext& ctx, const TileRef& tile, bool diagonal, double* norm, const TaskHints& hints) {
  ctx.submission->record(TaskKind::other, hints, {reads(tile)}, [=] {
    double sum = 0;
    for (int c = 0; c < tile.cols; ++c)
      for (int r = diagonal ? c : 0; r < tile.rows; ++r)
        sum += (diagonal && r != c ? 2.0 : 1.0) * at<double>(tile, r, c) * at<double>(tile, r, c);
    *norm = std::sqrt(sum);
  });
}

void insert_float_gemm(const TaskContext& ctx, const TileRef& A, const TileRef& B, const TileRef& C,
                       const TaskHints& hints) {
  ctx.submission->record(TaskKind::gemm, hints, {reads(A), reads(B), writes(C)}, [=] {
    for (int c = 0; c < C.cols; ++c)
      for (int r = 0; r < C.rows; ++r) {
        double sum = 0;
        for (int k = 0; k < A.cols; ++k)
          sum += double(float(at<double>(A, r, k))) * double(float(at<double>(B, c, k)));
        at<double>(C, r, c) -= sum;
      }
  });
}

TileRef fp16_pieces_tile(const TaskContext& ctx, const TileRef& like) { return scratch_tile<double>(ctx, like); }

void insert_round_to_fp16(const TaskContext& ctx, const TileRef& A, const TileRef& pieces, const TaskHints& hints) {
  ctx.submission->record(TaskKind::trsm, hints, {reads(A), writes(pieces)}, [=] {
    for (int c = 0; c < A.cols; ++c)
      for (int r = 0; r < A.rows; ++r) at<double>(pieces, r, c) = double(float(at<double>(A, r, c)));
  });
}

void insert_pieces_gemm(const TaskContext& ctx, TileArithmetic, const TileRef& A, const TileRef& B, const TileRef& C,
                        const TaskHints& hints) {
  insert_float_gemm(ctx, A, B, C, hints);
}

double* submission_slots(const TaskContext& ctx, int count) {
  return static_cast<double*>(ctx.submission->scratch(sizeof(double) * static_cast<std::size_t>(count)));
}

void wait_for_inserted_tasks(const TaskContext&) {}

// Scratch tiles: memory the recording submission keeps until it ends.
template <class T>
TileRef scratch_tile(const TaskContext& ctx, const TileRef& like) {
  TileRef tile = like;
  tile.transposed = false;
  tile.handle = ctx.submission->scratch(sizeof(T) * static_cast<std::size_t>(like.rows) * like.cols);
  return tile;
}

void release_scratch_tile(const TaskContext&, const TileRef&) {}

// The task interface in every precision, as the StarPU backend provides it.
#define TESSERA_RECORDING_INSTANTIATE(T)                                                                     \
  template void insert_potrf<T>(const TaskContext&, const TileRef&, const TaskHints&);                      \
  template void insert_trsm<T>(const TaskContext&, Side, Trans, T, const TileRef&, const TileRef&,           \
                               const TaskHints&);                                                            \
  template void insert_syrk<T>(const TaskContext&, T, const TileRef&, T, const TileRef&, const TaskHints&); \
  template void insert_syrk<T>(const TaskContext&, Trans, T, const TileRef&, T, const TileRef&,              \
                               const TaskHints&);                                                            \
  template void insert_trtri<T>(const TaskContext&, const TileRef&, const TaskHints&);                      \
  template void insert_lauum<T>(const TaskContext&, const TileRef&, const TaskHints&);                      \
  template void insert_log_diagonal<T>(const TaskContext&, const TileRef&, double*, const TaskHints&);       \
  template void insert_trmm<T>(const TaskContext&, Side, Trans, T, const TileRef&, const TileRef&,           \
                               const TaskHints&);                                                            \
  template void insert_gemm<T>(const TaskContext&, Trans, Trans, T, const TileRef&, const TileRef&, T,       \
                               const TileRef&, const TaskHints&);                                            \
  template void insert_panel<T>(const TaskContext&, const std::vector<TileRef>&, const TaskHints&);          \
  template void insert_whole_factorization<T>(const TaskContext&, const std::vector<TileRef>&, const TaskHints&); \
  template void insert_column_update<T>(const TaskContext&, const std::vector<TileRef>&,                     \
                                        const std::vector<TileRef>&, const TaskHints&);                      \
  template void insert_copy_in<T>(const TaskContext&, const BlockMap<T>&, const TileRef&, const TaskHints&); \
  template void insert_copy_out<T>(const TaskContext&, const TileRef&, const BlockMap<T>&, bool, const TaskHints&); \
  template TileRef scratch_tile<T>(const TaskContext&, const TileRef&);
TESSERA_FOR_EACH_SCALAR(TESSERA_RECORDING_INSTANTIATE)
#undef TESSERA_RECORDING_INSTANTIATE

}  // namespace tessera::detail
