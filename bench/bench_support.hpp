// Command-line helpers the benchmarks share.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::bench {

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t p = 0; p < list.size();) {
    const std::size_t q = list.find(',', p);
    items.push_back(list.substr(p, q - p));
    p = q == std::string::npos ? list.size() : q + 1;
  }
  return items;
}

// "4096,8192" -> {4096, 8192}; std::stoi throws on what is not a number.
inline std::vector<int> parse_int_list(const std::string& list) {
  std::vector<int> values;
  for (const std::string& item : split_commas(list)) values.push_back(std::stoi(item));
  return values;
}

// Walks a command line option by option; value() takes the word after the current option.
//   for (Arguments args(argc, argv); args.next();) if (args.option() == "--reps") reps = std::stoi(args.value());
class Arguments {
 public:
  Arguments(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // Moves to the next option; false past the last.
  bool next() { return ++index_ < argc_; }
  std::string option() const { return argv_[index_]; }
  // The current option's value; throws when the command line ends first.
  std::string value() {
    if (index_ + 1 >= argc_) throw std::runtime_error("missing value after " + option());
    return argv_[++index_];
  }

 private:
  int argc_;
  char** argv_;
  int index_ = 0;
};

}  // namespace tessera::bench
