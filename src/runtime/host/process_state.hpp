// The process-wide settings Tessera changes, each with one owner here. Each is counted: the first
// user changes the setting, the last one puts back what the program had.
//   - BLAS threads: Tessera's CPU tasks call single-threaded BLAS (parallelism comes from the task
//     graph); the program's own thread count returns when no Tessera worker may run a task.
//   - StarPU's task profiling: on while a traced request is in flight.
//   - The process's id, which every request checks (a runtime serves the process that started it).
// Environment variables have their owner in environment.cpp.
#pragma once

namespace tessera::detail {

enum class ProcessSetting { single_threaded_blas, task_profiling };

// Holds one process-wide setting for its lifetime (nested holders share it).
class ProcessSettingHolder {
 public:
  explicit ProcessSettingHolder(ProcessSetting setting);
  ~ProcessSettingHolder();
  ProcessSettingHolder(const ProcessSettingHolder&) = delete;
  ProcessSettingHolder& operator=(const ProcessSettingHolder&) = delete;

 private:
  ProcessSetting setting_;
};

// Single-threaded BLAS for the holder's lifetime.
struct SingleThreadedBlas : ProcessSettingHolder {
  SingleThreadedBlas() : ProcessSettingHolder(ProcessSetting::single_threaded_blas) {}
};

// The BLAS threads the program's own calls run with (OpenBLAS's count, as the program has it
// whatever Tessera holds; 1 for a BLAS without thread control).
int program_blas_threads();

// The BLAS threads a call made now runs with: 1 while Tessera holds single-threaded BLAS.
int current_blas_threads();

// How many of the program's BLAS threads (program_blas_threads) have a CPU to themselves now: less
// one for each other thread of this process that is running or waiting for a CPU (state R in
// /proc/self/task), such as another library's thread pool spinning after its call (NumPy's
// OpenBLAS for about 0.1 s after each); at least 1. Tessera's own BLAS workers are not counted
// while they may still spin after its last threaded call (note_threaded_blas_call_end). Where the
// threads cannot be read (no /proc, too many to scan quickly) all of them.
int blas_threads_with_a_cpu();

// Marks the end of a call that ran with the program's BLAS threads.
void note_threaded_blas_call_end();

// StarPU's task profiling on for the holder's lifetime (a program that had it on keeps it on).
struct TaskProfiling : ProcessSettingHolder {
  TaskProfiling() : ProcessSettingHolder(ProcessSetting::task_profiling) {}
};

// This process's id (getpid's), read once and again in a child made by fork(), from a
// pthread_atfork handler: getpid() is a system call, and every request asks.
int current_process_id();

}  // namespace tessera::detail
