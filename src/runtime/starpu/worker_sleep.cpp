#include "worker_sleep.hpp"

#include <starpu.h>

#include "address_space.hpp"

namespace tessera::detail {

bool WorkerSleep::should_sleep() const {
  if (forced_awake > 0) return false;
  return explicit_pauses > 0 || (awake_votes == 0 && requests == 0);
}

void WorkerSleep::apply() {
#ifdef STARPU_SIMGRID
  // In StarPU's simulation idle workers cost no time of this machine, and starpu_pause() under
  // this lock could hand the thread to another simulated worker that wants the lock.
  return;
#endif
  if (!should_sleep()) {
    pause_due.reset();
    if (starpu_paused) {
      starpu_resume();
      starpu_paused = false;
    }
    if (!blas) blas.emplace();
    return;
  }
  if (!starpu_paused) {
    if (explicit_pauses > 0 || pause_delay.count() == 0)
      pause_now();
    else if (!pause_due)
      schedule_pause();
  }
  // Giving the program its BLAS threads back may start threads, which inherit the calling
  // thread's CPU binding: a worker ending the last request leaves it to the application thread
  // that waits for it (RuntimeControl::work_waited).
  if (starpu_worker_get_id() < 0) blas.reset();
}

void WorkerSleep::pause_now() {
  starpu_pause();
  starpu_paused = true;
  pause_due.reset();
}

void WorkerSleep::schedule_pause() {
  pause_due = Clock::now() + pause_delay;
  if (!pauser.joinable()) {
    pauser_stopping = false;
    const WorkerStacks stacks;  // StarPU's pause and resume run on it
    pauser = std::thread([this] { run_pauser(); });
  }
  pause_changed.notify_one();
}

void WorkerSleep::run_pauser() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!pauser_stopping) {
    if (!pause_due) {
      pause_changed.wait(lock);
    } else if (const Clock::time_point due = *pause_due; Clock::now() < due) {
      pause_changed.wait_until(lock, due);
    } else if (should_sleep() && !starpu_paused) {
      pause_now();
    } else {
      pause_due.reset();
    }
  }
}

void WorkerSleep::stop_pauser() {
  std::thread stopped;
  {
    std::lock_guard<std::mutex> lock(mutex);
    pauser_stopping = true;
    pause_due.reset();
    pause_changed.notify_all();
    stopped = std::move(pauser);
  }
  if (stopped.joinable()) stopped.join();
}

WorkerSleep& worker_sleep() {
  static WorkerSleep& sleep = *new WorkerSleep;
  return sleep;
}

WorkersAwake::WorkersAwake(bool take_part) : take_part_(take_part) {
  if (take_part_) change_worker_sleep([](WorkerSleep& sleep) { ++sleep.forced_awake; });
}
WorkersAwake::~WorkersAwake() {
  if (take_part_) change_worker_sleep([](WorkerSleep& sleep) { --sleep.forced_awake; });
}

}  // namespace tessera::detail
