// An exception raised inside a task reaches the request's owner with its type, the task's name in
// front of its message; the first one is kept.
#include <gtest/gtest.h>

#include <new>
#include <string>

#include "submission.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

template <class Exception>
void raise_in_task(Submission& submission, const char* what, const Exception& e) {
  try {
    throw e;
  } catch (...) {
    submission.record_current_exception(what);
  }
}

template <class Expected>
std::string rethrown_message(const Submission& submission) {
  try {
    std::rethrow_exception(submission.error());
  } catch (const Expected& e) {
    return e.what();
  } catch (...) {
    ADD_FAILURE() << "rethrown with another type";
  }
  return "";
}

TEST(TaskErrors, KeepTheirTypeAndNameTheTask) {
  Submission cuda;
  raise_in_task(cuda, "gemm (cuBLAS)", CudaError("CUBLAS_STATUS_EXECUTION_FAILED"));
  EXPECT_TRUE(cuda.stopped());
  EXPECT_EQ(rethrown_message<CudaError>(cuda), "gemm (cuBLAS): CUBLAS_STATUS_EXECUTION_FAILED");

  Submission resource;
  raise_in_task(resource, "potrs chunk", ResourceError("too large for one launch"));
  EXPECT_EQ(rethrown_message<ResourceError>(resource), "potrs chunk: too large for one launch");

  Submission runtime;
  raise_in_task(runtime, "copy_in", RuntimeError("no worker"));
  EXPECT_EQ(rethrown_message<RuntimeError>(runtime), "copy_in: no worker");

  Submission other;
  raise_in_task(other, "potrf", std::logic_error("potrf kernel rejected argument 3"));
  EXPECT_EQ(rethrown_message<Error>(other), "potrf: potrf kernel rejected argument 3");
}

TEST(TaskErrors, ArgumentPositionsInsideATaskAreNotTheCallersAndAllocationFailuresStayBadAlloc) {
  Submission invalid;
  raise_in_task(invalid, "trsm", InvalidArgument("bad leading dimension", 7));
  try {
    std::rethrow_exception(invalid.error());
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.position(), 0);
    EXPECT_EQ(std::string(e.what()), "trsm: bad leading dimension");
  }
  Submission memory;
  raise_in_task(memory, "gemm", std::bad_alloc());
  EXPECT_THROW(std::rethrow_exception(memory.error()), std::bad_alloc);
}

TEST(TaskErrors, TheFirstIsKept) {
  Submission submission;
  EXPECT_FALSE(submission.error());
  raise_in_task(submission, "first", CudaError("a"));
  raise_in_task(submission, "second", RuntimeError("b"));
  EXPECT_EQ(rethrown_message<CudaError>(submission), "first: a");
}

}  // namespace
}  // namespace tessera::detail
