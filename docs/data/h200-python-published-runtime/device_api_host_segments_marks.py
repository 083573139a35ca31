# Adds timing marks to a copy of the sources (scratch only).
import re, sys
root = sys.argv[1]
def patch(path, pairs, head):
    s = open(path).read()
    for old, new in pairs:
        assert s.count(old) >= 1, (path, old)
        s = s.replace(old, new, 1)
    s = s.replace('#include "tessera/device.hpp"\n', '#include "tessera/device.hpp"\n' + head, 1) if 'device.cpp' in path else s.replace('#include "callers_stream.hpp"\n', '#include "callers_stream.hpp"\n' + head, 1)
    open(path, 'w').write(s)
decl = '#include <chrono>\nextern "C" long long tessera_probe_marks[16];\n#define TMARK(i) (tessera_probe_marks[i] = std::chrono::steady_clock::now().time_since_epoch().count())\n'
defn = '#include <chrono>\nextern "C" __attribute__((visibility("default"))) long long tessera_probe_marks[16] = {};\n#define TMARK(i) (tessera_probe_marks[i] = std::chrono::steady_clock::now().time_since_epoch().count())\n'
patch(root + '/src/api/device.cpp', [
 ('''              Stream stream, const FactorOptions& options) {
  detail::throw_if_invalid("device::potrf_ex", potrf_out_of_place_argument_error(''',
  '''              Stream stream, const FactorOptions& options) {
  TMARK(0);
  detail::throw_if_invalid("device::potrf_ex", potrf_out_of_place_argument_error('''),
 ('''  require_cuda_workers("potrf_ex", runtime);
  const int device = n > 0 ? device_holding("potrf_ex", A, "A", 3) : -1;
  if (n > 0 && device_holding("potrf_ex", L, "L", 6) != device)''',
  '''  TMARK(1);
  require_cuda_workers("potrf_ex", runtime);
  TMARK(2);
  const int device = n > 0 ? device_holding("potrf_ex", A, "A", 3) : -1;
  if (n > 0 && device_holding("potrf_ex", L, "L", 6) != device)'''),
 ('''  const bool upper = options.uplo == Uplo::upper;
  detail::load_lower_on_stream(device, n, A, upper ? colStrideA : rowStrideA, upper ? rowStrideA : colStrideA, L, ldl,
                               upper, stream);
  FactorOptions lower = options;''',
  '''  const bool upper = options.uplo == Uplo::upper;
  TMARK(3);
  detail::load_lower_on_stream(device, n, A, upper ? colStrideA : rowStrideA, upper ? rowStrideA : colStrideA, L, ldl,
                               upper, stream);
  TMARK(4);
  FactorOptions lower = options;'''),
 ('''  const detail::Plan plan = device_plan<T>(runtime, n, options);
  if (on_callers_stream(plan, {device, info_device})) {
    detail::potrf_on_callers_stream_async''',
  '''  const detail::Plan plan = device_plan<T>(runtime, n, options);
  TMARK(5);
  if (on_callers_stream(plan, {device, info_device})) {
    TMARK(6);
    detail::potrf_on_callers_stream_async'''),
 ('''  if (upper) detail::lower_to_upper_on_stream(device, n, L, ldl, stream);
}''', '''  if (upper) detail::lower_to_upper_on_stream(device, n, L, ldl, stream);
  TMARK(12);
}'''),
], defn)
patch(root + '/src/runtime/callers_stream.cpp', [
 ('''  const int lwork = cuda::vendor::potrf_workspace(handles.solver, uplo, n, L, ld);
  T* work = static_cast<T*>(handles.workspace_of(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), stream));
  cuda::vendor::potrf(handles.solver, uplo, n, L, ld, work, lwork, info);
  cuda::check_potrf_info(n, L, ld, info, stream);''',
  '''  TMARK(8);
  const int lwork = cuda::vendor::potrf_workspace(handles.solver, uplo, n, L, ld);
  T* work = static_cast<T*>(handles.workspace_of(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), stream));
  TMARK(9);
  cuda::vendor::potrf(handles.solver, uplo, n, L, ld, work, lwork, info);
  TMARK(10);
  cuda::check_potrf_info(n, L, ld, info, stream);
  TMARK(11);'''),
 ('''  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  factor(*handles, uplo, n, A, lda, info, stream);
  handles->enqueued(stream);''',
  '''  const CurrentDevice current(device);
  const auto stream = static_cast<cudaStream_t>(caller_stream);
  const StreamSolverPool::Lease handles = lease_handles(runtime, device);
  handles->bind(stream);
  TMARK(7);
  factor(*handles, uplo, n, A, lda, info, stream);
  handles->enqueued(stream);'''),
], decl)
