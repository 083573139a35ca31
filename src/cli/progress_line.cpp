#include "progress_line.hpp"

#include <cstdio>
#include <utility>

namespace tessera::cli {

ProgressLine::ProgressLine(bool enabled, std::string what, std::function<double()> fraction)
    : what_(std::move(what)), fraction_(std::move(fraction)) {
  if (enabled) thread_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    end_ = true;
  }
  ended_.notify_all();
  thread_.join();
}

void ProgressLine::run() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  bool printed = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!ended_.wait_for(lock, std::chrono::seconds(1), [this] { return end_; })) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (fraction_)
      std::fprintf(stderr, "\rtessera: %s ... %3.0f%%, %.0f s", what_.c_str(), 100.0 * fraction_(), elapsed);
    else
      std::fprintf(stderr, "\rtessera: %s ... %.0f s", what_.c_str(), elapsed);
    std::fflush(stderr);
    printed = true;
  }
  if (printed) std::fprintf(stderr, "\n");
}

}  // namespace tessera::cli
