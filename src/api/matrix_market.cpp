#include "tessera/tools/matrix_market.hpp"

#include <locale.h>

#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera {

namespace {

// The format limits lines to 1024 characters (line end excluded). Entry lines may be longer, to
// read values written with many digits or padded with blanks, but not without bound: a file with
// no line end (a binary file, /dev/zero) is refused after reading one more character than the limit.
constexpr std::size_t kHeaderLineLimit = 1024;
constexpr std::size_t kEntryLineLimit = 65536;

class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument("Matrix Market line " + std::to_string(line_number_) + ": " + what);
  }

  // The banner, comment and size lines are held to the format's limit; the lines after the size
  // line to the entry limit.
  void start_entries() {
    line_limit_ = kEntryLineLimit;
    line_limit_reason_ = "the limit for entry lines";
  }

  // The next line that is not a comment or blank; false at the end of the stream.
  bool next_data_line(std::string& line) {
    while (next_line(line)) {
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '%') continue;
      return true;
    }
    return false;
  }

  std::string header() {
    std::string line;
    if (!next_line(line)) {
      line_number_ = 1;
      fail("empty input");
    }
    return line;
  }

 private:
  using Traits = std::char_traits<char>;

  // The next line without its end (LF, CR LF, or the end of the stream); false when none is left.
  // At most line_limit_ + 1 characters of a line are read before it is refused.
  bool next_line(std::string& line) {
    line.clear();
    std::streambuf* source = in_ ? in_.rdbuf() : nullptr;
    if (!source) return false;
    int c = source->sbumpc();
    if (Traits::eq_int_type(c, Traits::eof())) {
      in_.setstate(std::ios::eofbit);
      return false;
    }
    ++line_number_;
    for (; !Traits::eq_int_type(c, Traits::eof()) && c != '\n'; c = source->sbumpc()) {
      if (c == '\r') {
        const int next = source->sgetc();
        if (next == '\n' || Traits::eq_int_type(next, Traits::eof())) continue;
        fail("a carriage return not followed by a line feed (lines end in LF or CR LF)");
      }
      if (line.size() == line_limit_)
        fail("longer than " + std::to_string(line_limit_) + " characters (" + line_limit_reason_ + ")");
      line.push_back(Traits::to_char_type(c));
    }
    return true;
  }

  std::istream& in_;
  long long line_number_ = 0;  // a file of more than 2^31 blank lines is possible
  std::size_t line_limit_ = kHeaderLineLimit;
  const char* line_limit_reason_ = "the format's limit";
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses exactly `count` whitespace-separated numbers from `line`; trailing junk is an error.
template <class... Out>
bool parse_fields(const std::string& line, Out&... out) {
  std::istringstream fields(line);
  fields.imbue(std::locale::classic());
  ((fields >> out), ...);
  if (fields.fail()) return false;
  std::string rest;
  fields >> rest;
  return rest.empty();
}

// The C locale, whatever the program set (a comma as the decimal point would refuse "1.5").
locale_t c_locale() {
  static const locale_t locale = newlocale(LC_ALL_MASK, "C", nullptr);
  return locale;
}

// The whole token must be the number (a NUL byte inside it ends strtod's string, not the token).
// Overflow is an error; underflow gives the subnormal or zero strtod returns, which is how
// write_matrix_market's subnormals read back. Read in the C locale, as the format writes numbers.
bool parse_real(const std::string& token, double& value) {
  errno = 0;
  char* end = nullptr;
  value = c_locale() ? strtod_l(token.c_str(), &end, c_locale()) : std::strtod(token.c_str(), &end);
  const bool overflow = errno == ERANGE && std::isinf(value);
  return !token.empty() && end == token.c_str() + token.size() && !overflow;
}

// An integer field's value: an optional sign and decimal digits, nothing else (1.5, 1e3 and nan
// are not integers). It reads as the nearest double, as a real value does: beyond 2^53 it is
// rounded, past double's range it is refused as an overflow; -0 reads as 0.
bool parse_integer(const std::string& token, double& value) {
  const std::size_t first_digit = !token.empty() && (token[0] == '+' || token[0] == '-') ? 1 : 0;
  if (first_digit == token.size()) return false;
  for (std::size_t k = first_digit; k < token.size(); ++k)
    if (token[k] < '0' || token[k] > '9') return false;
  if (!parse_real(token, value)) return false;
  value += 0.0;
  return true;
}

// A token of the input, quoted and cut short, for error messages.
std::string shown(const std::string& token) {
  constexpr std::size_t kShown = 40;
  return "'" + (token.size() <= kShown ? token : token.substr(0, kShown) + "...") + "'";
}

struct Header {
  bool coordinate = false;
  bool symmetric = false;
  bool integer = false;  // the field is integer: every value must be one
};

// The banner line: %%MatrixMarket matrix <format> <field> <symmetry>, keywords in any case.
// Field and symmetry keywords of the format that Tessera cannot represent are refused by name.
Header read_header(Reader& reader) {
  std::istringstream words(lower(reader.header()));
  std::string banner, object, format, field, symmetry, extra;
  words >> banner >> object >> format >> field >> symmetry >> extra;
  if (banner != "%%matrixmarket") reader.fail("not a Matrix Market file: the first line must start with %%MatrixMarket");
  if (object != "matrix") reader.fail("object " + shown(object) + " is not supported (matrix)");
  if (format != "array" && format != "coordinate") reader.fail("unknown format " + shown(format) + " (array or coordinate)");
  if (field == "pattern") reader.fail("field 'pattern' is not supported: the file has no values (real or integer)");
  if (field == "complex") reader.fail("field 'complex' is not supported: Tessera reads real matrices (real or integer)");
  if (field != "real" && field != "integer" && field != "double")
    reader.fail("unknown field " + shown(field) + " (real or integer)");
  if (symmetry == "skew-symmetric")
    reader.fail("symmetry 'skew-symmetric' is not supported: such a matrix is never positive definite (general or symmetric)");
  if (symmetry == "hermitian") reader.fail("symmetry 'hermitian' is not supported: it is for complex matrices (general or symmetric)");
  if (symmetry != "general" && symmetry != "symmetric")
    reader.fail("unknown symmetry " + shown(symmetry) + " (general or symmetric)");
  if (!extra.empty()) reader.fail("unexpected " + shown(extra) + " after the symmetry");
  return {format == "coordinate", symmetry == "symmetric", field == "integer"};
}

void read_size(Reader& reader, bool coordinate, long& rows, long& cols, long& entries) {
  std::string line;
  if (!reader.next_data_line(line)) reader.fail("missing size line");
  const bool ok = coordinate ? parse_fields(line, rows, cols, entries) : parse_fields(line, rows, cols);
  if (!ok || rows < 0 || cols < 0 || (coordinate && entries < 0)) reader.fail("bad size line " + shown(line));
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max()) reader.fail("matrix too large");
}

double read_value(Reader& reader, const std::string& token, bool integer) {
  double v = 0;
  if (integer) {
    if (!parse_integer(token, v)) reader.fail(shown(token) + " is not an integer (the file's field is integer)");
  } else if (!parse_real(token, v)) {
    reader.fail("bad number " + shown(token));
  }
  return v;
}

// Coordinate entries are added to the zero matrix: a duplicate sums with the earlier ones.
void read_coordinate_entries(Reader& reader, long entries, const Header& header, DenseMatrix& A) {
  const bool symmetric = header.symmetric;
  std::string line;
  for (long e = 0; e < entries; ++e) {
    if (!reader.next_data_line(line)) reader.fail("expected " + std::to_string(entries) + " entries, found " + std::to_string(e));
    long i = 0, j = 0;
    std::string token;
    if (!parse_fields(line, i, j, token)) reader.fail("bad entry " + shown(line));
    if (i < 1 || i > A.rows || j < 1 || j > A.cols)
      reader.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the matrix");
    if (symmetric && i < j) reader.fail("symmetric file with an entry above the diagonal");
    const double v = read_value(reader, token, header.integer);
    A(static_cast<int>(i - 1), static_cast<int>(j - 1)) += v;
    if (symmetric && i != j) A(static_cast<int>(j - 1), static_cast<int>(i - 1)) += v;
  }
}

// Array values column by column; a symmetric file holds each column from the diagonal down.
void read_array_values(Reader& reader, const Header& header, DenseMatrix& A) {
  const bool symmetric = header.symmetric;
  if (A.rows == 0) return;  // (an empty matrix of 2^31 columns has nothing to read: no loop over them)
  std::string line;
  for (int j = 0; j < A.cols; ++j)
    for (int i = symmetric ? j : 0; i < A.rows; ++i) {
      std::string token;
      if (!reader.next_data_line(line) || !parse_fields(line, token)) reader.fail("expected one value per line");
      const double v = read_value(reader, token, header.integer);
      A(i, j) = v;
      if (symmetric) A(j, i) = v;
    }
}

}  // namespace

DenseMatrix read_matrix_market(std::istream& in, std::size_t max_elements, const MatrixMarketSizeCheck& check_size) {
  Reader reader(in);
  const Header header = read_header(reader);
  long rows = 0, cols = 0, entries = 0;
  read_size(reader, header.coordinate, rows, cols, entries);
  reader.start_entries();
  if (header.symmetric && rows != cols) reader.fail("a symmetric matrix must be square");
  if (check_size) check_size(static_cast<int>(rows), static_cast<int>(cols));
  if (rows != 0 && static_cast<std::size_t>(cols) > max_elements / static_cast<std::size_t>(rows))
    reader.fail("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) + " exceeds the limit of " +
                std::to_string(max_elements) + " elements");

  DenseMatrix A;
  A.rows = static_cast<int>(rows);
  A.cols = static_cast<int>(cols);
  A.values.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), 0.0);
  if (header.coordinate)
    read_coordinate_entries(reader, entries, header, A);
  else
    read_array_values(reader, header, A);
  std::string line;
  if (reader.next_data_line(line)) reader.fail("unexpected data after the last entry");
  return A;
}

DenseMatrix read_matrix_market_file(const std::string& path, std::size_t max_elements,
                                    const MatrixMarketSizeCheck& check_size) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot open '" + path + "': " + std::strerror(errno));
  try {
    return read_matrix_market(in, max_elements, check_size);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
}

void write_matrix_market(std::ostream& out, int rows, int cols, const double* A, int ld, bool lower_only) {
  // Numbers as the format has them (a point, no grouping: std::to_chars, whatever the stream's
  // locale), each the shortest that reads back as the same double.
  auto put = [&out](auto value, char after) {
    char text[32];
    char* end = std::to_chars(text, text + sizeof text - 1, value).ptr;
    *end++ = after;
    out.write(text, end - text);
  };
  out << "%%MatrixMarket matrix array real " << (lower_only ? "symmetric" : "general") << "\n";
  put(rows, ' ');
  put(cols, '\n');
  for (int j = 0; j < cols; ++j)
    for (int i = lower_only ? j : 0; i < rows; ++i) put(A[i + static_cast<std::size_t>(j) * ld], '\n');
}

void write_matrix_market_file(const std::string& path, int rows, int cols, const double* A, int ld, bool lower_only) {
  std::ofstream out(path);
  if (!out) throw InvalidArgument("cannot write '" + path + "': " + std::strerror(errno));
  write_matrix_market(out, rows, cols, A, ld, lower_only);
  // Closed here, not by the destructor: the last buffered bytes are written now, and a failure
  // (a full disk) is an error rather than a silently truncated file.
  errno = 0;
  out.close();
  if (!out) throw Error("error while writing '" + path + "'" + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
}

}  // namespace tessera
