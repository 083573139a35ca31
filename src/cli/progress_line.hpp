// Progress on stderr for the command's long phases (making the matrix, factoring, checking), on
// a terminal only: carriage returns would litter a file or a pipe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::cli {

// While it lives, a line "tessera: <what> ... <seconds> s" (with the percentage `fraction` gives,
// when given) rewritten once a second from the first second on, by a thread of its own; ended by
// a newline when it was printed. Prints nothing when `enabled` is false.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string what, std::function<double()> fraction = {});
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void run();

  std::string what_;
  std::function<double()> fraction_;
  std::mutex mutex_;
  std::condition_variable ended_;
  bool end_ = false;
  std::thread thread_;
};

}  // namespace tessera::cli
