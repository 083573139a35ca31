// The executed schedule of one or more requests: for each task, its kernel, its tile, the worker
// that ran it and when. Pass a Trace in FactorOptions::trace; once the request is done, write it
// as Chrome trace-event JSON (.json: Perfetto, chrome://tracing) or as an SVG Gantt chart (.svg).
#pragma once

#include "tessera/export.h"

#include <mutex>
#include <string>
#include <vector>

#include "tessera/options.hpp"

namespace tessera {

struct TraceEvent {
  TaskKind kind = TaskKind::other;
  int step = 0;             // k of the algorithm's loop
  int i = 0;                // the tile the task writes
  int j = 0;
  int worker = -1;          // StarPU worker id
  std::string worker_name;  // "CPU 0", "CUDA 0", ...
  double start_us = 0;      // runtime clock, microseconds
  double end_us = 0;
};

// What the runtime moved from one memory node to another while traced requests ran: host memory
// to a GPU and back, and from GPU to GPU (peer to peer where the GPUs allow it). StarPU's counters
// are process-wide: with several traced requests in flight at once, each sees what moved since
// the latest of them started. A distributed operation adds the tiles this rank sent to each
// other rank, from "rank R" to "rank D".
struct TraceTransfer {
  std::string from;  // StarPU's memory node names: "NUMA 0" (host memory), "CUDA 0", ...
  std::string to;
  long long bytes = 0;
  long long count = 0;
};

class TESSERA_EXPORT Trace {
 public:
  // With `save_to`, the destructor writes the trace to that file (the format from its extension):
  // how TESSERA_TRACE works. Throws InvalidArgument for an extension other than .json or .svg.
  explicit Trace(std::string save_to = {});
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Thread-safe: tasks finish on the runtime's worker threads.
  void record(TraceEvent event);
  // Every event so far, by start time.
  std::vector<TraceEvent> events() const;
  // Adds to the totals of the same pair of memory nodes.
  void record(const TraceTransfer& transfer);
  // The totals per pair of memory nodes, by source then destination.
  std::vector<TraceTransfer> transfers() const;
  // The plan of each request traced (its mode, tile size and path, one line per decision and its
  // reason), in the order the requests were made.
  void record_plan(std::vector<std::string> reasons);
  std::vector<std::vector<std::string>> plans() const;
  void clear();

  // Times relative to the first start, in microseconds (Chrome's unit); the transfers and the
  // plans under "otherData".
  std::string chrome_json() const;
  // One row per worker, one colour per kernel, a legend, a time axis and the transfers; the plans
  // in its description (<desc>).
  std::string svg() const;
  // By extension: .json or .svg. Throws InvalidArgument for another extension, Error when the
  // file cannot be written.
  void write(const std::string& path) const;
  // Throws InvalidArgument unless the file name ends in .json or .svg.
  static void check_file_name(const std::string& path);

 private:
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  std::vector<TraceTransfer> transfers_;
  std::vector<std::vector<std::string>> plans_;
  std::string save_to_;
};

}  // namespace tessera
