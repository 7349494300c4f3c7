"""What the named-tensor tests share: the tensors each expression sees (the same values in
torch and tessera), and the comparison of one expression's outcomes in the two libraries
(names, shape, dtype and values, or the exception's class and first line)."""
import collections
import io
import pickle

import torch

import tessera

from opinfo import to_torch


def _env(lib):
    torch.manual_seed(0)
    base = torch.randn(2, 3, 4)
    # the same values in both libraries
    x = lib.tensor(base.tolist()).refine_names("N", "C", "H")
    return {
        "lib": lib, "pickle": pickle, "io": io, "collections": collections,
        "x": x,
        "y": lib.tensor(base[0].tolist()).refine_names("C", "H"),
        "u": lib.tensor(base.tolist()),                                   # unnamed
        "h": lib.tensor(base[0, 0].tolist()).refine_names("H"),
        "m": lib.tensor(base[0].tolist()).refine_names("A", "B"),         # 3x4
        "k": lib.tensor(base[1].t().tolist()).refine_names("B", "D"),     # 4x3
        "b3": lib.tensor(base.tolist()).refine_names("N", "A", "B"),      # batch of 3x4
        "b4": lib.tensor(base.transpose(1, 2).tolist()).refine_names("N", "B", "D"),
        "v": lib.tensor(base[0, 0].tolist()).refine_names("B"),
        "mask": (lib.tensor(base.tolist()) > 0).refine_names("N", "C", "H"),
    }


def _describe(value):
    if isinstance(value, (torch.Tensor, tessera.Tensor)):
        plain = value.rename(None)
        return ("tensor", tuple(value.names), tuple(value.shape), str(value.dtype).split(".")[1],
                to_torch(plain) if isinstance(value, tessera.Tensor) else plain.detach().clone())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__ if not hasattr(value, "_fields") else "tuple", [_describe(v) for v in value])
    if isinstance(value, (torch.Size, tessera.Size)):
        return ("size", tuple(value))
    if isinstance(value, (torch.dtype, tessera.dtype)):
        return ("dtype", str(value).split(".")[1])
    return ("value", value)


def _same(want, got, path="result"):
    assert type(want) is type(got) or (isinstance(want, tuple) and isinstance(got, tuple)), path
    if isinstance(want, torch.Tensor):
        assert want.shape == got.shape, path
        assert torch.allclose(want.double(), got.double(), equal_nan=True), f"{path}: values differ"
        return
    if isinstance(want, (tuple, list)):
        assert len(want) == len(got), f"{path}: {want} vs {got}"
        for i, (w, g) in enumerate(zip(want, got)):
            _same(w, g, f"{path}[{i}]")
        return
    assert want == got, f"{path}: torch {want!r}, tessera {got!r}"


def _outcomes(expr):
    out = []
    for lib in (torch, tessera):
        env = _env(lib)
        try:
            out.append(("ok", _describe(eval(expr, env))))
        except Exception as e:  # noqa: BLE001 - compared by the caller
            out.append(("error", (type(e).__name__, str(e).split("\n")[0])))
    return out


def check_like_torch(expr):
    (want_status, want), (got_status, got) = _outcomes(expr)
    assert got_status == want_status, f"{expr}: torch {want_status} {want}, tessera {got_status} {got}"
    if want_status == "error":
        assert got == want, f"{expr}: torch raised {want}, tessera {got}"
    else:
        _same(want, got, expr)
