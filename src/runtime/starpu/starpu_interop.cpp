#include "tessera/starpu_interop.hpp"

#include "runtime_control.hpp"
#include "tessera/precision.hpp"

namespace tessera::starpu_interop {

// TileMatrix's friend: the only place outside the runtime that turns its opaque handles into
// StarPU's.
struct TileHandles {
  template <class T>
  static starpu_data_handle_t handle(const TileMatrix<T>& A, int i, int j) {
    return static_cast<starpu_data_handle_t>(A.stored_handle(i, j));
  }
};

template <class T>
starpu_data_handle_t tile_handle(const TileMatrix<T>& A, int i, int j) {
  const starpu_data_handle_t handle = TileHandles::handle(A, i, j);
  detail::RuntimeControl::handles_handed_out(A.runtime());
  return handle;
}

#define TESSERA_INSTANTIATE(T)                                                              \
  template TESSERA_EXPORT starpu_data_handle_t tile_handle(const TileMatrix<T>&, int, int);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::starpu_interop
