"""Progress of host calls that run as tasks (the `progress=` argument of the package's functions).

    None   a bar on stderr once the call has run for a second, when stderr is a terminal
    True   a bar on stderr from the start
    False  nothing
    f      f(fraction) with the fraction done, in [0, 1], a few times a second and once at the end

The native wait calls the reporter between its slices, on the calling thread; an exception the
reporter raises cancels the call, as Ctrl-C does.
"""
import sys
import time

_BAR_DELAY_SECONDS = 1.0
_BAR_WIDTH = 30


class Bar:
    """A one-line bar on `stream`, drawn once `delay` seconds have passed."""

    def __init__(self, stream, delay, clock=time.monotonic):
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._delay = delay
        self._drawn = False

    def __call__(self, fraction):
        if not self._drawn and self._clock() - self._start < self._delay:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        filled = round(fraction * _BAR_WIDTH)
        self._stream.write(f"\rtessera [{'#' * filled}{' ' * (_BAR_WIDTH - filled)}] {fraction:4.0%}")
        if fraction >= 1.0:
            self._stream.write("\n")
        self._stream.flush()
        self._drawn = True


def check(progress):
    """Raises TypeError for a `progress` that none of the forms above is: checked on every call, also
    those that run on the calling thread and never report."""
    if progress is not None and progress is not True and progress is not False and not callable(progress):
        raise TypeError(f"progress must be None, True, False or a callable taking the fraction done, not {progress!r}")


def reporter(progress):
    """The callable the native wait reports to for `progress`, or None for no report."""
    if progress is None:
        stream = sys.stderr
        if stream is None or not getattr(stream, "isatty", lambda: False)():
            return None
        return Bar(stream, _BAR_DELAY_SECONDS)
    if progress is True:
        return Bar(sys.stderr, 0.0)
    if progress is False:
        return None
    check(progress)
    return progress
