// Fuzzes tessera::read_matrix_market with arbitrary bytes. Invariants: malformed input gives
// tessera::InvalidArgument and nothing else (any other exception escapes and is reported);
// accepted input gives a matrix whose storage matches its size within the element limit; and
// writing it back and reading that again gives the same matrix, bit for bit (a symmetric one
// also through its lower triangle).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "tessera/error.hpp"
#include "tessera/matrix_market.hpp"

namespace {

// 8 MiB of doubles: enough for any structure the reader has, small enough for fast fuzzing.
constexpr std::size_t kMaxElements = std::size_t(1) << 20;

[[noreturn]] void violated(const std::string& what) {
  std::fprintf(stderr, "invariant violated: %s\n", what.c_str());
  std::abort();
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

bool same_matrix(const tessera::DenseMatrix& a, const tessera::DenseMatrix& b) {
  if (a.rows != b.rows || a.cols != b.cols || a.values.size() != b.values.size()) return false;
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (!same_value(a.values[k], b.values[k])) return false;
  return true;
}

bool symmetric(const tessera::DenseMatrix& m) {
  if (m.rows != m.cols) return false;
  for (int j = 0; j < m.cols; ++j)
    for (int i = j + 1; i < m.rows; ++i)
      if (!same_value(m(i, j), m(j, i))) return false;
  return true;
}

tessera::DenseMatrix round_trip(const tessera::DenseMatrix& m, bool lower_only) {
  std::ostringstream out;
  tessera::write_matrix_market(out, m.rows, m.cols, m.values.data(), std::max(1, m.rows), lower_only);
  std::istringstream in(out.str());
  try {
    return tessera::read_matrix_market(in, kMaxElements);
  } catch (const tessera::InvalidArgument& e) {
    violated(std::string("Tessera cannot read what it wrote: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  tessera::DenseMatrix m;
  try {
    m = tessera::read_matrix_market(in, kMaxElements);
  } catch (const tessera::InvalidArgument&) {
    return 0;  // malformed input, reported as such
  }
  if (m.rows < 0 || m.cols < 0) violated("negative size");
  if (m.values.size() != static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols))
    violated("storage does not match the size");
  if (m.values.size() > kMaxElements) violated("element limit exceeded");
  if (!same_matrix(m, round_trip(m, false))) violated("general round trip changed the matrix");
  if (symmetric(m) && !same_matrix(m, round_trip(m, true))) violated("symmetric round trip changed the matrix");
  return 0;
}
