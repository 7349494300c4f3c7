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


class _GradModeScope(_DecoratorContextManager):
    """Sets grad mode to the class's `_enabled` inside, restores the previous mode on exit."""

    _enabled = True

    def __enter__(self):
        self.prev = _A.is_grad_enabled()
        _A.set_grad_enabled(self._enabled)

    def __exit__(self, *exc):
        _A.set_grad_enabled(self.prev)


class no_grad(_GradModeScope):
    """Ops inside record no graph: their results never require grad."""

    _enabled = False


class enable_grad(_GradModeScope):
    """Turns recording back on inside no_grad."""

    _enabled = True


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
