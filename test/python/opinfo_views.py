"""OpInfo entries for the view and shape operators (aten/native/shape/TensorShape.cpp).

Views have no out= form. Their arguments depend on the input's rank, so each entry's
`kwargs` are cases (a label and whatever the call needs) that its call turns into
arguments for the sample's tensor; a case that makes no sense for a small rank makes
torch raise, and tessera must raise the same class. test_views.py reuses these entries
(every one with is_view=True) to check strides, storage offsets and storage sharing.
"""
from __future__ import annotations

import dataclasses

from opinfo import FLOATING, UNARY_LAYOUTS, Layout, OpInfo, register

# Higher ranks than UNARY_LAYOUTS has, for dims that need three of them.
VIEW_LAYOUTS = UNARY_LAYOUTS + [Layout((2, 3, 4)), Layout((2, 3, 4), "transposed"), Layout((4, 1, 3), "stepped"),
                                Layout((2, 1, 3)), Layout((1, 1))]


@dataclasses.dataclass
class ViewInfo(OpInfo):
    supports_out: bool = False
    reduced_via_float: bool = False  # torch 1.13 has every view for every dtype
    is_view: bool = True           # results alias the input (or, for reshape/contiguous, may)
    pairs: tuple = ()              # arity-2 layouts (view_as, expand_as)

    def layouts(self):
        if self.arity == 1:
            return [(layout,) for layout in VIEW_LAYOUTS]
        return list(self.pairs)


def view(name, call, **kw):
    return ViewInfo(name, call, **kw)


def dims(a):
    return list(range(a.dim()))


def case(**kw):
    return kw


# ---------------------------------------------------------------- calls per case

def _reshape(lib, a, how, method=False):
    shape = {"flat": (-1,), "reversed": tuple(reversed(a.shape)), "padded": (1, *a.shape, 1),
             "pairs": (2, -1), "same": tuple(a.shape)}[how]
    return a.reshape(shape) if method else lib.reshape(a, shape)


def _permute_order(a, how):
    d = dims(a)
    return {"reversed": d[::-1], "rotate": d[1:] + d[:1], "negative": [x - len(d) for x in d[::-1]],
            "repeat": [0] * len(d), "short": d[:-1]}[how]


def _permute(lib, a, how):
    order = _permute_order(a, how)
    return lib.permute(a, order) if how != "rotate" else a.permute(*order)


def _expand(a, how):
    if how == "lead":
        return a.expand(2, *a.shape)
    if how == "keep":
        return a.expand(*([-1] * a.dim()))
    if how == "grow":
        return a.expand(*[5 if s == 1 else s for s in a.shape])
    if how == "lead_keep":
        return a.expand(1, 3, *([-1] * a.dim()))
    return a.expand(7)  # "bad": fewer sizes or a mismatch


def _split_sizes(a, dim):
    n = a.shape[dim] if a.dim() else 0
    return [1, n - 1] if n >= 1 else [0, 0]


def _slice(lib, a, dim, start, end, step):
    return lib.ops.aten.slice(a, dim, start, end, step)


register(
    view("view_as", lambda lib, a, b: a.view_as(b), arity=2,
         pairs=((Layout((3, 4)), Layout((2, 6))), (Layout((3, 4), "transposed"), Layout((12,))),
                (Layout((2, 0, 3)), Layout((0, 5))), (Layout(()), Layout((1, 1))), (Layout((3, 4)), Layout((5,))),
                (Layout((2, 6), "stepped"), Layout((2, 3, 2))))),
    view("reshape", lambda lib, a, how, method=False: _reshape(lib, a, how, method),
         kwargs=(case(how="flat"), case(how="reversed"), case(how="padded"), case(how="pairs"), case(how="same"),
                 case(how="flat", method=True), case(how="reversed", method=True))),
    view("permute", lambda lib, a, how: _permute(lib, a, how),
         kwargs=(case(how="reversed"), case(how="rotate"), case(how="negative"), case(how="repeat"),
                 case(how="short"))),
    view("transpose", lambda lib, a, dim0, dim1: lib.transpose(a, dim0, dim1), method="transpose",
         inplace=lambda lib, a, dim0, dim1: a.transpose_(dim0, dim1),
         kwargs=(case(dim0=0, dim1=-1), case(dim0=-1, dim1=0), case(dim0=0, dim1=1), case(dim0=1, dim1=2),
                 case(dim0=0, dim1=0))),
    view("t", lambda lib, a: lib.t(a), method="t"),
    view("expand", lambda lib, a, how: _expand(a, how),
         kwargs=(case(how="lead"), case(how="keep"), case(how="grow"), case(how="lead_keep"), case(how="bad"))),
    view("expand_as", lambda lib, a, b: a.expand_as(b), arity=2,
         pairs=((Layout((3, 1)), Layout((3, 4))), (Layout((1,)), Layout((2, 3))), (Layout(()), Layout((2, 2))),
                (Layout((3, 4), "expanded"), Layout((2, 3, 4))), (Layout((3, 4)), Layout((4,))),
                (Layout((2, 0, 3)), Layout((2, 0, 3))))),
    view("squeeze", lambda lib, a: lib.squeeze(a), method="squeeze"),
    view("squeeze.dim", lambda lib, a, dim: lib.squeeze(a, dim), method="squeeze",
         kwargs=(case(dim=0), case(dim=-1), case(dim=1), case(dim=2))),
    view("unsqueeze", lambda lib, a, dim: lib.unsqueeze(a, dim), method="unsqueeze",
         kwargs=(case(dim=0), case(dim=-1), case(dim=1), case(dim=3), case(dim=-4))),
    view("select", lambda lib, a, dim, index: lib.select(a, dim, index), method="select", gradgrad=True,
         kwargs=(case(dim=0, index=0), case(dim=-1, index=-1), case(dim=0, index=2), case(dim=1, index=-3))),
    view("slice", lambda lib, a, **k: _slice(lib, a, **k),
         kwargs=(case(dim=0, start=1, end=None, step=1), case(dim=-1, start=None, end=-1, step=2),
                 case(dim=0, start=-100, end=100, step=3), case(dim=0, start=2, end=1, step=1),
                 case(dim=1, start=0, end=2, step=1), case(dim=0, start=0, end=1, step=0))),
    view("narrow", lambda lib, a, dim, start, length: lib.narrow(a, dim, start, length), method="narrow", gradgrad=True,
         kwargs=(case(dim=0, start=0, length=1), case(dim=-1, start=1, length=1), case(dim=0, start=-1, length=1),
                 case(dim=0, start=1, length=5), case(dim=1, start=0, length=0))),
    view("unfold", lambda lib, a, dimension, size, step: a.unfold(dimension, size, step),
         kwargs=(case(dimension=0, size=2, step=1), case(dimension=-1, size=2, step=2), case(dimension=0, size=1, step=3),
                 case(dimension=0, size=1, step=1), case(dimension=0, size=3, step=0))),
    view("diagonal", lambda lib, a, **k: lib.diagonal(a, **k), method="diagonal",
         kwargs=({}, case(offset=1), case(offset=-1, dim1=-1, dim2=0), case(offset=0, dim1=0, dim2=2),
                 case(offset=5), case(dim1=1, dim2=1))),
    view("flatten", lambda lib, a, **k: lib.flatten(a, **k), method="flatten",
         kwargs=({}, case(start_dim=1), case(start_dim=0, end_dim=0), case(start_dim=-2, end_dim=-1),
                 case(start_dim=1, end_dim=0))),
    view("unflatten", lambda lib, a, dim, sizes: lib.unflatten(a, dim, sizes),
         kwargs=(case(dim=0, sizes=(1, -1)), case(dim=-1, sizes=(-1, 1)), case(dim=0, sizes=(2, -1)),
                 case(dim=0, sizes=(-1, -1)), case(dim=0, sizes=()))),
    view("split", lambda lib, a, split_size, dim=0: lib.split(a, split_size, dim), method="split",
         kwargs=(case(split_size=2), case(split_size=2, dim=-1), case(split_size=1), case(split_size=0),
                 case(split_size=100, dim=0))),
    view("split.sizes", lambda lib, a, dim: a.split(_split_sizes(a, dim), dim),
         kwargs=(case(dim=0), case(dim=-1))),
    view("split_with_sizes", lambda lib, a, dim, bad=False: lib.split_with_sizes(
        a, [2, 1] if bad else _split_sizes(a, dim), dim),
         kwargs=(case(dim=0), case(dim=-1), case(dim=0, bad=True))),
    view("chunk", lambda lib, a, chunks, dim=0: lib.chunk(a, chunks, dim), method="chunk",
         kwargs=(case(chunks=2), case(chunks=3, dim=-1), case(chunks=1), case(chunks=0))),
    view("unbind", lambda lib, a, dim=0: lib.unbind(a, dim), method="unbind",
         kwargs=(case(dim=0), case(dim=-1))),
    view("tensor_split", lambda lib, a, sections=None, indices=None, dim=0, tensor=False: lib.tensor_split(
        a, (lib.tensor(sections if indices is None else indices) if tensor else
            sections if indices is None else indices), dim),
         kwargs=(case(sections=2), case(sections=3, dim=-1), case(sections=1), case(sections=0),
                 case(indices=[1, 2], dim=0), case(indices=[2, 1, 9], dim=-1), case(sections=2, tensor=True),
                 case(indices=[0, 1], tensor=True))),
    view("hsplit", lambda lib, a, parts: lib.hsplit(a, parts),
         kwargs=(case(parts=1), case(parts=2), case(parts=[1, 2]), case(parts=0))),
    view("vsplit", lambda lib, a, parts: lib.vsplit(a, parts),
         kwargs=(case(parts=1), case(parts=2), case(parts=[0, 1]))),
    view("dsplit", lambda lib, a, parts: lib.dsplit(a, parts),
         kwargs=(case(parts=2), case(parts=[1, 3]))),
    view("unsafe_chunk", lambda lib, a, chunks, dim=0: lib.unsafe_chunk(a, chunks, dim), method="unsafe_chunk",
         kwargs=(case(chunks=2), case(chunks=3, dim=-1))),
    view("unsafe_split", lambda lib, a, split_size, dim=0: lib.unsafe_split(a, split_size, dim),
         method="unsafe_split", kwargs=(case(split_size=2), case(split_size=1, dim=-1))),
    view("unsafe_split_with_sizes", lambda lib, a, dim: lib.unsafe_split_with_sizes(a, _split_sizes(a, dim), dim),
         kwargs=(case(dim=0), case(dim=-1))),
    view("movedim", lambda lib, a, source, destination: lib.movedim(a, source, destination), method="movedim",
         kwargs=(case(source=0, destination=-1), case(source=(0, 1), destination=(1, 0)),
                 case(source=(-1, 0), destination=(0, 2)), case(source=(0, 0), destination=(0, 1)),
                 case(source=(0,), destination=(0, 1)))),
    view("contiguous", lambda lib, a, fmt=None: a.contiguous() if fmt is None else a.contiguous(
        memory_format=getattr(lib, fmt)),
         kwargs=({}, case(fmt="contiguous_format"), case(fmt="channels_last"), case(fmt="preserve_format"))),
    view("clone", lambda lib, a, fmt=None: lib.clone(a) if fmt is None else a.clone(memory_format=getattr(lib, fmt)),
         kwargs=({}, case(fmt="contiguous_format"), case(fmt="preserve_format"), case(fmt="channels_last")),
         is_view=False),
)


def _as_strided(lib, a, how, inplace=False):
    n = a.numel()
    size, stride, offset = {"flat": ((n,), (1,), 0), "overlap": ((2, 2), (1, 1), 0),
                            "offset": ((1,), (1,), min(n, 1)), "broadcast": ((3,), (0,), 0)}[how]
    if n < 3 and how != "flat":
        size, stride, offset = (n,), (1,), 0
    base = a.contiguous()
    return base.clone().as_strided_(size, stride, offset) if inplace else lib.as_strided(base, size, stride, offset)


def _complex_pair(lib, a):
    # [..., 2] real pairs viewed as complex and back (float and double only)
    pairs = a.reshape(-1, 2) if a.numel() % 2 == 0 else a.reshape(-1)[:0].reshape(0, 2)
    return lib.view_as_real(lib.view_as_complex(pairs.contiguous()))


register(
    view("as_strided", lambda lib, a, how: _as_strided(lib, a, how),
         kwargs=(case(how="flat"), case(how="overlap"), case(how="offset"), case(how="broadcast"))),
    view("as_strided_", lambda lib, a, how: _as_strided(lib, a, how, inplace=True),
         kwargs=(case(how="flat"), case(how="overlap"))),
    # view(dtype): the same bytes read as another dtype of the same size
    view("view[dtype]", lambda lib, a, to: a.view(getattr(lib, to)), covers=("view",),
         kwargs=(case(to="int16"), case(to="int32"), case(to="float64"))),
    view("view_as_complex", lambda lib, a: _complex_pair(lib, a), dtypes=("float32", "float64"),
         covers=("view_as_real",)),
    view("sum_to_size", lambda lib, a, how: a.sum_to_size(*(1 if how == "ones" else s for s in a.shape))
         if a.dim() else a.sum_to_size(()), kwargs=(case(how="ones"), case(how="same")), is_view=False),
    view("broadcast_tensors", lambda lib, a, b: lib.broadcast_tensors(a, b), arity=2,
         pairs=((Layout((3, 1)), Layout((4,))), (Layout(()), Layout((2, 3))), (Layout((3, 4)), Layout((5,))))),
    view("channel_shuffle", lambda lib, a, groups: lib.channel_shuffle(a.reshape(1, -1, 1) if a.dim() < 3 else a,
                                                                       groups),
         kwargs=(case(groups=1), case(groups=2)), is_view=False,
         exempt={"torch_grad": "torch 1.13 has no derivative for channel_shuffle; current torch's is the "
                               "inverse shuffle, channel_shuffle(grad, C / groups)"}),
)


# The autograd-state operators: detach aliases its input outside every graph; detach_ and
# requires_grad_ change the tensor they are given (here a fresh non-view one, as detach_
# refuses views) and return it.
register(
    view("detach", lambda lib, a: lib.detach(a), method="detach"),
    # alias: what Tensor.rename returns; a view inside the graph (AliasBackward0)
    view("alias", lambda lib, a: lib.ops.aten.alias(a)),
    # lift_fresh: what tensor(data) passes through under a TorchDispatchMode (torch's returns
    # self itself; tessera's an alias, so that autograd never rebases the input)
    view("lift_fresh", lambda lib, a: lib.ops.aten.lift_fresh(a)),
    view("detach_", lambda lib, a: lib.detach_(a * 1), dtypes=tuple(FLOATING), is_view=False),
    view("requires_grad_", lambda lib, a, **k: (a * 1).detach().requires_grad_(**k), dtypes=tuple(FLOATING),
         kwargs=({}, {"requires_grad": False}), is_view=False,
         exempt={"gradcheck": "the result is a new leaf cut from its input by detach(): no derivative connects "
                              "them, which the torch comparison checks"}),
)


def _set_data(lib, a):
    t = a.clone()
    lib.ops.aten.set_data(t, a * 2)
    return t


def _retain_grad(lib, a):
    y = a.detach().clone().requires_grad_() * 2
    lib.ops.aten.retain_grad(y)
    return lib.tensor(y.retains_grad)


def _backward(lib, a):
    leaf = a.detach().clone().requires_grad_()
    lib.ops.aten._backward((leaf * leaf).sum(), [leaf])
    return leaf.grad


# The manual_cpp_binding operators, called through ops.aten in both libraries (their usual
# bindings are Tensor attributes, which test_autograd and test_tensor cover).
ACCESSOR = dict(supports_out=False, is_view=False, supports_meta=False,
                exempt={"grad": "autograd-state accessors: they return flags or act on their own leaves"})
register(
    view("data", lambda lib, a: lib.ops.aten.data(a), supports_out=False, supports_meta=False),
    view("set_data", _set_data, **ACCESSOR),
    view("is_leaf", lambda lib, a: lib.tensor(lib.ops.aten.is_leaf(a)), **ACCESSOR),
    view("output_nr", lambda lib, a: lib.tensor(lib.ops.aten.output_nr(a)), **ACCESSOR),
    view("_version", lambda lib, a: lib.tensor(lib.ops.aten._version(a * 1)), **ACCESSOR),
    view("retains_grad", lambda lib, a: lib.tensor(lib.ops.aten.retains_grad(a)), **ACCESSOR),
    view("retain_grad", _retain_grad, dtypes=tuple(FLOATING), **ACCESSOR),
    view("_backward", _backward, dtypes=("float32", "float64"), **ACCESSOR),
)


# ---------------------------------------------------------------- resize_, set_ (aten/native/shape/Resize.cpp)

def _resize_smaller(lib, a, **k):
    """A contiguous copy resized to fewer elements: they are its first ones in memory."""
    return a.clone().reshape(-1).resize_(2, 1, **k) if a.numel() >= 2 else a.clone().resize_(0)


def _resize_as_grown(lib, a, **k):
    grown = a.clone().resize_as_(lib.empty(a.numel() + 3, 2), **k)
    return grown.reshape(-1)[:a.numel()]  # (the new elements are uninitialised)


def _set_views(lib, a):
    """set_ in each form, onto a tensor of another shape: the result reads a's memory."""
    whole = lib.empty(0, dtype=a.dtype).set_(a)
    part = lib.empty(3, dtype=a.dtype).set_(a, 0, (a.numel(),), (1,)) if a.is_contiguous() else whole
    emptied = a.clone().set_()
    return whole.clone(), part.clone(), lib.tensor([whole.is_set_to(a), emptied.numel() == 0, a.is_set_to(emptied)])


register(
    OpInfo("resize_", _resize_smaller, supports_out=False, exempt={"grad": "resize_ refuses tensors that require grad (test_memory_views.py)"}),
    OpInfo("resize_as_", _resize_as_grown, supports_out=False,
           exempt={"grad": "resize_as_ refuses tensors that require grad (test_memory_views.py)"}),
    OpInfo("set_", _set_views, supports_out=False, supports_meta=False, covers=("is_set_to",),
           exempt={"grad": "set_ refuses tensors that require grad (test_memory_views.py)"}),
)
