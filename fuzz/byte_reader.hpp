// Reads a fuzzer's input as a sequence of small choices. Past the end every read returns 0, so
// any input decodes to some case. Plain C++ (no libFuzzer header), so that the harnesses also
// build with GCC for the corpus replay tests.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::fuzz {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }

  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | byte();
    return v;
  }

  bool exhausted() const { return pos_ >= size_; }
  std::size_t position() const { return pos_; }  // bytes read so far (at most size)

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace tessera::fuzz
