// Checks of the command line that CLI11 does not make, each with a one-line message.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>

namespace tessera::cli {

// Accepts integers in [minimum, maximum]; refuses others as "--n: -5 is not a non-negative
// integer" (CLI11 puts the option's name first). `kind` names the range: "non-negative".
CLI::Validator integer_in(long long minimum, long long maximum, const std::string& kind);
CLI::Validator non_negative_int();
CLI::Validator positive_int();
// Accepts reals strictly between 0 and 1 ("--accuracy: 1 is not in (0, 1)").
CLI::Validator open_unit_interval();

// Refuses an empty file name ("--output: an empty path names no file"): "" would otherwise read
// as the option's absence, and the run would go on without the file asked for.
CLI::Validator non_empty_path();

// Throws InvalidArgument unless `path` can be written now: an existing file we may write, or a
// new name in an existing directory we may write to. Nothing is created.
void require_writable(const std::string& option, const std::string& path);

// Writes `text` to `path`; throws Error, with the reason, when it cannot ("--tile-map FILE: ...").
void write_text_file(const std::string& option, const std::string& path, const std::string& text);

// Throws InvalidArgument unless `path` is a file this process may read now (checked before the
// runtime starts, so that a mistyped name is refused at once).
void require_readable(const std::string& option, const std::string& path);

// The CPUs this process may run on (its affinity mask), at least 1.
int available_cpus();

// CPU workers to start: `requested` (negative: StarPU's choice) capped at the CPUs available,
// with a warning on `warnings`, unless `oversubscribe`. `source` names where the request came
// from ("--ncpu 1000") for the warning.
int cap_cpu_workers(int requested, bool oversubscribe, const std::string& source, std::ostream& warnings);

}  // namespace tessera::cli
