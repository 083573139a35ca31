// Batched mode: one task per chunk of consecutive small matrices. CPU: LAPACKE per matrix. CUDA:
// Tessera's batched kernels (registers and shared memory), one launch per chunk.
#include <stdexcept>
#include <string>

#include "codelet_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "kernels/cuda/batch_uplo.hpp"
#include "kernels/cuda/batched_inverse.hpp"
#include "kernels/cuda/batched_kernels.hpp"
#endif

namespace tessera::detail {

namespace {

// The chunk's matrices (one block per matrix, `stride` apart) as StarPU sees them where the task runs.
template <class T>
struct Blocks {
  T* base;
  int count;
  long long stride;
};

template <class T>
Blocks<T> blocks_view(void* buffer) {
  auto* m = static_cast<starpu_matrix_interface*>(buffer);
  return {reinterpret_cast<T*>(m->ptr), static_cast<int>(m->ny), static_cast<long long>(m->ld)};
}

template <class T>
T* array_view(void* buffer) {
  return reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffer));
}

struct BatchArgs {
  TaskHeader header;
  Uplo uplo;
  int n;  // order (fixed-size chunks)
  int nrhs;
  int lda;
  int ldb;
  int max_n;  // variable-size chunks
  bool fast_math;
};

// A failed matrix is that matrix's business: batched tasks never stop on another's failure.
template <class Body>
void run_batch_body(const BatchArgs& args, const char* what, Body&& body) {
  run_task_body(args.header, what, std::forward<Body>(body), /*even_after_failure=*/true);
}

template <class T>
void potrf_chunk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrf_batched", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    int* info = array_view<int>(buffers[1]);
    for (int k = 0; k < a.count; ++k) info[k] = kernels::cpu::potrf(uplo_letter(args.uplo), args.n, a.base + k * a.stride, args.lda);
  });
}

template <class T>
void potrs_chunk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrs_batched", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    const int* info = array_view<int>(buffers[1]);
    const Blocks<T> b = blocks_view<T>(buffers[2]);
    for (int k = 0; k < a.count; ++k)
      if (info[k] == 0)
        kernels::cpu::potrs(uplo_letter(args.uplo), args.n, args.nrhs, a.base + k * a.stride, args.lda, b.base + k * b.stride,
                            args.ldb);
  });
}

template <class T>
void potri_chunk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potri_batched", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    int* info = array_view<int>(buffers[1]);
    for (int k = 0; k < a.count; ++k) info[k] = kernels::cpu::potri(uplo_letter(args.uplo), args.n, a.base + k * a.stride, args.lda);
  });
}

template <class T>
void vpotrf_chunk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrf_vbatched", [&] {
    T* data = array_view<T>(buffers[0]);
    const int* n = array_view<int>(buffers[1]);
    const int* lda = array_view<int>(buffers[2]);
    const long long* offsets = array_view<long long>(buffers[3]);
    int* info = array_view<int>(buffers[4]);
    const int count = static_cast<int>(STARPU_VECTOR_GET_NX(buffers[1]));
    for (int k = 0; k < count; ++k) info[k] = kernels::cpu::potrf(uplo_letter(args.uplo), n[k], data + offsets[k], lda[k]);
  });
}

template <class T>
void vpotrs_chunk_cpu(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrs_vbatched", [&] {
    const T* a = array_view<T>(buffers[0]);
    const int* n = array_view<int>(buffers[1]);
    const int* lda = array_view<int>(buffers[2]);
    const long long* offsets = array_view<long long>(buffers[3]);
    const int* info = array_view<int>(buffers[4]);
    T* b = array_view<T>(buffers[5]);
    const int* ldb = array_view<int>(buffers[6]);
    const long long* offsets_b = array_view<long long>(buffers[7]);
    const int count = static_cast<int>(STARPU_VECTOR_GET_NX(buffers[1]));
    for (int k = 0; k < count; ++k)
      if (info[k] == 0)
        kernels::cpu::potrs(uplo_letter(args.uplo), n[k], args.nrhs, a + offsets[k], lda[k], b + offsets_b[k], ldb[k]);
  });
}

#ifdef TESSERA_HAVE_CUDA
kernels::cuda::BatchedOptions kernel_options(const BatchArgs& args) {
  kernels::cuda::BatchedOptions options;
  options.fast_math = args.fast_math;
  return options;
}

template <class T>
void potrf_chunk_cuda(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrf_batched (CUDA)", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    kernels::cuda::potrf_batched<T>(kernels::cuda::batch_uplo(args.uplo), args.n, a.base, args.lda, a.stride, a.count,
                                    array_view<int>(buffers[1]), starpu_cuda_get_local_stream(), kernel_options(args));
  });
}

template <class T>
void potrs_chunk_cuda(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrs_batched (CUDA)", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    const Blocks<T> b = blocks_view<T>(buffers[2]);
    kernels::cuda::potrs_batched<T>(kernels::cuda::batch_uplo(args.uplo), args.n, args.nrhs, a.base, args.lda, a.stride,
                                    b.base, args.ldb, b.stride, a.count, array_view<int>(buffers[1]),
                                    starpu_cuda_get_local_stream());
  });
}

template <class T>
void potri_chunk_cuda(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potri_batched (CUDA)", [&] {
    const Blocks<T> a = blocks_view<T>(buffers[0]);
    kernels::cuda::potri_batched<T>(kernels::cuda::batch_uplo(args.uplo), args.n, a.base, args.lda, a.stride, a.count,
                                    array_view<int>(buffers[1]), starpu_cuda_get_local_stream());
  });
}

template <class T>
void vpotrf_chunk_cuda(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrf_vbatched (CUDA)", [&] {
    const int count = static_cast<int>(STARPU_VECTOR_GET_NX(buffers[1]));
    kernels::cuda::potrf_vbatched<T>(kernels::cuda::batch_uplo(args.uplo), array_view<int>(buffers[1]), args.max_n,
                                     array_view<T>(buffers[0]), array_view<long long>(buffers[3]),
                                     array_view<int>(buffers[2]), count, array_view<int>(buffers[4]),
                                     starpu_cuda_get_local_stream(), kernel_options(args));
  });
}

template <class T>
void vpotrs_chunk_cuda(void* buffers[], void* cl_arg) {
  const auto& args = task_args<BatchArgs>(cl_arg);
  run_batch_body(args, "potrs_vbatched (CUDA)", [&] {
    const int count = static_cast<int>(STARPU_VECTOR_GET_NX(buffers[1]));
    kernels::cuda::potrs_vbatched<T>(kernels::cuda::batch_uplo(args.uplo), array_view<int>(buffers[1]), args.max_n,
                                     args.nrhs, array_view<T>(buffers[0]), array_view<long long>(buffers[3]),
                                     array_view<int>(buffers[2]), array_view<T>(buffers[5]),
                                     array_view<long long>(buffers[7]), array_view<int>(buffers[6]), count,
                                     array_view<int>(buffers[4]), starpu_cuda_get_local_stream());
  });
}
#endif

template <class T>
starpu_codelet* potrf_chunk_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"potrf_batched", potrf_chunk_cpu<T>, TESSERA_IF_CUDA(potrf_chunk_cuda<T>),
                                                nullptr, true, {STARPU_RW, STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* potrs_chunk_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"potrs_batched", potrs_chunk_cpu<T>, TESSERA_IF_CUDA(potrs_chunk_cuda<T>),
                                                nullptr, true, {STARPU_R, STARPU_R, STARPU_RW}});
  return &codelet;
}

template <class T>
starpu_codelet* potri_chunk_codelet() {
  static starpu_codelet codelet = make_tile_codelet<T>({"potri_batched", potri_chunk_cpu<T>, TESSERA_IF_CUDA(potri_chunk_cuda<T>),
                                                nullptr, true, {STARPU_RW, STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* vpotrf_chunk_codelet() {
  static starpu_codelet codelet =
      make_tile_codelet<T>({"potrf_vbatched", vpotrf_chunk_cpu<T>, TESSERA_IF_CUDA(vpotrf_chunk_cuda<T>), nullptr, true,
                    {STARPU_RW, STARPU_R, STARPU_R, STARPU_R, STARPU_W}});
  return &codelet;
}

template <class T>
starpu_codelet* vpotrs_chunk_codelet() {
  static starpu_codelet codelet =
      make_tile_codelet<T>({"potrs_vbatched", vpotrs_chunk_cpu<T>, TESSERA_IF_CUDA(vpotrs_chunk_cuda<T>), nullptr, true,
                    {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_RW, STARPU_R, STARPU_R}});
  return &codelet;
}

// The tile that traces show for a chunk: none (chunks have no tile coordinates).
const TileRef no_tile{};

}  // namespace

void* register_blocks(void* base, std::size_t element_size, long long block_elements, long long stride, int count) {
  if (block_elements <= 0 || count <= 0 || stride < block_elements || block_elements > UINT32_MAX || stride > UINT32_MAX)
    throw ResourceError("batch too large for one chunk: " + std::to_string(block_elements) + " elements per matrix, stride " +
                          std::to_string(stride));
  starpu_data_handle_t handle = nullptr;
  starpu_matrix_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(base), static_cast<uint32_t>(stride),
                              static_cast<uint32_t>(block_elements), static_cast<uint32_t>(count), element_size);
  return handle;
}

void* register_array(void* base, std::size_t element_size, long long count) {
  if (count <= 0 || count > UINT32_MAX) throw ResourceError("array of " + std::to_string(count) + " elements cannot be registered");
  starpu_data_handle_t handle = nullptr;
  starpu_vector_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(base), static_cast<uint32_t>(count),
                              element_size);
  return handle;
}

void release_data(void* handle) { starpu_data_unregister(static_cast<starpu_data_handle_t>(handle)); }

template <class T>
void insert_potrf_chunk(const TaskContext& ctx, Uplo uplo, int n, int lda, void* matrices, void* info, bool fast_math,
                        const TaskHints& hints) {
  BatchArgs args{};
  args.header.kind = TaskKind::other;
  args.uplo = uplo;
  args.n = n;
  args.lda = lda;
  args.fast_math = fast_math;
  submit(ctx, potrf_chunk_codelet<T>(), args, {{matrices, STARPU_RW}, {info, STARPU_W}}, hints, no_tile, 0);
}

template <class T>
void insert_potrs_chunk(const TaskContext& ctx, Uplo uplo, int n, int nrhs, int lda, int ldb, void* matrices, void* info,
                        void* rhs, const TaskHints& hints) {
  BatchArgs args{};
  args.header.kind = TaskKind::other;
  args.uplo = uplo;
  args.n = n;
  args.nrhs = nrhs;
  args.lda = lda;
  args.ldb = ldb;
  submit(ctx, potrs_chunk_codelet<T>(), args, {{matrices, STARPU_R}, {info, STARPU_R}, {rhs, STARPU_RW}}, hints, no_tile, 0);
}

template <class T>
void insert_potri_chunk(const TaskContext& ctx, Uplo uplo, int n, int lda, void* matrices, void* info,
                        const TaskHints& hints) {
  BatchArgs args{};
  args.header.kind = TaskKind::other;
  args.uplo = uplo;
  args.n = n;
  args.lda = lda;
  submit(ctx, potri_chunk_codelet<T>(), args, {{matrices, STARPU_RW}, {info, STARPU_W}}, hints, no_tile, 0);
}

template <class T>
void insert_vpotrf_chunk(const TaskContext& ctx, Uplo uplo, const VariableChunk& a, void* info, bool fast_math, const TaskHints& hints) {
  BatchArgs args{};
  args.header.kind = TaskKind::other;
  args.uplo = uplo;
  args.max_n = a.max_n;
  args.fast_math = fast_math;
  submit(ctx, vpotrf_chunk_codelet<T>(), args,
         {{a.data, STARPU_RW}, {a.sizes, STARPU_R}, {a.lds, STARPU_R}, {a.offsets, STARPU_R}, {info, STARPU_W}}, hints, no_tile,
         0);
}

template <class T>
void insert_vpotrs_chunk(const TaskContext& ctx, Uplo uplo, int nrhs, const VariableChunk& a, void* info,
                         const VariableChunk& b, const TaskHints& hints) {
  BatchArgs args{};
  args.header.kind = TaskKind::other;
  args.uplo = uplo;
  args.nrhs = nrhs;
  args.max_n = a.max_n;
  submit(ctx, vpotrs_chunk_codelet<T>(), args,
         {{a.data, STARPU_R}, {a.sizes, STARPU_R}, {a.lds, STARPU_R}, {a.offsets, STARPU_R}, {info, STARPU_R},
          {b.data, STARPU_RW}, {b.lds, STARPU_R}, {b.offsets, STARPU_R}},
         hints, no_tile, 0);
}

#define TESSERA_INSTANTIATE(T)                                                                                         \
  template void insert_potrf_chunk<T>(const TaskContext&, Uplo, int, int, void*, void*, bool, const TaskHints&);       \
  template void insert_potrs_chunk<T>(const TaskContext&, Uplo, int, int, int, int, void*, void*, void*,               \
                                      const TaskHints&);                                                               \
  template void insert_potri_chunk<T>(const TaskContext&, Uplo, int, int, void*, void*, const TaskHints&);             \
  template void insert_vpotrf_chunk<T>(const TaskContext&, Uplo, const VariableChunk&, void*, bool, const TaskHints&); \
  template void insert_vpotrs_chunk<T>(const TaskContext&, Uplo, int, const VariableChunk&, void*,                     \
                                       const VariableChunk&, const TaskHints&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail
