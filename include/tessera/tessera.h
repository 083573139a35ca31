/* Tessera's C API, LAPACK-compatible: column-major matrices, uplo 'L' or 'U'.
 *
 * Return value = LAPACK info: 0 on success; -i when the i-th argument is invalid (nothing is
 * read or written then); k > 0 when the leading minor of order k is the first that is not
 * positive definite, as reference LAPACK finds it: a NaN pivot fails, +inf on the diagonal does
 * not (k is a global 1-based column index). In potrs and posv, a B that
 * shares an element with the n x n block of A is invalid: -6 (checked after the other arguments).
 *
 * The calls start a default runtime on first use (worker counts and policy from TESSERA_NCPU,
 * TESSERA_NCUDA, TESSERA_POLICY, STARPU_NCPU, STARPU_SCHED...), or use the StarPU the program
 * already started. The tile size comes from TESSERA_NB or is chosen per n; the mode from
 * TESSERA_MODE (cpu, gpu, hybrid or auto; auto by default). They are safe to call from several
 * threads at once. A failure of the machinery (no GPU in gpu mode, a CUDA error) returns
 * TESSERA_RUNTIME_FAILURE. The reason for a negative return value is in tessera_last_error();
 * nothing is printed unless TESSERA_VERBOSE=1 (then one line on stderr per such call).
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include "tessera/export.h"

/* Complex scalars: a real part then an imaginary part (C's float _Complex and double _Complex,
 * C++'s std::complex, Fortran's COMPLEX and COMPLEX*16 all have this layout). */
#ifdef __cplusplus
#include <complex>
typedef std::complex<float> tessera_complex_float;
typedef std::complex<double> tessera_complex_double;
#else
typedef float _Complex tessera_complex_float;
typedef double _Complex tessera_complex_double;
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_RUNTIME_FAILURE (-1000)

TESSERA_EXPORT int tessera_dpotrf(char uplo, int n, double *A, int lda);
TESSERA_EXPORT int tessera_spotrf(char uplo, int n, float *A, int lda);
TESSERA_EXPORT int tessera_dpotrs(char uplo, int n, int nrhs, const double *A, int lda, double *B, int ldb);
TESSERA_EXPORT int tessera_spotrs(char uplo, int n, int nrhs, const float *A, int lda, float *B, int ldb);
TESSERA_EXPORT int tessera_dposv(char uplo, int n, int nrhs, double *A, int lda, double *B, int ldb);
TESSERA_EXPORT int tessera_sposv(char uplo, int n, int nrhs, float *A, int lda, float *B, int ldb);
/* potrf, and log det(A) = 2 sum log(diag(L)) into *logdet (in double; 0 when the factorization
 * fails, never a NaN or an infinity). A null logdet is argument 5. */
TESSERA_EXPORT int tessera_dpotrf_logdet(char uplo, int n, double *A, int lda, double *logdet);
TESSERA_EXPORT int tessera_spotrf_logdet(char uplo, int n, float *A, int lda, double *logdet);
/* potrf with adaptive precision (real double precision): each tile's trailing updates run in the
 * lowest arithmetic (FP16, FP32-class pieces of FP16, or FP64) its Frobenius norm allows for a
 * factor whose backward error ||A - L L^T||_F / ||A||_F is a small multiple of accuracy, which
 * must lie in (0, 1) (argument 5); tiles stay stored in double precision, the diagonal ones
 * factored in it. Gains where tiles far from the diagonal are small (covariance matrices of
 * spatial data ordered along space). tiles: null, or 3 counts of the tiles below the diagonal that
 * took fp16, fp32 and fp64; logdet: null, or log det(A) as tessera_dpotrf_logdet gives it. The
 * call always runs as tasks (the norms are tasks), whatever n. */
TESSERA_EXPORT int tessera_dpotrf_adaptive(char uplo, int n, double *A, int lda, double accuracy, long long *tiles,
                                           double *logdet);
/* A^{-1} from its Cholesky factor (LAPACK's xPOTRI): the triangle uplo of A holds the factor and
 * receives that triangle of the inverse. Returns 0, -i for a bad i-th argument, or k > 0 when the
 * factor's diagonal entry k is zero (A unchanged). */
TESSERA_EXPORT int tessera_dpotri(char uplo, int n, double *A, int lda);
TESSERA_EXPORT int tessera_spotri(char uplo, int n, float *A, int lda);

/* The same for complex Hermitian positive definite matrices (LAPACK's zpotrf, cpotrf, ...): A =
 * L L^H or U^H U; the imaginary parts of A's diagonal are taken as zero, and the factor's are
 * zero. The factorization runs as tiles (cpu, gpu or hybrid mode, as TESSERA_MODE says). */
TESSERA_EXPORT int tessera_zpotrf(char uplo, int n, tessera_complex_double *A, int lda);
TESSERA_EXPORT int tessera_cpotrf(char uplo, int n, tessera_complex_float *A, int lda);
TESSERA_EXPORT int tessera_zpotrs(char uplo, int n, int nrhs, const tessera_complex_double *A, int lda,
                                  tessera_complex_double *B, int ldb);
TESSERA_EXPORT int tessera_cpotrs(char uplo, int n, int nrhs, const tessera_complex_float *A, int lda,
                                  tessera_complex_float *B, int ldb);
TESSERA_EXPORT int tessera_zposv(char uplo, int n, int nrhs, tessera_complex_double *A, int lda,
                                 tessera_complex_double *B, int ldb);
TESSERA_EXPORT int tessera_cposv(char uplo, int n, int nrhs, tessera_complex_float *A, int lda,
                                 tessera_complex_float *B, int ldb);
TESSERA_EXPORT int tessera_zpotrf_logdet(char uplo, int n, tessera_complex_double *A, int lda, double *logdet);
TESSERA_EXPORT int tessera_cpotrf_logdet(char uplo, int n, tessera_complex_float *A, int lda, double *logdet);
TESSERA_EXPORT int tessera_zpotri(char uplo, int n, tessera_complex_double *A, int lda);
TESSERA_EXPORT int tessera_cpotri(char uplo, int n, tessera_complex_float *A, int lda);

/* Mixed precision (LAPACK's DSPOSV and ZCPOSV): X := A^{-1} B, A factored in single precision and
 * the solution refined in double precision to double precision's accuracy; where that fails, A
 * is factored in double precision (and holds the factor). *iter receives LAPACK's ITER: >= 0 the
 * refinement's iterations (A unchanged); -2 narrowing to single precision overflowed, -3 the
 * single-precision factorization failed, -31 no convergence in 30 iterations (or a solution that
 * turned NaN or infinite from a finite B, which LAPACK's test would pass). Returns 0, -i for a
 * bad i-th argument (X 8, ldx 9, iter 10; X must not share memory with A or B), or k > 0 when the
 * leading minor of order k of A is not positive definite. */
TESSERA_EXPORT int tessera_dsposv(char uplo, int n, int nrhs, double *A, int lda, const double *B, int ldb, double *X,
                                  int ldx, int *iter);
TESSERA_EXPORT int tessera_zcposv(char uplo, int n, int nrhs, tessera_complex_double *A, int lda,
                                  const tessera_complex_double *B, int ldb, tessera_complex_double *X, int ldx,
                                  int *iter);

/* Batched mode: batch matrices of order n, matrix k at A + k * strideA, B_k at B + k * strideB
 * (strideA >= lda * n and strideB >= ldb * nrhs when batch > 1 and the matrices are not empty;
 * docs/user-guide.md). Return value: 0, or -i for a bad i-th argument; info[k] is LAPACK's info of
 * matrix k (a matrix that is not positive definite only sets its own info; posv leaves its B as
 * it was). The mode comes from TESSERA_MODE as for the other calls. */
TESSERA_EXPORT int tessera_dpotrf_batched(char uplo, int n, double *A, int lda, long long strideA, int batch, int *info);
TESSERA_EXPORT int tessera_spotrf_batched(char uplo, int n, float *A, int lda, long long strideA, int batch, int *info);
TESSERA_EXPORT int tessera_dposv_batched(char uplo, int n, int nrhs, double *A, int lda, long long strideA, double *B, int ldb,
                          long long strideB, int batch, int *info);
TESSERA_EXPORT int tessera_sposv_batched(char uplo, int n, int nrhs, float *A, int lda, long long strideA, float *B, int ldb,
                          long long strideB, int batch, int *info);
TESSERA_EXPORT int tessera_zpotrf_batched(char uplo, int n, tessera_complex_double *A, int lda, long long strideA, int batch,
                                          int *info);
TESSERA_EXPORT int tessera_zposv_batched(char uplo, int n, int nrhs, tessera_complex_double *A, int lda, long long strideA,
                                         tessera_complex_double *B, int ldb, long long strideB, int batch, int *info);
TESSERA_EXPORT int tessera_cpotrf_batched(char uplo, int n, tessera_complex_float *A, int lda, long long strideA, int batch,
                                          int *info);
TESSERA_EXPORT int tessera_cposv_batched(char uplo, int n, int nrhs, tessera_complex_float *A, int lda, long long strideA,
                                         tessera_complex_float *B, int ldb, long long strideB, int batch, int *info);
/* A_k^{-1} from the factors of potrf_batched (LAPACK's xPOTRI on each matrix): the triangle uplo
 * of each factor receives that triangle of its matrix's inverse. info[k] = j > 0 when factor k
 * has a zero at diagonal entry j (that matrix is left as it was). Return value and arguments as
 * tessera_?potrf_batched's. */
TESSERA_EXPORT int tessera_dpotri_batched(char uplo, int n, double *A, int lda, long long strideA, int batch, int *info);
TESSERA_EXPORT int tessera_spotri_batched(char uplo, int n, float *A, int lda, long long strideA, int batch, int *info);
TESSERA_EXPORT int tessera_zpotri_batched(char uplo, int n, tessera_complex_double *A, int lda, long long strideA, int batch, int *info);
TESSERA_EXPORT int tessera_cpotri_batched(char uplo, int n, tessera_complex_float *A, int lda, long long strideA, int batch, int *info);

/* Device-resident dense forms (tessera/device.hpp): A and B are in GPU memory (cudaMalloc'ed, or
 * managed), column-major; stream is a cudaStream_t (NULL: the legacy default stream). The call
 * waits for the work already on stream, factors or solves through Tessera's tile graph on the
 * shared runtime, the tiles registered in place on the GPU, and returns once the result is in A
 * (and B). Return value as for the host forms, zero sizes included (0 at once); a host pointer for
 * A or B is an invalid argument too (-3 for A in potrf, -4 for A and -6 for B in potrs and posv); a
 * runtime without a CUDA worker, or a Tessera built without CUDA, returns TESSERA_RUNTIME_FAILURE. */
TESSERA_EXPORT int tessera_dpotrf_device(char uplo, int n, double *A, int lda, void *stream);
TESSERA_EXPORT int tessera_spotrf_device(char uplo, int n, float *A, int lda, void *stream);
TESSERA_EXPORT int tessera_dpotrs_device(char uplo, int n, int nrhs, const double *A, int lda, double *B, int ldb,
                                         void *stream);
TESSERA_EXPORT int tessera_spotrs_device(char uplo, int n, int nrhs, const float *A, int lda, float *B, int ldb,
                                         void *stream);
TESSERA_EXPORT int tessera_dposv_device(char uplo, int n, int nrhs, double *A, int lda, double *B, int ldb, void *stream);
TESSERA_EXPORT int tessera_sposv_device(char uplo, int n, int nrhs, float *A, int lda, float *B, int ldb, void *stream);
/* The refined solve (tessera_dsposv) on A, B and X in GPU memory (tessera::device::posv_refined):
 * tensor_cores says where the single-precision factorization's trailing updates run
 * (tessera::TensorCores): in FP32, or on the tensor cores with TF32, BF16 or FP16 operands. Returns
 * LAPACK's info and sets *iter as tessera_dsposv; -11 for another tensor_cores; a host pointer for
 * A, B or X is -4, -6 or -8. */
#define TESSERA_TENSOR_CORES_OFF 0
#define TESSERA_TENSOR_CORES_TF32 1
#define TESSERA_TENSOR_CORES_BF16 2
#define TESSERA_TENSOR_CORES_FP16 3
TESSERA_EXPORT int tessera_dsposv_device(char uplo, int n, int nrhs, double *A, int lda, const double *B, int ldb,
                                         double *X, int ldx, int *iter, int tensor_cores, void *stream);
/* The complex refined solve (tessera_zcposv) on A, B and X in GPU memory: its factor in
 * complex<float>, without tensor cores. Returns LAPACK's info and sets *iter as tessera_zcposv. */
TESSERA_EXPORT int tessera_zcposv_device(char uplo, int n, int nrhs, tessera_complex_double *A, int lda,
                                         const tessera_complex_double *B, int ldb, tessera_complex_double *X, int ldx,
                                         int *iter, void *stream);
/* As tessera_?potrf_device, with LAPACK's info written to *info (one int in GPU memory) in the
 * order of stream instead of returned: where the call is one vendor call (order up to 16384 on a
 * runtime with one GPU that runs it as gpu mode; tessera/device.hpp) it returns without waiting
 * for the GPU, else once the factor is complete. Returns 0, or as tessera_?potrf_device for misuse
 * (-5 for a null info, or one in host memory). */
TESSERA_EXPORT int tessera_dpotrf_device_ex(char uplo, int n, double *A, int lda, int *info, void *stream);
TESSERA_EXPORT int tessera_spotrf_device_ex(char uplo, int n, float *A, int lda, int *info, void *stream);
/* A^{-1} from its Cholesky factor in GPU memory (tessera::device::potri: tile tasks of the
 * triangular inverse and its product, the call returning once the inverse is complete): return
 * value as tessera_dpotri's (-3 for a host pointer A). */
TESSERA_EXPORT int tessera_dpotri_device(char uplo, int n, double *A, int lda, void *stream);
TESSERA_EXPORT int tessera_spotri_device(char uplo, int n, float *A, int lda, void *stream);
TESSERA_EXPORT int tessera_zpotri_device(char uplo, int n, tessera_complex_double *A, int lda, void *stream);
TESSERA_EXPORT int tessera_cpotri_device(char uplo, int n, tessera_complex_float *A, int lda, void *stream);
/* The complex Hermitian forms of the dense device calls above. */
TESSERA_EXPORT int tessera_zpotrf_device(char uplo, int n, tessera_complex_double *A, int lda, void *stream);
TESSERA_EXPORT int tessera_cpotrf_device(char uplo, int n, tessera_complex_float *A, int lda, void *stream);
TESSERA_EXPORT int tessera_zpotrf_device_ex(char uplo, int n, tessera_complex_double *A, int lda, int *info,
                                            void *stream);
TESSERA_EXPORT int tessera_cpotrf_device_ex(char uplo, int n, tessera_complex_float *A, int lda, int *info,
                                            void *stream);
TESSERA_EXPORT int tessera_zpotrs_device(char uplo, int n, int nrhs, const tessera_complex_double *A, int lda,
                                         tessera_complex_double *B, int ldb, void *stream);
TESSERA_EXPORT int tessera_cpotrs_device(char uplo, int n, int nrhs, const tessera_complex_float *A, int lda,
                                         tessera_complex_float *B, int ldb, void *stream);
TESSERA_EXPORT int tessera_zposv_device(char uplo, int n, int nrhs, tessera_complex_double *A, int lda,
                                        tessera_complex_double *B, int ldb, void *stream);
TESSERA_EXPORT int tessera_cposv_device(char uplo, int n, int nrhs, tessera_complex_float *A, int lda,
                                        tessera_complex_float *B, int ldb, void *stream);

/* Device-resident batched mode (tessera/device.hpp): the same strided batches with A, B and info
 * in GPU memory; stream is a cudaStream_t (NULL: the default stream). The _ex calls enqueue the
 * work on the stream and return without waiting: info[k] stays in device memory. potrs skips the
 * matrices whose info[k] is not 0 (info may be NULL there: every matrix is solved). Return value:
 * 0, or -i for a bad i-th argument (uplo 1, ..., as in the batched calls above; stream is last).
 * tessera_?potrf_batched_device waits for the stream, writes each matrix's info to host_info
 * (host memory, batch ints; may be NULL) and returns how many matrices are not positive definite,
 * or -i. These calls need no runtime; a CUDA failure, or a Tessera built without CUDA, returns
 * TESSERA_RUNTIME_FAILURE. */
TESSERA_EXPORT int tessera_dpotrf_batched_device_ex(char uplo, int n, double *A, int lda, long long strideA, int batch,
                                                    int *info, void *stream);
TESSERA_EXPORT int tessera_spotrf_batched_device_ex(char uplo, int n, float *A, int lda, long long strideA, int batch,
                                                    int *info, void *stream);
TESSERA_EXPORT int tessera_dpotrs_batched_device_ex(char uplo, int n, int nrhs, const double *A, int lda,
                                                    long long strideA, double *B, int ldb, long long strideB, int batch,
                                                    const int *info, void *stream);
TESSERA_EXPORT int tessera_spotrs_batched_device_ex(char uplo, int n, int nrhs, const float *A, int lda,
                                                    long long strideA, float *B, int ldb, long long strideB, int batch,
                                                    const int *info, void *stream);
TESSERA_EXPORT int tessera_dposv_batched_device_ex(char uplo, int n, int nrhs, double *A, int lda, long long strideA,
                                                   double *B, int ldb, long long strideB, int batch, int *info,
                                                   void *stream);
TESSERA_EXPORT int tessera_sposv_batched_device_ex(char uplo, int n, int nrhs, float *A, int lda, long long strideA,
                                                   float *B, int ldb, long long strideB, int batch, int *info,
                                                   void *stream);
/* Out of place (tessera::device::potrf_batched_ex with strides): A_k at A + k * strideA, element (i, j)
 * at i * rowStrideA + j * colStrideA (any strides; A is only read), its factor written to L_k at
 * L + k * strideL (column-major, ldl) with zeros in the strict opposite triangle, in one kernel launch,
 * never waiting. L must not share memory with A unless L == A, rowStrideA 1, colStrideA ldl, strideA
 * strideL (in place). Positions: uplo 1, n 2, A 3, rowStrideA 4, colStrideA 5, strideA 6, L 7, ldl 8,
 * strideL 9, batch 10, info 11. */
TESSERA_EXPORT int tessera_dpotrf_batched_device_out_of_place_ex(char uplo, int n, const double *A,
                                                                 long long rowStrideA, long long colStrideA,
                                                                 long long strideA, double *L, int ldl,
                                                                 long long strideL, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_spotrf_batched_device_out_of_place_ex(char uplo, int n, const float *A,
                                                                 long long rowStrideA, long long colStrideA,
                                                                 long long strideA, float *L, int ldl,
                                                                 long long strideL, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_dpotrf_batched_device(char uplo, int n, double *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_spotrf_batched_device(char uplo, int n, float *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_zpotrf_batched_device_ex(char uplo, int n, tessera_complex_double *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_zpotrs_batched_device_ex(char uplo, int n, int nrhs, const tessera_complex_double *A, int lda,
                                                    long long strideA, tessera_complex_double *B, int ldb, long long strideB,
                                                    int batch, const int *info, void *stream);
TESSERA_EXPORT int tessera_zposv_batched_device_ex(char uplo, int n, int nrhs, tessera_complex_double *A, int lda, long long strideA,
                                                   tessera_complex_double *B, int ldb, long long strideB, int batch, int *info,
                                                   void *stream);
TESSERA_EXPORT int tessera_zpotrf_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_double *A,
                                                                 long long rowStrideA, long long colStrideA,
                                                                 long long strideA, tessera_complex_double *L, int ldl,
                                                                 long long strideL, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_zpotrf_batched_device(char uplo, int n, tessera_complex_double *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_cpotrf_batched_device_ex(char uplo, int n, tessera_complex_float *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_cpotrs_batched_device_ex(char uplo, int n, int nrhs, const tessera_complex_float *A, int lda,
                                                    long long strideA, tessera_complex_float *B, int ldb, long long strideB,
                                                    int batch, const int *info, void *stream);
TESSERA_EXPORT int tessera_cposv_batched_device_ex(char uplo, int n, int nrhs, tessera_complex_float *A, int lda, long long strideA,
                                                   tessera_complex_float *B, int ldb, long long strideB, int batch, int *info,
                                                   void *stream);
TESSERA_EXPORT int tessera_cpotrf_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_float *A,
                                                                 long long rowStrideA, long long colStrideA,
                                                                 long long strideA, tessera_complex_float *L, int ldl,
                                                                 long long strideL, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_cpotrf_batched_device(char uplo, int n, tessera_complex_float *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
/* The inverses from device-resident factors (tessera::device::potri_batched_ex, one kernel launch,
 * never waiting): in place, the triangle uplo of each factor receives that triangle of its
 * matrix's inverse, info[k] = j > 0 (device memory) when factor k has a zero at diagonal entry j
 * (that matrix is left as it was); arguments as tessera_?potrf_batched_device_ex's. Out of place,
 * factor k is read through element strides as tessera_?potrf_batched_device_out_of_place_ex reads
 * a matrix, and its whole inverse (both triangles) written to X + k * strideX, column-major with
 * leading dimension ldx (a failed matrix's X_k is NaN; info may be NULL there, no infos written);
 * positions as that call's (L 3, X 7). The checking form waits for the stream, writes each
 * matrix's info to host_info (may be NULL) and returns how many factors have a zero on their
 * diagonal. */
TESSERA_EXPORT int tessera_dpotri_batched_device_ex(char uplo, int n, double *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_dpotri_batched_device_out_of_place_ex(char uplo, int n, const double *L,
                                                                 long long rowStrideL, long long colStrideL,
                                                                 long long strideL, double *X, int ldx,
                                                                 long long strideX, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_dpotri_batched_device(char uplo, int n, double *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_spotri_batched_device_ex(char uplo, int n, float *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_spotri_batched_device_out_of_place_ex(char uplo, int n, const float *L,
                                                                 long long rowStrideL, long long colStrideL,
                                                                 long long strideL, float *X, int ldx,
                                                                 long long strideX, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_spotri_batched_device(char uplo, int n, float *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_zpotri_batched_device_ex(char uplo, int n, tessera_complex_double *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_zpotri_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_double *L,
                                                                 long long rowStrideL, long long colStrideL,
                                                                 long long strideL, tessera_complex_double *X, int ldx,
                                                                 long long strideX, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_zpotri_batched_device(char uplo, int n, tessera_complex_double *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);
TESSERA_EXPORT int tessera_cpotri_batched_device_ex(char uplo, int n, tessera_complex_float *A, int lda, long long strideA,
                                                    int batch, int *info, void *stream);
TESSERA_EXPORT int tessera_cpotri_batched_device_out_of_place_ex(char uplo, int n, const tessera_complex_float *L,
                                                                 long long rowStrideL, long long colStrideL,
                                                                 long long strideL, tessera_complex_float *X, int ldx,
                                                                 long long strideX, int batch, int *info,
                                                                 void *stream);
TESSERA_EXPORT int tessera_cpotri_batched_device(char uplo, int n, tessera_complex_float *A, int lda, long long strideA, int batch,
                                                 int *host_info, void *stream);

/* The library's version, e.g. "0.1.0". */
TESSERA_EXPORT const char *tessera_version(void);

/* Why the last call of this API on the calling thread returned a negative value, e.g.
 * "tessera_dpotrf: lda (argument 4) must be >= max(1, n)"; "" when that call returned 0 or a
 * positive info, or before any call. Valid until this thread's next call. */
TESSERA_EXPORT const char *tessera_last_error(void);

/* Progress of this thread's later host calls (potrf, potrs, posv and their batched forms) that
 * run as tasks: callback(fraction done in [0, 1], user_data) on the calling thread every
 * interval_ms (>= 1) while the call runs and once with 1 at its end; a call that runs on the
 * calling thread (small work) reports nothing. A null callback turns it off. Returns 0, or -3
 * for interval_ms < 1 (nothing changed). */
typedef void (*tessera_progress_callback)(double fraction, void *user_data);
TESSERA_EXPORT int tessera_set_progress(tessera_progress_callback callback, void *user_data, int interval_ms);

#ifdef __cplusplus
}
#endif

#endif
