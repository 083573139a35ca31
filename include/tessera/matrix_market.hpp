// Matrix Market files for the command-line tool and for tests: dense ("array") and sparse
// ("coordinate") real matrices, general or symmetric, read into a dense column-major matrix.
#pragma once

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

// Reads a Matrix Market stream; symmetric files are mirrored into both triangles. Throws
// InvalidArgument naming the line on malformed input, or when the matrix would exceed
// max_elements entries.
DenseMatrix read_matrix_market(std::istream& in, std::size_t max_elements = std::size_t(1) << 32);
DenseMatrix read_matrix_market_file(const std::string& path);

// Writes the rows x cols column-major matrix A (leading dimension ld) in array format; with
// lower_only, as a symmetric matrix from its lower triangle.
void write_matrix_market(std::ostream& out, int rows, int cols, const double* A, int ld, bool lower_only);
void write_matrix_market_file(const std::string& path, int rows, int cols, const double* A, int ld, bool lower_only);

}  // namespace tessera
