// The lazy forwarders of cuBLAS, cuSOLVER and cuSPARSE (src/lazy_cuda): linked in place of the
// real libraries, they leave those unmapped until the first call into one, then load it and pass
// every call on with its arguments and its result; where the real libraries cannot be found, their
// functions report it. Needs no GPU: the functions called here answer from the host. Exits 1 and
// says why on a failure.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool condition, const std::string& what) {
  if (!condition) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// Whether the process maps a file named NAME (a soname or its prefix) from a folder other than
// FORWARDERS (the folder of this build's forwarders).
bool real_library_mapped(const std::string& name, const std::string& forwarders) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.rfind('/');
    if (slash == std::string::npos || line.compare(slash + 1, name.size(), name) != 0) continue;
    if (line.compare(line.find('/'), forwarders.size() + 1, forwarders + "/") != 0) return true;
  }
  return false;
}

}  // namespace

// With the real libraries nowhere to be found: every call answers "not initialized", the functions
// that name a status say which library is missing, and the process goes on. Exits 77 (skipped)
// where a real library was found anyway.
int check_missing_libraries() {
  int version = -1;
  const cublasStatus_t blas = cublasGetProperty(MAJOR_VERSION, &version);
  if (blas == CUBLAS_STATUS_SUCCESS) {
    std::printf("SKIPPED: cuBLAS was found although its folder is hidden\n");
    return 77;
  }
  expect(blas == CUBLAS_STATUS_NOT_INITIALIZED, "cublasGetProperty without cuBLAS: " + std::to_string(blas));
  const std::string blas_text = cublasGetStatusString(blas);
  expect(blas_text.find("libcublas.so") != std::string::npos && blas_text.find("was not found") != std::string::npos,
         "cublasGetStatusString without cuBLAS: " + blas_text);
  expect(cusolverGetProperty(MAJOR_VERSION, &version) == CUSOLVER_STATUS_NOT_INITIALIZED,
         "cusolverGetProperty without cuSOLVER");
  cusparseSpMatDescr_t matrix = nullptr;
  expect(cusparseCreateCsr(&matrix, 1, 1, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I,
                           CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) == CUSPARSE_STATUS_NOT_INITIALIZED,
         "cusparseCreateCsr without cuSPARSE");
  const std::string sparse_text = cusparseGetErrorString(CUSPARSE_STATUS_NOT_INITIALIZED);
  expect(sparse_text.find("libcusparse.so") != std::string::npos,
         "cusparseGetErrorString without cuSPARSE: " + sparse_text);
  if (failures) return 1;
  std::printf("lazy CUDA forwarders without the real libraries: \"%s\", and the process goes on\n", blas_text.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--missing") return check_missing_libraries();
  if (argc != 2) {
    std::printf("usage: lazy_cuda_forwarding FORWARDERS_FOLDER | --missing\n");
    return 2;
  }
  const std::string forwarders = argv[1];
  for (const char* name : {"libcublasLt.so", "libcublas.so", "libcusolver.so", "libcusparse.so"})
    expect(!real_library_mapped(name, forwarders), std::string(name) + " is mapped before any call into it");

  // The first calls come from several threads at once: each waits for the one loading.
  std::vector<int> majors(8, -1);
  std::vector<std::thread> threads;
  for (int& major : majors)
    threads.emplace_back(
        [&major] { expect(cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS, "cublasGetProperty"); });
  for (auto& thread : threads) thread.join();
  for (int major : majors)
    expect(major == CUBLAS_VER_MAJOR, "cuBLAS's major version through the forwarder: " + std::to_string(major));
  expect(real_library_mapped("libcublas.so", forwarders), "the real cuBLAS is not mapped after a call into it");
  expect(real_library_mapped("libcublasLt.so", forwarders), "cuBLASLt is not mapped after a call into cuBLAS");
  expect(!real_library_mapped("libcusolver.so", forwarders), "cuSOLVER is mapped before any call into it");
  const char* text = cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED);
  expect(text != nullptr && *text != '\0', "cublasGetStatusString gave no text");

  // cuSOLVER links cuBLAS and cuSPARSE itself: those references reach the forwarders, which pass
  // them on.
  int major = -1, version = -1;
  expect(cusolverGetProperty(MAJOR_VERSION, &major) == CUSOLVER_STATUS_SUCCESS && major == CUSOLVER_VER_MAJOR,
         "cuSOLVER's major version through the forwarder: " + std::to_string(major));
  expect(cusolverGetVersion(&version) == CUSOLVER_STATUS_SUCCESS && version / 1000 == CUSOLVER_VER_MAJOR,
         "cuSOLVER's version through the forwarder: " + std::to_string(version));
  expect(real_library_mapped("libcusolver.so", forwarders), "the real cuSOLVER is not mapped after a call into it");
  // Eleven arguments, five of them on the stack, through the first call into cuSPARSE (the one
  // that loads it) and back: a sparse matrix's description, made and read on the host.
  cusparseSpMatDescr_t matrix = nullptr;
  int64_t rows = 7, columns = 9, entries = 11;
  void* const pointers[3] = {reinterpret_cast<void*>(0x1000), reinterpret_cast<void*>(0x2000),
                             reinterpret_cast<void*>(0x3000)};
  expect(cusparseCreateCsr(&matrix, rows, columns, entries, pointers[0], pointers[1], pointers[2], CUSPARSE_INDEX_64I,
                           CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ONE, CUDA_R_64F) == CUSPARSE_STATUS_SUCCESS,
         "cusparseCreateCsr through the forwarder");
  int64_t got_rows = 0, got_columns = 0, got_entries = 0;
  void* got[3] = {};
  cusparseIndexType_t offsets_type{}, indices_type{};
  cusparseIndexBase_t base{};
  cudaDataType value_type{};
  expect(cusparseCsrGet(matrix, &got_rows, &got_columns, &got_entries, &got[0], &got[1], &got[2], &offsets_type,
                        &indices_type, &base, &value_type) == CUSPARSE_STATUS_SUCCESS,
         "cusparseCsrGet through the forwarder");
  expect(got_rows == rows && got_columns == columns && got_entries == entries && got[0] == pointers[0] &&
             got[1] == pointers[1] && got[2] == pointers[2] && offsets_type == CUSPARSE_INDEX_64I &&
             indices_type == CUSPARSE_INDEX_64I && base == CUSPARSE_INDEX_BASE_ONE && value_type == CUDA_R_64F,
         "a sparse matrix's description read back through the forwarder differs from the one made");
  cusparseDestroySpMat(matrix);
  int sparse = -1;
  expect(cusparseGetProperty(MAJOR_VERSION, &sparse) == CUSPARSE_STATUS_SUCCESS && sparse == CUSPARSE_VER_MAJOR,
         "cuSPARSE's major version through the forwarder: " + std::to_string(sparse));

  if (failures) return 1;
  std::printf(
      "lazy CUDA forwarders: nothing mapped before the first calls, the real libraries after, results passed on\n");
  return 0;
}
