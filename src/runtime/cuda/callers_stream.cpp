#include "callers_stream.hpp"

#include "tessera/precision.hpp"

#ifdef TESSERA_HAVE_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <typeindex>
#include <utility>
#include <vector>

#include "current_device.hpp"
#include "device_memory.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/graph_nodes.hpp"
#include "kernels/cuda/matrix_utils.hpp"
#include "kernels/cuda/one_block_potrf.hpp"
#include "kernels/cuda/stream_memory.hpp"
#include "kernels/cuda/batched_kernels.hpp"
#include "kernels/cuda/refinement.hpp"
#include "kernels/cuda/tensor_core_potrf.hpp"
#include "kernels/cuda/vendor.hpp"
#include "runtime_resources.hpp"
#include "thresholds.hpp"

namespace tessera::detail {

namespace {

// cuSOLVER's batched potrf of a stack of one scalar type, order, leading dimension and count,
// captured as a CUDA graph: one launch instead of the two dozen of its kernels, whose launches
// took most of the time of a call on a short stack of small matrices. The graph reads the matrices
// through `pointers` (each call writes its own there first) and writes their info into `info`.
struct StackGraph {
  std::type_index scalar;
  int n, ld, batch;
  void* pointers = nullptr;
  int* info = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturable = true;  // false once a capture failed: that stack runs the direct calls

  bool matches(std::type_index s, int order, int leading, int count) const {
    return scalar == s && n == order && ld == leading && batch == count;
  }
  void release() noexcept {
    if (exec) cudaGraphExecDestroy(exec);
    if (info) cudaFree(info);
    if (pointers) cudaFree(pointers);
    exec = nullptr;
    info = nullptr;
    pointers = nullptr;
  }
};

// One matrix's out-of-place factorization of one scalar type and order n (potrf_into's launches:
// the triangle loaded into a workspace, cuSOLVER's potrf there, the factor stored with its info)
// as a CUDA graph: replayed with each call's matrices set into its first and last nodes, one launch
// where the direct calls make four or more, whose host time exceeds the GPU's at small orders.
struct FactorGraph {
  std::type_index scalar;
  int n;
  void* matrix = nullptr;  // the n x n workspace (ld n) cuSOLVER factors
  void* workspace = nullptr;
  int* solver_info = nullptr;
  cudaGraph_t graph = nullptr;  // kept: its nodes name the ones the replays set
  cudaGraphNode_t load = nullptr, store = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturable = true;  // false once a capture failed: that order runs the direct calls

  bool matches(std::type_index s, int order) const { return scalar == s && n == order; }
  // The memory first: cudaFree waits for the device, so for a replay still running.
  void release() noexcept {
    if (solver_info) cudaFree(solver_info);
    if (workspace) cudaFree(workspace);
    if (matrix) cudaFree(matrix);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    solver_info = nullptr;
    workspace = nullptr;
    matrix = nullptr;
  }

  // L := the factor of the triangle `upper` or lower of A (element (i, j) at A + i * row_stride +
  // j * col_stride), as potrf_into's direct calls make it (`zero_other`: zeros in L's other
  // triangle, else left; L may be A), its info into `info`, on `stream`.
  template <class T>
  void replay(const T* A, long long row_stride, long long col_stride, T* L, int ldl, bool upper, bool zero_other,
              int* info, cudaStream_t stream) const {
    namespace cuda = kernels::cuda;
    auto* M = static_cast<T*>(matrix);
    cuda::KernelNode load_node, store_node;
    cuda::load_lower_node(load_node, n, A, upper ? col_stride : row_stride, upper ? row_stride : col_stride, M, n,
                          upper);
    cuda::store_factor_node(store_node, n, static_cast<const T*>(M), n, solver_info, L, ldl, upper, zero_other, info);
    TESSERA_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, load, &load_node.params()));
    TESSERA_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, store, &store_node.params()));
    TESSERA_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  }
};

// The entry of `graphs` (most recent first) that `matches`, moved to the front; null on a first
// sighting, which is added (made by `make`), the least recent entry dropped past `limit`.
template <class Graph, class Matches, class Make>
Graph* seen_before(std::list<Graph>& graphs, std::size_t limit, Matches&& matches, Make&& make) {
  const auto found = std::find_if(graphs.begin(), graphs.end(), matches);
  if (found == graphs.end()) {
    graphs.push_front(make());
    if (graphs.size() > limit) {
      graphs.back().release();
      graphs.pop_back();
    }
    return nullptr;
  }
  graphs.splice(graphs.begin(), graphs, found);
  return &graphs.front();
}

// The handles one call uses, on one GPU, and the word its info comes back through.
struct StreamSolvers {
  int device;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  int* device_info = nullptr;
  int* host_info = nullptr;  // pinned
  // Recorded after each call's work: a call on another stream waits for it on the GPU, so that
  // no two streams use the handles' internal memory at once (a call may return before its work
  // is done).
  cudaEvent_t done = nullptr;
  // cuSOLVER's workspace, kept between calls: allocated at each call from the device's
  // stream-ordered pool (which gives its memory back at each synchronisation and maps it again at
  // the next allocation), it cost a large share of a call at moderate orders.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // An upper-stored matrix's lower copy (its n x n workspace), or a refined solve's
  // single-precision matrix and other buffers, kept between calls for the same reason while it is
  // at most 1/kTransposedShareOfMemory of the GPU's memory: taken afresh at each call, it made
  // upper storage clearly slower than lower; kept, upper runs within about 5% of lower
  // (docs/gpu-performance.md, section "The main table").
  static constexpr std::size_t kTransposedShareOfMemory = 16;
  void* transposed = nullptr;
  std::size_t transposed_bytes = 0;
  std::size_t kept_transposed_limit = 0;
  // The array of matrix pointers cuSOLVER's batched potrf takes, kept for the same reason: taken
  // afresh, its allocation was the largest host cost of a call on a short stack.
  void* pointers = nullptr;
  std::size_t pointers_bytes = 0;
  // The stacks seen last, most recent first: a stack's graph is captured at its second call, so
  // that a stack factored once pays no capture.
  static constexpr std::size_t kStackGraphs = 8;
  std::list<StackGraph> stack_graphs;
  // The orders factored last, most recent first, the same way (FactorGraph).
  static constexpr std::size_t kFactorGraphs = 8;
  std::list<FactorGraph> factor_graphs;
  cudaStream_t capture_stream = nullptr;

  // Made with `device` current.
  explicit StreamSolvers(int on_device) : device(on_device) {
    try {
      TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
      TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
      TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device_info), sizeof(int)));
      TESSERA_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_info), sizeof(int)));
      TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      std::size_t free_bytes = 0, total_bytes = 0;
      TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      kept_transposed_limit = total_bytes / kTransposedShareOfMemory;
    } catch (...) {
      release();
      throw;
    }
  }
  ~StreamSolvers() {
    int previous = 0;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    release();
    if (switched) cudaSetDevice(previous);
  }
  StreamSolvers(const StreamSolvers&) = delete;
  StreamSolvers& operator=(const StreamSolvers&) = delete;

  // Every call after this one is enqueued on `stream`, after the work of the handles' last use:
  // on the stream of that use, that order holds already (streams are told apart by their ids,
  // which the runtime never gives twice, unlike their addresses), and the handles stay bound.
  void bind(cudaStream_t stream) {
    unsigned long long id = 0;
    TESSERA_CUDA_CHECK(cudaStreamGetId(stream, &id));
    if (bound_stream_id && *bound_stream_id == id) return;
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(stream, done, 0));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas, stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
    bound_stream_id = id;
  }
  std::optional<unsigned long long> bound_stream_id;  // the stream the handles are bound to

  // A workspace of at least `bytes`, grown in the order of `stream` (the one bound).
  void* workspace_of(std::size_t bytes, cudaStream_t stream) {
    return kernels::cuda::grown_workspace(workspace, workspace_bytes, bytes, stream);
  }

  // The kept room for `bytes` of an upper-stored matrix's lower copy, grown in the order of
  // `stream`; null when that much is not kept (the call takes memory of its own).
  void* kept_transposed_of(std::size_t bytes, cudaStream_t stream) {
    if (bytes > kept_transposed_limit) return nullptr;
    return kernels::cuda::grown_workspace(transposed, transposed_bytes, bytes, stream);
  }
  // The workspace, for a call whose workspace grows with the matrix (an inverse's n x n): null
  // past the limit the transposed copies keep to.
  void* kept_workspace_of(std::size_t bytes, cudaStream_t stream) {
    return bytes > kept_transposed_limit ? nullptr : workspace_of(bytes, stream);
  }

  // Room for `count` matrix pointers, grown in the order of `stream`.
  template <class T>
  T** pointers_for(int count, cudaStream_t stream) {
    const std::size_t bytes = sizeof(T*) * static_cast<std::size_t>(std::max(count, 1));
    return static_cast<T**>(kernels::cuda::grown_workspace(pointers, pointers_bytes, bytes, stream));
  }

  // The graph of cuSOLVER's batched potrf for this stack (T, n, ld, batch), captured now if the
  // stack was seen before; null where the call is to make the calls itself (a first sighting, or a
  // stack whose capture failed). The solver is bound to `stream` again on return.
  template <class T>
  StackGraph* stack_graph(int n, int ld, int batch, cudaStream_t stream) {
    const std::type_index scalar(typeid(T));
    StackGraph* graph = seen_before(
        stack_graphs, kStackGraphs, [&](const StackGraph& g) { return g.matches(scalar, n, ld, batch); },
        [&] { return StackGraph{scalar, n, ld, batch}; });
    if (!graph) return nullptr;
    if (!graph->exec && graph->capturable) graph->capturable = capture<T>(*graph, stream);
    return graph->exec ? graph : nullptr;
  }

  // The graph of one matrix's out-of-place factorization of order n (FactorGraph), captured now if
  // the order was seen before; null where the call is to make the calls itself. The solver is
  // bound to `stream` again on return.
  template <class T>
  const FactorGraph* factor_graph(int n, cudaStream_t stream) {
    const std::type_index scalar(typeid(T));
    FactorGraph* graph = seen_before(
        factor_graphs, kFactorGraphs, [&](const FactorGraph& g) { return g.matches(scalar, n); },
        [&] { return FactorGraph{scalar, n}; });
    if (!graph) return nullptr;
    if (!graph->exec && graph->capturable) {
      graph->capturable = capture<T>(*graph, stream);
      if (!graph->capturable) graph->release();
    }
    return graph->exec ? graph : nullptr;
  }

  // Marks the end of this use's work on `stream`.
  void enqueued(cudaStream_t stream) const { TESSERA_CUDA_CHECK(cudaEventRecord(done, stream)); }

  // The info the device holds, once everything enqueued on `stream` is complete.
  int info_after(cudaStream_t stream) const {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(host_info, device_info, sizeof(int), cudaMemcpyDeviceToHost, stream));
    enqueued(stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *host_info;
  }

 private:
  // The graph of what enqueue() enqueues with the solver bound to the handles' own stream (capture
  // takes no legacy default stream, which the caller's may be); null where capture failed. The
  // solver is bound to `stream` again on return.
  template <class Enqueue>
  cudaGraph_t captured(cudaStream_t stream, Enqueue&& enqueue) {
    if (!capture_stream) TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, capture_stream));
    cudaGraph_t graph = nullptr;
    if (cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      bool enqueued = true;
      try {
        enqueue();
      } catch (const std::exception&) {
        enqueued = false;
      }
      const bool ended = cudaStreamEndCapture(capture_stream, &graph) == cudaSuccess;
      if (graph && !(enqueued && ended)) {
        cudaGraphDestroy(graph);
        graph = nullptr;
      }
    }
    cudaGetLastError();  // a failed capture leaves its error behind; the direct calls follow
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
    return graph;
  }

  // Captures cuSOLVER's batched potrf for `graph`; whether it worked.
  template <class T>
  bool capture(StackGraph& graph, cudaStream_t stream) {
    const std::size_t count = static_cast<std::size_t>(graph.batch);
    TESSERA_CUDA_CHECK(cudaMalloc(&graph.pointers, sizeof(T*) * count));
    TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&graph.info), sizeof(int) * count));
    const cudaGraph_t captured_graph = captured(stream, [&] {
      kernels::cuda::vendor::potrf_batched(solver, 'L', graph.n, static_cast<T**>(graph.pointers), graph.ld,
                                           graph.info, graph.batch);
    });
    const bool instantiated = captured_graph && cudaGraphInstantiate(&graph.exec, captured_graph, 0) == cudaSuccess;
    if (captured_graph) cudaGraphDestroy(captured_graph);
    cudaGetLastError();
    if (!instantiated) graph.release();
    return instantiated;
  }

  // Makes `graph`: its memory, cuSOLVER's potrf captured, the load and store nodes around it (their
  // arguments placeholders until a replay sets them); whether it worked (memory short included:
  // the direct calls then take their memory from the stream's pool).
  template <class T>
  bool capture(FactorGraph& graph, cudaStream_t stream) {
    namespace cuda = kernels::cuda;
    const int n = graph.n;
    const std::size_t elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if (cudaMalloc(&graph.matrix, sizeof(T) * elements) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&graph.solver_info), sizeof(int)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    auto* M = static_cast<T*>(graph.matrix);
    const int lwork = cuda::vendor::potrf_workspace(solver, 'L', n, M, n);
    if (cudaMalloc(&graph.workspace, sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1))) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    const cudaGraph_t potrf = captured(stream, [&] {
      cuda::vendor::potrf(solver, 'L', n, M, n, static_cast<T*>(graph.workspace), lwork, graph.solver_info);
    });
    if (!potrf) return false;
    cuda::KernelNode load_node, store_node;
    cuda::load_lower_node(load_node, n, static_cast<const T*>(M), 1, n, M, n, false);
    cuda::store_factor_node(store_node, n, static_cast<const T*>(M), n, graph.solver_info, M, n, false, true,
                            graph.solver_info);
    cudaGraphNode_t factor = nullptr;
    const bool built =
        cudaGraphCreate(&graph.graph, 0) == cudaSuccess &&
        cudaGraphAddKernelNode(&graph.load, graph.graph, nullptr, 0, &load_node.params()) == cudaSuccess &&
        cudaGraphAddChildGraphNode(&factor, graph.graph, &graph.load, 1, potrf) == cudaSuccess &&
        cudaGraphAddKernelNode(&graph.store, graph.graph, &factor, 1, &store_node.params()) == cudaSuccess &&
        cudaGraphInstantiate(&graph.exec, graph.graph, 0) == cudaSuccess;
    cudaGraphDestroy(potrf);  // the child node holds a copy
    cudaGetLastError();
    return built;
  }

  // Nothing to report to on the way out: at worst a handle or a word stays allocated.
  void release() noexcept {
    for (StackGraph& graph : stack_graphs) graph.release();
    for (FactorGraph& graph : factor_graphs) graph.release();
    if (capture_stream) cudaStreamDestroy(capture_stream);
    if (workspace) cudaFree(workspace);
    if (transposed) cudaFree(transposed);
    if (pointers) cudaFree(pointers);
    if (done) cudaEventDestroy(done);
    if (host_info) cudaFreeHost(host_info);
    if (device_info) cudaFree(device_info);
    if (solver) cusolverDnDestroy(solver);
    if (blas) cublasDestroy(blas);
  }
};

namespace cuda = kernels::cuda;
using cuda::Carving;

// cuSOLVER's potrf of the lower triangle of L (n x n, ld), then LAPACK's info from the factor's
// diagonal (check_potrf_info: cuSOLVER may let a failing pivot through as a NaN) into `info`
// (device memory).
template <class T>
void factor_triangle(StreamSolvers& handles, char uplo, int n, T* L, int ld, int* info, cudaStream_t stream) {
  const int lwork = cuda::vendor::potrf_workspace(handles.solver, uplo, n, L, ld);
  T* work = static_cast<T*>(handles.workspace_of(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), stream));
  cuda::vendor::potrf(handles.solver, uplo, n, L, ld, work, lwork, info);
  cuda::check_potrf_info(n, L, ld, info, stream);
}

// The recursive factorization whose products run on the tensor cores (float only; the plan
// refuses tensor cores for other scalars), its workspace kept between calls while it is small
// enough to keep, as the transposed copies are.
void factor_lower_on_tensor_cores(StreamSolvers& handles, TensorCores cores, int n, float* L, int ld, int* info,
                                  cudaStream_t stream) {
  const cuda::ProductOperands operands = cores == TensorCores::tf32   ? cuda::ProductOperands::tf32
                                         : cores == TensorCores::bf16 ? cuda::ProductOperands::bf16
                                                                      : cuda::ProductOperands::fp16;
  const std::size_t bytes = cuda::potrf_lower_on_tensor_cores_workspace(handles.solver, operands, n);
  std::optional<cuda::StreamBuffer<unsigned char>> own;
  void* workspace = handles.kept_workspace_of(bytes, stream);
  if (!workspace) workspace = own.emplace(bytes, stream).data();
  cuda::potrf_lower_on_tensor_cores(handles.blas, handles.solver, operands, n, L, ld, workspace, info, stream);
}

template <class T>
void factor_lower(StreamSolvers& handles, TensorCores cores, int n, T* L, int ld, int* info, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (cores != TensorCores::off) {
      factor_lower_on_tensor_cores(handles, cores, n, L, ld, info, stream);
      return;
    }
  }
  factor_triangle(handles, 'L', n, L, ld, info, stream);
}

// L's lower triangle (n x n, ld), holding potrf's lower factor, := its matrix's inverse (xPOTRI),
// on `stream` (vendor::invert_from_lower_factor, its workspace kept between calls while it is
// small enough to keep, as the transposed copies are).
template <class T>
void invert_lower(StreamSolvers& handles, bool by_levels, int n, T* L, int ld, cudaStream_t stream) {
  namespace vendor = cuda::vendor;
  Carving c;
  const std::size_t at_inverse = c.place(std::size_t(n) * std::size_t(n), sizeof(T));
  const std::size_t at_work = c.place(by_levels ? vendor::inverse_by_levels_elements(n, n) : 0, sizeof(T));
  const std::size_t at_pointers =
      c.place(by_levels ? std::size_t(vendor::inverse_by_levels_pointers(n)) : 0, sizeof(T*));
  std::optional<cuda::StreamBuffer<unsigned char>> own;
  auto* room = static_cast<unsigned char*>(handles.kept_workspace_of(c.bytes(), stream));
  if (!room) room = own.emplace(c.bytes(), stream).data();
  vendor::invert_from_lower_factor(handles.blas, by_levels, n, L, ld, L, ld, reinterpret_cast<T*>(room + at_inverse), n,
                                   reinterpret_cast<T*>(room + at_work), reinterpret_cast<T**>(room + at_pointers),
                                   stream);
}

// on_lower(M, ld) on the lower triangle of a workspace holding the upper triangle of A (n x n,
// lda) transposed (conjugated: a Hermitian matrix's lower triangle), then that triangle moved back
// into A's upper one, all on `stream`.
template <class T, class OnLower>
void through_transposed_copy(StreamSolvers& handles, int n, T* A, int lda, cudaStream_t stream, OnLower&& on_lower) {
  constexpr int alignment = static_cast<int>(kColumnAlignment<T>);
  const int ld = (n + alignment - 1) / alignment * alignment;
  const std::size_t elements = static_cast<std::size_t>(ld) * static_cast<std::size_t>(n);
  std::optional<cuda::StreamBuffer<T>> own;
  auto* lower = static_cast<T*>(handles.kept_transposed_of(sizeof(T) * elements, stream));
  if (!lower) lower = own.emplace(elements, stream).data();
  cuda::transpose_triangle(cuda::Triangle::lower, n, A, lda, lower, ld, stream);
  on_lower(lower, ld);
  cuda::transpose_triangle(cuda::Triangle::upper, n, lower, ld, A, lda, stream);
}

// on_lower(triangle, M, ld) on the triangle `uplo` of A (n x n, lda), on `stream`: directly on a
// lower one and on a complex upper one, a real upper one through the lower triangle of a
// workspace (through_transposed_copy), as the one task of the runtime does (cuSOLVER's upper
// potrf is much slower than its lower one; docs/user-guide.md, section "GPUs").
template <class T, class OnLower>
void through_lower_triangle(StreamSolvers& handles, Uplo uplo, int n, T* A, int lda, cudaStream_t stream,
                            OnLower&& on_lower) {
  if (uplo == Uplo::lower) {
    on_lower('L', A, lda);
    return;
  }
  if constexpr (kIsComplex<T>) {
    on_lower('U', A, lda);
    return;
  }
  through_transposed_copy(handles, n, A, lda, stream, [&](T* M, int ld) { on_lower('L', M, ld); });
}

// potrf of the triangle `uplo` of A, its info into `info` (device memory), all on `stream`.
template <class T>
void factor(StreamSolvers& handles, TensorCores cores, Uplo uplo, int n, T* A, int lda, int* info,
            cudaStream_t stream) {
  through_lower_triangle(handles, uplo, n, A, lda, stream, [&](char triangle, T* M, int ld) {
    if (triangle == 'L')
      factor_lower(handles, cores, n, M, ld, info, stream);
    else
      factor_triangle(handles, triangle, n, M, ld, info, stream);
  });
}

// The inverse from the factor in the triangle `uplo` of A into that triangle (xPOTRI), on `stream`:
// an upper one, of any scalar type, through a lower copy (invert_lower takes lower factors).
template <class T>
void invert(StreamSolvers& handles, bool by_levels, Uplo uplo, int n, T* A, int lda, cudaStream_t stream) {
  const auto on_lower = [&](T* L, int ld) { invert_lower(handles, by_levels, n, L, ld, stream); };
  if (uplo == Uplo::lower)
    on_lower(A, lda);
  else
    through_transposed_copy(handles, n, A, lda, stream, on_lower);
}

}  // namespace

// The idle handles of each GPU; a call takes a set for itself and gives it back at its end.
class StreamSolverPool {
 public:
  class Lease {
   public:
    Lease(StreamSolverPool& pool, std::unique_ptr<StreamSolvers> handles) : pool_(pool), handles_(std::move(handles)) {}
    ~Lease() { pool_.give_back(std::move(handles_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    StreamSolvers& operator*() const { return *handles_; }
    StreamSolvers* operator->() const { return handles_.get(); }

   private:
    StreamSolverPool& pool_;
    std::unique_ptr<StreamSolvers> handles_;
  };

  // Handles for `device`, which must be current: an idle set, or a new one.
  std::unique_ptr<StreamSolvers> take(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto found =
          std::find_if(idle_.begin(), idle_.end(), [&](const auto& handles) { return handles->device == device; });
      if (found != idle_.end()) {
        std::unique_ptr<StreamSolvers> handles = std::move(*found);
        idle_.erase(found);
        return handles;
      }
    }
    return std::make_unique<StreamSolvers>(device);
  }

 private:
  void give_back(std::unique_ptr<StreamSolvers> handles) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(handles));
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<StreamSolvers>> idle_;
};

StreamSolverPool& RuntimeResources::stream_solvers() const {
  std::lock_guard<std::mutex> lock(stream_solvers_mutex_);
  if (!stream_solvers_) stream_solvers_ = std::make_shared<StreamSolverPool>();
  return *stream_solvers_;
}

namespace {

StreamSolverPool::Lease lease_handles(const Runtime& runtime, int device) {
  StreamSolverPool& pool = runtime.resources().stream_solvers();
  return StreamSolverPool::Lease(pool, pool.take(device));
}

}  // namespace

namespace {

// Whether `stream` is being captured into a graph (the caller's own): a capture of ours would
// allocate memory there, which a capture forbids, and the direct calls are captured as they are.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TESSERA_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

// The handles' graph for T and n where the call is replayed (cores off, `stream` not being
// captured) and one is captured.
template <class T>
const FactorGraph* replayed_graph(StreamSolvers& handles, TensorCores cores, OneMatrixLaunch launch, int n,
                                  cudaStream_t stream) {
  if (launch != OneMatrixLaunch::replayed || cores != TensorCores::off || capturing(stream)) return nullptr;
  return handles.factor_graph<T>(n, stream);
}

static_assert(kThresholds.one_block_potrf_max_n <= cuda::one_block_potrf_max_n &&
              kThresholds.one_block_potrf_max_n_complex_single <= cuda::one_block_potrf_max_n &&
              kThresholds.one_block_potrf_max_n_complex_double <= cuda::one_block_potrf_max_n);

// Whether the call factors a matrix of order n by one thread block (cores off): where the plan
// says so and the GPU's shared memory holds the kernel's, else by cuSOLVER's potrf.
template <class T>
bool in_one_block(TensorCores cores, OneMatrixLaunch launch, int n) {
  return launch == OneMatrixLaunch::one_block && cores == TensorCores::off && cuda::potrf_one_block_fits<T>(n);
}

// A's triangle `uplo` (n x n, lda) := its factor, its info into `info` (device memory), on `stream`:
// by the handles' graph where replayed_graph gives one, else by the calls themselves (factor).
template <class T>
void factor_in_place(StreamSolvers& handles, TensorCores cores, OneMatrixLaunch launch, Uplo uplo, int n, T* A,
                     int lda, int* info, cudaStream_t stream) {
  if (in_one_block<T>(cores, launch, n)) {  // an upper triangle read and written as its transpose
    const long long row = uplo == Uplo::upper ? lda : 1, col = uplo == Uplo::upper ? 1 : lda;
    cuda::potrf_one_block(n, A, row, col, A, row, col, false, info, stream);
    return;
  }
  if (const FactorGraph* graph = replayed_graph<T>(handles, cores, launch, n, stream)) {
    graph->replay(static_cast<const T*>(A), 1, lda, A, lda, uplo == Uplo::upper, false, info, stream);
    return;
  }
  factor(handles, cores, uplo, n, A, lda, info, stream);
}

// L (n x n, ldl) := the factor of the triangle `uplo` of the matrix whose element (i, j) lies at A
// + i * row_stride + j * col_stride, zeros in L's other triangle, its info into `info` (device
// memory), on `stream`: by the handles' graph where replayed_graph gives one, else by the calls
// themselves (the triangle read as a lower one, an upper one through the transposed strides and
// conjugated, loaded into L's lower triangle, factored there, an upper factor moved back).
template <class T>
void factor_into(StreamSolvers& handles, TensorCores cores, OneMatrixLaunch launch, Uplo uplo, int n, const T* A,
                 long long row_stride, long long col_stride, T* L, int ldl, int* info, cudaStream_t stream) {
  const bool upper = uplo == Uplo::upper;
  if (in_one_block<T>(cores, launch, n)) {  // an upper factor written as the transpose of the lower
    cuda::potrf_one_block(n, A, upper ? col_stride : row_stride, upper ? row_stride : col_stride, L, upper ? ldl : 1,
                          upper ? 1 : ldl, true, info, stream);
    return;
  }
  if (const FactorGraph* graph = replayed_graph<T>(handles, cores, launch, n, stream)) {
    graph->replay(A, row_stride, col_stride, L, ldl, upper, true, info, stream);
    return;
  }
  cuda::load_lower(n, A, upper ? col_stride : row_stride, upper ? row_stride : col_stride, L, ldl, upper, stream);
  factor_lower(handles, cores, n, L, ldl, info, stream);
  if (upper) {
    cuda::transpose_triangle(cuda::Triangle::upper, n, L, ldl, L, ldl, stream);
    cuda::zero_opposite_triangle_batched(cuda::BatchUplo::upper, n, L, ldl, 0, 1, stream);
  }
}

}  // namespace

template <class T>
int potrf_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, void* caller_stream,
                            TensorCores cores, OneMatrixLaunch launch) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  factor_in_place(*handles, cores, launch, uplo, n, A, lda, handles->device_info, stream);
  return handles->info_after(stream);
}

template <class T>
void potrf_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, int* info,
                                   void* caller_stream, TensorCores cores, OneMatrixLaunch launch) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  factor_in_place(*handles, cores, launch, uplo, n, A, lda, info, stream);
  handles->enqueued(stream);
}

template <class T>
int potrf_into_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, const T* A, long long row_stride,
                                 long long col_stride, T* L, int ldl, void* caller_stream, TensorCores cores,
                                 OneMatrixLaunch launch) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  factor_into(*handles, cores, launch, uplo, n, A, row_stride, col_stride, L, ldl, handles->device_info, stream);
  return handles->info_after(stream);
}

template <class T>
void potrf_into_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* A,
                                        long long row_stride, long long col_stride, T* L, int ldl, int* info,
                                        void* caller_stream, TensorCores cores, OneMatrixLaunch launch) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  factor_into(*handles, cores, launch, uplo, n, A, row_stride, col_stride, L, ldl, info, stream);
  handles->enqueued(stream);
}

template <class T>
void potri_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, T* A, int lda, void* caller_stream,
                             bool by_levels) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  invert(*handles, by_levels, uplo, n, A, lda, stream);
  handles->enqueued(stream);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void potri_into_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* L,
                                        long long row_stride, long long col_stride, T* X, int ldx, int* info,
                                        void* caller_stream, bool by_levels) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  // An upper factor U read as L = U^H (the same matrix U^H U = L L^H, so the same inverse).
  const bool upper = uplo == Uplo::upper;
  cuda::load_lower(n, L, upper ? col_stride : row_stride, upper ? row_stride : col_stride, X, ldx, upper, stream);
  invert_lower(*handles, by_levels, n, X, ldx, stream);
  // The info from the factor's diagonal, read from the factor itself.
  cuda::finish_inverse(n, L, row_stride + col_stride, X, ldx, info, stream);
  handles->enqueued(stream);
}

template <class T>
void potrf_stack_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, const T* A,
                                         long long row_stride, long long col_stride, long long strideA, T* L, int ldl,
                                         long long strideL, int batch, int* info, void* caller_stream,
                                         StackLaunch launch) {
  if (n <= 0 || batch <= 0) return;
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const bool upper = uplo == Uplo::upper;
  if (launch == StackLaunch::one_block && cuda::potrf_one_block_fits<T>(n)) {
    // an upper factor written as the transpose of the lower (factor_into's one-block form)
    cuda::potrf_one_block_stack(n, batch, A, upper ? col_stride : row_stride, upper ? row_stride : col_stride, strideA,
                                L, upper ? ldl : 1, upper ? 1 : ldl, strideL, true, info, stream);
    return;
  }
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  // The triangle read as a lower one: an upper one through the transposed strides (and
  // conjugated: a Hermitian matrix's lower triangle).
  cuda::load_lower_batched(n, A, upper ? col_stride : row_stride, upper ? row_stride : col_stride, strideA, L, ldl,
                           strideL, batch, upper, stream);
  if (launch == StackLaunch::in_blocks) {
    kernels::cuda::BatchedOptions zeros_above;  // as load_lower_batched left them
    zeros_above.blocked_zero_opposite = true;
    kernels::cuda::potrf_batched_blocked<T>(handles->blas, kernels::cuda::BatchUplo::lower, n, L, ldl, strideL, batch,
                                            info, stream, zeros_above);
  } else if (StackGraph* graph = handles->stack_graph<T>(n, ldl, batch, stream)) {
    // cuSOLVER takes the matrices as a device array of pointers, made on the stream.
    cuda::strided_pointers(L, strideL, batch, static_cast<T**>(graph->pointers), stream);
    TESSERA_CUDA_CHECK(cudaGraphLaunch(graph->exec, stream));
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(info, graph->info, sizeof(int) * static_cast<std::size_t>(batch), cudaMemcpyDeviceToDevice, stream));
  } else {
    T** const device_pointers = handles->pointers_for<T>(batch, stream);
    cuda::strided_pointers(L, strideL, batch, device_pointers, stream);
    cuda::vendor::potrf_batched(handles->solver, 'L', n, device_pointers, ldl, info, batch);
  }
  cuda::check_potrf_info_batched(n, L, ldl, strideL, batch, info, stream);
  if (upper) {
    cuda::transpose_triangle_batched(cuda::Triangle::upper, n, L, ldl, strideL, L, ldl, strideL, batch, stream);
    kernels::cuda::zero_opposite_triangle_batched(kernels::cuda::BatchUplo::upper, n, L, ldl, strideL, batch, stream);
  }
  handles->enqueued(stream);
}

namespace {

// The two triangular solves of A^{-1} B with potrf's factor in the triangle `uplo`: A = L L^H gives
// L^H X = L^{-1} B, A = U^H U gives U X = U^{-H} B.
struct FactorSolves {
  char triangle;
  Trans first, second;
};
FactorSolves factor_solves(Uplo uplo) {
  const bool lower = uplo == Uplo::lower;
  return {lower ? 'L' : 'U', lower ? Trans::no : Trans::conjugate_transpose,
          lower ? Trans::conjugate_transpose : Trans::no};
}

// B := A^{-1} B with potrf's factor in the triangle `uplo` of A, enqueued with the handles' BLAS.
template <class T>
void solve_with_factor(StreamSolvers& handles, Uplo uplo, int n, int nrhs, const T* A, int lda, T* B, int ldb) {
  const FactorSolves s = factor_solves(uplo);
  for (Trans trans : {s.first, s.second})
    cuda::vendor::trsm(handles.blas, true, s.triangle, trans, n, nrhs, T(1), A, lda, B, ldb);
}

}  // namespace

template <class T>
void potrs_on_callers_stream(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A, int lda, T* B,
                             int ldb, void* caller_stream) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  solve_with_factor(*handles, uplo, n, nrhs, A, lda, B, ldb);
  handles->enqueued(stream);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void potrs_stack_on_callers_stream_async(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A,
                                         int lda, long long strideA, T* B, int ldb, long long strideB, int batch,
                                         void* caller_stream) {
  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  if (batch == 1) {
    solve_with_factor(*handles, uplo, n, nrhs, A, lda, B, ldb);
  } else {
    // cuBLAS's batched trsm, twice, on arrays of pointers made on the stream.
    T** const pointers = handles->pointers_for<T>(2 * batch, stream);
    cuda::strided_pointers(const_cast<T*>(A), strideA, batch, pointers, stream);
    cuda::strided_pointers(B, strideB, batch, pointers + batch, stream);
    const FactorSolves s = factor_solves(uplo);
    for (Trans trans : {s.first, s.second})
      cuda::vendor::trsm_batched(handles->blas, s.triangle, trans, n, nrhs, T(1), pointers, lda, pointers + batch, ldb,
                                 batch);
  }
  handles->enqueued(stream);
}


// ---- RefinementOnStream ------------------------------------------------------------------------

namespace {

// One device buffer of doubles for a convergence check's results: 2 nrhs + 1 doubles (the largest
// magnitudes), then 2 nrhs + 1 ints (the non-finite marks, the flags) in the doubles after them.
struct CheckLayout {
  explicit CheckLayout(int nrhs)
      : largest(2 * std::size_t(nrhs) + 1), ints(2 * std::size_t(nrhs) + 1),
        doubles(largest + (ints * sizeof(int) + sizeof(double) - 1) / sizeof(double)) {}
  int* marks(double* buffer) const { return reinterpret_cast<int*>(buffer + largest); }
  std::size_t largest, ints, doubles;
};

}  // namespace

template <class T>
struct RefinementOnStream<T>::State {
  using Single = SingleOf<T>;
  int device;
  char uplo;
  int n, nrhs;
  const T* A;
  int lda;
  const T* B;
  int ldb;
  T* X;
  int ldx;
  cudaStream_t stream;
  // Held for the whole solve: its kept workspace holds every buffer below.
  StreamSolverPool::Lease handles;
  bool tf32_products;  // a tensor-core factor: its block inverses and the solves' products by TF32
  bool inverted = false;  // the block inverses made
  CheckLayout layout;
  // Carved from one allocation, kept with the handles between solves where it fits (as an upper
  // matrix's lower copy is): a solve then neither maps fresh GPU memory nor releases it.
  std::optional<cuda::StreamBuffer<unsigned char>> own_room;  // where it is not kept
  Single* single = nullptr;   // S A S, n x n
  Single* rhs = nullptr;      // S R in single precision, n x nrhs
  Single* forward = nullptr;  // L^{-1} S R, n x nrhs
  // The factor's diagonal blocks inverted (vendor::invert_lower_diagonal_blocks), once factored,
  // and the levels' workspace for it.
  Single* block_inverses = nullptr;
  Single* levels_work = nullptr;
  Single** levels_pointers = nullptr;
  T* residual = nullptr;          // n x nrhs
  T* residual_shares = nullptr;   // symmetric_residual's, where it takes nrhs columns
  double* scale = nullptr;        // S's diagonal
  double* row_sums = nullptr;     // of |A|, for its infinity norm
  // What a convergence check reads back, in one buffer read by one copy (CheckLayout).
  double* check = nullptr;
  double* largest = nullptr;  // per column: max |r|, then max |x|; then the largest row sum
  int* non_finite = nullptr;  // per column: in B, then in X
  int* flags = nullptr;       // the narrowing's
  std::optional<std::vector<int>> b_non_finite;  // read once
  std::vector<char> columns_converged;            // by the last convergence check
  // GMRES-IR's Krylov space (krylov_begin): the basis, n x (krylov_steps + 1), A v_k, and the
  // sums a step reads back (CGS2's two passes' coefficients, then w^H w).
  std::optional<cuda::StreamBuffer<T>> krylov_room;
  int krylov_steps = 0;
  const T* krylov_rhs = nullptr;  // the residual's column
  T* krylov_solution = nullptr;   // X's column
  T* basis = nullptr;
  T* product = nullptr;
  T* sums = nullptr;

  State(const Runtime& rt, int dev, Uplo u, int n_, int nrhs_, const T* A_, int lda_, const T* B_, int ldb_, T* X_,
        int ldx_, cudaStream_t s, bool tf32)
      : device(dev), uplo(u == Uplo::lower ? 'L' : 'U'), n(n_), nrhs(nrhs_), A(A_), lda(lda_), B(B_), ldb(ldb_),
        X(X_), ldx(ldx_), stream(s), handles(lease_handles(rt, dev)), tf32_products(tf32), layout(nrhs_) {
    handles->bind(stream);
    carve_room();
  }

  void carve_room() {
    namespace vendor = cuda::vendor;
    const std::size_t columns = std::size_t(n) * std::size_t(nrhs), order = std::size_t(n);
    Carving c;
    const std::size_t at_single = c.place(order * order, sizeof(Single));
    const std::size_t at_rhs = c.place(columns, sizeof(Single)), at_forward = c.place(columns, sizeof(Single));
    const std::size_t at_inverses = c.place(vendor::inverse_blocks_elements(n), sizeof(Single));
    const std::size_t at_levels = c.place(vendor::inverse_by_levels_elements(n, vendor::kInverseBlock), sizeof(Single));
    const std::size_t at_pointers = c.place(std::size_t(vendor::inverse_by_levels_pointers(n)), sizeof(Single*));
    const std::size_t at_residual = c.place(columns, sizeof(T));
    const std::size_t at_shares =
        c.place(one_pass_residual() ? cuda::symmetric_residual_workspace(n, nrhs) : 0, sizeof(T));
    const std::size_t at_scale = c.place(order, sizeof(double)), at_sums = c.place(order, sizeof(double));
    const std::size_t at_check = c.place(layout.doubles, sizeof(double));
    auto* room = static_cast<unsigned char*>(handles->kept_transposed_of(c.bytes(), stream));
    if (!room) room = own_room.emplace(c.bytes(), stream).data();
    single = reinterpret_cast<Single*>(room + at_single);
    rhs = reinterpret_cast<Single*>(room + at_rhs);
    forward = reinterpret_cast<Single*>(room + at_forward);
    block_inverses = reinterpret_cast<Single*>(room + at_inverses);
    levels_work = reinterpret_cast<Single*>(room + at_levels);
    levels_pointers = reinterpret_cast<Single**>(room + at_pointers);
    residual = reinterpret_cast<T*>(room + at_residual);
    residual_shares = reinterpret_cast<T*>(room + at_shares);
    scale = reinterpret_cast<double*>(room + at_scale);
    row_sums = reinterpret_cast<double*>(room + at_sums);
    check = reinterpret_cast<double*>(room + at_check);
    largest = check;
    non_finite = layout.marks(check);
    flags = non_finite + 2 * nrhs;
  }
  // The residual by Tessera's kernel, which reads A's triangle once, up to the columns it takes in
  // one pass; cuBLAS's blocked products past them.
  bool one_pass_residual() const { return nrhs <= cuda::symmetric_residual_most_columns<T>(); }
  // Marks the end of the handles' use (StreamSolvers::enqueued, which may throw).
  ~State() { cudaEventRecord(handles->done, stream); }

  void clear_flags() const { TESSERA_CUDA_CHECK(cudaMemsetAsync(flags, 0, sizeof(int), stream)); }

  // out (+)= S A_s^{-1} S in (cols columns), A_s = L L^H the single-precision factor: L^{-H} L^{-1}
  // through the inverses of L's diagonal blocks (made once, after the factorization). The handles
  // are bound again: the factorization between may have used the stream with others. A value of
  // S in beyond single precision sets the flags' kScaledOverflow.
  void apply_single_inverse(int cols, const T* in, int ldin, T* out, int ldout, bool add) {
    namespace vendor = cuda::vendor;
    cuda::narrow_scaled(n, cols, scale, in, ldin, rhs, n, flags, stream);
    handles->bind(stream);
    if (!inverted) {
      vendor::invert_lower_diagonal_blocks(handles->blas, tf32_products, n, single, n, block_inverses, levels_work,
                                           levels_pointers, stream);
      inverted = true;
    }
    vendor::solve_lower_by_block_inverses(handles->blas, Trans::no, n, cols, single, n, block_inverses, rhs, n,
                                          forward, n, tf32_products);
    vendor::solve_lower_by_block_inverses(handles->blas, Trans::conjugate_transpose, n, cols, single, n,
                                          block_inverses, forward, n, rhs, n, tf32_products);
    cuda::widen_scaled(add, n, cols, scale, rhs, n, out, ldout, stream);
  }

  T* basis_column(int k) const { return basis + std::size_t(n) * std::size_t(k); }
  // w := w - V V^H w over the basis' first `count` columns, twice (CGS2: as orthogonal as modified
  // Gram-Schmidt's, in products with the whole basis); the passes' coefficients to sums[0, count)
  // and sums[krylov_steps + 1, ...), then w^H w to sums[2 (krylov_steps + 1)].
  void orthogonalise(int count, T* w) const {
    namespace vendor = cuda::vendor;
    const std::size_t stride = std::size_t(krylov_steps) + 1;
    for (int pass = 0; pass < 2 && count > 0; ++pass) {
      T* coefficients = sums + pass * stride;
      vendor::gemv(handles->blas, Trans::conjugate_transpose, n, count, T(1), basis, n, w, T(0), coefficients);
      vendor::gemv(handles->blas, Trans::no, n, count, T(-1), basis, n, coefficients, T(1), w);
    }
    vendor::gemv(handles->blas, Trans::conjugate_transpose, n, 1, T(1), w, n, w, T(0), sums + 2 * stride);
  }
  // The step's sums (orthogonalise's) once the stream is done; false where a preconditioner's
  // input overflowed single precision since krylov_start.
  bool read_sums(std::vector<T>* host) const {
    host->resize(2 * (std::size_t(krylov_steps) + 1) + 1);
    int flag = 0;
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(host->data(), sums, sizeof(T) * host->size(), cudaMemcpyDeviceToHost, stream));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&flag, flags, sizeof(int), cudaMemcpyDeviceToHost, stream));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return !(flag & cuda::kScaledOverflow);
  }
  // v := v / ||v|| from orthogonalise's w^H w (in `host`, a sum of squares: its values are
  // bounded by the preconditioned operator's norm); the norm (NaN where w^H w is).
  double normalise(T* v, const std::vector<T>& host) const {
    const double norm = std::sqrt(std::real(host.back()));
    if (norm > 0 && std::isfinite(norm)) cuda::vendor::scal(handles->blas, n, 1 / norm, v);
    return norm;
  }
  // The host's copy of `count` values once the work on the stream is done.
  template <class V>
  std::vector<V> read(const V* values, std::size_t count) const {
    std::vector<V> host(count);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(host.data(), values, sizeof(V) * count, cudaMemcpyDeviceToHost, stream));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }
};

template <class T>
RefinementOnStream<T>::RefinementOnStream(const Runtime& runtime, int device, Uplo uplo, int n, int nrhs, const T* A,
                                          int lda, const T* B, int ldb, T* X, int ldx, void* stream,
                                          bool factor_on_tensor_cores) {
  const CurrentDevice current(device);
  state_ = std::make_unique<State>(runtime, device, uplo, n, nrhs, A, lda, B, ldb, X, ldx,
                                   static_cast<cudaStream_t>(stream), factor_on_tensor_cores);
}

template <class T>
RefinementOnStream<T>::~RefinementOnStream() {
  if (!state_) return;
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(state_->device) == cudaSuccess;
  state_.reset();
  if (switched) cudaSetDevice(previous);
}

template <class T>
typename RefinementOnStream<T>::Single* RefinementOnStream<T>::single_matrix() const {
  return state_->single;
}
template <class T>
int RefinementOnStream<T>::single_ld() const {
  return state_->n;
}
template <class T>
typename RefinementOnStream<T>::Single* RefinementOnStream<T>::diagonal_block_inverses() const {
  return state_->block_inverses;
}
template <class T>
void RefinementOnStream<T>::note_diagonal_block_inverses_made() {
  state_->inverted = true;
}

template <class T>
typename RefinementOnStream<T>::Narrowing RefinementOnStream<T>::narrow_matrix() {
  State& s = *state_;
  const CurrentDevice current(s.device);
  s.clear_flags();
  cuda::scale_and_narrow(s.uplo, s.n, s.A, s.lda, s.scale, s.single, s.n, s.row_sums, s.flags, s.stream);
  const int flags = s.read(s.flags, 1)[0];
  if (flags & cuda::kDiagonalNotPositive) return Narrowing::diagonal_not_positive;
  if (flags & cuda::kScaledOverflow) return Narrowing::overflowed;
  return Narrowing::done;
}

template <class T>
double RefinementOnStream<T>::convergence_bound() {
  State& s = *state_;
  const CurrentDevice current(s.device);
  cuda::largest_magnitudes(s.n, 1, s.row_sums, s.n, s.largest, s.stream);
  return s.read(s.largest, 1)[0] * DBL_EPSILON * std::sqrt(double(s.n));
}

template <class T>
void RefinementOnStream<T>::correct(bool first) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  s.clear_flags();
  s.apply_single_inverse(s.nrhs, first ? s.B : s.residual, first ? s.ldb : s.n, s.X, s.ldx, !first);
}

template <class T>
typename RefinementOnStream<T>::Convergence RefinementOnStream<T>::converged(double bound, double* progress) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  if (s.one_pass_residual()) {
    cuda::symmetric_residual(s.uplo, s.n, s.nrhs, s.A, s.lda, s.X, s.ldx, s.B, s.ldb, s.residual, s.n,
                             s.residual_shares, s.stream);
  } else {
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(s.residual, sizeof(T) * s.n, s.B, sizeof(T) * s.ldb, sizeof(T) * s.n,
                                         s.nrhs, cudaMemcpyDeviceToDevice, s.stream));
    cuda::vendor::subtract_symmetric_product(s.handles->blas, s.uplo, s.n, s.nrhs, s.A, s.lda, s.X, s.ldx,
                                             s.residual, s.n);
  }
  cuda::largest_magnitudes(s.n, s.nrhs, s.residual, s.n, s.largest, s.stream);
  cuda::largest_magnitudes(s.n, s.nrhs, s.X, s.ldx, s.largest + s.nrhs, s.stream);
  if (!s.b_non_finite) cuda::mark_non_finite_columns(s.n, s.nrhs, s.B, s.ldb, s.non_finite, s.stream);
  cuda::mark_non_finite_columns(s.n, s.nrhs, s.X, s.ldx, s.non_finite + s.nrhs, s.stream);
  const std::vector<double> checked = s.read(s.check, s.layout.doubles);
  std::vector<int> marks(s.layout.ints);
  std::memcpy(marks.data(), checked.data() + s.layout.largest, sizeof(int) * marks.size());
  if (marks[2 * std::size_t(s.nrhs)] & cuda::kScaledOverflow) return Convergence::overflowed;
  if (!s.b_non_finite) s.b_non_finite.emplace(marks.begin(), marks.begin() + s.nrhs);
  const int* x_non_finite = marks.data() + s.nrhs;
  const double* largest = checked.data();
  for (int j = 0; j < s.nrhs; ++j)
    if (x_non_finite[std::size_t(j)] && !(*s.b_non_finite)[std::size_t(j)]) return Convergence::diverged;
  s.columns_converged.assign(std::size_t(s.nrhs), 1);
  if (progress) *progress = 0;
  for (int j = 0; j < s.nrhs; ++j) {
    // A NaN passes, as in LAPACK.
    if (largest[j] > largest[s.nrhs + j] * bound) s.columns_converged[std::size_t(j)] = 0;
    if (progress) *progress = std::max(*progress, largest[j] / largest[s.nrhs + j]);
  }
  const bool all = std::all_of(s.columns_converged.begin(), s.columns_converged.end(), [](char c) { return c != 0; });
  return all ? Convergence::converged : Convergence::refining;
}

template <class T>
bool RefinementOnStream<T>::column_converged(int j) const {
  return state_->columns_converged.at(std::size_t(j)) != 0;
}

template <class T>
void RefinementOnStream<T>::krylov_begin(int column, int max_steps) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  const int steps = std::max(1, std::min(max_steps, s.n));
  if (!s.krylov_room || s.krylov_steps != steps) {
    s.krylov_room.reset();
    const std::size_t order = std::size_t(s.n), stride = std::size_t(steps) + 1;
    s.krylov_room.emplace(order * stride + order + 2 * stride + 1, s.stream);
    s.krylov_steps = steps;
    s.basis = s.krylov_room->data();
    s.product = s.basis + order * stride;
    s.sums = s.product + order;
  }
  s.krylov_rhs = s.residual + std::size_t(s.n) * std::size_t(column);
  s.krylov_solution = s.X + std::size_t(s.ldx) * std::size_t(column);
  s.handles->bind(s.stream);
}

template <class T>
bool RefinementOnStream<T>::krylov_start(double* beta) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  s.clear_flags();
  s.apply_single_inverse(1, s.krylov_rhs, s.n, s.basis_column(0), s.n, false);
  s.orthogonalise(0, s.basis_column(0));
  std::vector<T> sums;
  if (!s.read_sums(&sums)) return false;
  *beta = s.normalise(s.basis_column(0), sums);
  return true;
}

template <class T>
bool RefinementOnStream<T>::krylov_extend(int k, T* column) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  cuda::vendor::symm(s.handles->blas, s.uplo, s.n, 1, T(1), s.A, s.lda, s.basis_column(k), s.n, T(0), s.product, s.n);
  T* w = s.basis_column(k + 1);
  s.apply_single_inverse(1, s.product, s.n, w, s.n, false);
  s.orthogonalise(k + 1, w);
  std::vector<T> sums;
  if (!s.read_sums(&sums)) return false;
  const std::size_t stride = std::size_t(s.krylov_steps) + 1;
  for (int i = 0; i <= k; ++i) column[i] = sums[std::size_t(i)] + sums[stride + std::size_t(i)];
  column[k + 1] = T(s.normalise(w, sums));
  return true;
}

template <class T>
void RefinementOnStream<T>::krylov_add_combination(int k, const T* y) {
  State& s = *state_;
  const CurrentDevice current(s.device);
  if (k == 0) return;
  // y to the sums' room (from pageable memory: staged before the call returns), then x += V y.
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(s.sums, y, sizeof(T) * std::size_t(k), cudaMemcpyHostToDevice, s.stream));
  cuda::vendor::gemv(s.handles->blas, Trans::no, s.n, k, T(1), s.basis, s.n, s.sums, T(1), s.krylov_solution);
}

template class RefinementOnStream<double>;
template class RefinementOnStream<std::complex<double>>;

#define TESSERA_INSTANTIATE(T)                                                                                         \
  template int potrf_on_callers_stream<T>(const Runtime&, int, Uplo, int, T*, int, void*, TensorCores,                \
                                          OneMatrixLaunch);                                                            \
  template int potrf_into_on_callers_stream<T>(const Runtime&, int, Uplo, int, const T*, long long, long long, T*,     \
                                               int, void*, TensorCores, OneMatrixLaunch);                              \
  template void potrf_into_on_callers_stream_async<T>(const Runtime&, int, Uplo, int, const T*, long long, long long,  \
                                                      T*, int, int*, void*, TensorCores, OneMatrixLaunch);             \
  template void potrf_on_callers_stream_async<T>(const Runtime&, int, Uplo, int, T*, int, int*, void*, TensorCores,   \
                                                 OneMatrixLaunch);                                                     \
  template void potri_on_callers_stream<T>(const Runtime&, int, Uplo, int, T*, int, void*, bool);                      \
  template void potri_into_on_callers_stream_async<T>(const Runtime&, int, Uplo, int, const T*, long long, long long,  \
                                                      T*, int, int*, void*, bool);                                     \
  template void potrs_on_callers_stream<T>(const Runtime&, int, Uplo, int, int, const T*, int, T*, int, void*);        \
  template void potrs_stack_on_callers_stream_async<T>(const Runtime&, int, Uplo, int, int, const T*, int, long long,  \
                                                       T*, int, long long, int, void*);                                \
  template void potrf_stack_on_callers_stream_async<T>(const Runtime&, int, Uplo, int, const T*, long long, long long, \
                                                       long long, T*, int, long long, int, int*, void*,         \
                                                       StackLaunch);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::detail

#endif
