"""Distribution, the base class of tessera.distributions (torch.distributions.Distribution):
batch and event shapes, argument and sample validation, and the defaults a subclass
inherits (sample from rsample without grad, stddev from variance, perplexity)."""
import warnings

import tessera

from . import constraints
from .utils import _expand_params, lazy_property

__all__ = ["Distribution"]


def _as_size(shape):
    return shape if isinstance(shape, tessera.Size) else tessera.Size(shape)


def _invalid_values(what, value, expectation, shown=None):
    """The ValueError for a parameter or sample with values outside its constraint, in the
    words torch uses for all of them; `shown` (default: all of `value`) is what is printed."""
    return ValueError(f"Expected {what} ({type(value).__name__} of shape {tuple(value.shape)}) {expectation} "
                      f"but found invalid values:\n{value if shown is None else shown}")


class Distribution:
    """Base class of probability distributions. Subclasses set arg_constraints, support,
    has_rsample and has_enumerate_support, and override what they can compute."""
    has_rsample = False
    has_enumerate_support = False
    # checking is on unless Python runs with -O, as torch decides it
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument and sample validation on or off for distributions built from now on
        without an explicit validate_args."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=tessera.Size(), event_shape=tessera.Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # a parameter not given (logits when probs were) is derived lazily: nothing to check
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise _invalid_values(f"parameter {param}", value,
                                      f"of distribution {self!r} to satisfy the constraint {constraint!r},")

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same kind whose parameters are expanded (not copied) to
        `batch_shape`. Arguments are not validated again."""
        raise NotImplementedError

    def _finish_expand(self, new, batch_shape, event_shape=None):
        # the copy gets its shapes without re-validating, but keeps this one's validation flag
        event_shape = self._event_shape if event_shape is None else event_shape
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_named(self, cls, batch_shape, _instance, names, shared=(), param_tail=()):
        """expand() for a distribution whose state is its attributes `names`, expanded (tensors
        of shape batch_shape + param_tail, or inner distributions of this batch_shape: see
        utils._expand_params), and `shared`, which do not depend on the batch and are passed
        on as they are. `cls` is the class whose expand() calls this."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = tessera.Size(batch_shape)
        _expand_params(self, new, batch_shape + param_tail, names)
        for name in shared:
            setattr(new, name, getattr(self, name))
        return self._finish_expand(new, batch_shape)

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """{parameter name: Constraint} for the tensor parameters."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=tessera.Size()):
        """Draws a sample of shape sample_shape + batch_shape + event_shape, without grad."""
        with tessera.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=tessera.Size()):
        """Draws a reparameterized sample: gradients flow back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """Deprecated: sample((n,))."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(tessera.Size((n,)))

    def log_prob(self, value):
        """Log of the density or mass function at `value`."""
        raise NotImplementedError

    def cdf(self, value):
        """Cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value):
        """Inverse cumulative distribution function at `value`."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution, along a new dimension 0 (the batch
        dimensions are singletons when expand=False)."""
        raise NotImplementedError

    def entropy(self):
        """Entropy, of shape batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return tessera.exp(self.entropy())

    def _extended_shape(self, sample_shape=tessera.Size()):
        return _as_size(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        """Raises ValueError unless `value` broadcasts with batch_shape + event_shape, has
        event_shape on the right, and lies in the support."""
        if not isinstance(value, tessera.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = value.size()
        start = len(shape) - len(self._event_shape)
        if shape[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{shape} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for have, want in zip(reversed(shape), reversed(expected)):
            if have != 1 and want != 1 and have != want:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. "
                          "Please initialize the distribution with `validate_args=False` to turn off "
                          "validation.")
            return
        assert support is not None
        if not support.check(value).all():
            raise _invalid_values("value argument", value,
                                  f"to be within the support ({support!r}) of the distribution {self!r},")

    def _get_checked_instance(self, cls, _instance=None):
        # expand() builds the copy without __init__; a subclass with its own __init__ must
        # say how (by overriding expand), or the copy would miss its attributes
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines "
                                      "a custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        shown = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                value = self.__dict__[name]
                shown.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{self.__class__.__name__}({', '.join(shown)})"
