// Every threshold a plan compares against, in one table. Each was chosen from measurements that
// docs/performance.md lists ("The measurements behind the thresholds"): measure again, and change
// them there and here together.
#pragma once

namespace tessera::detail {

struct Thresholds {
  // Mode::automatic: GPUs holding at least this share of the estimated FP64 throughput run gpu
  // mode (a task a CPU takes blind costs more than the CPUs add); below it, hybrid.
  double gpu_only_share = 0.9;

  // Default tile sizes (see default_tile_size). CPU tiles stay in one core's caches and leave
  // tasks for every worker; a few workers (cpu_few_workers or fewer, n >= cpu_few_workers_from)
  // need fewer tasks and run BLAS faster on larger tiles.
  int cpu_nb_large_from = 8000, cpu_nb_large = 384;
  int cpu_nb_medium_from = 2000, cpu_nb_medium = 256;
  int cpu_nb_small_from = 500, cpu_nb_small = 128;
  int cpu_nb_tiny = 64;
  int cpu_few_workers = 4, cpu_few_workers_from = 2000, cpu_few_workers_nb = 384;
  // GPU tiles are large enough for the trailing gemm to run near peak and shrink for small n so
  // that the DAG keeps its parallelism; gpu mode keeps more tiles in flight, so it takes the
  // largest tile from a smaller n than hybrid. Single precision takes tiles twice as large (up to
  // gpu_nb_largest): the same tile keeps the GPU busy for half as long.
  int gpu_nb_largest_from_gpu_mode = 12000, gpu_nb_largest_from_hybrid = 24000, gpu_nb_largest = 2048;
  int gpu_nb_large_from = 6000, gpu_nb_large = 1024;
  int gpu_nb_medium_from = 2000, gpu_nb_medium = 512;
  int gpu_nb_small = 256;

  // LAPACK on the calling thread (with the program's BLAS threads) instead of tasks: a host-array
  // request (one matrix or a batch) doing at most the arithmetic of one factorization of order
  // calling_thread_max_n (see calling_thread_max_n_without_gpus), with its mode (cpu or auto),
  // tile size, grain and chunk left to Tessera and no trace, runs with no task and needs no
  // runtime: there the runtime's latency exceeds the arithmetic.
  int calling_thread_max_n = 384;
  // One matrix that no GPU could take (the machine has none, or cpu mode is asked for) runs there
  // up to a larger order, where OpenBLAS's own threaded potrf beats the task graph at every core
  // count measured; beyond it its upper potrf (a C-ordered array's) falls behind.
  int calling_thread_max_n_without_gpus = 2000;
  // Matrices below this order on the calling thread are factored and solved with one BLAS thread:
  // OpenBLAS threads the factorization of even a 64 x 64 matrix, which then takes longer. Above
  // calling_thread_max_n, so that every matrix the calling thread factors runs on one thread.
  int calling_thread_threaded_blas_from_n = 448;
  // A stack of them is split over at most as many threads as the program gives BLAS, each part on
  // one BLAS thread and doing at least the arithmetic of one factorization of this order.
  int calling_thread_split_from_n = 160;
  // From this order the calling thread factors an upper triangle as the lower factor of its
  // adjoint (swapped in place): on one thread OpenBLAS's upper potrf is the slower by more than the
  // swaps cost. Not where the call has several BLAS threads (from
  // calling_thread_threaded_blas_from_n, unless a runtime or other threads leave it one CPU), where
  // the gap is smaller than the swaps.
  int calling_thread_upper_as_lower_from_n = 64;
  // Not in complex double: there the two potrfs took about the same time on one thread at every
  // order measured, less than the two swaps (which cost most where the columns lie 4 KB apart). In
  // complex single not from calling_thread_threaded_blas_from_n: there, on one thread, the swaps
  // took about what they saved.
  bool calling_thread_upper_as_lower_complex_double = false;
  bool calling_thread_upper_as_lower_complex_single_threaded_orders = false;
  constexpr bool calling_thread_upper_as_lower(bool complex, bool complex_double, int n) const {
    if (n < calling_thread_upper_as_lower_from_n) return false;
    if (complex_double) return calling_thread_upper_as_lower_complex_double;
    return !complex || n < calling_thread_threaded_blas_from_n || calling_thread_upper_as_lower_complex_single_threaded_orders;
  }
  // Up to these orders the calling thread factors a matrix with Tessera's unblocked potf2
  // (kernels/cpu/small_potrf.hpp) instead of a call into LAPACK, whose fixed cost per call exceeds
  // the arithmetic there (a stack of thousands of tiny matrices pays it per matrix); beyond them
  // OpenBLAS's vectorized kernels win (sooner for the lower triangle and the complex types).
  int calling_thread_unblocked_potrf_max_n_real_lower = 24;
  int calling_thread_unblocked_potrf_max_n_real_upper = 48;
  int calling_thread_unblocked_potrf_max_n_complex = 16;
  constexpr int calling_thread_unblocked_potrf_max_n(bool complex, bool upper) const {
    if (complex) return calling_thread_unblocked_potrf_max_n_complex;
    return upper ? calling_thread_unblocked_potrf_max_n_real_upper : calling_thread_unblocked_potrf_max_n_real_lower;
  }
  // The same for the inverse from the factor (xPOTRI: two LAPACK calls, the triangle's inverse and
  // its product with its adjoint; kernels/cpu/small_potri.hpp), in both triangles.
  int calling_thread_unblocked_potri_max_n_real = 40;
  int calling_thread_unblocked_potri_max_n_complex = 16;
  constexpr int calling_thread_unblocked_potri_max_n(bool complex) const {
    return complex ? calling_thread_unblocked_potri_max_n_complex : calling_thread_unblocked_potri_max_n_real;
  }

  // One vendor call instead of a tile DAG. A matrix in one GPU's memory (the device API) up to
  // this order is factored by the vendor's potrf on the matrix itself: below it the DAG's chain of
  // steps pays the runtime's latency at each.
  int whole_device_matrix_max_n = 16384;
  // Such a call's launches on the caller's stream (an out-of-place factorization: the triangle
  // loaded, cuSOLVER's potrf, the info checked) up to this order are one CUDA graph, replayed from
  // the second call of an order on: there launching them one by one takes longer on the host than
  // they run on the GPU.
  int replayed_launches_max_n = 512;
  // ... and one up to these orders is factored by one thread block in one launch
  // (kernels::cuda::potrf_one_block: its whole triangle in shared memory, a warp factoring each
  // diagonal block while the others follow and update ahead), which took less time than cuSOLVER's
  // potrf at every order from 32 to 192 in the real types and complex single, to 128 in complex
  // double (H100); the kernel holds at most 192, complex double's shared memory 128.
  int one_block_potrf_max_n = 192;
  int one_block_potrf_max_n_complex_single = 192;
  int one_block_potrf_max_n_complex_double = 128;
  // The same for the inverse from a factor in GPU memory (device::potri, potri_ex): the factor's
  // triangular inverse W and the product W^H W on the matrix itself (cuBLAS on the caller's stream,
  // vendor::invert_from_lower_factor) up to this order, the tile DAG of the triangular inverse and
  // its product above, where the DAG overtakes the one call.
  int whole_device_inverse_max_n = 8192;
  // A factorization on the tensor cores with 16-bit operands (FP16, BF16) of a matrix in one GPU's
  // memory from this order is recursive on the caller's stream
  // (kernels::cuda::potrf_lower_on_tensor_cores), below it the tile DAG: the recursion's FP32
  // leaves run one after another, where the DAG overlaps its diagonal steps with products, which
  // costs more than the recursion's wider products gain until the products dominate. TF32's
  // products, four times as slow, dominate at every order: the tile DAG.
  int tensor_core_recursive_min_n = 30000;
  // That triangular inverse by one solve of the identity up to this order, by levels above
  // (vendor::invert_lower_by_levels): above it the solve's steps through the whole triangle take
  // longer than the levels' few wide launches, in each scalar type.
  int triangle_inverse_by_solve_max_n = 192;
  // A tile matrix whose lower tiles are all on the runtime's one GPU, up to this order, is
  // gathered into one matrix for one vendor call, when the gathered copy takes at most this share
  // of the memory the runtime may use on the GPU.
  int whole_resident_tiles_max_n = 10240;
  double whole_resident_tiles_memory_share = 0.25;

  // A stack of matrices in GPU memory (Python's arrays): orders below dense_device_min_n go to the
  // batched kernels (a thread block per matrix), except a stack of fewer than short_stack_max_batch
  // matrices from order short_stack_min_n, which cuSOLVER's batched potrf factors in one call
  // (device::potrf_stack_ex, a captured graph from the second call on a stack of the same shape),
  // and one matrix (a 2-D array) from order single_matrix_vendor_min_n, which the dense device API
  // factors (device::potrf_ex: one_block_potrf_max_n, then cuSOLVER's potrf). A block factors one matrix in the same time however few run beside
  // it, so the kernels win only once the stack is long enough, or the matrices small enough;
  // complex stacks reach the vendor's side sooner, a complex element taking the registers of two
  // real ones. From dense_device_min_n each matrix is one dense call after the other.
  int dense_device_min_n = 1024;
  int short_stack_min_n = 192;
  int complex_double_short_stack_min_n = 96;
  int complex_single_short_stack_min_n = 160;
  // One real matrix: the dense device API from order 48; against cuSOLVER's potrf, its launches
  // replayed as one graph (replayed_launches_max_n), the batched kernels were the faster up to 40,
  // level at 48 and the slower from 56 (H100, through Python's short route); the device API now
  // runs the one-block kernel there (one_block_potrf_max_n).
  int single_matrix_vendor_min_n = 48;
  // One complex matrix: the dense device API from these orders (the one-block kernel, then
  // cuSOLVER's potrf), the batched kernel below them.
  int complex_double_single_matrix_vendor_min_n = 48;
  int complex_single_single_matrix_vendor_min_n = 56;
  int short_stack_max_batch = 384;
  // A stack of matrices from one_block_stack_min_n up to the one-block orders of its type
  // (one_block_potrf_max_n and its complex forms) goes to the one-block kernel, a thread block per
  // matrix, when it has at most one_block_stack_max_batch matrices (a block on each of an H100's
  // multiprocessors), or fewer than short_stack_max_batch from order one_block_short_stack_min_n:
  // there it took less time than the batched kernels and cuSOLVER's batched potrf in every type
  // (H100, stacks of 8 to 384); from 264 matrices below order 96 the batched kernels won. Real
  // double keeps its blocks of columns from blocked_stack_min_n_double.
  int one_block_stack_min_n = 32;
  int one_block_stack_max_batch = 132;
  int one_block_short_stack_min_n = 96;
  // The batched solve kernels (a thread block per matrix) take long stacks (from
  // short_stack_max_batch matrices) whose matrices have at most this many right-hand sides each;
  // more go through the vendor's batched solves, whose advantage grows with the count.
  int batched_solve_max_nrhs = 4;
  // ... or, up to this order, any number: there the lane kernel (a thread per right-hand side)
  // outruns the vendor's batched solves at every count; above it the vendor's win for all but the
  // largest counts.
  int batched_lane_solve_max_n = 64;
  // ... and whose order is at most this; larger orders go through the vendor's batched solves,
  // the faster there in nearly every case measured.
  int batched_solve_max_n = 256;
  // Long complex stacks take the kernels up to this order, for any number of right-hand sides, and
  // the vendor's batched solves past it, which are the faster there at most counts.
  int complex_batched_solve_max_n = 64;
  // A batched refined solve (device::posv_refined_batched) refines single-precision solutions only
  // on a GPU whose single-precision arithmetic runs at least this many times as fast as its double
  // (CUDA's single-to-double performance ratio); elsewhere every matrix is solved in double
  // precision at once (ITER -1): the small matrices are bound by memory, which the residuals read
  // in double precision at every step, and where single precision runs little faster than double
  // the refinement's steps cannot repay themselves.
  int batched_refinement_min_single_to_double_ratio = 8;
  // Real stacks from these orders (below dense_device_min_n) are factored in blocks of columns
  // (device::potrf_stack_ex: cuBLAS's batched products update each block, the batched kernel
  // factors it), which from these orders beats both the kernel alone and cuSOLVER's batched potrf;
  // single precision's kernel alone holds out longer on long stacks.
  int blocked_stack_min_n_double = 192;
  int blocked_short_stack_min_n_single = 256;
  int blocked_stack_min_n_single = 384;
  // Long complex stacks (from short_stack_max_batch matrices) likewise from these orders, where
  // the products on the tensor cores beat the kernel alone, which a complex element's registers
  // limit sooner; short ones keep cuSOLVER's batched potrf (complex_*_short_stack_min_n).
  int blocked_stack_min_n_complex_double = 96;
  int blocked_stack_min_n_complex_single = 128;
  // The inverse from GPU factors (Python's cholesky_inverse): up to these orders the batched
  // inverse kernel (device::potri_batched_ex, a thread block per matrix) for a long stack (from
  // short_stack_max_batch matrices), a short one and one matrix; above them one matrix goes to
  // device::potri_ex, a stack to cho_solve(c, I): the kernel holds out longest on long stacks,
  // less long on short ones and on one matrix, and less long for the complex types.
  int batched_inverse_max_n = 256;
  int short_stack_inverse_max_n_real = 224;
  int short_stack_inverse_max_n_complex = 160;
  int single_inverse_max_n = 112;
  int complex_single_inverse_max_n = 80;

  // A host array's tiles under HostTiles::automatic: the runtime's first call on an array of at
  // least staged_first_call_min_bytes (not pinned by its caller) is staged on the GPUs: a one-shot
  // process is faster so on multi-GB arrays, while on smaller ones pinning the array costs less
  // than the staging slots and their tasks. Staged tiles take at most staged_free_memory_share of
  // each GPU's free memory.
  double staged_first_call_min_bytes = 1024.0 * 1024 * 1024;
  double staged_free_memory_share = 0.75;

  // Out-of-core: a matrix whose lower tiles take more than this share of the GPU memory the
  // runtime may use is cut into panels (FactorOptions::out_of_core_panel_percent).
  double out_of_core_fill = 0.9;

  // Batched chunks: this many per worker, so that transfers overlap computation; a chunk for a
  // GPU holds at least gpu_chunk_min matrices, enough to fill the device.
  int batch_chunks_per_worker = 2;
  int gpu_chunk_min = 256;

  // Where a task may run: a CPU worker takes a task it has no timing for, beside GPUs that could,
  // only on tiles up to this order (a blind placement of a large tile on one core costs more than
  // the CPUs add).
  int largest_blind_cpu_tile = 256;

  // The runtime's start: without GPUs, one core is kept for the calling thread (it inserts the
  // tasks while the workers run the first ones) from this many cores.
  int caller_core_without_gpus_from = 16;
};

inline constexpr Thresholds kThresholds{};

}  // namespace tessera::detail
