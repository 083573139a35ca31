// Compile-time loop: calls f(std::integral_constant<int, I>{}) for I = Begin .. End-1, so the
// body can index register arrays and use `if constexpr` with the loop index.
#pragma once

#include <type_traits>

namespace tessera::kernels::cuda::batched_detail {

template <int Begin, int End, class F>
__device__ __forceinline__ void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(f);
  }
}

}  // namespace tessera::kernels::cuda::batched_detail
