// Hostile Matrix Market input: every prefix of a valid file, sizes at and past the limits, bytes
// that are not numbers, and values at the edges of double (which Tessera's writer produces and
// its reader must read back). Malformed input is tessera::InvalidArgument, never anything else.
#include <gtest/gtest.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "tessera/error.hpp"
#include "tessera/matrix_market.hpp"

namespace tessera::test {
namespace {

DenseMatrix read(const std::string& text, std::size_t max_elements = std::size_t(1) << 20) {
  std::istringstream in(text);
  return read_matrix_market(in, max_elements);
}

const char kSymmetricCoordinate[] =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "% a comment\n"
    "3 3 4\n"
    "1 1 4.0\n"
    "2 1 -1.5e0\n"
    "2 2 4\n"
    "3 3 2.25\n";

TEST(MatrixMarket, EveryPrefixOfAValidFileIsReadOrRejectedCleanly) {
  const std::string full = kSymmetricCoordinate;
  int accepted = 0;
  for (std::size_t length = 0; length <= full.size(); ++length) {
    try {
      const DenseMatrix m = read(full.substr(0, length));
      EXPECT_EQ(m.values.size(), static_cast<std::size_t>(m.rows) * m.cols);
      ++accepted;
    } catch (const InvalidArgument&) {
    }
  }
  // Only prefixes holding all four entries: those ending in "2", "2.", "2.2", "2.25" and "2.25\n".
  EXPECT_EQ(accepted, 5);
  const DenseMatrix m = read(full);
  EXPECT_EQ(m(1, 0), -1.5);
  EXPECT_EQ(m(0, 1), -1.5);
}

TEST(MatrixMarket, SizesPastTheLimitsAreRejected) {
  const std::string header = "%%MatrixMarket matrix array real general\n";
  EXPECT_THROW(read(header + "2147483648 1\n"), InvalidArgument);           // rows past int
  EXPECT_THROW(read(header + "-1 3\n"), InvalidArgument);
  EXPECT_THROW(read(header + "2000 2000\n", 1000 * 1000), InvalidArgument);  // past max_elements
  EXPECT_THROW(read(header + "99999999999999999999 1\n"), InvalidArgument);
  EXPECT_THROW(read("%%MatrixMarket matrix coordinate real general\n2 2 5\n"), InvalidArgument);  // 5 > 4 entries
  EXPECT_THROW(read("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n"), InvalidArgument);
  EXPECT_THROW(read("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n"), InvalidArgument);
  // Empty matrices are fine, however many columns, and quick: nothing is looped over.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read(header + "0 2147483647\n").values.size(), 0u);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

TEST(MatrixMarket, BytesThatAreNotANumberAreRejected) {
  const std::string header = "%%MatrixMarket matrix array real general\n1 1\n";
  EXPECT_THROW(read(header + "1x\n"), InvalidArgument);
  EXPECT_THROW(read(header + "1e999\n"), InvalidArgument);  // overflows double
  EXPECT_THROW(read(header + "\n"), InvalidArgument);
  EXPECT_THROW(read(header + "1 2\n"), InvalidArgument);
  // A NUL byte ends the C string strtod sees, not the token: "1<NUL>junk" is not the number 1.
  EXPECT_THROW(read(header + std::string("1\0junk\n", 7)), InvalidArgument);
  EXPECT_THROW(read("%%MatrixMarket matrix array real general\n" + std::string("1\0 1\n", 5) + "1\n"), InvalidArgument);
}

TEST(MatrixMarket, EdgeValuesSurviveAWriteAndARead) {
  const double values[] = {0.0,
                           -0.0,
                           DBL_MIN,
                           std::numeric_limits<double>::denorm_min(),  // written as 4.94...e-324
                           -3.5e-310,
                           DBL_MAX,
                           -DBL_MAX,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           0.1,
                           1.0 / 3.0};
  const int n = static_cast<int>(std::size(values));
  std::ostringstream out;
  write_matrix_market(out, n, 1, values, n, false);
  const DenseMatrix m = read(out.str());
  ASSERT_EQ(m.rows, n);
  for (int i = 0; i < n; ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(m(i, 0)));
    } else {
      EXPECT_EQ(std::memcmp(&values[i], &m.values[i], sizeof(double)), 0) << "value " << values[i] << " read as " << m(i, 0);
    }
  }
}

}  // namespace
}  // namespace tessera::test
