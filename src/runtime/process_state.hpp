// The process-wide settings Tessera changes, each with one owner here. Each is counted: the first
// user changes the setting, the last one puts back what the program had.
//   - BLAS threads: Tessera's CPU tasks call single-threaded BLAS (parallelism comes from the task
//     graph); the program's own thread count returns when no Tessera worker may run a task.
//   - StarPU's task profiling: on while a traced request is in flight.
// Environment variables have their owner in environment.cpp.
#pragma once

namespace tessera::detail {

// Single-threaded BLAS for the guard's lifetime (nested guards share it).
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

// StarPU's task profiling on for the guard's lifetime (a program that had it on keeps it on).
class TaskProfiling {
 public:
  TaskProfiling();
  ~TaskProfiling();
  TaskProfiling(const TaskProfiling&) = delete;
  TaskProfiling& operator=(const TaskProfiling&) = delete;
};

}  // namespace tessera::detail
