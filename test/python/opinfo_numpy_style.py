"""OpInfo entries for the NumPy-style shape functions (ops.yaml's section of that name,
aten/native/shape/NumpyStyle.cpp) and the products over mm and mul
(aten/native/linalg/TensorProducts.cpp). Arguments that make no sense for a small rank make
torch raise, and tessera must raise the same class."""
from opinfo import Layout, OpInfo, register
from opinfo_matmul import BETA_ALPHA, MatmulInfo, product
from opinfo_views import case, view

L, T = Layout, "transposed"


register(
    view("swapaxes", lambda lib, a, axis0, axis1: lib.swapaxes(a, axis0, axis1), method="swapaxes",
         inplace=lambda lib, a, axis0, axis1: a.swapaxes_(axis0, axis1),
         kwargs=(case(axis0=0, axis1=-1), case(axis0=1, axis1=0))),
    view("swapdims", lambda lib, a, dim0, dim1: lib.swapdims(a, dim0, dim1), method="swapdims",
         inplace=lambda lib, a, dim0, dim1: a.swapdims_(dim0, dim1),
         kwargs=(case(dim0=0, dim1=-1), case(dim0=-1, dim1=1))),
    view("moveaxis", lambda lib, a, source, destination: lib.moveaxis(a, source, destination), method="moveaxis",
         kwargs=(case(source=0, destination=-1), case(source=(0, 1), destination=(1, 0)))),
    view("ravel", lambda lib, a: lib.ravel(a), method="ravel", is_view=False),
    view("broadcast_to", lambda lib, a, how: lib.broadcast_to(a, (2, *a.shape) if how == "lead" else (3, 2)),
         kwargs=(case(how="lead"), case(how="fixed"))),
    view("broadcast_to[method]", lambda lib, a: a.broadcast_to((2, *a.shape))),
    view("reshape_as", lambda lib, a: a.reshape_as(lib.ones(a.numel())), is_view=False),
    OpInfo("fliplr", lambda lib, a: lib.fliplr(a), method="fliplr", supports_out=False),
    OpInfo("flipud", lambda lib, a: lib.flipud(a), method="flipud", supports_out=False),
    OpInfo("rot90", lambda lib, a, **k: lib.rot90(a, **k), method="rot90", supports_out=False,
           kwargs=({}, {"k": 2}, {"k": -1, "dims": [1, 0]}, {"k": 7, "dims": [0, -1]}, {"k": 0})),
    OpInfo("atleast_1d", lambda lib, a: lib.atleast_1d(a), supports_out=False),
    OpInfo("atleast_2d", lambda lib, a: lib.atleast_2d(a), supports_out=False),
    OpInfo("atleast_3d", lambda lib, a: lib.atleast_3d(a), supports_out=False),
    OpInfo("atleast_3d[sequence]", lambda lib, a, b: lib.atleast_3d(a, b), arity=2, supports_out=False),
    OpInfo("numel", lambda lib, a: lib.tensor(lib.numel(a)), supports_out=False, supports_meta=False,
           exempt={"grad": "it returns an int, which has no gradient"}),
    OpInfo("row_stack", lambda lib, a, b: lib.row_stack([a, b]), arity=2),
    OpInfo("diag", lambda lib, a, **k: lib.diag(a, **k), method="diag", kwargs=({}, {"diagonal": 1}, {"diagonal": -2})),
    OpInfo("diagflat", lambda lib, a, **k: lib.diagflat(a, **k), method="diagflat", supports_out=False,
           kwargs=({}, {"offset": -1})),
    OpInfo("diag_embed", lambda lib, a, **k: lib.diag_embed(a, **k), method="diag_embed", supports_out=False,
           kwargs=({}, {"offset": 1}, {"offset": -1, "dim1": 0, "dim2": -1}, {"dim1": 1, "dim2": 0})),
    OpInfo("diff", lambda lib, a, **k: lib.diff(a, **k), method="diff",
           kwargs=({}, {"n": 2, "dim": 0}, {"n": 0}, {"n": 5})),
    OpInfo("diff[prepend, append]", lambda lib, a, b, **k: lib.diff(a, prepend=b, append=b, **k), arity=2,
           kwargs=({}, {"dim": 0})),
)

ADDR = ((L((3, 4)), L((3,)), L((4,))), (L((4,)), L((3,)), L((4,))), (L(()), L((3,)), L((4,))),
        (L((3, 4), T), L((6,), "stepped"), L((4,))), (L((0, 4)), L((0,)), L((4,))))
INNER = ((L((3, 4)), L((5, 4))), (L((4,)), L((4,))), (L((2, 3, 4), T), L((4,))), (L(()), L((2, 3))),
         (L((0, 4)), L((2, 4))))
KRON = ((L((2, 3)), L((4,))), (L((2,)), L((3,))), (L((2, 1, 3)), L((2, 2), T)), (L(()), L((2, 3))))
TENSORDOT = ((L((2, 3, 4)), L((4, 3, 5))), (L((2, 3, 4), T), L((4, 3))), (L((3, 4)), L((4, 3), T)))


def _tensordot(lib, a, b, **k):
    return lib.tensordot(a, b, dims=([1, 2], [1, 0]) if b.dim() == 3 else ([-1, -2], [0, 1]), **k)


register(
    product("addr", ADDR, kwargs=BETA_ALPHA),
    product("addr", tuple(c for c in ADDR if c[0].shape == (3, 4)), inplace="addr_", kwargs=BETA_ALPHA),
    product("inner", INNER),
    product("kron", KRON),
    MatmulInfo("tensordot", _tensordot, arity=2, cases=TENSORDOT),
    MatmulInfo("tensordot[int dims]", lambda lib, a, b: lib.tensordot(a, b, dims=1), arity=2,
               cases=((L((2, 3)), L((3, 4))), (L((2, 3, 4), T), L((2, 5))))),
)
