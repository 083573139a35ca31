// What the reliability tests share beyond tests/test_support.hpp: resident memory, time budgets
// from the environment, buffers placed at chosen addresses, and a small cpu-mode runtime.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "tessera/options.hpp"

namespace tessera::test {

// Resident set size of this process in MiB (second field of /proc/self/statm, in pages).
inline double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long total_pages = 0, resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// A positive integer from the environment (soak durations, cycle counts), or the fallback.
inline long env_long(const char* name, long fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return (*end == '\0' && parsed > 0) ? parsed : fallback;
}

// True when this binary runs under AddressSanitizer (its quarantine and shadow memory inflate RSS).
constexpr bool under_address_sanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// `count` elements of T starting `offset_elements` past a 64-byte boundary, so that tests can
// hand Tessera pointers of every alignment a T* can have.
template <class T>
class PlacedBuffer {
 public:
  PlacedBuffer(std::size_t count, std::size_t offset_elements)
      : raw_(new unsigned char[(count + offset_elements) * sizeof(T) + 64]), count_(count) {
    const auto base = reinterpret_cast<std::uintptr_t>(raw_.get());
    const std::uintptr_t aligned = (base + 63) & ~std::uintptr_t(63);
    data_ = reinterpret_cast<T*>(aligned) + offset_elements;
  }
  T* data() { return data_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) { return data_[i]; }

 private:
  std::unique_ptr<unsigned char[]> raw_;
  T* data_;
  std::size_t count_;
};

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A runtime of two CPU workers and no GPU, and cpu-mode factorizations in tiles of nb.
inline RuntimeOptions two_cpu_workers() {
  RuntimeOptions options;
  options.ncpus = 2;
  options.ncuda = 0;
  return options;
}

inline FactorOptions cpu_tiles(int nb) {
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = nb;
  return options;
}

}  // namespace tessera::test
