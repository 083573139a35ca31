// Exceptions Tessera throws for misuse and for failures of the machinery (runtime, CUDA). An
// exception raised inside a task reaches Request::wait with its type (message prefixed with the
// task that raised it).
// Numerical failure (a matrix that is not positive definite) is never an exception:
// it is reported as LAPACK-style info.
#pragma once

#include "tessera/export.h"

#include <stdexcept>
#include <string>

namespace tessera {

// Base class of every exception Tessera throws.
class TESSERA_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An argument that violates the API's contract (bad size, null pointer, unknown name).
// `position` is the 1-based index of the offending argument in the routine's LAPACK-style list
// (LAPACK's list, then Tessera's own arguments) where it has one, else 0.
class TESSERA_EXPORT InvalidArgument : public Error {
 public:
  InvalidArgument(const std::string& what, int position = 0) : Error(what), position_(position) {}
  int position() const noexcept { return position_; }

 private:
  int position_;
};

// The runtime (StarPU) could not start, or cannot run what was asked (gpu mode with no GPU).
class TESSERA_EXPORT RuntimeError : public Error {
 public:
  using Error::Error;
};

// What was asked for does not fit the machine: host or GPU memory, or one launch's or one
// chunk's limits. The same call with smaller sizes (or tiles) can succeed.
class TESSERA_EXPORT ResourceError : public Error {
 public:
  using Error::Error;
};

// The request was cancelled (Request::cancel) before its work was done: what it was to write
// holds partial results.
class TESSERA_EXPORT Cancelled : public Error {
 public:
  using Error::Error;
};

// A CUDA, cuBLAS or cuSOLVER call failed.
class TESSERA_EXPORT CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
