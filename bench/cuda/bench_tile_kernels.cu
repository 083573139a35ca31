// Tile kernels against the vendor libraries on one GPU: cuSOLVER potrf (with its workspace) and
// cuBLAS trsm / syrk / gemm, float and double, m = n = k = nb.
//
//   bench_tile_kernels [--nb 32,64,...] [--reps 7] [--precision s|d|both] [--json out.json]
//                      [--ops potf2,trsm,syrk,gemm,forms]
//
// A tuning table (every candidate configuration timed, the fastest kept) is `tessera tune`'s.
//
// `forms` (not in the default ops): the vendor calls on tiles stored transposed (an upper-stored
// matrix: potrf 'U', trsm left-upper-transposed, syrk 'U' transposed, gemm T/N) against the lower
// forms of the same tasks, in a table of their own.
//
// Each measurement: a few copies of the operand the call overwrites (restored from a pristine
// copy before every batch, outside the timed region), one warm-up batch, then `reps` batches
// with CUDA events around the calls on all copies; the reported time per call is the median
// batch time divided by the copy count. Inputs are random (fixed seeds, never zero).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/check.hpp"
#include "cuda/tile_kernels.hpp"
#include "cuda/tile_timing.hpp"
#include "cuda/vendor.hpp"
#include "device_support.hpp"

namespace tk = tessera::kernels::cuda;

namespace {

struct Options {
  std::vector<int> nbs = {32, 64, 128, 256, 512, 1024, 2048};
  int reps = 7;
  std::string precision = "both";
  std::string json_path;
  std::string ops = "potf2,trsm,syrk,gemm";
  bool wants(const std::string& op) const { return ("," + ops + ",").find("," + op + ",") != std::string::npos; }
};

using tessera::bench::parse_int_list;

Options parse(int argc, char** argv) {
  Options o;
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    const std::string a = args.option();
    if (a == "--nb") o.nbs = parse_int_list(args.value());
    else if (a == "--reps") o.reps = std::stoi(args.value());
    else if (a == "--precision") o.precision = args.value();
    else if (a == "--json")
      o.json_path = args.value();
    else if (a == "--ops") o.ops = args.value();
    else throw std::runtime_error("unknown option " + a);
  }
  return o;
}

using tessera::bench::Device;
using tessera::Trans;

// Median time per call (us) of run(i) over copies i of the overwritten operand.
double median_us(cudaStream_t stream, int copies, int reps, const std::function<void()>& restore,
                 const std::function<void(int)>& run) {
  cudaEvent_t start, stop;
  TESSERA_CUDA_CHECK(cudaEventCreate(&start));
  TESSERA_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int rep = -1; rep < reps; ++rep) {
    restore();
    TESSERA_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < copies; ++i) run(i);
    TESSERA_CUDA_CHECK(cudaEventRecord(stop, stream));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (rep >= 0) samples.push_back(1000.0 * ms / copies);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// ---- vendor calls per precision ------------------------------------------------------------

cublasStatus_t vendor_trsm(cublasHandle_t h, int m, int n, const double* one, const double* L, int ldl, double* B, int ldb) {
  return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n, one, L, ldl, B, ldb);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, int m, int n, const float* one, const float* L, int ldl, float* B, int ldb) {
  return cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n, one, L, ldl, B, ldb);
}
cublasStatus_t vendor_syrk(cublasHandle_t h, int n, int k, const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc) {
  return cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, alpha, A, lda, beta, C, ldc);
}
cublasStatus_t vendor_syrk(cublasHandle_t h, int n, int k, const float* alpha, const float* A, int lda, const float* beta, float* C, int ldc) {
  return cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, alpha, A, lda, beta, C, ldc);
}
cublasStatus_t vendor_gemm(cublasHandle_t h, int m, int n, int k, const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta, double* C, int ldc) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t vendor_gemm(cublasHandle_t h, int m, int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cusolverStatus_t vendor_potrf_bufsize(cusolverDnHandle_t h, int n, double* A, int lda, int* lwork) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, lwork);
}
cusolverStatus_t vendor_potrf_bufsize(cusolverDnHandle_t h, int n, float* A, int lda, int* lwork) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, lwork);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, double* A, int lda, double* w, int lwork, int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, w, lwork, info);
}
cusolverStatus_t vendor_potrf(cusolverDnHandle_t h, int n, float* A, int lda, float* w, int lwork, int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, w, lwork, info);
}

struct Row {
  char precision;
  std::string op;
  int nb;
  double vendor_us, custom_us, gflop;
};

template <class T>
void bench_precision(const Options& o, cudaStream_t stream, cublasHandle_t blas,
                     cusolverDnHandle_t solver, std::vector<Row>& rows) {
  const char p = sizeof(T) == 8 ? 'd' : 's';
  for (int nb : o.nbs) {
    std::mt19937_64 rng(1234 + nb);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::size_t elems = static_cast<std::size_t>(nb) * nb;
    const int copies = static_cast<int>(
        std::clamp<std::size_t>((std::size_t{96} << 20) / (elems * sizeof(T) + 1), 2, 16));
    std::vector<T> general(elems), other(elems), lower(elems, T(0)), spd(elems);
    for (auto& x : general) x = static_cast<T>(u(rng));
    for (auto& x : other) x = static_cast<T>(u(rng));
    for (int c = 0; c < nb; ++c)
      for (int r = c; r < nb; ++r) {
        lower[r + static_cast<std::size_t>(c) * nb] = static_cast<T>(r == c ? 1.5 + 0.5 * u(rng) : u(rng) / nb);
        const double v = r == c ? nb + 1.0 + u(rng) : u(rng);
        spd[r + static_cast<std::size_t>(c) * nb] = static_cast<T>(v);
        spd[c + static_cast<std::size_t>(r) * nb] = static_cast<T>(v);
      }
    Device<T> dGen(elems), dOther(elems), dLower(elems), dSpd(elems), work(elems * copies);
    Device<int> info(copies);
    TESSERA_CUDA_CHECK(cudaMemcpy(dGen.get(), general.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaMemcpy(dOther.get(), other.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaMemcpy(dLower.get(), lower.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaMemcpy(dSpd.get(), spd.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
    const auto restore_from = [&](const T* src) {
      return [&, src]() {
        for (int i = 0; i < copies; ++i)
          TESSERA_CUDA_CHECK(cudaMemcpyAsync(work.get() + elems * i, src, elems * sizeof(T),
                                             cudaMemcpyDeviceToDevice, stream));
      };
    };
    const auto copy = [&](int i) { return work.get() + elems * i; };
    const T one = 1, minus_one = -1;
    const double n3 = double(nb) * nb * nb;

    const std::size_t first_row = rows.size();
    if (o.wants("potf2")) {
      int lwork = 0;
      TESSERA_CUSOLVER_CHECK(vendor_potrf_bufsize(solver, nb, work.get(), nb, &lwork));
      Device<T> vws(static_cast<std::size_t>(std::max(lwork, 1)));
      const std::size_t ws = tk::potf2_workspace_bytes<T>(nb);
      Device<unsigned char> cws(ws);
      const double v = median_us(stream, copies, o.reps, restore_from(dSpd.get()), [&](int i) {
        TESSERA_CUSOLVER_CHECK(vendor_potrf(solver, nb, copy(i), nb, vws.get(), lwork, info.get() + i));
      });
      const double c = median_us(stream, copies, o.reps, restore_from(dSpd.get()), [&](int i) {
        tk::potf2<T>(nb, copy(i), nb, info.get() + i, cws.get(), ws, stream);
      });
      rows.push_back({p, "potf2", nb, v, c, n3 / 3.0});
    }
    if (o.wants("trsm")) {
      const std::size_t ws = tk::trsm_rlt_workspace_bytes<T>(nb, nb);
      Device<unsigned char> cws(ws);
      const double v = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        TESSERA_CUBLAS_CHECK(vendor_trsm(blas, nb, nb, &one, dLower.get(), nb, copy(i), nb));
      });
      const double c = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        tk::trsm_rlt<T>(nb, nb, dLower.get(), nb, copy(i), nb, cws.get(), ws, stream);
      });
      rows.push_back({p, "trsm", nb, v, c, n3});
    }
    if (o.wants("syrk")) {
      const double v = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        TESSERA_CUBLAS_CHECK(vendor_syrk(blas, nb, nb, &minus_one, dOther.get(), nb, &one, copy(i), nb));
      });
      const double c = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        tk::syrk_ln<T>(nb, nb, dOther.get(), nb, copy(i), nb, stream);
      });
      rows.push_back({p, "syrk", nb, v, c, n3});
    }
    if (o.wants("gemm")) {
      const double v = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        TESSERA_CUBLAS_CHECK(vendor_gemm(blas, nb, nb, nb, &minus_one, dOther.get(), nb, dLower.get(), nb, &one, copy(i), nb));
      });
      const double c = median_us(stream, copies, o.reps, restore_from(dGen.get()), [&](int i) {
        tk::gemm_nt<T>(nb, nb, nb, dOther.get(), nb, dLower.get(), nb, copy(i), nb, stream);
      });
      rows.push_back({p, "gemm", nb, v, c, 2.0 * n3});
    }
    for (const Row* r = rows.data() + first_row; r != rows.data() + rows.size(); ++r)
      std::cerr << fmt::format("{} {:5s} nb={:5d} vendor {:10.2f} us  custom {:10.2f} us\n", r->precision, r->op, r->nb, r->vendor_us, r->custom_us);
  }
}

// The task forms on lower tiles and on transposed ones (vendor calls both), per nb.
struct FormRow {
  char precision;
  std::string op;
  int nb;
  double lower_us, transposed_us;
};

template <class T>
void bench_transposed_forms(const Options& o, cudaStream_t stream, cublasHandle_t blas, cusolverDnHandle_t solver,
                            std::vector<FormRow>& rows) {
  namespace vendor = tk::vendor;
  const char p = sizeof(T) == 8 ? 'd' : 's';
  for (int nb : o.nbs) {
    std::mt19937_64 rng(4321 + nb);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::size_t elems = static_cast<std::size_t>(nb) * nb;
    const int copies = static_cast<int>(std::clamp<std::size_t>((std::size_t{96} << 20) / (elems * sizeof(T) + 1), 2, 16));
    // A symmetric positive definite tile (either triangle holds it), a triangular factor with
    // both triangles (its transpose is the upper factor), and general tiles.
    std::vector<T> general(elems), other(elems), factor(elems), spd(elems);
    for (auto& x : general) x = static_cast<T>(u(rng));
    for (auto& x : other) x = static_cast<T>(u(rng));
    for (int c = 0; c < nb; ++c)
      for (int r = c; r < nb; ++r) {
        const T f = static_cast<T>(r == c ? 1.5 + 0.5 * u(rng) : u(rng) / nb);
        factor[r + static_cast<std::size_t>(c) * nb] = factor[c + static_cast<std::size_t>(r) * nb] = f;
        const T v = static_cast<T>(r == c ? nb + 1.0 + u(rng) : u(rng));
        spd[r + static_cast<std::size_t>(c) * nb] = spd[c + static_cast<std::size_t>(r) * nb] = v;
      }
    Device<T> dGen(elems), dOther(elems), dFactor(elems), dSpd(elems), work(elems * copies);
    Device<int> info(copies);
    for (auto [d, h] : {std::pair{&dGen, &general}, {&dOther, &other}, {&dFactor, &factor}, {&dSpd, &spd}})
      TESSERA_CUDA_CHECK(cudaMemcpy(d->get(), h->data(), elems * sizeof(T), cudaMemcpyHostToDevice));
    const auto restore_from = [&](const T* src) {
      return [&, src]() {
        for (int i = 0; i < copies; ++i)
          TESSERA_CUDA_CHECK(
              cudaMemcpyAsync(work.get() + elems * i, src, elems * sizeof(T), cudaMemcpyDeviceToDevice, stream));
      };
    };
    const auto copy = [&](int i) { return work.get() + elems * i; };
    const auto both = [&](const char* op, const T* restore, auto&& lower, auto&& transposed) {
      const double l = median_us(stream, copies, o.reps, restore_from(restore), lower);
      const double t = median_us(stream, copies, o.reps, restore_from(restore), transposed);
      rows.push_back({p, op, nb, l, t});
    };
    int lwork = 0;
    for (char uplo : {'L', 'U'}) lwork = std::max(lwork, vendor::potrf_workspace(solver, uplo, nb, work.get(), nb));
    Device<T> ws(static_cast<std::size_t>(std::max(lwork, 1)));
    both("potrf", dSpd.get(),
         [&](int i) { vendor::potrf(solver, 'L', nb, copy(i), nb, ws.get(), lwork, info.get() + i); },
         [&](int i) { vendor::potrf(solver, 'U', nb, copy(i), nb, ws.get(), lwork, info.get() + i); });
    both("trsm", dGen.get(),
         [&](int i) { vendor::trsm(blas, false, 'L', Trans::conjugate_transpose, nb, nb, T(1), dFactor.get(), nb, copy(i), nb); },
         [&](int i) { vendor::trsm(blas, true, 'U', Trans::conjugate_transpose, nb, nb, T(1), dFactor.get(), nb, copy(i), nb); });
    both("syrk", dGen.get(),
         [&](int i) { vendor::syrk(blas, 'L', Trans::no, nb, nb, T(-1), dOther.get(), nb, T(1), copy(i), nb); },
         [&](int i) { vendor::syrk(blas, 'U', Trans::conjugate_transpose, nb, nb, T(-1), dOther.get(), nb, T(1), copy(i), nb); });
    both("gemm", dGen.get(),
         [&](int i) { vendor::gemm(blas, Trans::no, Trans::conjugate_transpose, nb, nb, nb, T(-1), dOther.get(), nb, dFactor.get(), nb, T(1), copy(i), nb); },
         [&](int i) { vendor::gemm(blas, Trans::conjugate_transpose, Trans::no, nb, nb, nb, T(-1), dOther.get(), nb, dFactor.get(), nb, T(1), copy(i), nb); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (!tessera::bench::cuda_device_present()) {
      std::cerr << "bench_tile_kernels: no CUDA device\n";
      return 1;
    }
    const std::string gpu = tk::current_gpu_name();
    cudaStream_t stream;
    TESSERA_CUDA_CHECK(cudaStreamCreate(&stream));
    cublasHandle_t blas;
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas, stream));
    cusolverDnHandle_t solver;
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));

    std::vector<Row> rows;
    if (o.precision == "both" || o.precision == "d") bench_precision<double>(o, stream, blas, solver, rows);
    if (o.precision == "both" || o.precision == "s") bench_precision<float>(o, stream, blas, solver, rows);
    std::vector<FormRow> forms;
    if (o.wants("forms")) {
      if (o.precision == "both" || o.precision == "d") bench_transposed_forms<double>(o, stream, blas, solver, forms);
      if (o.precision == "both" || o.precision == "s") bench_transposed_forms<float>(o, stream, blas, solver, forms);
    }

    nlohmann::json results = nlohmann::json::array();
    std::cout << fmt::format("{:>4} {:>5} {:>5} {:>11} {:>11} {:>10} {:>10} {:>8}\n", "prec", "op",
                             "nb", "vendor_us", "custom_us", "vendor_GF", "custom_GF", "speedup");
    for (const Row& r : rows) {
      const double cgf = r.gflop / (r.custom_us * 1e3), vgf = r.gflop / (r.vendor_us * 1e3);
      std::cout << fmt::format("{:>4} {:>5} {:>5} {:>11.2f} {:>11.2f} {:>10.1f} {:>10.1f} {:>7.2f}x\n",
                               r.precision, r.op, r.nb, r.vendor_us, r.custom_us, vgf, cgf,
                               r.vendor_us / r.custom_us);
      results.push_back({{"precision", std::string(1, r.precision)}, {"op", r.op}, {"nb", r.nb},
                         {"vendor_us", r.vendor_us}, {"custom_us", r.custom_us},
                         {"vendor_gflops", vgf}, {"custom_gflops", cgf},
                         {"speedup", r.vendor_us / r.custom_us}});
    }
    nlohmann::json form_results = nlohmann::json::array();
    if (!forms.empty())
      std::cout << fmt::format("\nTransposed tiles (upper storage) against lower ones, vendor calls\n{:>4} {:>5} {:>5} "
                               "{:>11} {:>14} {:>12}\n", "prec", "op", "nb", "lower_us", "transposed_us",
                               "lower/transp");
    for (const FormRow& r : forms) {
      std::cout << fmt::format("{:>4} {:>5} {:>5} {:>11.2f} {:>14.2f} {:>11.2f}x\n", r.precision, r.op, r.nb, r.lower_us,
                               r.transposed_us, r.lower_us / r.transposed_us);
      form_results.push_back({{"precision", std::string(1, r.precision)}, {"op", r.op}, {"nb", r.nb},
                              {"lower_us", r.lower_us}, {"transposed_us", r.transposed_us}});
    }
    if (!o.json_path.empty()) {
      std::ofstream out(o.json_path);
      out << nlohmann::json{{"device", gpu}, {"reps", o.reps}, {"results", results}, {"transposed_forms", form_results}}
                 .dump(2)
          << '\n';
    }
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_tile_kernels: " << e.what() << '\n';
    return 1;
  }
}
