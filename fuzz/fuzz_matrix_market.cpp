// Fuzzes tessera::read_matrix_market, twice per input. First with the input's bytes as the file.
// Then with a file built from the input's bytes read as choices: banner, object, format, field
// and symmetry keywords (in several cases, among them the pattern, complex, skew-symmetric and
// hermitian keywords the reader refuses), separators, size lines, and entries (sometimes a
// well-formed body computed alongside by a model, duplicates included).
//
// Invariants: malformed input gives tessera::InvalidArgument and nothing else (any other exception
// escapes and is reported); the size check is asked once, with the size of the matrix returned,
// and its exception reaches the caller; accepted input gives a matrix whose storage matches its
// size within the element limit; writing it back and reading that again gives the same matrix,
// bit for bit (a symmetric one also through its lower triangle). For built files: a keyword the
// reader cannot represent is refused with a message naming it; a symmetric file reads as a
// symmetric matrix; a well-formed body reads as the model's matrix (duplicates summed); an
// integer file holding a value that is not an integer is refused.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "tessera/error.hpp"
#include "tessera/tools/matrix_market.hpp"

namespace {

// 8 MiB of doubles: enough for any structure the reader has, small enough for fast fuzzing.
constexpr std::size_t kMaxElements = std::size_t(1) << 20;

// Thrown by the size check when the input asks it to refuse the matrix.
struct SizeRefused {};

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

struct ReadResult {
  std::optional<tessera::DenseMatrix> matrix;  // empty when refused
  std::string refusal;                         // InvalidArgument's message
};

// Reads `text` with a size check that refuses when asked to and records what it was asked.
ReadResult read_checked(const std::string& text, bool refuse_size) {
  int checks = 0, checked_rows = -1, checked_cols = -1;
  const auto check = [&](int rows, int cols) {
    ++checks;
    checked_rows = rows;
    checked_cols = cols;
    if (refuse_size) throw SizeRefused{};
  };
  std::istringstream in(text);
  ReadResult result;
  try {
    result.matrix = tessera::read_matrix_market(in, kMaxElements, check);
  } catch (const tessera::InvalidArgument& e) {
    result.refusal = e.what();
    if (checks > 1) violated("size check asked more than once");
    return result;
  } catch (const SizeRefused&) {
    if (!refuse_size || checks != 1) violated("size check's exception from nowhere");
    return result;
  }
  const tessera::DenseMatrix& m = *result.matrix;
  if (refuse_size) violated("a matrix the size check refused was read");
  if (checks != 1 || checked_rows != m.rows || checked_cols != m.cols) violated("size check not asked about the size read");
  if (m.rows < 0 || m.cols < 0) violated("negative size");
  if (m.values.size() != static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols))
    violated("storage does not match the size");
  if (m.values.size() > kMaxElements) violated("element limit exceeded");
  if (!same_matrix(m, round_trip(m, false))) violated("general round trip changed the matrix");
  if (symmetric(m) && !same_matrix(m, round_trip(m, true))) violated("symmetric round trip changed the matrix");
  return result;
}

template <std::size_t N>
const char* pick(tessera::fuzz::ByteReader& r, const char* const (&choices)[N]) {
  return choices[r.byte() % N];
}

// Header keywords, the valid ones first in each list.
const char* const kBanners[] = {"%%MatrixMarket", "%%matrixmarket", "%%MATRIXMARKET", "%MatrixMarket",
                                "%%MatrixMarket:", "MatrixMarket", "", "%%Matrix Market"};
const char* const kObjects[] = {"matrix", "MATRIX", "Matrix", "vector", "", "matrices"};
const char* const kFormats[] = {"coordinate", "array", "Coordinate", "ARRAY", "coord", "", "sparse"};
const char* const kFields[] = {"real", "integer", "double", "REAL", "Integer", "pattern", "complex", "Pattern", "COMPLEX", "", "float"};
const char* const kSymmetries[] = {"general", "symmetric", "GENERAL", "Symmetric", "skew-symmetric",
                                   "hermitian", "Skew-Symmetric", "HERMITIAN", "", "skew", "symmetrical"};
const char* const kSeparators[] = {" ", "\t", "  ", " \t "};
const char* const kLineEnds[] = {"\n", "\r\n", " \n", "\t\n"};
const char* const kHeaderTails[] = {"", " extra", "\t%", " general"};
// Values the model knows exactly, then tokens that are not numbers.
const char* const kValues[] = {"1", "-2.5", "0", "-0", "3e-310", "1e308", "-1e308", "0.1", "7", "nan", "inf", "-inf",
                               "+12", "9007199254740993", "1.0"};
constexpr std::size_t kGoodValues = std::size(kValues);
const char* const kBadValues[] = {"x", "1e999", "", "1 2", "0x", "--1"};

// An integer as the format writes one: an optional sign and decimal digits.
bool integer_token(const std::string& token) {
  const std::size_t first = !token.empty() && (token[0] == '+' || token[0] == '-') ? 1 : 0;
  return first < token.size() && token.find_first_not_of("0123456789", first) == std::string::npos;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

bool one_of(const std::string& word, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (word == w) return true;
  return false;
}

// A file built from choices, and what the reader must make of it.
struct BuiltFile {
  std::string text;
  bool header_valid = false;
  bool symmetric = false;
  bool integer = false;                       // the field is integer
  bool non_integer_value = false;             // set when an integer file's body holds another value
  std::string refused_keyword;                // set when the reader must refuse the file naming it
  std::optional<tessera::DenseMatrix> model;  // set when the body is well formed
  bool refuse_size = false;
};

// What the header line must mean, from its words as the format defines them (whitespace
// separated, any case), whatever the choices that made it.
void expect_from_header(const std::string& line, BuiltFile& f) {
  std::istringstream in(lower(line));
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  w.resize(std::max<std::size_t>(w.size(), 5));
  const bool prefix_valid = w[0] == "%%matrixmarket" && w[1] == "matrix" && one_of(w[2], {"coordinate", "array"});
  const bool field_valid = one_of(w[3], {"real", "integer", "double"});
  if (prefix_valid && one_of(w[3], {"pattern", "complex"})) f.refused_keyword = w[3];
  if (prefix_valid && field_valid && one_of(w[4], {"skew-symmetric", "hermitian"})) f.refused_keyword = w[4];
  f.symmetric = w[4] == "symmetric";
  f.integer = w[3] == "integer";
  f.header_valid = prefix_valid && field_valid && one_of(w[4], {"general", "symmetric"}) && w.size() == 5;
}

bool build_header(tessera::fuzz::ByteReader& r, BuiltFile& f) {
  const char* banner = pick(r, kBanners);
  const char* object = pick(r, kObjects);
  const char* format = pick(r, kFormats);
  const char* field = pick(r, kFields);
  const char* symmetry = pick(r, kSymmetries);
  const char* separator = pick(r, kSeparators);
  const char* tail = r.byte() % 4 == 0 ? pick(r, kHeaderTails) : "";
  const std::string line = std::string(banner) + separator + object + separator + format + separator + field +
                           separator + symmetry + tail;
  f.text = line + pick(r, kLineEnds);
  expect_from_header(line, f);
  return lower(format) == "coordinate";
}

// A value of a well-formed body as the reader must read it (an integer's -0 is 0); notes a value
// that an integer file may not hold.
double model_value(const char* token, BuiltFile& f) {
  if (f.integer && !integer_token(token)) f.non_integer_value = true;
  const double v = std::strtod(token, nullptr);
  return f.integer ? v + 0.0 : v;
}

// A well-formed body and its model: entries added in file order, mirrored when symmetric. In an
// integer file a value that is not an integer makes the body malformed: no model.
void build_valid_body(tessera::fuzz::ByteReader& r, bool coordinate, BuiltFile& f) {
  const int rows = r.byte() % 6, cols = f.symmetric ? rows : r.byte() % 6;
  tessera::DenseMatrix model;
  model.rows = rows;
  model.cols = cols;
  model.values.assign(static_cast<std::size_t>(rows) * cols, 0.0);
  std::string body;
  const int entries = rows * cols == 0 ? 0 : r.byte() % 12;
  body += std::to_string(rows) + " " + std::to_string(cols) + (coordinate ? " " + std::to_string(entries) : "") + "\n";
  if (r.byte() % 4 == 0) body += "% a comment line\n\n";
  if (coordinate) {
    for (int e = 0; e < entries; ++e) {
      int i = r.byte() % rows, j = r.byte() % cols;
      if (f.symmetric && i < j) std::swap(i, j);
      const char* value = kValues[r.byte() % kGoodValues];
      body += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + value + "\n";
      const double v = model_value(value, f);
      model(i, j) += v;
      if (f.symmetric && i != j) model(j, i) += v;
    }
  } else {
    for (int j = 0; j < cols; ++j)
      for (int i = f.symmetric ? j : 0; i < rows; ++i) {
        const char* value = kValues[r.byte() % kGoodValues];
        body += std::string(value) + "\n";
        model(i, j) = model_value(value, f);
        if (f.symmetric) model(j, i) = model(i, j);
      }
  }
  f.text += body;
  if (!f.non_integer_value) f.model = model;
}

// A body from choices that may be wrong anywhere: size lines of every kind, indices out of range,
// tokens that are not numbers, then the rest of the input's bytes.
void build_any_body(tessera::fuzz::ByteReader& r, const std::uint8_t* rest, std::size_t rest_size, BuiltFile& f) {
  const char* const sizes[] = {"2 2", "2 2 3", "3 3 2", "0 0 0", "1 1", "-1 2 1", "2 -1", "99999999999 1 1",
                               "2147483647 2147483647 1", "3 3 9999999999", " 2\t2 1 ", "2 2 1 junk", "", "1e1 1 1"};
  std::string body = std::string(pick(r, sizes)) + "\n";
  const int lines = r.byte() % 8;
  for (int k = 0; k < lines; ++k) {
    if (r.byte() % 2) body += std::to_string(static_cast<int>(r.byte() % 5)) + " " + std::to_string(static_cast<int>(r.byte() % 5)) + " ";
    body += r.byte() % 4 ? kValues[r.byte() % kGoodValues] : pick(r, kBadValues);
    body += "\n";
  }
  f.text += body;
  f.text.append(reinterpret_cast<const char*>(rest), rest_size);
}

void check_built_file(const std::uint8_t* data, std::size_t size) {
  tessera::fuzz::ByteReader r(data, size);
  BuiltFile f;
  const bool coordinate = build_header(r, f);
  f.refuse_size = r.byte() % 8 == 0;
  const bool valid_body = r.byte() % 2 == 0;
  if (valid_body)
    build_valid_body(r, coordinate, f);
  else
    build_any_body(r, data + std::min(size, r.position()), size - std::min(size, r.position()), f);

  const ReadResult result = read_checked(f.text, f.refuse_size);
  if (!f.refused_keyword.empty() &&
      (result.matrix || result.refusal.find("'" + f.refused_keyword + "'") == std::string::npos))
    violated("keyword '" + f.refused_keyword + "' not refused by name: " + (result.matrix ? "accepted" : result.refusal));
  if (result.matrix && !f.header_valid) violated("a file with a bad header was accepted");
  if (result.matrix && f.symmetric && !symmetric(*result.matrix)) violated("a symmetric file read as an asymmetric matrix");
  if (result.matrix && f.non_integer_value) violated("an integer file holding a value that is not an integer was accepted");
  if (f.header_valid && f.model && !f.refuse_size) {
    if (!result.matrix) violated("a well-formed file was refused: " + result.refusal);
    if (!same_matrix(*result.matrix, *f.model)) violated("a well-formed file read as another matrix than the model's");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  read_checked(std::string(reinterpret_cast<const char*>(data), size), false);
  check_built_file(data, size);
  return 0;
}
