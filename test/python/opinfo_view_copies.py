"""OpInfo entries for the *_copy forms of the views (aten/native/shape/ViewCopies.cpp): the
same cases as their views in opinfo_views.py, through torch.<view>_copy in both libraries,
with out= where torch has it (not for the list-returning split_copy, split_with_sizes_copy
and unbind_copy, whose out= takes a list of tensors)."""
from __future__ import annotations

from opinfo import register
from opinfo_views import _expand, _permute_order, _split_sizes, case, view


def copy(name, call, **kw):
    return view(name, call, is_view=False, supports_out=not kw.pop("list_result", False), **kw)


def _expand_copy(lib, a, how, **o):
    size = _expand(a, how).shape if how != "bad" else (7,)
    return lib.expand_copy(a, size, **o)


def _permute_copy(lib, a, how, **o):
    return lib.permute_copy(a, _permute_order(a, how), **o)


def _as_strided_copy(lib, a, how, **o):
    n = a.numel()
    size, stride, offset = {"flat": ((n,), (1,), 0), "overlap": ((2, 2), (1, 1), 0),
                            "broadcast": ((3,), (0,), 0), "outside": ((n + 1,), (1,), 0)}[how]
    if n < 3 and how in ("overlap", "broadcast"):
        size, stride, offset = (n,), (1,), 0
    return lib.as_strided_copy(a.contiguous(), size, stride, offset, **o)


def _complex_pairs(a):
    return a.reshape(-1, 2).contiguous() if a.numel() % 2 == 0 else a.reshape(-1)[:0].reshape(0, 2)


COMPLEX_DTYPES = ("float32", "float64")

register(
    copy("view_as_real_copy", lambda lib, a, **o: lib.view_as_real_copy(lib.view_as_complex(_complex_pairs(a)), **o),
         dtypes=COMPLEX_DTYPES),
    copy("view_as_complex_copy", lambda lib, a, **o: lib.view_as_complex_copy(_complex_pairs(a), **o),
         dtypes=COMPLEX_DTYPES,
         exempt={"torch_grad": "torch 1.13's view_as_complex_copy refuses autograd for its complex output; "
                               "view_as_complex's derivative (current torch's) is followed and gradchecked"}),
    copy("as_strided_copy", _as_strided_copy,
         kwargs=(case(how="flat"), case(how="overlap"), case(how="broadcast"), case(how="outside"))),
    copy("diagonal_copy", lambda lib, a, **k: lib.diagonal_copy(a, **k),
         kwargs=({}, case(offset=1), case(offset=-1, dim1=-1, dim2=0), case(offset=0, dim1=0, dim2=2),
                 case(offset=5), case(dim1=1, dim2=1))),
    copy("expand_copy", _expand_copy,
         kwargs=(case(how="lead"), case(how="keep"), case(how="grow"), case(how="lead_keep"), case(how="bad"))),
    copy("permute_copy", _permute_copy,
         kwargs=(case(how="reversed"), case(how="negative"), case(how="repeat"), case(how="short"))),
    copy("select_copy", lambda lib, a, dim, index, **o: lib.select_copy(a, dim, index, **o),
         kwargs=(case(dim=0, index=0), case(dim=-1, index=-1), case(dim=0, index=2), case(dim=1, index=-3))),
    copy("detach_copy", lambda lib, a, **o: lib.detach_copy(a, **o),
         exempt={"grad": "detach_copy's result is cut from the graph (no derivative), as detach's"}),
    copy("slice_copy", lambda lib, a, **k: lib.slice_copy(a, **k),
         kwargs=(case(dim=0, start=1, end=None, step=1), case(dim=-1, start=None, end=-1, step=2),
                 case(dim=0, start=-100, end=100, step=3), case(dim=0, start=2, end=1, step=1),
                 case(dim=1, start=0, end=2, step=1), case(dim=0, start=0, end=1, step=0))),
    copy("squeeze_copy", lambda lib, a, **o: lib.squeeze_copy(a, **o)),
    copy("squeeze_copy.dim", lambda lib, a, dim, **o: lib.squeeze_copy(a, dim, **o),
         kwargs=(case(dim=0), case(dim=-1), case(dim=1), case(dim=2))),
    copy("t_copy", lambda lib, a, **o: lib.t_copy(a, **o)),
    copy("transpose_copy", lambda lib, a, dim0, dim1, **o: lib.transpose_copy(a, dim0, dim1, **o),
         kwargs=(case(dim0=0, dim1=-1), case(dim0=0, dim1=1), case(dim0=1, dim1=2), case(dim0=0, dim1=0))),
    copy("unsqueeze_copy", lambda lib, a, dim, **o: lib.unsqueeze_copy(a, dim, **o),
         kwargs=(case(dim=0), case(dim=-1), case(dim=3), case(dim=-4))),
    copy("view_copy", lambda lib, a, how, **o: lib.view_copy(a, {"flat": (-1,), "pairs": (2, -1),
                                                                 "padded": (1, *a.shape, 1)}[how], **o),
         kwargs=(case(how="flat"), case(how="pairs"), case(how="padded"))),
    copy("view_copy[dtype]", lambda lib, a, to, **o: lib.view_copy(a, getattr(lib, to), **o), covers=("view_copy",),
         kwargs=(case(to="int16"), case(to="int32"), case(to="float64"))),
    copy("unfold_copy", lambda lib, a, dimension, size, step, **o: lib.unfold_copy(a, dimension, size, step, **o),
         kwargs=(case(dimension=0, size=2, step=1), case(dimension=-1, size=2, step=2),
                 case(dimension=0, size=1, step=3), case(dimension=0, size=3, step=0))),
    copy("alias_copy", lambda lib, a, **o: lib.alias_copy(a, **o)),
    copy("split_copy", lambda lib, a, split_size, dim=0: lib.split_copy(a, split_size, dim), list_result=True,
         kwargs=(case(split_size=2), case(split_size=2, dim=-1), case(split_size=1), case(split_size=0))),
    copy("split_with_sizes_copy", lambda lib, a, dim, bad=False: lib.split_with_sizes_copy(
        a, [2, 1] if bad else _split_sizes(a, dim), dim), list_result=True,
         kwargs=(case(dim=0), case(dim=-1), case(dim=0, bad=True))),
    copy("unbind_copy", lambda lib, a, dim=0: lib.unbind_copy(a, dim), list_result=True,
         kwargs=(case(dim=0), case(dim=-1))),
)
