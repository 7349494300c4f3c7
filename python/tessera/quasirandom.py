"""tessera.quasirandom, as torch.quasirandom: SobolEngine, a generator of (optionally
scrambled) Sobol low-discrepancy sequences in up to 21201 dimensions."""
import importlib.util
import operator
import os
import threading
from typing import Optional

import numpy as np

import tessera

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201
_SCIPY_TABLE = os.path.join("stats", "_sobol_direction_numbers.npz")

# c10's ScalarType names, which torch's "not implemented for" errors spell.
_SCALAR_TYPE_NAMES = {
    "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "bool": "Bool", "qint8": "QInt8", "quint8": "QUInt8", "qint32": "QInt32", "quint4x2": "QUInt4x2",
}

_table_lock = threading.Lock()
_table = {}   # "poly", "vinit": Joe & Kuo's table; "v": the direction integers computed so far


def _scipy_table_path():
    """Where SciPy keeps its copy of new-joe-kuo-6.21201, found without importing SciPy."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        path = os.path.join(root, _SCIPY_TABLE)
        if os.path.isfile(path):
            return path
    raise RuntimeError(
        "tessera.quasirandom.SobolEngine needs Joe and Kuo's Sobol direction numbers "
        "(new-joe-kuo-6.21201), which tessera reads from the copy the 'scipy' package ships "
        f"(scipy/{_SCIPY_TABLE.replace(os.sep, '/')}); install scipy (e.g. `pip install scipy` "
        "or Debian's python3-scipy) to use SobolEngine")


def _direction_integers(dimension):
    """The (dimension, MAXBIT) int64 direction integers v[d, j] = m[d, j] << (MAXBIT - 1 - j),
    with m from Joe & Kuo's primitive polynomials and initial values (dimension 0 is the van
    der Corput sequence, every m = 1). Computed once for the largest dimension asked so far."""
    with _table_lock:
        cached = _table.get("v")
        if cached is not None and cached.shape[0] >= dimension:
            return cached[:dimension]
        if "poly" not in _table:
            with np.load(_scipy_table_path()) as npz:
                _table["poly"] = np.asarray(npz["poly"], dtype=np.int64)
                _table["vinit"] = np.asarray(npz["vinit"], dtype=np.int64)
        poly = _table["poly"][:dimension]
        vinit = _table["vinit"][:dimension]
        if poly.shape[0] < dimension:
            raise RuntimeError(f"the Sobol direction-number table holds {poly.shape[0]} dimensions, "
                               f"fewer than the {dimension} asked for")
        # degree of each primitive polynomial (its leading bit's position)
        degree = np.zeros(dimension, dtype=np.int64)
        rest = poly.copy()
        while np.any(rest > 1):
            big = rest > 1
            degree[big] += 1
            rest[big] >>= 1
        m = np.zeros((dimension, _MAXBIT), dtype=np.int64)
        ninit = min(vinit.shape[1], _MAXBIT)
        m[:, :ninit] = vinit[:, :ninit]
        m[0, :] = 1
        rows = np.arange(dimension)
        max_degree = int(degree.max())
        # coefficient c[d, i] (i = 1..degree) of x^(degree - i); c[d, degree] is the constant 1
        coef = np.zeros((dimension, max_degree + 1), dtype=np.int64)
        for i in range(1, max_degree + 1):
            coef[:, i] = np.where(i <= degree, (poly >> np.maximum(degree - i, 0)) & 1, 0)
        # m_j = m_{j-s} ^ XOR_{i=1..s} c_i * (m_{j-i} << i), for j >= s (s = degree >= 1)
        for j in range(1, _MAXBIT):
            grow = (degree >= 1) & (degree <= j)
            if not grow.any():
                continue
            value = m[rows, np.clip(j - degree, 0, None)]
            for i in range(1, min(j, max_degree) + 1):
                value ^= coef[:, i] * (m[:, j - i] << i)
            m[grow, j] = value[grow]
        v = m << (_MAXBIT - 1 - np.arange(_MAXBIT, dtype=np.int64))
        v.setflags(write=False)
        _table["v"] = v
        return v


def _lms_scramble(state, ltm):
    """Owen's linear matrix scramble of the direction integers: each dimension d's direction
    integer, read as a column of MAXBIT bits with the most significant bit first, is multiplied
    over GF(2) by the unit lower-triangular matrix made from ltm[d] (its diagonal set to 1).
    state: (D, MAXBIT) int64, ltm: (D, MAXBIT, MAXBIT) 0/1. Returns a new (D, MAXBIT) int64."""
    lower = np.asarray(ltm).astype(np.uint8)
    lower &= np.tri(_MAXBIT, dtype=np.uint8)       # keeps bit 0 of the lower triangle
    diag = np.arange(_MAXBIT)
    lower[:, diag, diag] = 1
    # column i of the matrix as an integer, row p at bit MAXBIT-1-p: what input bit
    # MAXBIT-1-i contributes to the output. packbits puts row 0 at the top bit of 32.
    packed = np.packbits(lower, axis=1).astype(np.int64)                 # (D, 4, MAXBIT)
    column = ((packed[:, 0] << 24) | (packed[:, 1] << 16) | (packed[:, 2] << 8) | packed[:, 3]) >> (32 - _MAXBIT)
    state = np.asarray(state, dtype=np.int64)
    scrambled = np.zeros_like(state)
    for i in range(_MAXBIT):
        set_bit = (state >> (_MAXBIT - 1 - i)) & 1
        scrambled ^= set_bit * column[:, i:i + 1]
    return scrambled


def _lowest_zero_bit(index):
    """Position of the least significant 0 bit of each non-negative int64 in `index`."""
    isolated = (~index) & (index + 1)           # that bit alone, a power of two
    return np.frexp(isolated.astype(np.float64))[1].astype(np.int64) - 1


def _check_count(n, op):
    """`n` as an int, as torch's argument parser takes it (a bool or a float is refused)."""
    if not isinstance(n, bool):
        try:
            return int(operator.index(n))
        except TypeError:
            pass
    raise TypeError(f"{op}(): argument 'n' (position 2) must be int, not {type(n).__name__}")


def _check_reach(last_index):
    if last_index >= (1 << _MAXBIT) - 1:
        raise RuntimeError(f"SobolEngine generates at most 2**{_MAXBIT} points in all (its direction "
                           f"integers have {_MAXBIT} bits)")


# Below this many dimensions one accumulate over a block of rows is quickest; above it,
# numpy's accumulate along the rows is slow and one XOR per row (vectorised over the
# dimensions) is several times faster.
_ROWWISE_MIN_DIMENSION = 512


def _walk(quasi, state, start, out):
    """Fills `out` (count, D), float32 or float64, with the next points after `quasi` in
    Gray-code order: point i is quasi XOR the direction integers of steps start .. start + i,
    scaled into [0, 1). Returns the last point as int64 integers."""
    count, dimension = out.shape
    if count == 0:
        return quasi.copy()
    _check_reach(start + count - 1)
    current = quasi.astype(np.int32)
    by_step = np.ascontiguousarray(state.T.astype(np.int32))        # (MAXBIT, D)
    scale = out.dtype.type(2.0 ** -_MAXBIT)
    chunk = max(1, min(count, (1 << 21) // max(dimension, 1)))
    for begin in range(0, count, chunk):
        stop = min(begin + chunk, count)
        steps = _lowest_zero_bit(np.arange(start + begin, start + stop, dtype=np.int64))
        block = by_step[steps]                                        # (rows, D)
        block[0] ^= current
        if dimension < _ROWWISE_MIN_DIMENSION:
            np.bitwise_xor.accumulate(block, axis=0, out=block)
        else:
            for row in range(1, stop - begin):
                np.bitwise_xor(block[row - 1], block[row], out=block[row])
        current = block[-1].copy()
        # int -> float rounds to nearest (float32 keeps 24 bits); the power-of-two scale is exact
        np.multiply(block, scale, out=out[begin:stop], casting="unsafe")
    return current.astype(np.int64)


def _gray_xor(state, index):
    """XOR of the direction integers selected by the Gray code of `index`: the offset of
    point `index` from point 0."""
    gray = index ^ (index >> 1)
    acc = np.zeros(state.shape[0], dtype=np.int64)
    j = 0
    while gray:
        if gray & 1:
            acc ^= state[:, j]
        gray >>= 1
        j += 1
    return acc


def _draw_dtype(dtype):
    if dtype is None:
        dtype = tessera.float32
    if dtype not in (tessera.float32, tessera.float64):
        name = str(dtype).replace("tessera.", "").replace("torch.", "")
        raise RuntimeError(f"\"_sobol_engine_draw\" not implemented for '{_SCALAR_TYPE_NAMES.get(name, name)}'")
    return dtype


def _as_numpy(t):
    return np.asarray(t.detach().cpu().contiguous().numpy())


class SobolEngine(object):
    r"""
    An engine for drawing (scrambled) Sobol sequences, low-discrepancy quasi-random points in
    the unit hypercube :math:`[0, 1)^{dimension}`, as ``torch.quasirandom.SobolEngine``.

    Dimensions up to 21201 are supported, with Joe and Kuo's direction numbers chosen by the
    D(6) search criterion (the table ``new-joe-kuo-6.21201``, the one torch uses). Unscrambled
    sequences are identical to torch's, bit for bit.

    Scrambling applies a random linear matrix scramble and a random digital shift (Owen
    1998) drawn with tessera's random number generator: ``tessera.Generator`` seeded with
    :attr:`seed`, or the default generator when :attr:`seed` is ``None``. tessera's generator
    is not torch's (it is counter-based Philox, torch's CPU generator is mt19937), so a
    scrambled sequence for a given seed differs from torch's, with the same distribution.

    .. note::
        tessera does not ship the direction-number table itself: it reads the copy SciPy
        ships (``scipy/stats/_sobol_direction_numbers.npz``) once, when the first engine is
        built, without importing SciPy. Without the ``scipy`` package installed, constructing
        a SobolEngine raises ``RuntimeError``.

    References:
      - Art B. Owen. Scrambling Sobol and Niederreiter-Xing points.
        Journal of Complexity, 14(4):466-489, December 1998.

      - I. M. Sobol. The distribution of points in a cube and the accurate
        evaluation of integrals.
        Zh. Vychisl. Mat. i Mat. Phys., 7:784-802, 1967.

    Args:
        dimension (Int): the dimensionality of the points drawn, in ``[1, 21201]``
        scramble (bool, optional): draw a scrambled Sobol sequence. Default: ``False``.
        seed (Int, optional): seed of the generator the scramble draws from; ``None`` uses
            the default generator. Default: ``None``

    Examples::

        >>> soboleng = tessera.quasirandom.SobolEngine(dimension=5)
        >>> soboleng.draw(3)
        tensor([[0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
                [0.5000, 0.5000, 0.5000, 0.5000, 0.5000],
                [0.7500, 0.2500, 0.2500, 0.2500, 0.7500]])
    """
    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")

        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension

        cpu = tessera.device("cpu")
        # the shape check (a float or bool dimension fails here, as in torch)
        self.sobolstate = tessera.zeros(dimension, self.MAXBIT, device=cpu, dtype=tessera.long)
        self.sobolstate.copy_(tessera.from_numpy(_direction_integers(int(dimension)).copy()))

        if not self.scramble:
            self.shift = tessera.zeros(self.dimension, device=cpu, dtype=tessera.long)
        else:
            self._scramble()

        self.quasi = self.shift.clone(memory_format=tessera.contiguous_format)
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self):
        generator = None
        if self.seed is not None:
            generator = tessera.Generator()
            generator.manual_seed(self.seed)
        cpu = tessera.device("cpu")
        # digital shift: one random bit per dimension and bit position
        shift_bits = _as_numpy(tessera.randint(2, (self.dimension, self.MAXBIT), device=cpu,
                                               generator=generator))
        weights = np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64)
        self.shift = tessera.from_numpy((shift_bits.astype(np.int64) * weights).sum(axis=1))
        # linear matrix scramble: random lower-triangular bit matrices, one per dimension
        ltm = tessera.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), device=cpu,
                              generator=generator)   # _lms_scramble keeps the lower triangle
        scrambled = _lms_scramble(_as_numpy(self.sobolstate), _as_numpy(ltm))
        self.sobolstate.copy_(tessera.from_numpy(scrambled))

    def _advance(self, n, start, dtype, first=None):
        """`n` points after the current one, from Gray-code step `start`, preceded by the
        (1, D) tensor `first` when given: (points, new quasi)."""
        n = _check_count(n, "_sobol_engine_draw")
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}, {self.dimension}]")
        dtype = _draw_dtype(dtype)
        npdtype = np.float32 if dtype == tessera.float32 else np.float64
        lead = 0
        if first is not None and tessera.promote_types(first.dtype, dtype) == dtype:
            lead = 1          # the first point goes straight into the result, no cat needed
        buffer = np.empty((lead + n, self.dimension), dtype=npdtype)
        if lead:
            buffer[0] = _as_numpy(first.to(dtype))[0]
        quasi = _walk(_as_numpy(self.quasi).astype(np.int64), _as_numpy(self.sobolstate),
                      int(start), buffer[lead:])
        points = tessera.from_numpy(buffer)
        if first is not None and not lead:
            points = tessera.cat((first, points), dim=-2)   # promotes, e.g. a float64 first point
        return points, tessera.from_numpy(quasi)

    def draw(self, n: int = 1, out: Optional[tessera.Tensor] = None,
             dtype: tessera.dtype = tessera.float32) -> tessera.Tensor:
        r"""
        Draws the next :attr:`n` points of the sequence, a tensor of shape
        :math:`(n, dimension)`. Each draw continues where the previous one stopped.

        Args:
            n (Int, optional): how many points to draw. Default: 1
            out (Tensor, optional): the output tensor (resized to the result's shape)
            dtype (:class:`tessera.dtype`, optional): the desired data type of the
                returned tensor. Default: ``tessera.float32``
        """
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result, self.quasi = self._advance(n - 1, 0, dtype, first=self._first_point)
        else:
            result, self.quasi = self._advance(n, self.num_generated - 1, dtype)

        self.num_generated += n

        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Optional[tessera.Tensor] = None,
                   dtype: tessera.dtype = tessera.float32) -> tessera.Tensor:
        r"""
        Draws the next :math:`2^m` points of the sequence, a tensor of shape
        :math:`(2^m, dimension)`. The points drawn in all must stay a power of two, which
        keeps the balance properties of Sobol points.

        Args:
            m (Int): the base-2 exponent of the number of points to draw.
            out (Tensor, optional): the output tensor (resized to the result's shape)
            dtype (:class:`tessera.dtype`, optional): the desired data type of the
                returned tensor. Default: ``tessera.float32``
        """
        n = 2 ** m
        total = self.num_generated + n
        if total & (total - 1) != 0:
            raise ValueError("The balance properties of Sobol' points require "
                             "n to be a power of 2. {0} points have been "
                             "previously generated, then: n={0}+2**{1}={2}. "
                             "If you still want to do this, please use "
                             "'SobolEngine.draw()' instead."
                             .format(self.num_generated, m, total))
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        r"""
        Puts the engine back to its initial state: the next draw starts the sequence again.
        """
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        r"""
        Advances the engine by :attr:`n` points, as drawing them and discarding the result
        would (at the cost of one step, whatever :attr:`n`).

        Args:
            n (Int): the number of points to skip.
        """
        if self.num_generated == 0:
            count, start = n - 1, 0
        else:
            count, start = n, self.num_generated - 1
        count = _check_count(count, "_sobol_engine_ff_")
        if count > 0:
            _check_reach(start + count - 1)
            state = _as_numpy(self.sobolstate)
            offset = _gray_xor(state, start + count) ^ _gray_xor(state, start)
            self.quasi.bitwise_xor_(tessera.from_numpy(offset))
        self.num_generated += n
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
