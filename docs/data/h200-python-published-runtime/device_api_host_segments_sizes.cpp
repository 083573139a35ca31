// Host time of tessera::device::potrf_ex (out of place, one matrix) cut by the timing marks of an
// instrumented library, and the pieces it calls.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tessera/tessera.hpp"
extern "C" long long tessera_probe_marks[16];
using clk = std::chrono::steady_clock;
static long long now() { return clk::now().time_since_epoch().count(); }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main() {
  tessera::Runtime rt;
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int n : {64, 128, 256}) {
    std::vector<double> a((size_t)n * n);
    for (int j = 0; j < n; ++j) for (int i = 0; i < n; ++i) a[i + (size_t)j * n] = (i == j ? n : 0) + 1.0 / (1 + i + j);
    double *da, *dl; int* info;
    cudaMalloc(&da, sizeof(double) * n * n); cudaMalloc(&dl, sizeof(double) * n * n); cudaMalloc(&info, sizeof(int));
    cudaMemcpy(da, a.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice);
    tessera::FactorOptions o;
    std::vector<std::vector<double>> seg(16);
    std::vector<double> total, synced, env, attrs, record, getid, plain;
    cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    for (int r = 0; r < 600; ++r) {
      std::fill(tessera_probe_marks, tessera_probe_marks + 16, 0);
      long long t0 = now();
      tessera::device::potrf_ex(rt, n, (const double*)da, 1, n, dl, n, info, (tessera::device::Stream)s, o);
      long long t1 = now();
      cudaStreamSynchronize(s);
      long long t2 = now();
      if (r < 100) continue;
      total.push_back((t1 - t0) / 1e3); synced.push_back((t2 - t0) / 1e3);
      long long prev = t0;
      for (int i = 0; i < 13; ++i) if (tessera_probe_marks[i]) { seg[i].push_back((tessera_probe_marks[i] - prev) / 1e3); prev = tessera_probe_marks[i]; }
      seg[15].push_back((t1 - prev) / 1e3);
      long long e0 = now(); tessera::FactorOptions f = tessera::FactorOptions::from_environment(); (void)f; long long e1 = now();
      env.push_back((e1 - e0) / 1e3);
      cudaPointerAttributes at; e0 = now(); cudaPointerGetAttributes(&at, da); e1 = now(); attrs.push_back((e1 - e0) / 1e3);
      e0 = now(); cudaEventRecord(ev, s); e1 = now(); record.push_back((e1 - e0) / 1e3);
      unsigned long long id; e0 = now(); cudaStreamGetId(s, &id); e1 = now(); getid.push_back((e1 - e0) / 1e3);
      cudaStreamSynchronize(s);
      e0 = now(); tessera::device::potrf_ex(rt, n, dl, n, info, (tessera::device::Stream)s, o); e1 = now(); plain.push_back((e1 - e0) / 1e3);
      cudaStreamSynchronize(s);
    }
    int hi; cudaMemcpy(&hi, info, 4, cudaMemcpyDeviceToHost);
    printf("n=%d potrf_ex out of place: host %.2f synced %.2f us (median of 500), info %d\n", n, med(total), med(synced), hi);
    const char* names[16] = {"entry..arg check", "require_cuda_workers", "3 device_holding", "load kernel", "device_plan",
      "on_callers_stream", "device+lease+bind", "(factor entry)", "workspace query", "cusolver potrf", "check kernel", "event record (enqueued)", "upper/return", "", "", "to return"};
    for (int i = 0; i < 16; ++i) if (!seg[i].empty()) printf("   mark %2d %-26s %6.2f\n", i, names[i], med(seg[i]));
    printf("   FactorOptions::from_environment %.2f, cudaPointerGetAttributes %.2f, cudaEventRecord %.2f, cudaStreamGetId %.2f\n", med(env), med(attrs), med(record), med(getid));
    printf("   potrf_ex in place host %.2f\n", med(plain));
    cudaFree(da); cudaFree(dl); cudaFree(info);
  }
}
