// StarPU 1.3 aborts the process (an assertion in its parser) when it loads a performance-model
// file that is truncated or corrupt, in every later run on the machine. Before StarPU starts,
// the files of this host are checked against the format StarPU writes; a bad one is renamed
// (FILE.corrupt) so that StarPU recalibrates instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "environment.hpp"

namespace tessera::detail {

// True when StarPU 1.3 can parse the history/regression model file at `path` (format version 45)
// without failing an assertion. An empty file is fine: StarPU ignores it.
bool perf_model_file_is_sound(const std::string& path);

// True when the bus calibration file at `path` (or its text) is whole: StarPU writes whole lines
// of numbers, tabs and comments, so a file that is empty or does not end with a newline, or that
// holds other bytes, was cut short or damaged. The structure of each bus file (its rows and
// fields, as StarPU writes and reads them) is checked by set_aside_corrupt_perf_models.
bool bus_file_is_sound(const std::string& path);
bool bus_text_is_whole(const std::string& bytes);

// Checks every codelet model and bus calibration file of `location`'s host and renames the bad
// ones (cut short or damaged, not the rows and fields StarPU reads, or not a regular file this
// process can read and rewrite); returns the paths set aside.
std::vector<std::string> set_aside_corrupt_perf_models(const PerfModelLocation& location);

// Why StarPU could not keep its calibration under `location` (it aborts the process when it
// cannot make its directories or create its files there, and cuts paths longer than its buffers),
// or nullopt when it can. Makes the directories StarPU would make.
std::optional<std::string> perf_model_directory_problem(const PerfModelLocation& location);

}  // namespace tessera::detail
