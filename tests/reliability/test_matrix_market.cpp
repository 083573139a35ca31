// Hostile Matrix Market input: every prefix of a valid file, sizes at and past the limits, bytes
// that are not numbers, and values at the edges of double (which Tessera's writer produces and
// its reader must read back). Malformed input is tessera::InvalidArgument, never anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <clocale>
#include <limits>
#include <locale>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/tools/matrix_market.hpp"

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
  // A long junk keyword (within the line limit) is cut short in the message.
  EXPECT_LT(refusal("%%MatrixMarket matrix " + std::string(900, 'x') + " real general" + size).size(), 200u);
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

// A stream of `length` bytes after `prefix`, each `fill`, made as they are read (a file of many MB
// without a line end costs no memory here); counts the bytes handed to the reader.
class GeneratedStream : public std::streambuf {
 public:
  GeneratedStream(std::string prefix, char fill, std::size_t length)
      : prefix_(std::move(prefix)), fill_(fill), remaining_(length) {}
  std::size_t bytes_read() const { return handed_out_ - static_cast<std::size_t>(egptr() - gptr()); }

 protected:
  int_type underflow() override {
    if (!prefix_.empty()) {
      chunk_ = prefix_;
      prefix_.clear();
    } else if (remaining_ > 0) {
      chunk_.assign(std::min<std::size_t>(remaining_, 4096), fill_);
      remaining_ -= chunk_.size();
    } else {
      return traits_type::eof();
    }
    handed_out_ += chunk_.size();
    setg(chunk_.data(), chunk_.data(), chunk_.data() + chunk_.size());
    return traits_type::to_int_type(chunk_[0]);
  }

 private:
  std::string prefix_, chunk_;
  char fill_;
  std::size_t remaining_;
  std::size_t handed_out_ = 0;
};

// Reads the generated stream; returns the refusal's message and how many bytes were read.
std::pair<std::string, std::size_t> refusal_of_stream(const std::string& prefix, char fill, std::size_t length) {
  GeneratedStream source(prefix, fill, length);
  std::istream in(&source);
  try {
    read_matrix_market(in, std::size_t(1) << 20);
  } catch (const InvalidArgument& e) {
    return {e.what(), source.bytes_read()};
  }
  return {"(accepted)", source.bytes_read()};
}

// The format limits lines to 1024 characters: a first line without an end (a binary file, a 2 GB
// file of one line, /dev/zero) is refused after 1025 characters, not read whole into memory.
TEST(MatrixMarket, LinesLongerThanTheLimitAreRefusedWithoutReadingThem) {
  constexpr std::size_t kStreamBytes = std::size_t(64) << 20;
  const auto start = std::chrono::steady_clock::now();
  for (const char fill : {'x', '\0', ' '}) {
    const auto [message, bytes_read] = refusal_of_stream("", fill, kStreamBytes);
    EXPECT_NE(message.find("line 1: longer than 1024 characters"), std::string::npos) << message;
    EXPECT_LE(bytes_read, 1025u + 4096u) << "fill " << int(fill);  // the bound and one buffer of look-ahead
  }
  // An endless comment after the banner; an endless size line; an endless entry line (64 KiB).
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  const auto comment = refusal_of_stream(banner + "%", 'c', kStreamBytes);
  EXPECT_NE(comment.first.find("line 2: longer than 1024 characters"), std::string::npos) << comment.first;
  EXPECT_LT(comment.second, std::size_t(16) << 10);
  const auto size_line = refusal_of_stream(banner + "% fine\n2 2 1", ' ', kStreamBytes);
  EXPECT_NE(size_line.first.find("line 3: longer than 1024 characters"), std::string::npos) << size_line.first;
  const auto entry = refusal_of_stream(banner + "2 2 1\n1 1 1", '0', kStreamBytes);
  EXPECT_NE(entry.first.find("line 3: longer than 65536 characters"), std::string::npos) << entry.first;
  EXPECT_LT(entry.second, std::size_t(80) << 10);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

TEST(MatrixMarket, LinesUpToTheLimitAreRead) {
  // A banner padded to exactly 1024 characters, with LF or CR LF; a size line and an entry line
  // at their limits.
  std::string banner = "%%MatrixMarket matrix coordinate real general";
  banner += std::string(1024 - banner.size(), ' ');
  const std::string size_line = "1 1 1" + std::string(1024 - 5, ' ');
  const std::string entry = "1 1 " + std::string(65536 - 5, '0') + "5";
  EXPECT_EQ(read(banner + "\n" + size_line + "\n" + entry + "\n")(0, 0), 5.0);
  EXPECT_EQ(read(banner + "\r\n" + size_line + "\r\n" + entry + "\r\n")(0, 0), 5.0);
  EXPECT_EQ(read(banner + "\n" + size_line + "\n" + entry)(0, 0), 5.0);  // no line end at the end
  EXPECT_NE(refusal(banner + " \n1 1 1\n1 1 1\n").find("line 1: longer than 1024"), std::string::npos);
  EXPECT_NE(refusal(banner + "\n" + size_line + " \n1 1 1\n").find("line 2: longer than 1024"), std::string::npos);
  EXPECT_NE(refusal(banner + "\n1 1 1\n" + entry + "0\n").find("line 3: longer than 65536"), std::string::npos);
  // Comments among the entries are entry lines: bounded by the same 64 KiB.
  EXPECT_EQ(read(banner + "\n1 1 1\n%" + std::string(60000, 'c') + "\n1 1 2\n")(0, 0), 2.0);
}

// Lines end in LF or CR LF. A lone CR (old Mac line ends) would otherwise join lines: a CR-only
// file read as one banner line with the whole file in it.
TEST(MatrixMarket, CarriageReturnOnlyLineEndsAreRefused) {
  const std::string cr_only = "%%MatrixMarket matrix coordinate real general\r1 1 1\r1 1 2\r";
  EXPECT_NE(refusal(cr_only).find("line 1: a carriage return not followed by a line feed"), std::string::npos)
      << refusal(cr_only);
  EXPECT_NE(refusal("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1\r2\n").find("line 3: a carriage return"),
            std::string::npos);
  EXPECT_EQ(read("%%MatrixMarket matrix coordinate real general\r\n1 1 1\r\n1 1 2\r")(0, 0), 2.0);
  EXPECT_NE(refusal("").find("line 1: empty input"), std::string::npos) << refusal("");
}

// The format's integer field holds integers: 1.5 in an integer file is malformed, not 1.5.
TEST(MatrixMarket, IntegerFilesHoldOnlyIntegers) {
  const auto integer_file = [](const std::string& value) {
    return "%%MatrixMarket matrix coordinate integer general\n% comment\n2 2 2\n1 1 4\n2 2 " + value + "\n";
  };
  for (const char* value : {"1.5", "2.0", "2.", ".5", "1e3", "1E3", "nan", "inf", "-inf", "0x10", "+", "-", "--1", "1-", "+-1", "١"}) {
    const std::string message = refusal(integer_file(value));
    EXPECT_NE(message.find("line 5: "), std::string::npos) << value << ": " << message;
    EXPECT_NE(message.find("not an integer"), std::string::npos) << value << ": " << message;
  }
  EXPECT_NE(refusal("%%MatrixMarket matrix array integer general\n1 1\n0.5\n").find("line 3: '0.5' is not an integer"),
            std::string::npos);
  // What integers look like: signs, leading zeros; -0 is 0.
  EXPECT_EQ(read(integer_file("+7"))(1, 1), 7.0);
  EXPECT_EQ(read(integer_file("-3"))(1, 1), -3.0);
  EXPECT_EQ(read(integer_file("007"))(1, 1), 7.0);
  EXPECT_FALSE(std::signbit(read("%%MatrixMarket matrix array integer general\n1 1\n-0\n")(0, 0)));
  // Integers beyond 2^53 read as the nearest double, as a real value does; past double's range
  // (10^309) they overflow, as 1e999 does in a real file.
  EXPECT_EQ(read(integer_file("9007199254740993"))(1, 1), 9007199254740992.0);
  EXPECT_EQ(read(integer_file("-123456789012345678901234567890"))(1, 1), -123456789012345678901234567890.0);
  EXPECT_EQ(read(integer_file("1" + std::string(308, '0')))(1, 1), 1e308);
  EXPECT_NE(refusal(integer_file("1" + std::string(309, '0'))).find("line 5: "), std::string::npos);
  // A real file still reads decimals.
  EXPECT_EQ(read("%%MatrixMarket matrix array real general\n1 1\n1.5\n")(0, 0), 1.5);
}

// A comma as the decimal point and a point grouping thousands, as a German locale has them.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

// Numbers are the format's (a point, no grouping) whatever locale the program set: a stream
// imbued with a comma locale wrote "1.234,5", and strtod under LC_NUMERIC=de_DE refused "1.5".
TEST(MatrixMarket, NumbersFollowTheFormatWhateverTheLocale) {
  std::ostringstream out;
  const std::locale comma(std::locale::classic(), new CommaDecimal);
  out.imbue(comma);
  const double values[] = {1234.5, -0.25};
  write_matrix_market(out, 2, 1, values, 2, false);
  EXPECT_EQ(out.str(), "%%MatrixMarket matrix array real general\n2 1\n1234.5\n-0.25\n");
  EXPECT_EQ(std::use_facet<std::numpunct<char>>(out.getloc()).decimal_point(), ',') << "the stream's locale changed";

  if (!std::setlocale(LC_NUMERIC, "de_DE.UTF-8"))
    GTEST_SKIP() << "the de_DE.UTF-8 locale is not installed (scripts/install-deps.sh generates it)";
  EXPECT_EQ(std::localeconv()->decimal_point[0], ',');
  std::istringstream in("%%MatrixMarket matrix array real general\n2 1\n1.5\n-2.25e1\n");
  const DenseMatrix m = read_matrix_market(in);
  std::setlocale(LC_NUMERIC, "C");
  EXPECT_EQ(m(0, 0), 1.5);
  EXPECT_EQ(m(1, 0), -22.5);
}

}  // namespace
}  // namespace tessera::test
