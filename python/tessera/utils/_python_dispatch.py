"""tessera.utils._python_dispatch: TorchDispatchMode and the dispatch-mode stack, as torch's.

A class that defines ``__torch_dispatch__`` (a Tensor subclass, usually built with
``Tensor._make_wrapper_subclass``) or a TorchDispatchMode entered with ``with`` sees every
operator below autograd: ``__torch_dispatch__(func, types, args, kwargs)`` gets the
operator overload (``tessera.ops.aten.add.Tensor``), the classes of the arguments that
handle it, and the arguments as the schema names them. While a mode's handler runs the
mode is off its stack, so what the handler calls goes on to the next mode or to the
kernels; a handler that answers NotImplemented passes the call on.
"""
from __future__ import annotations

import contextlib
import warnings

from .. import _C
from .._C import (_get_dispatch_stack_at, _len_torch_dispatch_stack, _pop_torch_dispatch_stack,
                  _push_on_torch_dispatch_stack)

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode"]


class TorchDispatchMode:
    """Overrides every operator called within ``with Mode():`` on this thread, factories
    and calls on plain tensors included. Subclasses define
    ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``; modes nest."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode that runs every operator unchanged (a base for modes that only observe)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_dispatch_mode():
    n = _len_torch_dispatch_stack()
    return _get_dispatch_stack_at(n - 1) if n > 0 else None


def _get_current_dispatch_mode_stack():
    return [_get_dispatch_stack_at(i) for i in range(_len_torch_dispatch_stack())]


def _push_mode(mode):
    _push_on_torch_dispatch_stack(mode)


def _pop_mode():
    return _pop_torch_dispatch_stack()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def _disable_current_modes():
    """Takes every mode off this thread's stack for the block (current torch's helper)."""
    saved = [_pop_mode() for _ in range(_len_torch_dispatch_stack())]
    try:
        yield saved
    finally:
        for mode in reversed(saved):
            _push_mode(mode)


class _DisableTorchDispatch:
    """``with tessera._C._DisableTorchDispatch():`` operators skip every __torch_dispatch__
    (the Python key) on this thread: subclass tensors reach the kernels directly."""

    def __enter__(self):
        self._saved = _C._set_torch_dispatch_disabled(True)
        return self

    def __exit__(self, *exc):
        _C._set_torch_dispatch_disabled(self._saved)
