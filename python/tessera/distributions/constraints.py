"""The regions parameters and samples live in (torch.distributions.constraints): each
constraint's check(value) says, per event, whether the value lies inside it. Distributions
name them in arg_constraints and support; biject_to / transform_to map real space onto them."""
import tessera

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
    "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative_integer", "positive",
    "positive_semidefinite", "positive_definite", "positive_integer", "real", "real_vector", "simplex",
    "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """Base class of constraints. `is_discrete` tells whether the region is a lattice;
    `event_dim` is how many rightmost dimensions form one event (check() reduces them)."""
    is_discrete = False
    event_dim = 0
    _shown = ()   # the attributes (bounds) repr shows as name=value, as torch prints them

    def check(self, value):
        """A bool tensor of shape sample_shape + batch_shape: True where the event is valid."""
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{name}={getattr(self, name)}" for name in self._shown)
        return f"{type(self).__name__[1:]}({args})"


class _Dependent(Constraint):
    """Stands for a constraint that depends on other parameters, so it cannot be checked;
    is_discrete and event_dim are known only when given."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A copy with the static attributes given here replaced."""
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """True for dependent constraints (which validation skips)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on instances that, read from the class, is a dependent constraint: a
    distribution's `support` computed from its parameters."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        # the decorator-with-arguments form: @dependent_property(is_discrete=..., event_dim=...)
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A constraint whose event also spans `reinterpreted_batch_ndims` more dimensions:
    an event is valid when every entry in it is."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        assert isinstance(base_constraint, Constraint)
        assert isinstance(reinterpreted_batch_ndims, int) and reinterpreted_batch_ndims >= 0
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        ok = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if ok.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.base_constraint.event_dim + n} but got {value.dim()}")
        return ok.reshape(ok.shape[:ok.dim() - n] + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    """The two values 0 and 1."""
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        zero_or_one = ((value == 0) | (value == 1)).all(-1)
        return zero_or_one & value.sum(-1).eq(1)


# Bases of the constraints given by bounds, one per constructor signature (torch's
# keyword names): the subclasses differ only in their checks.
class _LowerBounded(Constraint):
    _shown = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()


class _UpperBounded(Constraint):
    _shown = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()


class _Bounded(Constraint):
    _shown = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()


class _IntegerInterval(_Bounded):
    """Integers in [lower_bound, upper_bound]."""
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _IntegerLessThan(_UpperBounded):
    """Integers in (-inf, upper_bound]."""
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    """Integers in [lower_bound, inf)."""
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended real line: anything but NaN."""

    def check(self, value):
        return value == value


class _GreaterThan(_LowerBounded):
    """The half line (lower_bound, inf]."""

    def check(self, value):
        return value > self.lower_bound


class _GreaterThanEq(_LowerBounded):
    """The half line [lower_bound, inf)."""

    def check(self, value):
        return value >= self.lower_bound


class _LessThan(_UpperBounded):
    """The half line [-inf, upper_bound)."""

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    """The closed interval [lower_bound, upper_bound]."""

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounded):
    """The interval [lower_bound, upper_bound)."""

    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors summing to one (to within 1e-6)."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative count vectors whose total is at most upper_bound (torch checks only this
    weaker bound, because a Multinomial's total_count may be an upper limit)."""
    is_discrete = True
    event_dim = 1

    # not an _UpperBounded: torch's repr of this one shows no bound
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _is_lower_triangular(value):
    return (value.tril() == value).reshape(value.shape[:-2] + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Square matrices that are zero above the diagonal."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with unit-length rows."""
    event_dim = 2

    def check(self, value):
        # rows are normalised to working precision only; the fudge factor 10 follows torch
        tol = tessera.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = tessera.linalg.norm(value.detach(), dim=-1)
        return _LowerCholesky().check(value) & (row_norm - 1.0).abs().le(tol).all(-1)


class _Square(Constraint):
    """Square matrices."""
    event_dim = 2

    def check(self, value):
        return tessera.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=tessera.bool,
                            device=value.device)


class _Symmetric(_Square):
    """Square matrices equal to their transpose (to within atol 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return tessera.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return tessera.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorization."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return tessera.linalg.cholesky_ex(value).info.eq(0)


class _Joined(Constraint):
    """Base of _Cat and _Stack: constraints `cseq`, each checking its own part of a value
    along `dim`."""

    def __init__(self, cseq, dim=0):
        assert all(isinstance(c, Constraint) for c in cseq)
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    def _check_dim(self, value):
        assert -value.dim() <= self.dim < value.dim()


class _Cat(_Joined):
    """Constraints `cseq` applied to consecutive slices (of sizes `lengths`) along `dim`,
    as tessera.cat would join them."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        assert len(self.lengths) == len(self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        self._check_dim(value)
        parts, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            parts.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return tessera.cat(parts, self.dim)


class _Stack(_Joined):
    """Constraints `cseq` applied to the slices of `dim`, as tessera.stack would join them."""

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        # a negative stacking dim inside the event makes the event one dimension larger
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        self._check_dim(value)
        slices = value.unbind(self.dim)
        return tessera.stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


# Instances for the parameterless constraints, classes (called with bounds) for the rest.
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.)
nonnegative = _GreaterThanEq(0.)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0., 1.)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
