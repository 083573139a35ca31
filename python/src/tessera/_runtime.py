"""The task runtime behind host (numpy) arrays and dense GPU matrices.

One Tessera runtime (one StarPU) lives in a process at a time: the default one is started on first
use; ``with tessera.Runtime(...)`` replaces it for the block and shuts its own down at the end.
"""
import atexit
import threading

from . import _core

_MODES = ("auto", "gpu", "cpu", "hybrid")
_lock = threading.RLock()
_default = None  # the native runtime started on first use
_default_policy = None
_active = []  # Runtimes entered with `with`, innermost last


class Runtime:
    """Explicit control of Tessera's task runtime (StarPU): its mode, scheduling policy and workers.

    ``mode`` is the default for the calls made inside the ``with`` block ("auto", "gpu", "cpu" or
    "hybrid"); ``policy`` a scheduling policy by name (StarPU's or Tessera's); ``ncpu`` and
    ``ncuda`` limit the CPU workers and GPUs (None: every one). Used as a context manager, it
    starts on entry and shuts down on exit; the process-wide default runtime is closed while it
    runs.
    """

    def __init__(self, mode="auto", policy=None, ncpu=None, ncuda=None, verbose=False):
        if mode is None:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, not None")
        check_mode(mode)
        check_policy(policy)
        self.mode = mode
        self.policy = policy
        self._args = (-1 if ncpu is None else int(ncpu), -1 if ncuda is None else int(ncuda), policy or "",
                      bool(verbose))
        self._native = None

    def __enter__(self):
        with _lock:
            if _active:
                raise RuntimeError("a tessera.Runtime is already active: Tessera runs one runtime at a time")
            _close_default()
            self._native = _core.Runtime(*self._args)
            _active.append(self)
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Shuts the runtime down (waits for its work first)."""
        with _lock:
            if self in _active:
                _active.remove(self)
            if self._native is not None:
                self._native.close()
            self._native = None

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
        if self._native is None:
            raise RuntimeError("this tessera.Runtime is not running (use it in a `with` block)")
        return self._native

    def __repr__(self):
        state = "running" if self._native is not None else "not running"
        return f"tessera.Runtime(mode={self.mode!r}, policy={self.policy!r}, {state})"


def _close_default():
    global _default, _default_policy
    if _default is not None:
        _default.close()
    _default = None
    _default_policy = None


def native_runtime(policy=None):
    """The native runtime a call runs on, and the mode it defaults to."""
    global _default, _default_policy
    with _lock:
        if _active:
            rt = _active[-1]
            if policy is not None and policy != rt.policy:
                raise ValueError(f"policy {policy!r} differs from the active tessera.Runtime's ({rt.policy!r})")
            return rt._native, rt.mode
        check_policy(policy)
        if _default is None or (policy is not None and policy != _default_policy):
            _close_default()  # StarPU takes its policy at start: another one needs a restart
            _default = _core.Runtime(-1, -1, policy or "", False)
            _default_policy = policy
        return _default, ""


def check_mode(mode):
    if mode is not None and mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")


def check_policy(policy):
    if policy is not None and policy not in _core.policy_names():
        raise ValueError(f"unknown scheduling policy {policy!r}: one of {', '.join(_core.policy_names())}")


# StarPU is shut down before the interpreter tears modules down.
atexit.register(_close_default)
