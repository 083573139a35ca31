"""tessera across threads and processes: runtimes switched under running calls, fork (multiprocessing
pools), a KeyboardInterrupt during a call, threads still calling at exit. Each case runs in a
subprocess of its own, so that a crash or a hang is a failed test rather than a lost test run."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import multiprocessing, os, signal, sys, threading, time
import numpy as np
import tessera

def spd(n, seed=0):
    g = np.random.default_rng(seed).standard_normal((n, n))
    return g @ g.T / n + np.eye(n)
"""


# These cases are about the task runtime: a tile size asked for makes even small matrices run
# tasks (small work otherwise runs on the calling thread with no runtime), unless a case says.
TASKS_AT_EVERY_SIZE = {"TESSERA_NB": "64"}


def run_python(code, timeout=180, env=TASKS_AT_EVERY_SIZE):
    """Runs `code` (after PRELUDE) in a fresh interpreter with `env` added to the environment (a
    None value removes a variable): (exit status, stdout + stderr). A hang past `timeout` fails
    the test."""
    env = {**os.environ, "STARPU_SILENT": "1", "PYTHONUNBUFFERED": "1", **env}
    env = {name: value for name, value in env.items() if value is not None}
    try:
        done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired as hang:
        pytest.fail(f"the process did not end within {timeout} s:\n{hang.output}")
    return done.returncode, done.stdout


def assert_ran(code, timeout=180, env=TASKS_AT_EVERY_SIZE):
    status, output = run_python(code, timeout, env)
    assert status == 0, f"exit status {status}:\n{output[-4000:]}"
    return output


SWITCHING = """
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else {seconds}
    a = spd(120)
    expected = np.linalg.cholesky(a)
    stop = time.monotonic() + seconds
    errors = []
    expected_refusals = ("already active", "differs from the active")

    def keep_going(work):
        while time.monotonic() < stop:
            try:
                work()
            except (RuntimeError, ValueError) as e:
                if not any(text in str(e) for text in expected_refusals):
                    errors.append(repr(e))
                    return

    def factor():
        assert np.allclose(tessera.cholesky(a), expected)
        x = tessera.cho_solve(tessera.cholesky(a), np.ones(120))
        assert np.allclose(a @ x, 1)

    def switch_policy():
        assert np.allclose(tessera.cholesky(a, policy="eager"), expected)

    def enter_runtime():
        with tessera.Runtime(policy="eager"):
            assert np.allclose(tessera.cholesky(a), expected)

    def enter_and_leave_runtime():
        with tessera.Runtime(mode="cpu", ncpu=1):
            pass

    threads = [threading.Thread(target=keep_going, args=(work,))
               for work in (factor, factor, factor, switch_policy, enter_runtime, enter_and_leave_runtime)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    print("ok")
"""


def test_switching_runtimes_under_running_calls_neither_crashes_nor_fails():
    """Threads factor on the default runtime while others restart it with another policy and enter
    and leave `with tessera.Runtime(...)`: each close waits for the calls running on the runtime,
    and every call runs on the runtime active when it starts. This crashed (SIGSEGV, SIGABRT) in
    nearly every process when a close destroyed the runtime under a running call."""
    for _ in range(3):
        assert "ok" in assert_ran(SWITCHING.format(seconds=3))


def test_closing_a_runtime_waits_for_the_calls_running_on_it():
    """A `with tessera.Runtime()` block left while another thread's calls run on it: the close waits
    for the call in flight, and the thread's next calls run on the default runtime."""
    for _ in range(3):
        assert "ok" in assert_ran("""
            a = spd(1000)
            expected = np.linalg.cholesky(a)
            results = []
            with tessera.Runtime(mode="cpu"):
                tessera.cholesky(spd(10))
                worker = threading.Thread(target=lambda: results.extend(tessera.cholesky(a) for _ in range(30)))
                worker.start()
                time.sleep(0.3)
            worker.join()
            assert len(results) == 30 and all(np.allclose(r, expected) for r in results)
            print("ok")
        """)


FORK_POOL = """
    def factor(seed):
        a = spd(90, seed)
        return float(np.abs(tessera.cholesky(a, mode="cpu") - np.linalg.cholesky(a)).max())

    if __name__ == "__main__":
        a = spd(200)
        expected = np.linalg.cholesky(a)
        assert np.allclose(tessera.cholesky(a, mode="cpu"), expected)  # the parent's runtime runs
        # A thread still factoring while the pool forks: the fork waits for its calls. (numpy's own
        # threaded BLAS is kept out of it: a fork during one of its calls hangs that call.)
        stop = threading.Event()
        def keep_factoring():
            while not stop.is_set():
                assert np.allclose(tessera.cholesky(a, mode="cpu"), expected)
        worker = threading.Thread(target=keep_factoring)
        worker.start()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            errors = pool.map(factor, range(6))
        stop.set()
        worker.join()
        assert max(errors) < 1e-12, errors
        # The parent starts its runtime again on its next call.
        assert np.allclose(tessera.cholesky(a), expected)
        print("ok")
"""


@pytest.mark.parametrize("env", [TASKS_AT_EVERY_SIZE, {"TESSERA_NB": None}], ids=["tasks", "calling-thread"])
def test_a_fork_pool_after_a_call_computes_in_its_children(env):
    """The default runtime is shut down before fork (its calls in flight finish first) and started
    again on the next call, in the parent and in each child: the children compute. They raised
    RuntimeStartError when the parent's runtime was copied into them without its threads. Small
    work on the calling thread runs single-threaded BLAS: a fork during it leaves no thread pool
    mid-call in the child."""
    assert "ok" in assert_ran(FORK_POOL, env=env)


def test_a_child_forked_inside_a_runtime_block_is_told_to_spawn():
    output = assert_ran("""
        def factor(_):
            try:
                tessera.cholesky(spd(30), mode="cpu")
            except tessera.RuntimeStartError as e:
                return str(e)
            return "computed"

        if __name__ == "__main__":
            a = spd(100)
            with tessera.Runtime(mode="cpu") as runtime:
                tessera.cholesky(a)
                with multiprocessing.get_context("fork").Pool(2) as pool:
                    messages = pool.map(factor, range(2))
                # The parent's runtime stayed up.
                assert runtime.cpu_workers > 0
                assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))
            # A plain fork() inside the block: the child leaves the block and still cannot start one.
            with tessera.Runtime(mode="cpu"):
                pid = os.fork()
                if pid == 0:
                    status = 1
                    try:
                        tessera.cholesky(a)
                    except tessera.RuntimeStartError as e:
                        status = 0 if 'get_context("spawn")' in str(e) else 2
                    os._exit(status)
                _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0, status
            assert all('multiprocessing.get_context("spawn")' in m for m in messages), messages
            print("ok")
    """)
    assert "ok" in output


def test_a_child_forked_after_cuda_was_initialised_runs_on_cpus_only():
    """CUDA does not survive fork: where the parent had initialised it (simulated here, as the
    driver would report it), a child runs on CPU workers, and gpu mode or GPU work raises an error
    naming the fix."""
    output = assert_ran("""
        import tessera._runtime as runtime_module

        def child(_):
            a = spd(60)
            assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))        # auto: CPU workers
            assert np.allclose(tessera.cholesky(a, mode="cpu"), np.linalg.cholesky(a))
            refusals = []
            for attempt in (lambda: tessera.cholesky(a, mode="gpu"),
                            lambda: tessera.Runtime(mode="gpu").__enter__(),
                            lambda: tessera.Runtime(ncuda=1).__enter__(),
                            runtime_module.check_gpu_usable):
                try:
                    attempt()
                    refusals.append("accepted")
                except tessera.RuntimeStartError as e:
                    refusals.append(str(e))
            with tessera.Runtime(mode="hybrid") as rt:
                cuda_workers = rt.cuda_workers
                assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))
            return refusals, cuda_workers

        if __name__ == "__main__":
            tessera.cholesky(spd(50))
            runtime_module._cuda_initialised = lambda: True
            with multiprocessing.get_context("fork").Pool(1) as pool:
                refusals, cuda_workers = pool.map(child, [0])[0]
            assert cuda_workers == 0
            for message in refusals:
                assert 'multiprocessing.get_context("spawn")' in message and "CUDA" in message, refusals
            print("ok")
    """)
    assert "ok" in output


def test_a_matrix_that_is_not_positive_definite_in_a_pool_worker_reaches_the_parent():
    """Pool.map of a worker that raises NotPositiveDefiniteError: the parent gets it with its column
    (it waited for ever when the exception could not be rebuilt there)."""
    assert "ok" in assert_ran("""
        def factor(column):
            a = spd(20)
            a[column - 1, column - 1] = -1
            return tessera.cholesky(a, mode="cpu")

        if __name__ == "__main__":
            with multiprocessing.get_context("fork").Pool(1) as pool:
                try:
                    pool.map(factor, [7])
                except tessera.NotPositiveDefiniteError as e:
                    assert e.column == 7
                    print("ok")
    """, timeout=60)


def test_a_keyboard_interrupt_during_a_call_leaves_the_runtime_usable():
    """SIGINT while calls run: the call in flight is cancelled, the KeyboardInterrupt follows, and
    the runtime serves the next call and shuts down at exit."""
    output = assert_ran("""
        a = spd(1200)
        tessera.cholesky(spd(10), mode="cpu")
        threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            for _ in range(50):
                tessera.cholesky(a, mode="cpu")
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")
        assert np.allclose(tessera.cholesky(a, mode="cpu"), np.linalg.cholesky(a))
        print("ok")
    """)
    assert "interrupted" in output and "ok" in output


def test_ctrl_c_cancels_a_long_factorization_within_a_fifth_of_a_second():
    """SIGINT while a factorization of order 8000 runs (seconds of work on two cores; larger with
    more cores): KeyboardInterrupt within 0.2 s of the signal, and the next call works. The signal
    is sent once the call has been in Tessera's native call for 0.3 s, past the copy of the input
    (numpy's, which holds the GIL) and the insertion of the tasks."""
    output = assert_ran("""
        import linecache
        n = int(8000 * max(1.0, len(os.sched_getaffinity(0)) / 2) ** (1 / 3))
        a = np.full((n, n), 0.5) + n * np.eye(n)
        tessera.cholesky(spd(2001), mode="cpu")  # the runtime started before timing (tasks beyond 2000)
        main = threading.main_thread()
        sent = []

        def in_the_native_call():
            frame = sys._current_frames()[main.ident]
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            return frame.f_code.co_name == "_factor_host" and '"potrf"' in line

        def interrupt():
            while not in_the_native_call():
                time.sleep(0.001)
            time.sleep(0.3)
            sent.append(time.perf_counter())
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        try:
            tessera.cholesky(a, mode="cpu")
            print("finished before the signal")
        except KeyboardInterrupt:
            print(f"interrupted after {time.perf_counter() - sent[0]:.3f} s")
        b = spd(500)
        assert np.allclose(tessera.cholesky(b, mode="cpu"), np.linalg.cholesky(b))
        print("ok")
    """, env={"TESSERA_NB": None})
    assert "ok" in output, output
    assert "finished before the signal" not in output, output
    latency = float(output.split("interrupted after ")[1].split(" s")[0])
    assert latency < 0.2, output


def test_small_work_never_starts_the_runtime():
    """Small numpy work runs LAPACK on the calling thread (the library's plan): no runtime starts,
    until a call large enough for tasks."""
    assert_ran("""
        from tessera import _runtime
        a = spd(100)
        L = tessera.cholesky(a)
        x = tessera.cho_solve(L, np.ones(100))
        factors, info = tessera.cholesky_ex(np.stack([a, a]))
        tessera.scipy.cho_solve(tessera.scipy.cho_factor(a), np.ones((100, 2)))
        assert np.allclose(a @ x, 1) and not info.any()
        assert _runtime._default is None, "a small call started the runtime"
        tessera.cholesky(spd(2001))  # one matrix beyond order 2000: tasks on every machine
        assert _runtime._default is not None
    """, env={"TESSERA_NB": None})


def test_threads_still_calling_at_exit_do_not_abort_the_process():
    """Daemon threads inside `with tessera.Runtime()` or calling on the default runtime when the
    interpreter exits: the runtimes are shut down at exit, their calls waited for, and later calls
    refused. A runtime left running at exit aborted the process (std::terminate)."""
    for _ in range(3):
        status, output = run_python("""
            a = np.eye(600) * 4

            def in_a_block():
                with tessera.Runtime(mode="cpu"):
                    while True:
                        tessera.cholesky(a)

            def on_the_default():
                while True:
                    try:
                        tessera.cholesky(a)
                    except RuntimeError:
                        pass

            for target in (in_a_block, on_the_default):
                threading.Thread(target=target, daemon=True).start()
            time.sleep(0.5)
            print("exiting")
        """)
        assert status == 0, output
        assert "terminate" not in output and "leaked" not in output, output


def test_openblas_loads_with_this_cpus_kernel_and_the_environment_is_left_as_it_was():
    """The package asks OpenBLAS for the kernel of this CPU's vector units while its native module
    loads, and only then: the variable is gone afterwards, and a value the user set wins."""
    from tessera import _blas_kernel

    expected = _blas_kernel.kernel_for_cpu(os.uname().machine, _blas_kernel._cpu_flags())
    output = assert_ran("""
        info = tessera.blas_info()
        assert "OPENBLAS_CORETYPE" not in os.environ, os.environ["OPENBLAS_CORETYPE"]
        print("asked", info["kernel_asked_for"], "runs", info["kernel"], "faster", info["faster_kernel"])
    """, env={"OPENBLAS_CORETYPE": None})
    assert f"asked {expected} " in output, output
    if expected is not None and "runs  " not in output:  # OpenBLAS linked: it runs what was asked for
        assert f"runs {expected} faster None" in output, output
    output = assert_ran("""
        info = tessera.blas_info()
        assert os.environ["OPENBLAS_CORETYPE"] == "Prescott"
        print("asked", info["kernel_asked_for"], "runs", info["kernel"])
    """, env={"OPENBLAS_CORETYPE": "Prescott"})
    assert "asked None " in output, output


WITHOUT_CUDA_LIBRARIES = """
import importlib.util, os, sys
import numpy as np
# The package's loader of CUDA's libraries, run with NVIDIA's packages and the system's CUDA out
# of its reach (no folder to search, no load by soname), before the package imports it.
package = importlib.util.find_spec("tessera").submodule_search_locations[0]
spec = importlib.util.spec_from_file_location("tessera._cuda_libraries", os.path.join(package, "_cuda_libraries.py"))
libraries = importlib.util.module_from_spec(spec)
spec.loader.exec_module(libraries)
libraries._pip_folders = libraries._system_folders = lambda: []
load = libraries._load
libraries._load = lambda path: "/" in path and load(path)
sys.modules["tessera._cuda_libraries"] = libraries
import tessera

assert libraries.placeholders == list(libraries.LINKED), libraries.loaded
mapped = {line.split()[-1] for line in open("/proc/self/maps") if "libcudart.so" in line}
assert mapped == {os.path.join(libraries.PLACEHOLDERS, "libcudart.so.13")}, mapped
g = np.random.default_rng(3).standard_normal((2001, 2001))
a = g @ g.T / 2001 + np.eye(2001)
with tessera.Runtime() as runtime:  # the task runtime: order 2001 is past the calling thread's limit
    assert runtime.cuda_workers == 0
    l = tessera.cholesky(a)
assert np.abs(l @ l.T - a).max() <= 1e-12 * np.abs(a).max()
try:
    with tessera.Runtime(ncuda=1):
        pass
    raise SystemExit("a runtime with a CUDA worker started without CUDA's libraries")
except tessera.RuntimeStartError as e:
    assert "CUDA's libraries cannot be used" in str(e) and "not installed" in str(e), e
print("ok")
"""


def test_binary_wheel_runs_on_the_cpu_without_cuda_libraries():
    """The binary wheel without NVIDIA's packages or a CUDA toolkit: its placeholders of the CUDA
    libraries stand in, the runtime starts no CUDA worker (on a GPU machine too), refuses one asked
    for with the reason, and the factorization runs on the CPU."""
    package = os.path.dirname(importlib.util.find_spec("tessera").origin)
    if not os.path.isdir(os.path.join(package, "_cuda_placeholders")):
        pytest.skip("not the binary wheel of a library built with CUDA (no tessera/_cuda_placeholders)")
    env = {**os.environ, "STARPU_SILENT": "1"}
    done = subprocess.run([sys.executable, "-c", WITHOUT_CUDA_LIBRARIES], env=env, timeout=300,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout[-4000:]


def test_binary_wheel_loads_cuda_libraries_at_their_first_call():
    """The binary wheel where CUDA's libraries are installed: it loads its forwarders of cuBLAS,
    cuSOLVER and cuSPARSE in their place, so that importing the package and running on the CPU (on
    the calling thread and through the task runtime) maps none of them, nor cuBLASLt or nvJitLink;
    a call into one loads the real library from the folder where the package found it."""
    package = os.path.dirname(importlib.util.find_spec("tessera").origin)
    if not os.path.isdir(os.path.join(package, "_cuda_forwarders")):
        pytest.skip("not the binary wheel of a library built with the lazy CUDA forwarders")
    output = assert_ran("""
        import ctypes
        from tessera import _cuda_libraries as libraries
        if not libraries.forwarded:
            print("no CUDA library found:", libraries.loaded)
            sys.exit(0)

        def real_mapped(name):
            paths = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
            return sorted(p for p in paths if os.path.basename(p).startswith(name)
                          and not p.startswith(libraries.FORWARDERS + "/"))

        names = ("libcublasLt.so", "libcublas.so", "libcusolver.so", "libcusparse.so", "libnvJitLink.so")
        assert not any(real_mapped(n) for n in names), [real_mapped(n) for n in names]
        a = spd(200)
        assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))  # on the calling thread
        with tessera.Runtime(ncuda=0):  # order 2001: past the calling thread's limit, as tasks
            b = spd(2001)
            assert np.allclose(tessera.cholesky(b), np.linalg.cholesky(b))
        assert not any(real_mapped(n) for n in names), [real_mapped(n) for n in names]
        version = ctypes.c_int(-1)
        cublas = ctypes.CDLL(libraries.loaded["libcublas.so.13"])
        assert cublas.cublasGetProperty(0, ctypes.byref(version)) == 0 and version.value == 13, version
        real = os.path.realpath(libraries.forwarded["libcublas.so.13"])
        assert [os.path.realpath(p) for p in real_mapped("libcublas.so")] == [real], real_mapped("libcublas.so")
        assert real_mapped("libcublasLt.so") and not real_mapped("libcusolver.so")
        print("forwarded", sorted(libraries.forwarded))
    """, env={})
    assert "forwarded" in output or "no CUDA library found" in output, output


def test_dense_gpu_entries_run_on_the_published_runtime_or_do_nothing():
    """The entries that cholesky and cholesky_ex of a GPU matrix take instead of runtime_call() once a
    runtime runs: with none published (a fresh process) they run nothing and say so (False, None);
    inside a tessera.Runtime block they run the device API on that runtime, whose checks speak (a
    runtime without CUDA workers here, in every precision and in both forms), and after the block
    nothing is published again until a call starts the default runtime."""
    output = assert_ran("""
        from tessera import _core
        a, l, info = 1 << 20, 1 << 24, 1 << 28  # never read: each call stops at a check or runs nothing
        suffixes = ("_f4", "_f8", "_c8", "_c16")

        def calls(suffix):
            one = getattr(_core, "potrf_device_into_published" + suffix)
            wait = getattr(_core, "potrf_device_into_and_wait_published" + suffix)
            return (lambda: one(a, 1, 8, 0, l, 8, 1, "", info, 0),
                    lambda: one(a, 1, 8, 64, l, 8, 3, "", info, 0),
                    lambda: wait(a, 1, 8, l, 8, "", 0))

        for suffix in suffixes:
            assert [call() for call in calls(suffix)] == [False, False, None], suffix
        with tessera.Runtime(ncuda=0):
            for suffix in suffixes:
                for call in calls(suffix):
                    try:
                        call()
                        raise AssertionError("ran on a runtime without CUDA workers")
                    except tessera.RuntimeStartError as e:
                        assert "no CUDA worker" in str(e), e
        for suffix in suffixes:
            assert [call() for call in calls(suffix)] == [False, False, None], suffix
        tessera.cholesky(spd(300), mode="cpu")
        try:
            calls("_f8")[0]()
            raise AssertionError("no runtime published after the default one started")
        except tessera.RuntimeStartError as e:
            assert "no CUDA worker" in str(e), e
        print("ok")
    """, env={"TESSERA_NCUDA": "0", **TASKS_AT_EVERY_SIZE})
    assert "ok" in output
