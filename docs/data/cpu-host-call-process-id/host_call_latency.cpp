// Small host potrf calls through tessera::potrf: microseconds per call (median of rounds).
#include <tessera/tessera.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
int main() {
  tessera::Runtime runtime;
  for (int n : {2, 8, 32}) {
    std::vector<double> A0(n * n), A(n * n);
    for (int j = 0; j < n; ++j) for (int i = 0; i < n; ++i) A0[i + j * n] = i == j ? n + 1.0 : 0.5 / (1 + i + j);
    std::vector<double> rounds;
    for (int r = 0; r < 7; ++r) {
      const int calls = 100000;
      auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) { std::copy(A0.begin(), A0.end(), A.begin()); if (tessera::potrf(runtime, n, A.data(), n) != 0) return 1; }
      rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
    }
    std::sort(rounds.begin(), rounds.end());
    std::printf("n %3d: %.3f us per call (best %.3f)\n", n, rounds[3], rounds[0]);
  }
}
