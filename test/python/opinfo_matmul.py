"""OpInfo entries for the matmul family (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot,
vdot, outer, ger, matmul, linear, einsum): operands of matching matrix shapes, transposed,
stepped and expanded, empty along each dim (k = 0 included), beta/alpha and beta = 0.
Half, which torch 1.13 lacks here, is compared with torch in float32 rounded to half."""
import dataclasses

from opinfo import ALL_DTYPES, Layout, OpInfo, make_torch, register

L = Layout
T = "transposed"


@dataclasses.dataclass
class MatmulInfo(OpInfo):
    cases: tuple = dataclasses.field(default=(), repr=False)  # tuples of Layouts, one per operand
    # BFloat16: torch 1.13's in-place forms (compared with directly, no float reference)
    # round to bfloat16 as they accumulate, so a result that cancels to a few units is off
    # by an ulp of the terms (0.125 at 16..32); einsum rounds its intermediate products to
    # bfloat16 as torch does
    dtype_tolerances: dict = dataclasses.field(default_factory=lambda: {"bfloat16": (1.6e-2, 0.25)})
    # test_ops.py's in-place overlap check calls with 2-D operands, which 3-D ops reject
    # with their own errors (torch: IndexError); test_matmul.py covers these ops instead
    overlap_test: bool = True

    def layouts(self):
        return list(self.cases)


MM = ((L((3, 4)), L((4, 5))), (L((3, 4), T), L((4, 5))), (L((3, 4)), L((4, 5), T)), (L((3, 4), T), L((4, 5), T)),
      (L((3, 6), "stepped"), L((6, 2))), (L((3, 4), "expanded"), L((4, 5))), (L((0, 4)), L((4, 5))),
      (L((3, 0)), L((0, 5))), (L((3, 4)), L((4, 0))), (L((1, 4)), L((4, 1))))
ADDMM = ((L((3, 5)), L((3, 4)), L((4, 5))), (L((5,)), L((3, 4), T), L((4, 5))), (L(()), L((3, 4)), L((4, 5), T)),
         (L((3, 1)), L((3, 4), "stepped"), L((4, 5))), (L((3, 5), T), L((3, 0)), L((0, 5))),
         (L((0, 5)), L((0, 4)), L((4, 5))))
BMM = ((L((2, 3, 4)), L((2, 4, 5))), (L((2, 3, 4), T), L((2, 4, 5))), (L((2, 3, 4)), L((2, 4, 6), "stepped")),
       (L((2, 3, 4), "expanded"), L((2, 4, 5))), (L((0, 3, 4)), L((0, 4, 5))), (L((2, 3, 0)), L((2, 0, 5))),
       (L((3, 1, 4)), L((3, 4, 1))))
BADDBMM = ((L((2, 3, 5)), L((2, 3, 4)), L((2, 4, 5))), (L((3, 5)), L((2, 3, 4), T), L((2, 4, 5))),
           (L(()), L((2, 3, 4)), L((2, 4, 5), "expanded")), (L((2, 3, 5)), L((2, 3, 0)), L((2, 0, 5))))
ADDBMM = ((L((3, 5)), L((2, 3, 4)), L((2, 4, 5))), (L((5,)), L((2, 3, 4), T), L((2, 4, 5))),
          (L(()), L((2, 3, 4), "expanded"), L((2, 4, 5))), (L((3, 5)), L((0, 3, 4)), L((0, 4, 5))),
          (L((3, 5), T), L((2, 3, 0)), L((2, 0, 5))))
MV = ((L((3, 4)), L((4,))), (L((3, 4), T), L((4,))), (L((3, 4)), L((8,), "stepped")), (L((0, 4)), L((4,))),
      (L((3, 0)), L((0,))), (L((3, 4), "expanded"), L((4,), "expanded")))
ADDMV = ((L((3,)), L((3, 4)), L((4,))), (L(()), L((3, 4), T), L((4,))), (L((1,)), L((3, 4)), L((8,), "stepped")),
         (L((3,)), L((3, 0)), L((0,))))
DOT = ((L((5,)), L((5,))), (L((6,), "stepped"), L((3,))), (L((0,)), L((0,))), (L((4,), "expanded"), L((4,))))
OUTER = ((L((3,)), L((4,))), (L((6,), "stepped"), L((2,))), (L((0,)), L((4,))), (L((1,)), L((1,))))
MATMUL = (  # every rank combination torch distinguishes (1-D @ 1-D below), and broadcasting batches
    (L((3, 4)), L((4,))), (L((4,)), L((4, 5))), (L((3, 4), T), L((4, 5))),
    (L((2, 3, 4)), L((4,))), (L((2, 3, 4)), L((4, 5))), (L((2, 3, 4), T), L((4, 5), T)), (L((4,)), L((2, 4, 5))),
    (L((3, 4)), L((2, 4, 5))), (L((2, 3, 4)), L((2, 4, 5))), (L((2, 1, 3, 4)), L((3, 4, 5))),
    (L((2, 3, 4)), L((1, 4, 5))), (L((4,)), L((2, 2, 4, 5))), (L((2, 2, 3, 4)), L((4,))),
    (L((0, 3, 4)), L((4, 5))), (L((2, 3, 0)), L((2, 0, 5))))
LINEAR = ((L((2, 4)), L((5, 4)), L((5,))), (L((2, 3, 4)), L((5, 4)), L((5,))), (L((2, 3, 4), T), L((5, 4)), L(())),
          (L((4,)), L((5, 4)), L((5,))), (L((0, 4)), L((5, 4)), L((5,))))
LINEAR_NO_BIAS = ((L((2, 4)), L((5, 4))), (L((2, 3, 4)), L((5, 4), T)), (L((4,)), L((5, 4))))
BETA_ALPHA = ({}, {"beta": 0.5, "alpha": 2}, {"beta": 0}, {"alpha": -1})


def bf16_via_float(call):
    """torch 1.13 rounds BFloat16 products to bfloat16 as it accumulates; current PyTorch
    (and Tessera) accumulate in float and round once, so the reference is torch in float32,
    rounded."""
    def wrapped(lib, *t, **k):
        if lib.__name__ == "torch" and t and t[0].dtype == lib.bfloat16:
            return call(lib, *[x.float() for x in t], **k).to(lib.bfloat16)
        return call(lib, *t, **k)
    return wrapped


def product(name, cases, inplace=None, kwargs=({},), method=True, **kw):
    return MatmulInfo(name, bf16_via_float(lambda lib, *t, _n=name, **k: getattr(lib, _n)(*t, **k)),
                      arity=len(cases[0]), cases=cases, kwargs=kwargs, method=name if method else None,
                      inplace=inplace, **kw)


TOL = {}  # the registry's per-dtype defaults

def linear(lib, *t, **k):
    return (lib.nn.functional.linear if lib.__name__ == "torch" else lib.linear)(*t, **k)


def baddbmm(lib, s, b1, b2, **k):
    """torch 1.13's baddbmm with beta = 0 now and then returns NaN for small batches (it
    reads its uninitialised result: seen in about 1 call in 300 here), so torch's reference
    there is alpha * bmm, which is what beta = 0 means."""
    if lib.__name__ == "torch" and k.get("beta", 1) == 0:
        alpha = k.get("alpha", 1)
        r = lib.bmm(b1, b2)
        return r * alpha if alpha != 1 else r
    return lib.baddbmm(s, b1, b2, **k)


# torch 1.13 (Debian's build) returns 0 for every complex dot / vdot (its BLAS call loses
# the result): those are checked in test_matmul.py against torch's mv instead.
REAL = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))

register(
    product("mm", MM, gradgrad=True, **TOL),
    product("bmm", BMM, **TOL),
    product("addmm", ADDMM, inplace="addmm_", kwargs=BETA_ALPHA, **TOL),
    MatmulInfo("baddbmm", bf16_via_float(baddbmm), arity=3, cases=BADDBMM, kwargs=BETA_ALPHA, method="baddbmm",
               inplace="baddbmm_", overlap_test=False, **TOL),
    product("addbmm", ADDBMM, kwargs=BETA_ALPHA, **TOL),
    # torch 1.13's addbmm_ resizes a self of another shape to the result's (an out= kernel
    # run on self); Tessera's in-place forms require self to have the result's shape, as
    # addmm_ and baddbmm_ do in torch, so the in-place samples use such a self.
    product("addbmm", tuple(c for c in ADDBMM if c[0].shape == (3, 5)), inplace="addbmm_", kwargs=BETA_ALPHA,
            overlap_test=False, **TOL),
    product("mv", MV, **TOL),
    product("addmv", ADDMV, inplace="addmv_", kwargs=BETA_ALPHA, **TOL),
    product("dot", DOT, dtypes=REAL, **TOL),
    product("vdot", DOT, dtypes=REAL, **TOL),
    MatmulInfo("matmul[1-D @ 1-D]", bf16_via_float(lambda lib, *t, **k: lib.matmul(*t, **k)), arity=2, cases=DOT, dtypes=REAL,
               method="matmul", **TOL),
    product("outer", OUTER),
    product("ger", OUTER),
    product("matmul", MATMUL, **TOL),
    MatmulInfo("linalg_matmul", bf16_via_float(lambda lib, *t, **k: lib.linalg.matmul(*t, **k)), arity=2,
               cases=MATMUL, **TOL),
    MatmulInfo("linear", bf16_via_float(linear), arity=3, cases=LINEAR, supports_out=False, **TOL),
    MatmulInfo("linear[no bias]", bf16_via_float(linear), arity=2, cases=LINEAR_NO_BIAS, supports_out=False, **TOL),
)

# einsum: one entry per equation, the operands' layouts beside it.
EINSUM = {
    "ij,jk->ik": ((L((3, 4)), L((4, 5))), (L((3, 4), T), L((4, 5), T))),
    "bij,bjk->bik": ((L((2, 3, 4)), L((2, 4, 5))),),
    "ij,kj": ((L((3, 4)), L((5, 4))),),
    "ii->i": ((L((4, 4)),),),
    "ii": ((L((4, 4)),), (L((4, 4), T),)),
    "i,i": ((L((5,)), L((5,))),),
    "i,j->ij": ((L((3,)), L((4,))),),
    "ij->ji": ((L((3, 4)),),),
    "ijk->": ((L((2, 3, 4)),),),
    "ijk->j": ((L((2, 3, 4)),),),
    "...ij,...jk": ((L((2, 3, 4)), L((4, 5))), (L((2, 1, 3, 4)), L((3, 4, 5)))),
    "b...,b->...": ((L((2, 3, 4)), L((2,))),),
    "bn,anm,bm->ba": ((L((2, 3)), L((4, 3, 5)), L((2, 5))),),
    "ij,ij,ij->i": ((L((3, 4)), L((3, 4), T), L((3, 4))),),
    "Ab,bA->": ((L((3, 4)), L((4, 3))),),
    "iij,jk->ik": ((L((3, 3, 4)), L((4, 2))),),
    "i,jk->": ((L((0,)), L((2, 3))),),
}
register(*[MatmulInfo(f"einsum[{eq}]", bf16_via_float(lambda lib, *t, _eq=eq, **k: lib.einsum(_eq, *t, **k)),
                      arity=len(cases[0]),
                      cases=cases, supports_out=False, **TOL) for eq, cases in EINSUM.items()])

# cdist: p-norm distances between the rows of two batches of points
register(OpInfo("cdist", lambda lib, a, b, **k: lib.cdist(a, b, **k), arity=2, dtypes=("float32", "float64"),
                supports_out=False, rtol=1e-5, atol=1e-5,
                sample_inputs=lambda dtype: (
                    (f"p={p}", [make_torch((3, 2), dtype, 1), make_torch((4, 2), dtype, 2)], {"p": p})
                    for p in (2.0, 1.0, 3.0, float("inf")))))
