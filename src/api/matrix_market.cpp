#include "tessera/matrix_market.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera {

namespace {

class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument("Matrix Market line " + std::to_string(line_number_) + ": " + what);
  }

  // The next line that is not a comment or blank; false at the end of the stream.
  bool next_data_line(std::string& line) {
    while (std::getline(in_, line)) {
      ++line_number_;
      const auto first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '%') continue;
      return true;
    }
    return false;
  }

  std::string header() {
    std::string line;
    if (!std::getline(in_, line)) fail("empty input");
    ++line_number_;
    return line;
  }

 private:
  std::istream& in_;
  int line_number_ = 0;
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

// The whole token must be the number (a NUL byte inside it ends strtod's string, not the token).
// Overflow is an error; underflow gives the subnormal or zero strtod returns, which is how
// write_matrix_market's subnormals read back.
bool parse_real(const std::string& token, double& value) {
  errno = 0;
  char* end = nullptr;
  value = std::strtod(token.c_str(), &end);
  const bool overflow = errno == ERANGE && std::isinf(value);
  return !token.empty() && end == token.c_str() + token.size() && !overflow;
}

// A token of the input, quoted and cut short, for error messages.
std::string shown(const std::string& token) {
  constexpr std::size_t kShown = 40;
  return "'" + (token.size() <= kShown ? token : token.substr(0, kShown) + "...") + "'";
}

struct Header {
  bool coordinate = false;
  bool symmetric = false;
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
  return {format == "coordinate", symmetry == "symmetric"};
}

void read_size(Reader& reader, bool coordinate, long& rows, long& cols, long& entries) {
  std::string line;
  if (!reader.next_data_line(line)) reader.fail("missing size line");
  const bool ok = coordinate ? parse_fields(line, rows, cols, entries) : parse_fields(line, rows, cols);
  if (!ok || rows < 0 || cols < 0 || (coordinate && entries < 0)) reader.fail("bad size line " + shown(line));
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max()) reader.fail("matrix too large");
}

double read_value(Reader& reader, const std::string& token) {
  double v = 0;
  if (!parse_real(token, v)) reader.fail("bad number " + shown(token));
  return v;
}

// Coordinate entries are added to the zero matrix: a duplicate sums with the earlier ones.
void read_coordinate_entries(Reader& reader, long entries, bool symmetric, DenseMatrix& A) {
  std::string line;
  for (long e = 0; e < entries; ++e) {
    if (!reader.next_data_line(line)) reader.fail("expected " + std::to_string(entries) + " entries, found " + std::to_string(e));
    long i = 0, j = 0;
    std::string token;
    if (!parse_fields(line, i, j, token)) reader.fail("bad entry " + shown(line));
    if (i < 1 || i > A.rows || j < 1 || j > A.cols)
      reader.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the matrix");
    if (symmetric && i < j) reader.fail("symmetric file with an entry above the diagonal");
    const double v = read_value(reader, token);
    A(static_cast<int>(i - 1), static_cast<int>(j - 1)) += v;
    if (symmetric && i != j) A(static_cast<int>(j - 1), static_cast<int>(i - 1)) += v;
  }
}

// Array values column by column; a symmetric file holds each column from the diagonal down.
void read_array_values(Reader& reader, bool symmetric, DenseMatrix& A) {
  if (A.rows == 0) return;  // (an empty matrix of 2^31 columns has nothing to read: no loop over them)
  std::string line;
  for (int j = 0; j < A.cols; ++j)
    for (int i = symmetric ? j : 0; i < A.rows; ++i) {
      std::string token;
      if (!reader.next_data_line(line) || !parse_fields(line, token)) reader.fail("expected one value per line");
      const double v = read_value(reader, token);
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
    read_coordinate_entries(reader, entries, header.symmetric, A);
  else
    read_array_values(reader, header.symmetric, A);
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
  out << "%%MatrixMarket matrix array real " << (lower_only ? "symmetric" : "general") << "\n";
  out << rows << " " << cols << "\n";
  out << std::setprecision(17);
  for (int j = 0; j < cols; ++j)
    for (int i = lower_only ? j : 0; i < rows; ++i) out << A[i + static_cast<std::size_t>(j) * ld] << "\n";
}

void write_matrix_market_file(const std::string& path, int rows, int cols, const double* A, int ld, bool lower_only) {
  std::ofstream out(path);
  if (!out) throw InvalidArgument("cannot write '" + path + "': " + std::strerror(errno));
  write_matrix_market(out, rows, cols, A, ld, lower_only);
  if (!out) throw Error("error while writing '" + path + "'");
}

}  // namespace tessera
