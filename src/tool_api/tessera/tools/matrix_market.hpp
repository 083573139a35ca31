// Matrix Market files for the command-line tool and for tests: dense ("array") and sparse
// ("coordinate") real matrices, general or symmetric, read into a dense column-major matrix.
#pragma once

#include "tessera/export.h"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera {

struct DenseMatrix {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;  // column-major, leading dimension = rows
  double& operator()(int i, int j) { return values[static_cast<std::size_t>(j) * rows + i]; }
  double operator()(int i, int j) const { return values[static_cast<std::size_t>(j) * rows + i]; }
};

// Asked about the declared size as soon as the size line is read, before anything is allocated
// for the matrix; it refuses a matrix by throwing (the exception reaches the reader's caller).
using MatrixMarketSizeCheck = std::function<void(int rows, int cols)>;

// Reads a Matrix Market stream. Fields real, integer (and double); symmetry general or
// symmetric (a symmetric file holds the lower triangle and is mirrored into both). Duplicate
// coordinate entries are summed, as the format specifies (in a symmetric file too). Headers
// with pattern or complex fields, or skew-symmetric or hermitian symmetry, are refused by name.
// An integer file's values must be integers (optional sign, decimal digits), read as the nearest
// double. Lines end in LF or CR LF; the banner, comment and size lines hold at most 1024
// characters (the format's limit), the lines after the size line at most 65536: a longer line is
// refused after reading one character past the limit.
// Throws InvalidArgument naming the line on malformed input, or when the matrix would exceed
// max_elements entries.
TESSERA_EXPORT DenseMatrix read_matrix_market(std::istream& in, std::size_t max_elements = std::size_t(1) << 32,
                               const MatrixMarketSizeCheck& check_size = nullptr);
TESSERA_EXPORT DenseMatrix read_matrix_market_file(const std::string& path, std::size_t max_elements = std::size_t(1) << 32,
                                    const MatrixMarketSizeCheck& check_size = nullptr);

// Writes the rows x cols column-major matrix A (leading dimension ld) in array format; with
// lower_only, as a symmetric matrix from its lower triangle, else as a general matrix with every
// entry.
TESSERA_EXPORT void write_matrix_market(std::ostream& out, int rows, int cols, const double* A, int ld, bool lower_only);
TESSERA_EXPORT void write_matrix_market_file(const std::string& path, int rows, int cols, const double* A, int ld, bool lower_only);

}  // namespace tessera
