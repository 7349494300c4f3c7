"""Grad modes as context managers and decorators: no_grad, enable_grad,
set_grad_enabled and inference_mode, as in torch.autograd.grad_mode."""
import functools

from .. import _C

_A = _C._autograd


class _DecoratorContextManager:
    """A context manager that also decorates functions (each call runs inside it)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class no_grad(_DecoratorContextManager):
    """Ops inside record no graph: their results never require grad."""

    def __enter__(self):
        self.prev = _A.is_grad_enabled()
        _A.set_grad_enabled(False)

    def __exit__(self, *exc):
        _A.set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Turns recording back on inside no_grad."""

    def __enter__(self):
        self.prev = _A.is_grad_enabled()
        _A.set_grad_enabled(True)

    def __exit__(self, *exc):
        _A.set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): sets grad mode at once, and as a context restores it on exit."""

    def __init__(self, mode):
        self.prev = _A.is_grad_enabled()
        self.mode = bool(mode)
        _A.set_grad_enabled(self.mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _A.set_grad_enabled(self.prev)


class inference_mode(_DecoratorContextManager):
    """inference_mode(mode=True): no graph, and no version counting or view tracking."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        _A.enter_inference_mode(self.mode)

    def __exit__(self, *exc):
        _A.exit_inference_mode()


def is_grad_enabled():
    return _A.is_grad_enabled()


def is_inference_mode_enabled():
    return _A.is_inference_mode_enabled()
