#include "mpi_inserter.hpp"

#include <starpu_mpi.h>

#include <vector>

namespace tessera::detail {

namespace {

using Descriptions = std::vector<starpu_data_descr>;

Descriptions describe(const TaskBuffer* buffers, int count) {
  Descriptions descriptions(static_cast<std::size_t>(count));
  for (int b = 0; b < count; ++b)
    descriptions[static_cast<std::size_t>(b)] = {static_cast<starpu_data_handle_t>(buffers[b].handle), buffers[b].mode};
  return descriptions;
}

}  // namespace

starpu_task* MpiInserter::build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const {
  Descriptions descriptions = describe(buffers, count);
  return starpu_mpi_task_build(comm_, codelet, STARPU_DATA_MODE_ARRAY, descriptions.data(), count, STARPU_PRIORITY,
                               priority, 0);
}

void MpiInserter::post_build(starpu_codelet* codelet, const TaskBuffer* buffers, int count, int priority) const {
  Descriptions descriptions = describe(buffers, count);
  starpu_mpi_task_post_build(comm_, codelet, STARPU_DATA_MODE_ARRAY, descriptions.data(), count, STARPU_PRIORITY,
                             priority, 0);
}

}  // namespace tessera::detail
