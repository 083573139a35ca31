// The steps of the refined solve in GPU memory, each against the careful peer on the same data.
// Per order: the steps before the first iteration, A's scaled single-precision copy
// (scale_and_narrow, against a plain copy of A's bytes) and the inverses of the factor's diagonal
// blocks (vendor::invert_lower_diagonal_blocks, FP32 and TF32 products). Per iteration: the
// residual R := B - A X of a symmetric double A (lower triangle), Tessera's (symmetric_residual,
// one read of the triangle, up to the columns one pass takes; "blocked": the blocked products of
// vendor::subtract_symmetric_product, the path past them) against cuBLAS's dsymv / dsymm of the
// whole matrix; and the two FP32 triangular solves with the factor
// (vendor::solve_lower_by_block_inverses, L then L^T; its products in FP32, and on the tensor cores
// as for a tensor-core factor) against cuBLAS's strsm. Milliseconds (median of --reps after two
// untimed calls, the L2 cache flushed before each); "diff": the largest difference from strsm's
// solution relative to its largest magnitude.
//   bench_refinement_steps [--sizes 16384,30000,40000] [--nrhs 1,2,8,16,32] [--reps 10]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cuda/check.hpp"
#include "cuda/refinement.hpp"
#include "cuda/vendor.hpp"
#include "device_support.hpp"

namespace tk = tessera::kernels::cuda;
using tessera::Trans;
using tessera::bench::Device;
using tessera::bench::fill_uniform;

namespace {

// A well-conditioned factor: off-diagonal entries of order 1/sqrt(n), a diagonal of 2.
__global__ void set_diagonal_kernel(int n, float* L, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) L[i + std::size_t(i) * n] = value;
}

template <class T>
std::vector<T> host_copy(const T* values, std::size_t count) {
  std::vector<T> host(count);
  TESSERA_CUDA_CHECK(cudaMemcpy(host.data(), values, sizeof(T) * count, cudaMemcpyDeviceToHost));
  return host;
}

// max |a - b| / max |b|.
template <class T>
double relative_difference(const T* a, const T* b, std::size_t count) {
  const std::vector<T> x = host_copy(a, count), y = host_copy(b, count);
  double largest = 0, difference = 0;
  for (std::size_t e = 0; e < count; ++e) {
    largest = std::max(largest, std::abs(double(y[e])));
    difference = std::max(difference, std::abs(double(x[e]) - double(y[e])));
  }
  return difference / largest;
}

template <class T>
void copy(T* to, const T* from, std::size_t count) {
  TESSERA_CUDA_CHECK(cudaMemcpy(to, from, sizeof(T) * count, cudaMemcpyDeviceToDevice));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {16384, 30000, 40000}, counts = {1, 2, 8, 16, 32};
  int reps = 10;
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    if (args.option() == "--sizes") {
      sizes = tessera::bench::parse_int_list(args.value());
    } else if (args.option() == "--nrhs") {
      counts = tessera::bench::parse_int_list(args.value());
    } else if (args.option() == "--reps") {
      reps = std::stoi(args.value());
    } else {
      fmt::print(stderr, "unknown option {}\n", args.option());
      return 2;
    }
  }
  if (!tessera::bench::cuda_device_present()) {
    fmt::print("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  fmt::print("{}; ms (median of {}); x: the peer's time over Tessera's\n", prop.name, reps);
  fmt::print("{:>6} {:>4} | {:>8} {:>8} {:>8} {:>6} | {:>8} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8} | {:>8} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8}\n",
             "n", "nrhs", "residual", "blocked", "cuBLAS", "x", "L fp32", "L tf32", "strsm", "x fp32", "x tf32", "diff32",
             "diff tf", "L^T fp32", "L^T tf32", "strsm", "x fp32", "x tf32", "diff32", "diff tf");
  cublasHandle_t blas;
  TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
  tessera::bench::Timer timer;
  const double one = 1, minus_one = -1;
  for (const int n : sizes) {
    const std::size_t nn = std::size_t(n) * n;
    Device<double> A(nn);
    fill_uniform(A.get(), nn, 2026);
    Device<float> L(nn), inverses(tk::vendor::inverse_blocks_elements(n));
    {
      // The steps before the first iteration; L is the narrowed copy here, made again below.
      Device<double> scale(n), row_sums(n), bytes_copy(nn / 2);
      Device<int> flags(1);
      const double narrow_ms = timer.median_ms(reps, [] {}, [&] {
        tk::scale_and_narrow('L', n, A.get(), n, scale.get(), L.get(), n, row_sums.get(), flags.get(), nullptr);
      });
      const double copy_ms = timer.median_ms(reps, [] {}, [&] {
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(bytes_copy.get(), A.get(), sizeof(double) * (nn / 2),
                                           cudaMemcpyDeviceToDevice));
      });
      fmt::print("{:>6} narrowing {:.3f} ms (copying half of A's bytes {:.3f} ms)", n, narrow_ms, copy_ms);
    }
    fill_uniform(L.get(), nn, 2027, float(1 / std::sqrt(double(n))));
    set_diagonal_kernel<<<(n + 255) / 256, 256>>>(n, L.get(), 2.0f);
    TESSERA_CUDA_CHECK_LAUNCH();
    {
      Device<float> work(std::max<std::size_t>(1, tk::vendor::inverse_by_levels_elements(n, tk::vendor::kInverseBlock)));
      Device<float*> pointers(std::max(1, tk::vendor::inverse_by_levels_pointers(n)));
      double invert_ms[2];
      for (int tf32 = 1; tf32 >= 0; --tf32)  // FP32 last: its inverses serve the solves below
        invert_ms[tf32] = timer.median_ms(reps, [] {}, [&] {
          tk::vendor::invert_lower_diagonal_blocks(blas, tf32 == 1, n, L.get(), n, inverses.get(), work.get(),
                                                   pointers.get(), nullptr);
        });
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      fmt::print("; block inverses {:.3f} ms FP32, {:.3f} ms TF32\n", invert_ms[0], invert_ms[1]);
    }
    for (const int nrhs : counts) {
      const std::size_t columns = std::size_t(n) * nrhs;
      // The residual.
      Device<double> X(columns), B(columns), R(columns), R_whole(columns);
      fill_uniform(X.get(), columns, 7);
      fill_uniform(B.get(), columns, 11);
      const bool one_pass = nrhs <= tk::symmetric_residual_most_columns<double>();
      Device<double> work(one_pass ? tk::symmetric_residual_workspace(n, nrhs) : 1);
      const double residual_ms = timer.median_ms(reps, [] {}, [&] {
        if (one_pass)
          tk::symmetric_residual('L', n, nrhs, A.get(), n, X.get(), n, B.get(), n, R.get(), n, work.get(), nullptr);
        else
          tk::vendor::subtract_symmetric_product(blas, 'L', n, nrhs, A.get(), n, X.get(), n, R.get(), n);
      });
      const auto blocked = [&] {
        tk::vendor::subtract_symmetric_product(blas, 'L', n, nrhs, A.get(), n, X.get(), n, R_whole.get(), n);
      };
      const double blocked_ms =
          nrhs == 1 ? NAN : timer.median_ms(reps, [&] { copy(R_whole.get(), B.get(), columns); }, blocked);
      const double whole_ms = timer.median_ms(reps, [&] { copy(R_whole.get(), B.get(), columns); }, [&] {
        TESSERA_CUBLAS_CHECK(cublasDsymm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, nrhs, &minus_one, A.get(),
                                         n, X.get(), n, &one, R_whole.get(), n));
      });
      // The triangular solves in FP32: with FP32 products, with TF32 ones, and cuBLAS's.
      Device<float> Rs(columns), Ws(columns), Xs(columns), Ys(columns);
      fill_uniform(Rs.get(), columns, 13);
      double solve_ms[2][2], strsm_ms[2], difference[2][2];
      for (int t = 0; t < 2; ++t) {
        const Trans trans = t == 0 ? Trans::no : Trans::transpose;
        strsm_ms[t] = timer.median_ms(reps, [&] { copy(Ys.get(), Rs.get(), columns); }, [&] {
          tk::vendor::trsm(blas, true, 'L', trans, n, nrhs, 1.0f, L.get(), n, Ys.get(), n);
        });
        for (int tf32 = 0; tf32 < 2; ++tf32) {
          solve_ms[t][tf32] = timer.median_ms(reps, [&] { copy(Ws.get(), Rs.get(), columns); }, [&] {
            tk::vendor::solve_lower_by_block_inverses(blas, trans, n, nrhs, L.get(), n, inverses.get(), Ws.get(), n,
                                                      Xs.get(), n, tf32 == 1);
          });
          TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
          difference[t][tf32] = relative_difference(Xs.get(), Ys.get(), columns);
        }
      }
      fmt::print(
          "{:>6} {:>4} | {:>8.3f} {:>8.3f} {:>8.3f} {:>5.2f}x | {:>8.3f} {:>8.3f} {:>8.3f} {:>5.2f}x {:>5.2f}x {:>8.1e} {:>8.1e} | "
          "{:>8.3f} {:>8.3f} {:>8.3f} {:>5.2f}x {:>5.2f}x {:>8.1e} {:>8.1e}\n",
          n, nrhs, residual_ms, blocked_ms, whole_ms, whole_ms / residual_ms, solve_ms[0][0], solve_ms[0][1], strsm_ms[0],
          strsm_ms[0] / solve_ms[0][0], strsm_ms[0] / solve_ms[0][1], difference[0][0], difference[0][1],
          solve_ms[1][0], solve_ms[1][1], strsm_ms[1], strsm_ms[1] / solve_ms[1][0], strsm_ms[1] / solve_ms[1][1],
          difference[1][0], difference[1][1]);
      std::fflush(stdout);
    }
  }
  cublasDestroy(blas);
  return 0;
}
