// What the distributed API keeps behind its public classes: the communicator's state (StarPU-MPI's
// inserter, the grid, the data tags handed out) and the tiles of a distributed matrix, each
// registered with StarPU-MPI under its owner's rank.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "block_cyclic.hpp"
#include "mpi_inserter.hpp"
#include "tessera/distributed.hpp"

namespace tessera::detail {

struct ContextState {
  ContextState(Runtime& runtime_, MPI_Comm user_comm_, MPI_Comm comm_, distributed::Grid grid_, int rank_, int size_)
      : runtime(&runtime_), user_comm(user_comm_), comm(comm_), grid(grid_), rank(rank_), size(size_), inserter(comm_, rank_) {}

  Runtime* runtime;
  MPI_Comm user_comm;  // the application's
  MPI_Comm comm;       // a duplicate of it: Tessera's and StarPU-MPI's messages stay apart from the application's
  distributed::Grid grid;
  int rank;
  int size;
  MpiInserter inserter;
  std::int64_t next_tag = 0;  // StarPU-MPI data tags, unique on the communicator
  bool operation_in_flight = false;  // a CollectiveOperation not yet waited for

  BlockCyclic layout() const noexcept { return {grid.rows, grid.cols, rank / grid.cols, rank % grid.cols}; }
  // `count` consecutive tags; every rank takes them in the same order (collective construction).
  std::int64_t take_tags(std::size_t count) noexcept {
    const std::int64_t first = next_tag;
    next_tag += static_cast<std::int64_t>(count);
    return first;
  }
};

// The tiles of a distributed matrix: every stored tile has a handle on every rank (StarPU-MPI
// needs one wherever a task names the tile), with host memory on its owner only.
class DistributedTiles {
 public:
  DistributedTiles(ContextState& context, int rows, int cols, int nb, TileStructure structure, Uplo uplo,
                   std::size_t element_size);
  // Waits for the tasks using the tiles, then unregisters them.
  ~DistributedTiles();
  DistributedTiles(const DistributedTiles&) = delete;
  DistributedTiles& operator=(const DistributedTiles&) = delete;

  const TileGrid& grid() const noexcept { return grid_; }
  Uplo uplo() const noexcept { return uplo_; }
  ContextState& context() const noexcept { return *context_; }
  bool owns(int i, int j) const noexcept {
    return tile_owner(context_->layout(), grid_.structure(), uplo_, i, j) == context_->rank;
  }

 private:
  static TileGrid register_tiles(ContextState& context, int rows, int cols, int nb, TileStructure structure, Uplo uplo,
                                 std::size_t element_size, void*& storage);

  ContextState* context_;
  Uplo uplo_;
  void* storage_ = nullptr;  // this rank's tiles, one after the other
  TileGrid grid_;
};

struct MatrixState {
  MatrixState(ContextState& context_, distributed::Context& public_context_, int rows, int cols, int nb,
              TileStructure structure, Uplo uplo, std::size_t element_size)
      : context(&context_), public_context(&public_context_), tiles(context_, rows, cols, nb, structure, uplo, element_size) {}

  ContextState* context;
  distributed::Context* public_context;
  DistributedTiles tiles;

  bool symmetric() const noexcept { return tiles.grid().structure() == TileStructure::symmetric_lower; }
};

// The states behind the public classes.
struct DistributedAccess {
  static ContextState& state(const distributed::Context& context);
  // A distributed::Operation around a CollectiveOperation (collective.hpp) started here.
  template <class Insert>
  static distributed::Operation start(ContextState& context, Mode mode, GpuKernels kernels, Insert&& insert,
                                      std::shared_ptr<Trace> trace);
  // What wait() does on every rank once the ranks agreed on the info (CollectiveOperation::then).
  static void then(distributed::Operation& operation, std::function<void(int)> finish);
  template <class T>
  static MatrixState& state(const distributed::Matrix<T>& matrix);
};

}  // namespace tessera::detail
