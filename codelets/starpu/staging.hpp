// The copies of a LAPACK-layout call whose tiles live on a GPU (TaskContext::staging): insert_copy_in
// and insert_copy_out take these instead of their CPU tasks (codelets/starpu/stage.cpp).
#pragma once

#include "tasks.hpp"

namespace tessera::detail {

template <class T>
void insert_staged_copy_in(const TaskContext& ctx, const BlockMap<T>& from, const TileRef& tile, const TaskHints& hints);
template <class T>
void insert_staged_copy_out(const TaskContext& ctx, const TileRef& tile, const BlockMap<T>& to, bool skip_after_failure,
                            const TaskHints& hints);

}  // namespace tessera::detail
