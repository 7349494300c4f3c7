"""tessera.return_types: the named-tuple types (values, indices) of the ops that return
several named tensors, as torch.return_types: ``tessera.sort(x)`` is a
``tessera.return_types.sort``, ``tessera.max(x, 0, out=(v, i))`` a ``max_out``.

The extension makes each type the first time its op returns one; looking a name up here
runs the op once on a tiny tensor to get it. (Pickled results name their type here too.)
"""
from . import _C


def _x():
    return _C.tensor([[1.0, 2.0], [3.0, 4.0]])


def _outs():
    return {"out": (_C.empty(0), _C.empty(0, dtype=_C.int64))}


def _values_indices(fn, *args):
    """The op as is, and with out=(values, indices)."""
    return (lambda: fn(_x(), *args), lambda: fn(_x(), *args, **_outs()))


_MAKERS = {}
for _name, _args in [("max", (0,)), ("min", (0,)), ("sort", ()), ("topk", (1,)), ("kthvalue", (1,)),
                     ("median", (0,)), ("nanmedian", (0,)), ("cummax", (0,)), ("cummin", (0,))]:
    _MAKERS[_name], _MAKERS[_name + "_out"] = _values_indices(getattr(_C, _name), *_args)
_MAKERS["aminmax"] = lambda: _C.aminmax(_x())
_MAKERS["aminmax_out"] = lambda: _C.aminmax(_x(), out=(_C.empty(0), _C.empty(0)))
if hasattr(_C, "frexp"):
    _MAKERS["frexp"] = lambda: _C.frexp(_x())
    _MAKERS["frexp_out"] = lambda: _C.frexp(_x(), out=(_C.empty(0), _C.empty(0, dtype=_C.int32)))

_MAKERS["histogramdd"] = lambda: _histogramdd()(_C.tensor([[0.0, 1.0]]), 1)


def _histogramdd():
    from .functional import histogramdd
    return histogramdd


del _name, _args
__all__ = sorted(_MAKERS)


def __getattr__(name):
    if name not in _MAKERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = type(_MAKERS[name]())
    globals()[name] = cls
    return cls


def __dir__():
    return sorted(set(globals()) | set(_MAKERS))
