// A backend of the task interface (src/algorithms/tasks.hpp) that records the DAG instead of running it on
// StarPU: each task with its kind, scheduling hints and tile accesses, and the dependencies StarPU would
// infer from those accesses (sequential consistency: a reader waits for the last writer, a writer
// for the last writer and every reader since). Each task also keeps a host implementation, so a
// recorded DAG can be executed in any order its dependencies allow and its result checked.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "tasks.hpp"
#include "tile_grid.hpp"

namespace tessera::detail {

struct RecordedAccess {
  int i;        // tile coordinates (TileRef::i, TileRef::j)
  int j;
  const void* handle;
  bool writes;  // read-write; otherwise read only
};

struct RecordedTask {
  TaskKind kind;
  TaskHints hints;
  std::vector<RecordedAccess> accesses;  // in the order the codelet lists its buffers
  std::vector<std::size_t> predecessors;  // indices of the tasks this one waits for, increasing
  std::function<void()> run;
};

// The recording backend's submission: what the algorithms inserted, in insertion order.
class Submission {
 public:
  void record(TaskKind kind, const TaskHints& hints, std::vector<RecordedAccess> accesses, std::function<void()> run);
  const std::vector<RecordedTask>& tasks() const noexcept { return tasks_; }

  // A factorization failure reported by a task (the smallest global column, 1-based; 0: none).
  void report_failure(int info);
  int info() const noexcept { return info_; }

  // Runs every task once, each after its predecessors, choosing at random among the ready ones.
  void execute_in_random_order(std::mt19937& random) const;
  // Tasks on the longest chain of dependencies.
  int longest_path() const;
  // Memory for a scratch tile, kept as long as the submission.
  void* scratch(std::size_t bytes);

 private:
  struct HandleState {
    long last_writer = -1;
    std::vector<std::size_t> readers_since;
  };
  std::vector<RecordedTask> tasks_;
  std::map<const void*, HandleState> handles_;
  std::vector<std::vector<unsigned char>> scratch_;
  mutable int info_ = 0;
};

// Tiles held in host memory, one contiguous column-major buffer per stored tile (leading
// dimension = tile height), and the grid whose handles point at them.
template <class T>
class HostTiles {
 public:
  HostTiles(int rows, int cols, int nb, TileStructure structure);
  const TileGrid& grid() const noexcept { return grid_; }

 private:
  std::vector<std::vector<T>> storage_;
  TileGrid grid_;
};

inline TaskContext recording_context(Submission& submission) {
  TaskContext ctx;
  ctx.submission = &submission;
  return ctx;
}

}  // namespace tessera::detail
