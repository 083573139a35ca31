// Seven routes to the whole Hermitian inverse from one resident lower Cholesky factor, timed per
// synchronised call (host clock, median of 25 after 3 warm-ups), each checked against the first.
// Built against the CUDA kernels' static library of a Tessera build tree:
//   nvcc -O2 -std=c++17 -arch=sm_90 -I codelets/kernels -I codelets -I include \
//     -I build/generated/include inverse_routes.cu -o inverse_routes \
//     build/codelets/kernels/cuda/libtessera_cuda_kernels.a -lcublas -lcusolver
//   inverse_routes [ROUTES] [TYPES]   (default PTVRGMS dszc)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/matrix_utils.hpp"
#include "cuda/vendor.hpp"

using namespace tessera::kernels::cuda;
using tessera::Trans;

template <class T>
const char* name();
template <>
const char* name<double>() {
  return "d";
}
template <>
const char* name<float>() {
  return "s";
}
template <>
const char* name<std::complex<double>>() {
  return "z";
}
template <>
const char* name<std::complex<float>>() {
  return "c";
}

template <class T>
T make(double re, double im) {
  if constexpr (std::is_floating_point_v<T>)
    return T(re);
  else
    return T(re, im);
}
template <class T>
double absval(T v) {
  return std::abs(v);
}

struct Handles {
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  cudaStream_t stream;
  int* info;
  void* work = nullptr;
  size_t work_bytes = 0;
  std::vector<char> hwork;
  void** ptrs = nullptr;
};

#define CK(x)                                                          \
  do {                                                                 \
    auto e_ = (x);                                                     \
    if (e_ != 0) {                                                     \
      std::printf("error %d at %s:%d\n", int(e_), __FILE__, __LINE__); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

void* need(Handles& h, size_t bytes) {
  if (bytes > h.work_bytes) {
    if (h.work) cudaFree(h.work);
    CK(cudaMalloc(&h.work, bytes));
    h.work_bytes = bytes;
  }
  return h.work;
}

// cuSOLVER's potri of the lower triangle of X (n x n), in place.
template <class T>
void cusolver_potri(Handles& h, int n, T* X) {
  int lw = 0;
  const auto lower = CUBLAS_FILL_MODE_LOWER;
  if constexpr (std::is_same_v<T, double>) {
    CK(cusolverDnDpotri_bufferSize(h.solver, lower, n, X, n, &lw));
    CK(cusolverDnDpotri(h.solver, lower, n, X, n, static_cast<T*>(need(h, sizeof(T) * std::max(lw, 1))), lw, h.info));
  } else if constexpr (std::is_same_v<T, float>) {
    CK(cusolverDnSpotri_bufferSize(h.solver, lower, n, X, n, &lw));
    CK(cusolverDnSpotri(h.solver, lower, n, X, n, static_cast<T*>(need(h, sizeof(T) * std::max(lw, 1))), lw, h.info));
  } else if constexpr (std::is_same_v<T, std::complex<double>>) {
    CK(cusolverDnZpotri_bufferSize(h.solver, lower, n, vendor::cu(X), n, &lw));
    CK(cusolverDnZpotri(h.solver, lower, n, vendor::cu(X), n,
                        static_cast<cuDoubleComplex*>(need(h, sizeof(T) * std::max(lw, 1))), lw, h.info));
  } else {
    CK(cusolverDnCpotri_bufferSize(h.solver, lower, n, vendor::cu(X), n, &lw));
    CK(cusolverDnCpotri(h.solver, lower, n, vendor::cu(X), n,
                        static_cast<cuComplex*>(need(h, sizeof(T) * std::max(lw, 1))), lw, h.info));
  }
}

// P: cuSOLVER's potri; T: trsm of the identity, then herk; V: the inverse by levels, then herk; R:
// cuSOLVER's trtri, then herk; G: levels, then gemm; M: levels, then trmm; S: cuSOLVER's potrs of
// the identity (PyTorch's route; no mirroring). All but S end with finish_inverse's mirroring.
template <class T>
void run_route(char route, Handles& h, int n, const T* L, T* X, T* W) {
  const T one(1), zero(0);
  const size_t bytes = sizeof(T) * size_t(n) * n;
  switch (route) {
    case 'P': {
      CK(cudaMemcpyAsync(X, L, bytes, cudaMemcpyDeviceToDevice, h.stream));
      cusolver_potri(h, n, X);
      finish_inverse(n, L, n + 1, X, n, h.info, h.stream);
      break;
    }
    case 'T': {
      set_identity(n, n, W, n, h.stream);
      vendor::trsm(h.blas, true, 'L', Trans::no, n, n, one, L, n, W, n);
      vendor::syrk(h.blas, 'L', Trans::conjugate_transpose, n, n, one, W, n, zero, X, n);
      finish_inverse(n, L, n + 1, X, n, h.info, h.stream);
      break;
    }
    case 'V':
    case 'G':
    case 'M': {
      const size_t we = vendor::inverse_by_levels_elements(n, n);
      T* work = static_cast<T*>(need(h, sizeof(T) * std::max<size_t>(we, 1)));
      if (!h.ptrs) CK(cudaMalloc(&h.ptrs, sizeof(void*) * 4096));
      CK(cudaMemsetAsync(W, 0, bytes, h.stream));
      vendor::invert_lower_by_levels(h.blas, false, n, n, L, n, W, n, work, reinterpret_cast<T**>(h.ptrs), h.stream);
      if (route == 'V')
        vendor::syrk(h.blas, 'L', Trans::conjugate_transpose, n, n, one, W, n, zero, X, n);
      else if (route == 'G')
        vendor::gemm(h.blas, Trans::conjugate_transpose, Trans::no, n, n, n, one, W, n, W, n, zero, X, n);
      else {
        CK(cudaMemcpyAsync(X, W, bytes, cudaMemcpyDeviceToDevice, h.stream));
        vendor::trmm(h.blas, true, 'L', Trans::conjugate_transpose, n, n, one, W, n, X, n);
      }
      finish_inverse(n, L, n + 1, X, n, h.info, h.stream);
      break;
    }
    case 'R': {
      CK(cudaMemcpyAsync(W, L, bytes, cudaMemcpyDeviceToDevice, h.stream));
      size_t db = 0, hb = 0;
      vendor::trtri_workspace(h.solver, 'L', n, W, n, &db, &hb);
      if (h.hwork.size() < hb) h.hwork.resize(hb);
      vendor::trtri(h.solver, 'L', n, W, n, need(h, std::max<size_t>(db, 16)), db, h.hwork.data(), hb, h.info);
      // W's strict upper triangle: L's copy, zeros
      vendor::syrk(h.blas, 'L', Trans::conjugate_transpose, n, n, one, W, n, zero, X, n);
      finish_inverse(n, L, n + 1, X, n, h.info, h.stream);
      break;
    }
    case 'S': {
      set_identity(n, n, X, n, h.stream);
      if constexpr (std::is_same_v<T, double>)
        CK(cusolverDnDpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, n, L, n, X, n, h.info));
      else if constexpr (std::is_same_v<T, float>)
        CK(cusolverDnSpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, n, L, n, X, n, h.info));
      else if constexpr (std::is_same_v<T, std::complex<double>>)
        CK(cusolverDnZpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, n, vendor::cu(L), n, vendor::cu(X), n, h.info));
      else
        CK(cusolverDnCpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, n, n, vendor::cu(L), n, vendor::cu(X), n, h.info));
      break;
    }
  }
}

template <class T>
void run_type(Handles& h, const std::vector<int>& sizes, const std::string& routes, int reps) {
  for (int n : sizes) {
    // L: lower, well conditioned (diag ~ 2..3, off-diagonal small), zeros above.
    std::vector<T> hl(size_t(n) * n, T(0));
    std::mt19937 g(n);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i)
        hl[i + size_t(j) * n] =
            i == j ? T(2.0 + 0.5 * (u(g) + 1)) : make<T>(u(g) / std::sqrt(double(n)), u(g) / std::sqrt(double(n)));
    T *L, *X, *W;
    const size_t bytes = sizeof(T) * size_t(n) * n;
    CK(cudaMalloc(&L, bytes));
    CK(cudaMalloc(&X, bytes));
    CK(cudaMalloc(&W, bytes));
    CK(cudaMemcpy(L, hl.data(), bytes, cudaMemcpyHostToDevice));
    // reference from route P
    run_route<T>('P', h, n, L, X, W);
    CK(cudaStreamSynchronize(h.stream));
    std::vector<T> ref(size_t(n) * n), got(size_t(n) * n);
    CK(cudaMemcpy(ref.data(), X, bytes, cudaMemcpyDeviceToHost));
    double refmax = 0;
    for (auto v : ref) refmax = std::max(refmax, absval(v));
    std::printf("%s %5d |", name<T>(), n);
    for (char r : routes) {
      for (int w = 0; w < 3; ++w) run_route<T>(r, h, n, L, X, W);
      CK(cudaStreamSynchronize(h.stream));
      std::vector<double> times;
      for (int k = 0; k < reps; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        run_route<T>(r, h, n, L, X, W);
        CK(cudaStreamSynchronize(h.stream));
        times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(times.begin(), times.end());
      CK(cudaMemcpy(got.data(), X, bytes, cudaMemcpyDeviceToHost));
      double err = 0;
      for (size_t k = 0; k < got.size(); ++k) err = std::max(err, absval(got[k] - ref[k]));
      std::printf(" %c %9.1f (%7.1e) |", r, times[reps / 2], err / refmax);
    }
    std::printf("\n");
    std::fflush(stdout);
    cudaFree(L);
    cudaFree(X);
    cudaFree(W);
  }
}

int main(int argc, char** argv) {
  std::string routes = argc > 1 ? argv[1] : "PTVRGMS";
  std::string types = argc > 2 ? argv[2] : "dszc";
  std::vector<int> sizes = {64, 96, 112, 128, 160, 192, 256, 384, 512, 640, 768, 1024, 1536, 2048, 3072, 4096};
  Handles h;
  CK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
  CK(cublasCreate(&h.blas));
  CK(cublasSetStream(h.blas, h.stream));
  CK(cusolverDnCreate(&h.solver));
  CK(cusolverDnSetStream(h.solver, h.stream));
  CK(cudaMalloc(&h.info, sizeof(int)));
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s; us per call (host clock, synchronised), median of 25; (max|X - X_potri| / max|X_potri|)\n", p.name);
  std::printf(
      "P potri; T trsm(I)+herk; V levels+herk; R trtri+herk; G levels+gemm; M levels+trmm; S potrs(I) no mirror\n");
  for (char t : types) {
    if (t == 'd') run_type<double>(h, sizes, routes, 25);
    if (t == 's') run_type<float>(h, sizes, routes, 25);
    if (t == 'z') run_type<std::complex<double>>(h, sizes, routes, 25);
    if (t == 'c') run_type<std::complex<float>>(h, sizes, routes, 25);
  }
  return 0;
}
