// Command-line helpers the benchmarks share.
#pragma once

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

}  // namespace tessera::bench
