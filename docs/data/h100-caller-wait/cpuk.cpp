// Per-core rates of the tile kernels at nb, one thread alone and T threads at once.
#include <cblas.h>
#include <lapacke.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <atomic>
extern "C" void openblas_set_num_threads(int);
using C = std::chrono::steady_clock;
struct R { double gemm, syrk, trsm, potrf; };
static R run(int nb, int reps) {
  std::vector<double> A(nb*nb), B(nb*nb), Cm(nb*nb), L(nb*nb);
  for (int i=0;i<nb*nb;++i){A[i]=0.001*(i%97);B[i]=0.002*(i%89);Cm[i]=0;L[i]=0.0001*(i%13);} 
  for (int i=0;i<nb;++i) L[i+i*nb]=nb;
  auto t=[&](auto f){ f(); auto s=C::now(); for(int r=0;r<reps;++r) f(); return std::chrono::duration<double>(C::now()-s).count()/reps; };
  double fl=double(nb)*nb*nb;
  R r;
  r.gemm = 2*fl/t([&]{cblas_dgemm(CblasColMajor,CblasNoTrans,CblasTrans,nb,nb,nb,-1,A.data(),nb,B.data(),nb,1,Cm.data(),nb);})*1e-9;
  r.syrk = fl/t([&]{cblas_dsyrk(CblasColMajor,CblasLower,CblasNoTrans,nb,nb,-1,A.data(),nb,1,Cm.data(),nb);})*1e-9;
  r.trsm = fl/t([&]{cblas_dtrsm(CblasColMajor,CblasRight,CblasLower,CblasTrans,CblasNonUnit,nb,nb,1,L.data(),nb,B.data(),nb);})*1e-9;
  std::vector<double> P(nb*nb);
  r.potrf = fl/3/t([&]{ for(int j=0;j<nb;++j) for(int i=0;i<nb;++i) P[i+j*nb]=(i==j?nb:0.0)+0.001; LAPACKE_dpotrf(LAPACK_COL_MAJOR,'L',nb,P.data(),nb);})*1e-9;
  return r;
}
int main(int argc,char**argv){
  openblas_set_num_threads(1);
  int T = argc>1?atoi(argv[1]):16;
  for (int nb : {192, 256, 320, 384, 512}) {
    R one = run(nb, 40);
    std::vector<R> rs(T); std::vector<std::thread> th;
    for(int i=0;i<T;++i) th.emplace_back([&,i]{ rs[i]=run(nb,40); });
    for(auto&x:th) x.join();
    R m{0,0,0,0}; for(auto&x:rs){m.gemm+=x.gemm/T;m.syrk+=x.syrk/T;m.trsm+=x.trsm/T;m.potrf+=x.potrf/T;}
    printf("nb %4d  alone: gemm %6.1f syrk %6.1f trsm %6.1f potrf %6.1f | %d at once (mean): gemm %6.1f syrk %6.1f trsm %6.1f potrf %6.1f GFLOP/s\n",
      nb, one.gemm, one.syrk, one.trsm, one.potrf, T, m.gemm, m.syrk, m.trsm, m.potrf);
  }
}
