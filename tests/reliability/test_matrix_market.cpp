// Hostile Matrix Market input: every prefix of a valid file, sizes at and past the limits, bytes
// that are not numbers, and values at the edges of double (which Tessera's writer produces and
// its reader must read back). Malformed input is tessera::InvalidArgument, never anything else.
#include <gtest/gtest.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <initializer_list>
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

struct Entry {
  int row, col;
  double value;
};

// Each listed entry of m holds exactly its value.
void expect_entries(const DenseMatrix& m, std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) EXPECT_EQ(m(e.row, e.col), e.value) << "entry (" << e.row << ", " << e.col << ")";
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
  EXPECT_THROW(read("%%MatrixMarket matrix coordinate real general\n2 2 5\n"), InvalidArgument);  // entries missing
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

// The format sums duplicate coordinate entries (scipy.io.mmread does too); keeping only the last
// value would read a different matrix from the same file.
TEST(MatrixMarket, DuplicateCoordinateEntriesAreSummed) {
  const DenseMatrix general = read(
      "%%MatrixMarket matrix coordinate real general\n2 2 4\n"
      "1 1 1.5\n2 1 3\n1 1 2.25\n2 1 -1\n");
  expect_entries(general, {{0, 0, 3.75}, {1, 0, 2.0}, {0, 1, 0.0}});
  // In a symmetric file a duplicate of (i, j) sums too, and the sum is mirrored; a duplicate
  // diagonal entry is added once per occurrence, not once per triangle.
  const DenseMatrix symmetric = read(
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 5\n"
      "2 1 0.5\n1 1 4\n2 1 0.25\n2 2 1\n2 2 1\n");
  expect_entries(symmetric, {{1, 0, 0.75}, {0, 1, 0.75}, {0, 0, 4.0}, {1, 1, 2.0}});
  // More entries than the matrix has elements is fine when they repeat.
  EXPECT_EQ(read("%%MatrixMarket matrix coordinate integer general\n1 1 3\n1 1 1\n1 1 2\n1 1 3\n")(0, 0), 6.0);
}

std::string refusal(const std::string& text) {
  try {
    read(text);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MatrixMarket, HeaderKeywordsTesseraCannotRepresentAreRefusedByName) {
  const std::string size = "\n1 1 1\n1 1 1\n";
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n").find("'pattern'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n").find("'complex'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate real skew-symmetric" + size).find("'skew-symmetric'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate complex hermitian" + size).find("'complex'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate real hermitian" + size).find("'hermitian'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket vector coordinate real general" + size).find("object 'vector'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix sparse real general" + size).find("format 'sparse'"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate real" + size).find("symmetry ''"), std::string::npos);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate real general extra" + size).find("'extra'"), std::string::npos);
  EXPECT_NE(refusal("%MatrixMarket matrix coordinate real general" + size).find("%%MatrixMarket"), std::string::npos);
  // A long junk keyword is cut short in the message.
  EXPECT_LT(refusal("%%MatrixMarket matrix " + std::string(10000, 'x') + " real general" + size).size(), 200u);
  // Keywords in any case, tabs between them, CRLF line ends.
  EXPECT_EQ(read("%%MATRIXMARKET\tMatrix Coordinate\tReal SYMMETRIC\r\n1 1 1\r\n1 1 2\r\n")(0, 0), 2.0);
}

TEST(MatrixMarket, SizeCheckRunsBeforeTheMatrixIsAllocated) {
  // 40000 x 40000 in 62 bytes: the caller refuses it from the size line, before 12.8 GB of zeros.
  const std::string huge = "%%MatrixMarket matrix coordinate real general\n40000 40000 1\n1 1 1\n";
  int checked_rows = -1, checked_cols = -1;
  struct Refused {};
  std::istringstream in(huge);
  EXPECT_THROW(read_matrix_market(in, std::size_t(1) << 40,
                                  [&](int rows, int cols) {
                                    checked_rows = rows;
                                    checked_cols = cols;
                                    throw Refused{};
                                  }),
               Refused);
  EXPECT_EQ(checked_rows, 40000);
  EXPECT_EQ(checked_cols, 40000);
  // A check that lets the matrix through changes nothing.
  std::istringstream small(kSymmetricCoordinate);
  const DenseMatrix m = read_matrix_market(small, 100, [](int, int) {});
  EXPECT_EQ(m(1, 0), -1.5);
}

}  // namespace
}  // namespace tessera::test
