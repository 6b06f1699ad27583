"""Grad mode: thread-local switches that decide whether operations are recorded.

``no_grad`` puts the Autograd key in this thread's exclude set, so under it
every op skips the Autograd layer entirely (no per-op test of a flag);
``enable_grad`` takes it out again. Both nest and are thread-local, as the
dispatcher's include/exclude sets are.
"""

from __future__ import annotations

import functools
import inspect
import sys

from ..dispatch.dispatcher import tls_state, set_tls_state
from ..dispatch.keys import Autograd

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

_BIT = Autograd.bit


def is_grad_enabled():
    """True unless the calling thread is inside ``no_grad`` (or ``set_grad_enabled(False)``)."""
    return not (tls_state()[1] & _BIT)


def _set_enabled(mode):
    inc, exc = tls_state()
    set_tls_state(inc, (exc & ~_BIT) if mode else (exc | _BIT))


def _decorate(fn, make_ctx):
    """``fn`` run inside ``make_ctx()``; a generator function gets the context around each of its steps
    (the caller, between steps, keeps its own mode), as PyTorch's decorators do."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator_wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with make_ctx():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with make_ctx():
                            gen.close()
                        raise
                    except BaseException:
                        with make_ctx():
                            response = gen.throw(*sys.exc_info())
                    else:
                        with make_ctx():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return generator_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_ctx():
            return fn(*args, **kwargs)
    return wrapper


class _GradModeGuard:
    """Base of the grad-mode context managers; each also works as a decorator."""

    mode = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        return _decorate(fn, self.clone)

    def clone(self):
        return self.__class__()


class no_grad(_GradModeGuard):
    """Context manager (and decorator) that disables gradient recording in this thread."""

    mode = False


class enable_grad(_GradModeGuard):
    """Context manager (and decorator) that enables gradient recording, even inside ``no_grad``."""

    mode = True


class set_grad_enabled(_GradModeGuard):
    """``set_grad_enabled(False)`` as a function call or a context manager."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = is_grad_enabled()
        _set_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        # used as a decorator: undo the switch made by construction, apply it per call
        _set_enabled(self._prev)
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self.mode)


_inference = __import__("threading").local()


class inference_mode(_GradModeGuard):
    """Like ``no_grad`` (operations are not recorded); ``inference_mode(False)`` is a no-op switch.

    Unlike PyTorch, tensors created inside are ordinary tensors: there are no
    "inference tensors" with their extra restrictions.
    """

    def __init__(self, mode=True):
        self.mode = not mode
        self._on = bool(mode)

    def __enter__(self):
        self._prev_inf = getattr(_inference, "on", False)
        _inference.on = self._on or self._prev_inf
        return super().__enter__() if self._on else self

    def __exit__(self, *exc):
        _inference.on = self._prev_inf
        if self._on:
            return super().__exit__(*exc)
        return False

    def __call__(self, fn):
        on = self._on
        return _decorate(fn, lambda: inference_mode(on))


def is_inference_mode_enabled():
    return getattr(_inference, "on", False)
