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

void read_size(Reader& reader, bool coordinate, long& rows, long& cols, long& entries) {
  std::string line;
  if (!reader.next_data_line(line)) reader.fail("missing size line");
  const bool ok = coordinate ? parse_fields(line, rows, cols, entries) : parse_fields(line, rows, cols);
  if (!ok || rows < 0 || cols < 0 || (coordinate && entries < 0)) reader.fail("bad size line '" + line + "'");
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max()) reader.fail("matrix too large");
}

double read_value(Reader& reader, const std::string& token) {
  double v = 0;
  if (!parse_real(token, v)) reader.fail("bad number '" + token + "'");
  return v;
}

}  // namespace

DenseMatrix read_matrix_market(std::istream& in, std::size_t max_elements) {
  Reader reader(in);
  std::istringstream header(lower(reader.header()));
  std::string banner, object, format, field, symmetry;
  header >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket" || object != "matrix") reader.fail("not a Matrix Market matrix header");
  if (format != "array" && format != "coordinate") reader.fail("unknown format '" + format + "'");
  if (field != "real" && field != "integer" && field != "double") reader.fail("unsupported field '" + field + "' (real or integer)");
  if (symmetry != "general" && symmetry != "symmetric") reader.fail("unsupported symmetry '" + symmetry + "'");
  const bool coordinate = format == "coordinate";
  const bool symmetric = symmetry == "symmetric";

  long rows = 0, cols = 0, entries = 0;
  read_size(reader, coordinate, rows, cols, entries);
  if (symmetric && rows != cols) reader.fail("a symmetric matrix must be square");
  if (rows != 0 && static_cast<std::size_t>(cols) > max_elements / static_cast<std::size_t>(rows))
    reader.fail("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) + " exceeds the size limit");

  DenseMatrix A;
  A.rows = static_cast<int>(rows);
  A.cols = static_cast<int>(cols);
  A.values.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), 0.0);
  std::string line;
  if (coordinate) {
    if (static_cast<std::size_t>(entries) > A.values.size()) reader.fail("more entries than the matrix holds");
    for (long e = 0; e < entries; ++e) {
      if (!reader.next_data_line(line)) reader.fail("expected " + std::to_string(entries) + " entries, found " + std::to_string(e));
      long i = 0, j = 0;
      std::string token;
      if (!parse_fields(line, i, j, token)) reader.fail("bad entry '" + line + "'");
      if (i < 1 || i > rows || j < 1 || j > cols) reader.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the matrix");
      if (symmetric && i < j) reader.fail("symmetric file with an entry above the diagonal");
      const double v = read_value(reader, token);
      A(static_cast<int>(i - 1), static_cast<int>(j - 1)) = v;
      if (symmetric) A(static_cast<int>(j - 1), static_cast<int>(i - 1)) = v;
    }
  } else if (rows > 0) {  // (an empty matrix of 2^31 columns has nothing to read: no loop over them)
    for (long j = 0; j < cols; ++j)
      for (long i = symmetric ? j : 0; i < rows; ++i) {
        std::string token;
        if (!reader.next_data_line(line) || !parse_fields(line, token)) reader.fail("expected one value per line");
        const double v = read_value(reader, token);
        A(static_cast<int>(i), static_cast<int>(j)) = v;
        if (symmetric) A(static_cast<int>(j), static_cast<int>(i)) = v;
      }
  }
  if (reader.next_data_line(line)) reader.fail("unexpected data after the last entry");
  return A;
}

DenseMatrix read_matrix_market_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot open '" + path + "': " + std::strerror(errno));
  try {
    return read_matrix_market(in);
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
