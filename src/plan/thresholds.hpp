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
  // up to a larger order: there OpenBLAS's own threaded potrf beat the task graph on 2, 4, 8 and
  // 16 cores; at 3000 its upper potrf (a C-ordered array's) fell behind the task graph.
  int calling_thread_max_n_without_gpus = 2000;
  // Matrices below this order on the calling thread are factored and solved with one BLAS thread:
  // OpenBLAS threads the factorization of even a 64 x 64 matrix, which then takes longer. Above
  // calling_thread_max_n, so that every matrix the calling thread factors runs on one thread.
  int calling_thread_threaded_blas_from_n = 448;
  // A stack of them is split over at most as many threads as the program gives BLAS, each part on
  // one BLAS thread and doing at least the arithmetic of one factorization of this order.
  int calling_thread_split_from_n = 160;
  // From this order the calling thread factors an upper triangle as the lower factor of its
  // adjoint (swapped in place): on one thread OpenBLAS's upper potrf takes 1.2-1.6x its lower
  // potrf's time from order 64. Not with threaded BLAS (from calling_thread_threaded_blas_from_n),
  // where the upper one takes about 1.1x, less than the swaps cost.
  int calling_thread_upper_as_lower_from_n = 64;
  // In complex double not below the threaded orders: there the upper potrf took 0.99-1.09x the
  // lower one's time on one thread, less than the two swaps (which cost most where the columns lie
  // 4 KB apart: 346 us at order 256, docs/data/cpu-complex-upper/).
  int calling_thread_upper_as_lower_from_n_complex_double = 448;
  constexpr int calling_thread_upper_as_lower_from(bool complex_double) const {
    return complex_double ? calling_thread_upper_as_lower_from_n_complex_double : calling_thread_upper_as_lower_from_n;
  }
  // Up to these orders the calling thread factors a matrix with Tessera's unblocked potf2
  // (kernels/cpu/small_potrf.hpp) instead of a call into LAPACK, whose fixed cost per call exceeds
  // the arithmetic there (a stack of thousands of tiny matrices pays it per matrix); beyond them
  // OpenBLAS's vectorized kernels win. The real types' kernel, a group of entries in registers,
  // is faster than LAPACK's upper potrf up to order 48 in double (to 40 in single, within 4% at
  // 48) and than its lower one up to 24 (single precision's lower potrf overtakes it first); the
  // complex types' up to 16.
  int calling_thread_unblocked_potrf_max_n_real_lower = 24;
  int calling_thread_unblocked_potrf_max_n_real_upper = 48;
  int calling_thread_unblocked_potrf_max_n_complex = 16;
  constexpr int calling_thread_unblocked_potrf_max_n(bool complex, bool upper) const {
    if (complex) return calling_thread_unblocked_potrf_max_n_complex;
    return upper ? calling_thread_unblocked_potrf_max_n_real_upper : calling_thread_unblocked_potrf_max_n_real_lower;
  }
  // The same for the inverse from the factor (xPOTRI: two LAPACK calls, the triangle's inverse and
  // its product with its adjoint; kernels/cpu/small_potri.hpp): faster than LAPACK's potri in both
  // triangles up to order 40 in the real types, to 16 in the complex ones.
  int calling_thread_unblocked_potri_max_n_real = 40;
  int calling_thread_unblocked_potri_max_n_complex = 16;
  constexpr int calling_thread_unblocked_potri_max_n(bool complex) const {
    return complex ? calling_thread_unblocked_potri_max_n_complex : calling_thread_unblocked_potri_max_n_real;
  }

  // One vendor call instead of a tile DAG. A matrix in one GPU's memory (the device API) up to
  // this order is factored by the vendor's potrf on the matrix itself: below it the DAG's chain of
  // steps pays the runtime's latency at each.
  int whole_device_matrix_max_n = 16384;
  // The same for the inverse from a factor in GPU memory (device::potri, potri_ex): the factor's
  // triangular inverse W and the product W^H W on the matrix itself (cuBLAS on the caller's stream,
  // vendor::invert_from_lower_factor) up to this order, the tile DAG of the triangular inverse and
  // its product above. On an H200 (warm, resident) the one call ran 2.4-6.1x cuSOLVER's potri from
  // order 512 to 4096 in double and 1.3x the tile DAG at 8192 (single: 2.1-5.4x, and the DAG's
  // speed at 8192); the DAG 1.5-1.6x the one call at 16384.
  int whole_device_inverse_max_n = 8192;
  // That triangular inverse by one solve of the identity up to this order, by levels above
  // (vendor::invert_lower_by_levels): from order 192-256 the solve's steps through the whole
  // triangle took longer than the levels' few wide launches, in each scalar type.
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
  // and one matrix (a 2-D array) from order single_matrix_vendor_min_n, which cuSOLVER's potrf
  // factors (device::potrf_ex). A block factors one matrix in the same time however few run beside
  // it, so the kernels win only once the stack is long enough, or the matrices small enough: on an
  // H200 (warm, both real precisions, the kernels' shapes for few matrices) they were the faster
  // at every count below order 192; the vendor's batched call was the faster below 128 to 384
  // matrices from order 192. Complex double stacks go to the vendor from order 96 and complex
  // single ones from 160 (measured with the kernels' shapes for few matrices), one matrix (for its
  // call's throughput, cholesky_ex) from order 96 (docs/performance.md, "The measurements behind
  // the thresholds"). From dense_device_min_n each matrix is one dense call after the other.
  int dense_device_min_n = 1024;
  int short_stack_min_n = 192;
  int complex_double_short_stack_min_n = 96;
  int complex_single_short_stack_min_n = 160;
  int single_matrix_vendor_min_n = 96;
  // One complex matrix, synchronised calls (H200, docs/data/h200-complex-stack-paths/): in complex
  // double the kernels took 71.8 us at order 48 against cuSOLVER's 81.3, 88.1 against 66.4 at 64;
  // in complex single 110.8 against 141.4 at 96, 163.6 against 136.7 at 128.
  int complex_double_single_matrix_vendor_min_n = 64;
  int complex_single_single_matrix_vendor_min_n = 128;
  int short_stack_max_batch = 384;
  // The batched solve kernels (a thread block per matrix) take long stacks (from
  // short_stack_max_batch matrices) whose matrices have at most this many right-hand sides each;
  // more go through the vendor's batched solves. On an H200 (real stacks of 512 and 4096 matrices
  // of order 16 to 512) the kernels took 0.5-1.1x the vendor's time for one right-hand side and
  // 0.7-2.1x for 4, but 0.7-3.7x for 8 and 1.8-13x for 32 or more (an inverse's identity through
  // them ran at 0.13-0.21x PyTorch); on stacks of 8 they stayed the faster at every count (0.7-1.0x).
  int batched_solve_max_nrhs = 4;
  // ... or, up to this order, any number: there the kernels (a thread per right-hand side, the
  // lane kernel, from 4 to 16 of them by order) took 0.22-0.91x the vendor's batched solves' time in
  // double and 0.27-1.09x in single on 512 and 4096 real matrices of order 16 to 64 with 8 to 64
  // right-hand sides (H200, bench_batched_kernels --solves), where at order 96 and 128 on 4096
  // matrices the vendor's were the faster below 64 right-hand sides.
  int batched_lane_solve_max_n = 64;
  // ... and whose order is at most this; larger orders go through the vendor's batched solves,
  // which on an H200 (384 and 1024 real matrices of order 288 to 512, 1 to 4 right-hand sides) took
  // 0.35-1.08x the kernels' time, above 1 only with one right-hand side on 1024 double matrices
  // and two on 1024 single ones of order 448-512; at 256 the kernels were the faster but for 4
  // right-hand sides on 1024 matrices.
  int batched_solve_max_n = 256;
  // Long complex stacks take the kernels up to this order, for any number of right-hand sides, and
  // the vendor's batched solves past it: on an H200 (bench_batched_kernels --solves --solve-types
  // complex, 512 and 4096 matrices, 1 to 64 right-hand sides) the kernels took 0.27-1.27x the
  // vendor's time in complex double and 0.27-1.06x in complex single up to order 64, above 1.05
  // only with 8 or 16 right-hand sides on 4096 matrices of order 48-64; in complex double
  // 1.11-8.8x at orders 96 and 128, in complex single 0.62-3.4x (faster on 512 matrices of order
  // 96, slower at most counts on 4096), 1.05-13.5x at 256 in both.
  int complex_batched_solve_max_n = 64;
  // A batched refined solve (device::posv_refined_batched) refines single-precision solutions only
  // on a GPU whose single-precision arithmetic runs at least this many times as fast as its double
  // (CUDA's single-to-double performance ratio); elsewhere every matrix is solved in double
  // precision at once (ITER -1). On an H200 (ratio 2; 10000 matrices of order 16 to 128, 2000 of
  // 256, 1000 of 512; condition 1e2 and 1e6; 1 and 4 right-hand sides) the refinement took 2.0-11x
  // the time of the batched double-precision solve: the small matrices are bound by memory, which
  // the residuals read in double precision at every step, the larger ones by the single-precision
  // kernels, no faster there than the double ones. GPUs with a ratio of 32 or 64 were not measured.
  int batched_refinement_min_single_to_double_ratio = 8;
  // Real stacks from these orders (below dense_device_min_n) are factored in blocks of columns
  // (device::potrf_stack_ex: cuBLAS's batched products update each block, the batched kernel
  // factors it): on an H200 (warm, stacks of 16, 200 and 1000 to 10000 matrices) that beat both the
  // kernel alone and cuSOLVER's batched potrf from order 192 in double at every count measured, and
  // in single from order 256 on short stacks and 384 on long ones, where the kernel alone was
  // faster at 256 and within 4% at 320 (docs/kernels-batched.md, "In blocks of columns").
  int blocked_stack_min_n_double = 192;
  int blocked_short_stack_min_n_single = 256;
  int blocked_stack_min_n_single = 384;
  // The inverse from GPU factors (Python's cholesky_inverse): up to these orders the batched
  // inverse kernel (device::potri_batched_ex, a thread block per matrix) for a long stack (from
  // short_stack_max_batch matrices), a short one and one matrix; above them one matrix goes to
  // device::potri_ex, a stack to cho_solve(c, I). On an H200 (warm, through the package) the kernel
  // was the faster on stacks of 512 and 4096 up to order 256 in the four types; on stacks of 8 and
  // 64 up to 224 in the real types (cho_solve 1.1-1.4x faster at 256) and to 160 in the complex
  // ones (cho_solve 1.0-2.6x faster from 192); for one matrix (against potri_ex) up to order 112 in
  // the real types and 80 in the complex ones; potri_ex from there (1.5-4.6x PyTorch's
  // cholesky_inverse up to order 8192, where cho_solve took 0.4-1.0x).
  int batched_inverse_max_n = 256;
  int short_stack_inverse_max_n_real = 224;
  int short_stack_inverse_max_n_complex = 160;
  int single_inverse_max_n = 112;
  int complex_single_inverse_max_n = 80;

  // A host array's tiles under HostTiles::automatic: the runtime's first call on an array of at
  // least staged_first_call_min_bytes (not pinned by its caller) is staged on the GPUs: a one-shot
  // process is faster so on multi-GB arrays, slower on half a GB, where pinning the array costs
  // less than the staging slots and their tasks (the crossover between was not measured). Staged
  // tiles take at most staged_free_memory_share of each GPU's free memory.
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
