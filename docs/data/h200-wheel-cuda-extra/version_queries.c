#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(void){
  int v=0; double t0=now();
  cudaError_t e=cudaRuntimeGetVersion(&v); double t1=now();
  int b=0; cublasStatus_t s=cublasGetProperty(MAJOR_VERSION,&b); double t2=now();
  int c=0; cusolverStatus_t z=cusolverGetProperty(MAJOR_VERSION,&c); double t3=now();
  int n=0; cudaError_t g=cudaGetDeviceCount(&n); double t4=now();
  printf("cudaRuntimeGetVersion %d (%d) %.3f ms; cublasGetProperty %d (%d) %.3f ms; cusolverGetProperty %d (%d) %.3f ms; cudaGetDeviceCount %d (%d) %.3f ms\n", e,v,t1-t0,s,b,t2-t1,z,c,t3-t2,g,n,t4-t3);
  return 0;
}
