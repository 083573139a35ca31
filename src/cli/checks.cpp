#include "checks.hpp"

#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "tessera/error.hpp"

namespace tessera::cli {

CLI::Validator integer_in(long long minimum, long long maximum, const std::string& kind) {
  auto check = [=](std::string& text) -> std::string {
    long long value = 0;
    if (!CLI::detail::lexical_cast(text, value) || value < minimum) return text + " is not a " + kind + " integer";
    if (value > maximum) return text + " is larger than " + std::to_string(maximum);
    return {};
  };
  const std::string description = minimum == 0 ? "NONNEGATIVE" : minimum == 1 ? "POSITIVE" : ">=" + std::to_string(minimum);
  return CLI::Validator(check, description, kind + " integer");
}

CLI::Validator non_negative_int() { return integer_in(0, INT_MAX, "non-negative"); }
CLI::Validator positive_int() { return integer_in(1, INT_MAX, "positive"); }

CLI::Validator open_unit_interval() {
  auto check = [](std::string& text) -> std::string {
    double value = 0;
    if (!CLI::detail::lexical_cast(text, value) || !(value > 0 && value < 1)) return text + " is not in (0, 1)";
    return {};
  };
  return CLI::Validator(check, "(0,1)", "real in (0, 1)");
}

void write_text_file(const std::string& option, const std::string& path, const std::string& text) {
  errno = 0;
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file) throw Error(fmt::format("{} {}: cannot write it{}", option, path, errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
}

CLI::Validator non_empty_path() {
  auto check = [](std::string& text) -> std::string { return text.empty() ? "an empty path names no file" : ""; };
  return CLI::Validator(check, "PATH", "non-empty path");
}

namespace {

// "OPTION PATH: WHY", the one line a refused path gets.
[[noreturn]] void refuse_path(const std::string& option, const std::string& path, const std::string& why) {
  throw InvalidArgument(fmt::format("{} {}: {}", option, path, why));
}

}  // namespace

void require_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& why) { refuse_path(option, path, why); };
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status)) refuse("is a directory");
  if (fs::exists(status)) {
    if (access(path.c_str(), W_OK) != 0) refuse(std::strerror(errno));
    return;
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(directory, error)) refuse("no directory " + directory);
  if (access(directory.c_str(), W_OK | X_OK) != 0) refuse(fmt::format("cannot create it in {}: {}", directory, std::strerror(errno)));
}

void require_readable(const std::string& option, const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) refuse_path(option, path, "is a directory");
  if (access(path.c_str(), R_OK) != 0) refuse_path(option, path, std::strerror(errno));
}

int available_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0) return CPU_COUNT(&mask);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int cap_cpu_workers(int requested, bool oversubscribe, const std::string& source, std::ostream& warnings) {
  const int cpus = available_cpus();
  if (requested <= cpus || oversubscribe) return requested;
  warnings << fmt::format("tessera: warning: {} asks for more CPU workers than the {} CPUs available; starting {} "
                          "(--oversubscribe starts {})\n",
                          source, cpus, cpus, requested);
  return cpus;
}

}  // namespace tessera::cli
