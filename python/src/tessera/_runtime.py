"""The task runtime behind host (numpy) arrays and dense GPU matrices.

One Tessera runtime (one StarPU) lives in a process at a time: the default one is started on first
use; ``with tessera.Runtime(...)`` replaces it for the block and shuts its own down at the end.

Every call runs on the runtime through a RuntimeCall taken under ``_lock`` (runtime_call()), and a
runtime is closed under the same lock, waiting for the calls admitted on it: a thread that switches
runtimes never stops one under another thread's call, and the next call runs on the runtime then
active.

fork(): StarPU's state is copied into a child, its threads are not, so a child cannot use its
parent's runtime, nor start its own while the parent's ran at the fork. The default runtime is
therefore shut down before each fork (its calls in flight finish first) and started again on the
next call, in the parent and in the child alike; a ``with tessera.Runtime()`` block stays up in the
parent, and calls in the child then raise. CUDA does not survive fork either: a child of a process
that had initialised it runs on its CPUs only.
"""
import atexit
import ctypes
import operator
import os
import threading
import warnings

from . import _core

_MODES = ("auto", "gpu", "cpu", "hybrid")
_lock = threading.RLock()
_default = None  # the native runtime started on first use
_default_policy = None
_active = []  # Runtimes entered with `with`, innermost last
_abandoned = []  # the parent's native runtimes, in a forked child: kept, never closed here
_cuda_at_fork = False  # whether CUDA was initialised when this process last forked
_cuda_lost = False  # this process was forked from one that had initialised CUDA
_running_at_fork = False  # whether a runtime was running when this process last forked
_starpu_inherited = False  # this process was forked while its parent's runtime ran: none can start here
_exiting = False  # the interpreter is exiting: runtimes are shut down and none starts again

_SPAWN = 'start the processes with multiprocessing.get_context("spawn") (or "forkserver")'

# Calls running LAPACK on the calling thread (no runtime) are counted by the native module, which
# fork() waits on (_before_fork): a child copied from a process in the middle of a multithreaded
# BLAS call waits for the pool's threads for ever.


class Runtime:
    """Explicit control of Tessera's task runtime (StarPU): its mode, scheduling policy and workers.

    ``mode`` is the default for the calls made inside the ``with`` block ("auto", "gpu", "cpu" or
    "hybrid"); ``policy`` a scheduling policy by name (StarPU's or Tessera's); ``ncpu`` and
    ``ncuda`` limit the CPU workers and GPUs (None: every one). Used as a context manager, it
    starts on entry and shuts down on exit; the process-wide default runtime is closed while it
    runs. A child made by fork() inside the block cannot use it (StarPU's threads stay in the
    parent): use multiprocessing.get_context("spawn") there.
    """

    def __init__(self, mode="auto", policy=None, ncpu=None, ncuda=None, verbose=False):
        if mode is None:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, not None")
        check_mode(mode)
        check_policy(policy)
        self.mode = mode
        self.policy = policy
        self._args = (_worker_count("ncpu", ncpu), _worker_count("ncuda", ncuda), policy or "", bool(verbose))
        cpus = _available_cpus()
        if self._args[0] > cpus:
            warnings.warn(f"ncpu={self._args[0]} starts more CPU workers than the {cpus} CPUs this process may run "
                          "on: they share cores, and a factorization runs slower than with one worker per CPU",
                          RuntimeWarning, stacklevel=2)
        self._native = None
        self._pid = None

    def __enter__(self):
        with _lock:
            _check_startable()
            if _active:
                raise RuntimeError("a tessera.Runtime is already active: Tessera runs one runtime at a time")
            ncpu, ncuda, policy, verbose = self._args
            if _cuda_lost:
                if self.mode == "gpu" or ncuda > 0:
                    raise _cuda_lost_error()
                ncuda = 0
            _close_default()
            self._native = _core.Runtime(ncpu, ncuda, policy, verbose)
            self._pid = os.getpid()
            _active.append(self)
            _publish()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Shuts the runtime down; calls running on it from other threads finish first."""
        with _lock:
            if self in _active:
                _active.remove(self)
                _publish()
            native, self._native = self._native, None
            if native is None:
                return
            if self._pid == os.getpid():
                native.close()
            else:  # the parent's: its StarPU threads are not in this process
                _abandoned.append(native)

    @property
    def cpu_workers(self):
        return self._started().cpu_workers

    @property
    def cuda_workers(self):
        return self._started().cuda_workers

    @property
    def scheduler(self):
        return self._started().scheduler

    def _started(self):
        native = self._native
        if native is None:
            raise RuntimeError("this tessera.Runtime is not running (use it in a `with` block)")
        return native

    def __repr__(self):
        state = "running" if self._native is not None else "not running"
        return f"tessera.Runtime(mode={self.mode!r}, policy={self.policy!r}, {state})"


def _available_cpus():
    """The CPUs this process may run on (its affinity mask), as the CLI counts them."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _worker_count(name, count):
    """A worker count as the native runtime takes it: -1 for every worker (None)."""
    if count is None:
        return -1
    try:
        count = operator.index(count)
    except TypeError:
        raise TypeError(f"{name} must be an integer or None, not {type(count).__name__}") from None
    if not 0 <= count < 2**31:
        raise ValueError(f"{name} must be None (every one) or a count from 0, not {count}")
    return count


def _close_default():
    global _default, _default_policy
    native, _default, _default_policy = _default, None, None
    if native is not None:
        _publish()
        native.close()  # waits for the calls running on it


def _publish():
    """Tells the native module which runtime a call through runtime_call() without a policy would
    run on now, and its mode: the JAX FFI handlers run their calls there without Python (and go
    through runtime_call() where there is none). Called under _lock after each change, and before
    the runtime it replaces closes."""
    if _exiting or _starpu_inherited or _cuda_lost:
        _core.publish_runtime(None, "")
    elif _active:
        _core.publish_runtime(_active[-1]._native, _active[-1].mode)
    else:
        _core.publish_runtime(_default, "")


def runtime_call(policy=None, mode=None):
    """A call admitted on the runtime active now (the default one, started if need be), to be used
    as a context manager around the native calls: the runtime stays up until it ends. Its ``mode``
    is `mode`, or the active tessera.Runtime's ("": the environment's, TESSERA_MODE)."""
    global _default, _default_policy
    with _lock:
        _check_startable()
        if _active:
            rt = _active[-1]
            if policy is not None and policy != rt.policy:
                raise ValueError(f"policy {policy!r} differs from the active tessera.Runtime's ({rt.policy!r})")
            mode = mode or rt.mode
        else:
            check_policy(policy)
            mode = mode or ""
        if _cuda_lost and (mode or os.environ.get("TESSERA_MODE", "")) == "gpu":
            raise _cuda_lost_error()
        if _active:
            return _active[-1]._native.call(mode)
        if _default is None or (policy is not None and policy != _default_policy):
            _close_default()  # StarPU takes its policy at start: another one needs a restart
            _default = _core.Runtime(-1, 0 if _cuda_lost else -1, policy or "", False)
            _default_policy = policy
            _publish()
        return _default.call(mode)


def requested_mode(mode):
    """The mode a call asks for: `mode`, else the active tessera.Runtime's ("": the environment's,
    TESSERA_MODE), as runtime_call() gives it; read without taking the lock, for the calls that the
    plan runs on the calling thread with no runtime."""
    if mode:
        return mode
    active = _active
    return active[-1].mode if active else ""


def check_mode(mode):
    if mode is not None and mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")


def check_policy(policy):
    if policy is not None and policy not in _core.policy_names():
        raise ValueError(f"unknown scheduling policy {policy!r}: one of {', '.join(_core.policy_names())}")


def gpu_usable():
    """Whether GPU arrays can be worked on here (check_gpu_usable raises where they cannot)."""
    return not _cuda_lost


def check_gpu_usable():
    """Raises where GPU arrays cannot be worked on: in a child forked from a process that had
    initialised CUDA."""
    if _cuda_lost:
        raise _cuda_lost_error()


def _check_startable():
    if _exiting:
        raise _core.RuntimeStartError("the interpreter is exiting: Tessera's runtime has been shut down")
    if _starpu_inherited:
        raise _forked_error()


def _forked_error():
    return _core.RuntimeStartError(
        "this process was made by fork() while its parent ran a tessera.Runtime (a `with` block): StarPU's "
        "state was copied here without its threads, and Tessera cannot run in this process; " + _SPAWN +
        ", or fork outside the `with` block")


def _cuda_lost_error():
    return _core.RuntimeStartError(
        "this process was made by fork() from one that had initialised CUDA, which does not survive fork: "
        "Tessera runs here on the CPUs only (mode 'cpu' or 'auto'); to use the GPUs, " + _SPAWN)


_CUDA_ERROR_NOT_INITIALIZED = 3


def _cuda_initialised():
    """Whether this process has initialised CUDA (cuInit), through whatever library: asked of the
    driver only where it is loaded already."""
    try:
        driver = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, AttributeError):
        return False
    count = ctypes.c_int(0)
    return driver.cuDeviceGetCount(ctypes.byref(count)) != _CUDA_ERROR_NOT_INITIALIZED


def _before_fork():
    # Held until the fork is done, so that no call starts a runtime in between.
    global _cuda_at_fork, _running_at_fork
    _core.calling_thread_calls_begin_fork()
    _lock.acquire()
    _close_default()
    _running_at_fork = bool(_active)
    _cuda_at_fork = _cuda_initialised()


def _after_fork_in_parent():
    _lock.release()
    _core.calling_thread_calls_end_fork()


def _after_fork_in_child():
    global _lock, _cuda_lost, _starpu_inherited
    _lock = threading.RLock()  # the parent's is held by the thread that forked, in the parent
    _core.calling_thread_calls_reset_in_child()
    _core.published_runtime_reset_in_child()  # withdrawn: the parent's runtimes do not run here
    _cuda_lost = _cuda_lost or _cuda_at_fork
    _starpu_inherited = _starpu_inherited or _running_at_fork


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)

def _shut_down_at_exit():
    # Threads still running (daemon threads) may call again: they are refused, since a StarPU
    # left running at exit stops the process with an abort.
    global _exiting
    with _lock:
        _exiting = True
        _publish()
        for rt in reversed(list(_active)):
            rt.close()
        _close_default()


# StarPU is shut down before the interpreter tears modules down.
atexit.register(_shut_down_at_exit)
