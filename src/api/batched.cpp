// Batched mode: argument checks, chunking, registration of the caller's arrays, and the chunk
// tasks. The caller's memory is registered in place (no copy on the host); it receives the
// results when the request's registrations are released, before wait() returns.
#include "tessera/batched.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "argument_errors.hpp"
#include "calling_thread.hpp"
#include "operations.hpp"
#include "plan_requests.hpp"
#include "memory_overlap.hpp"
#include "plan.hpp"
#include "request_support.hpp"
#include "runtime_control.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

using detail::elements_spanned;
using detail::Submission;

// Registrations and internal arrays that live until the request's tasks are done; releasing the
// registrations leaves the results in the caller's memory.
struct BatchState {
  explicit BatchState(Runtime& r) : runtime(r) {}
  Runtime& runtime;
  std::vector<void*> handles;
  std::vector<int> internal_info;
  std::vector<long long> relative_offsets;
  std::vector<long long> relative_offsets_b;
  ~BatchState() {
    const detail::TransfersInFlight transfers(runtime);  // results come home through the workers
    for (void* h : handles) detail::release_data(h);
  }
  void* keep(void* handle) {
    handles.push_back(handle);
    return handle;
  }
};

struct Chunk {
  int first;
  int count;
};

// The plan of a batch of `batch` matrices of order n (-1: orders that vary) with nrhs right-hand
// sides each (batch 0: nothing to factor or solve).
template <class T>
detail::Plan batch_plan(const Runtime& runtime, int n, int batch, int nrhs, const FactorOptions& options) {
  return detail::plan_request(runtime, detail::batch_request<T>(n, batch, options, nrhs));
}

std::vector<Chunk> chunks_of(int batch, const detail::Plan& plan) {
  const int size = plan.batch_chunk;
  std::vector<Chunk> chunks;
  for (int first = 0; first < batch; first += size) chunks.push_back({first, std::min(size, batch - first)});
  return chunks;
}

// The hints of a chunk's tasks: step = the chunk's index among `chunks`; on several GPUs the
// chunks are dealt over them in turn.
TaskHints chunk_hints(const detail::TaskContext& ctx, const FactorOptions& options, const Chunk& chunk,
                      const std::vector<Chunk>& chunks) {
  const int index = static_cast<int>(&chunk - chunks.data());
  TaskHints hints = options.hints(TaskKind::other, index, 0, 0, static_cast<int>(chunks.size()));
  if (hints.gpu < 0 && ctx.gpu_owners.gpus() > 1) hints.gpu = ctx.gpu_owners.of_chunk(index);
  return hints;
}

template <class T>
void* register_chunk_blocks(BatchState& state, T* base, int rows, int cols, int ld, long long stride, const Chunk& c) {
  const long long elements = elements_spanned(rows, cols, ld);
  return state.keep(detail::register_blocks(base + static_cast<long long>(c.first) * stride, sizeof(T), elements,
                                            c.count > 1 ? stride : elements, c.count));
}

// The variable-size matrices [first, first + count) in one array: offsets relative to the first.
struct VariableSpan {
  long long start;
  long long end;
};

// Empty matrices hold no element: their offsets do not count (relative offset 0, never read).
VariableSpan variable_span(const int* rows, int cols_fixed, const int* cols, const long long* offsets, const int* ld,
                           const Chunk& c) {
  bool any = false;
  VariableSpan s{0, 1};
  for (int k = c.first; k < c.first + c.count; ++k) {
    const long long elements = elements_spanned(rows[k], cols ? cols[k] : cols_fixed, ld[k]);
    if (elements == 0) continue;
    if (!any) s = {offsets[k], offsets[k] + elements};
    any = true;
    s.end = std::max(s.end, offsets[k] + elements);
  }
  return s;  // (chunks of empty matrices only are never registered)
}

template <class T>
detail::VariableChunk register_variable_chunk(BatchState& state, T* base, const int* rows, int cols_fixed, const int* cols,
                                               const long long* offsets, const int* ld, const Chunk& c,
                                               std::vector<long long>& relative) {
  const VariableSpan s = variable_span(rows, cols_fixed, cols, offsets, ld, c);
  for (int k = c.first; k < c.first + c.count; ++k)
    relative[k] = elements_spanned(rows[k], cols ? cols[k] : cols_fixed, ld[k]) == 0 ? 0 : offsets[k] - s.start;
  detail::VariableChunk chunk{};
  chunk.data = state.keep(detail::register_array(base + s.start, sizeof(T), s.end - s.start));
  chunk.sizes = state.keep(detail::register_array(const_cast<int*>(rows + c.first), sizeof(int), c.count));
  chunk.lds = state.keep(detail::register_array(const_cast<int*>(ld + c.first), sizeof(int), c.count));
  chunk.offsets = state.keep(detail::register_array(relative.data() + c.first, sizeof(long long), c.count));
  chunk.count = c.count;
  chunk.max_n = *std::max_element(rows + c.first, rows + c.first + c.count);
  return chunk;
}

// The tasks of a strided request: factor (when info is given as output), then solve (nrhs >= 0).
template <class T>
Request submit_strided(Runtime& runtime, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                       long long strideB, int batch, int* info, bool factor, const FactorOptions& options) {
  auto state = std::make_shared<BatchState>(runtime);
  const bool solve = nrhs > 0 && n > 0;
  if (!factor) {
    state->internal_info.assign(static_cast<std::size_t>(batch), 0);  // potrs alone: solve every matrix
    info = state->internal_info.data();
  }
  const detail::Plan plan = batch_plan<T>(runtime, n, n == 0 ? 0 : batch, std::max(nrhs, 0), options);
  if (n == 0) std::fill(info, info + batch, 0);  // nothing to factor or solve
  if (plan.path == detail::Path::calling_thread) {
    detail::batch_on_calling_thread(options.uplo, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, factor);
    return detail::finished_request(0);
  }
  return detail::make_request(runtime, state, [&](Submission& s) {
    if (batch == 0 || n == 0) return;
    const detail::TaskContext ctx = detail::make_context(runtime, s, plan, GpuKernels::any);
    const std::vector<Chunk> chunks = chunks_of(batch, plan);
    for (const Chunk& c : chunks) {
      const TaskHints hints = chunk_hints(ctx, options, c, chunks);
      void* info_handle = state->keep(detail::register_array(info + c.first, sizeof(int), c.count));
      void* a = register_chunk_blocks(*state, A, n, n, lda, strideA, c);
      if (factor) detail::insert_potrf_chunk<T>(ctx, options.uplo, n, lda, a, info_handle, options.fast_math, hints);
      if (solve) {
        void* b = register_chunk_blocks(*state, B, n, nrhs, ldb, strideB, c);
        detail::insert_potrs_chunk<T>(ctx, options.uplo, n, nrhs, lda, ldb, a, info_handle, b, hints);
      }
    }
  });
}

// The inverses of a strided batch of factors: one task per chunk (or LAPACK on the calling thread).
template <class T>
Request submit_strided_inverse(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                               const FactorOptions& options) {
  const detail::Plan plan = batch_plan<T>(runtime, n, n == 0 ? 0 : batch, 0, options);
  if (n == 0 || plan.path == detail::Path::calling_thread) {
    detail::inverse_batch_on_calling_thread(options.uplo, n, A, lda, strideA, batch, info);
    return detail::finished_request(0);
  }
  auto state = std::make_shared<BatchState>(runtime);
  return detail::make_request(runtime, state, [&](Submission& s) {
    if (batch == 0) return;
    const detail::TaskContext ctx = detail::make_context(runtime, s, plan, GpuKernels::any);
    const std::vector<Chunk> chunks = chunks_of(batch, plan);
    for (const Chunk& c : chunks) {
      void* info_handle = state->keep(detail::register_array(info + c.first, sizeof(int), c.count));
      detail::insert_potri_chunk<T>(ctx, options.uplo, n, lda, register_chunk_blocks(*state, A, n, n, lda, strideA, c),
                                    info_handle, chunk_hints(ctx, options, c, chunks));
    }
  });
}

template <class T>
Request submit_variable(Runtime& runtime, const int* n, int nrhs, T* A, const long long* offsets, const int* lda, T* B,
                        const long long* offsetsB, const int* ldb, int batch, int* info, bool factor,
                        const FactorOptions& options) {
  auto state = std::make_shared<BatchState>(runtime);
  if (!factor) {
    state->internal_info.assign(static_cast<std::size_t>(batch), 0);
    info = state->internal_info.data();
  }
  state->relative_offsets.resize(static_cast<std::size_t>(batch));
  state->relative_offsets_b.resize(static_cast<std::size_t>(batch));
  const detail::Plan plan = batch_plan<T>(runtime, -1, batch, std::max(nrhs, 0), options);
  return detail::make_request(runtime, state, [&](Submission& s) {
    if (batch == 0) return;
    const detail::TaskContext ctx = detail::make_context(runtime, s, plan, GpuKernels::any);
    const std::vector<Chunk> chunks = chunks_of(batch, plan);
    for (const Chunk& c : chunks) {
      const TaskHints hints = chunk_hints(ctx, options, c, chunks);
      if (std::all_of(n + c.first, n + c.first + c.count, [](int order) { return order == 0; })) {
        std::fill(info + c.first, info + c.first + c.count, 0);  // nothing to factor or solve
        continue;
      }
      const detail::VariableChunk a =
          register_variable_chunk(*state, A, n, 0, n, offsets, lda, c, state->relative_offsets);
      void* info_handle = state->keep(detail::register_array(info + c.first, sizeof(int), c.count));
      if (factor) detail::insert_vpotrf_chunk<T>(ctx, options.uplo, a, info_handle, options.fast_math, hints);
      if (nrhs > 0) {
        const detail::VariableChunk b =
            register_variable_chunk(*state, B, n, nrhs, nullptr, offsetsB, ldb, c, state->relative_offsets_b);
        detail::insert_vpotrs_chunk<T>(ctx, options.uplo, nrhs, a, info_handle, b, hints);
      }
    }
  });
}

}  // namespace

int default_batch_chunk(const Runtime& runtime, int batch, Mode mode) {
  return detail::default_batch_chunk(detail::RuntimeControl::machine(runtime), batch, mode);
}

template <class T>
Request detail::potrf_strided_batch_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                            const FactorOptions& options) {
  detail::throw_if_invalid("potrf_batched", potrf_batched_argument_error(detail::uplo_letter(options.uplo), n, A, lda,
                                                                          strideA, batch, info));
  return submit_strided<T>(runtime, n, 0, A, lda, strideA, nullptr, 1, 0, batch, info, true, options);
}

template <class T>
Request detail::potrs_strided_batch_async(Runtime& runtime, int n, int nrhs, const T* A, int lda, long long strideA, T* B, int ldb,
                            long long strideB, int batch, const FactorOptions& options) {
  detail::throw_if_invalid("potrs_batched", potrs_batched_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs,
                                                                             A, lda, strideA, B, ldb, strideB, batch));
  // The factors are only read; registering them read-write never writes different values back.
  return submit_strided<T>(runtime, n, nrhs, const_cast<T*>(A), lda, strideA, B, ldb, strideB, batch, nullptr, false,
                           options);
}

template <class T>
Request detail::posv_strided_batch_async(Runtime& runtime, int n, int nrhs, T* A, int lda, long long strideA, T* B, int ldb,
                           long long strideB, int batch, int* info, const FactorOptions& options) {
  detail::throw_if_invalid("posv_batched", posv_batched_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs, A,
                                                                           lda, strideA, B, ldb, strideB, batch, info));
  return submit_strided<T>(runtime, n, nrhs, A, lda, strideA, B, ldb, strideB, batch, info, true, options);
}

template <class T>
Request detail::potri_strided_batch_async(Runtime& runtime, int n, T* A, int lda, long long strideA, int batch, int* info,
                                          const FactorOptions& options) {
  detail::throw_if_invalid("potri_batched", potrf_batched_argument_error(detail::uplo_letter(options.uplo), n, A, lda,
                                                                          strideA, batch, info));
  return submit_strided_inverse<T>(runtime, n, A, lda, strideA, batch, info, options);
}

template <class T>
Request detail::potrf_variable_batch_async(Runtime& runtime, const int* n, T* A, const long long* offsets, const int* lda, int batch,
                             int* info, const FactorOptions& options) {
  detail::throw_if_invalid("potrf_vbatched", potrf_vbatched_argument_error(detail::uplo_letter(options.uplo), n, A,
                                                                            offsets, lda, batch, info));
  return submit_variable<T>(runtime, n, 0, A, offsets, lda, nullptr, nullptr, nullptr, batch, info, true, options);
}

template <class T>
Request detail::potrs_variable_batch_async(Runtime& runtime, const int* n, int nrhs, const T* A, const long long* offsets,
                             const int* lda, T* B, const long long* offsetsB, const int* ldb, int batch,
                             const FactorOptions& options) {
  detail::throw_if_invalid("potrs_vbatched",
                           potrs_vbatched_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs, A, offsets,
                                                            lda, B, offsetsB, ldb, batch));
  return submit_variable<T>(runtime, n, nrhs, const_cast<T*>(A), offsets, lda, B, offsetsB, ldb, batch, nullptr, false,
                            options);
}

template <class T>
Request detail::posv_variable_batch_async(Runtime& runtime, const int* n, int nrhs, T* A, const long long* offsets, const int* lda,
                            T* B, const long long* offsetsB, const int* ldb, int batch, int* info,
                            const FactorOptions& options) {
  detail::throw_if_invalid("posv_vbatched", posv_vbatched_argument_error<T>(detail::uplo_letter(options.uplo), n, nrhs,
                                                                             A, offsets, lda, B, offsetsB, ldb, batch,
                                                                             info));
  return submit_variable<T>(runtime, n, nrhs, A, offsets, lda, B, offsetsB, ldb, batch, info, true, options);
}

#define TESSERA_INSTANTIATE(T)                                                                                    \
  template Request detail::potrf_strided_batch_async<T>(Runtime&, int, T*, int, long long, int, int*, const FactorOptions&);     \
  template Request detail::potrs_strided_batch_async<T>(Runtime&, int, int, const T*, int, long long, T*, int, long long, int,  \
                                          const FactorOptions&);                                                   \
  template Request detail::posv_strided_batch_async<T>(Runtime&, int, int, T*, int, long long, T*, int, long long, int, int*,   \
                                         const FactorOptions&);                                                    \
  template Request detail::potri_strided_batch_async<T>(Runtime&, int, T*, int, long long, int, int*, const FactorOptions&);     \
  template Request detail::potrf_variable_batch_async<T>(Runtime&, const int*, T*, const long long*, const int*, int, int*,     \
                                           const FactorOptions&);                                                  \
  template Request detail::potrs_variable_batch_async<T>(Runtime&, const int*, int, const T*, const long long*, const int*, T*, \
                                           const long long*, const int*, int, const FactorOptions&);               \
  template Request detail::posv_variable_batch_async<T>(Runtime&, const int*, int, T*, const long long*, const int*, T*,        \
                                          const long long*, const int*, int, int*, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
