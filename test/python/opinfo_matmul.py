"""OpInfo entries for the matmul family (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot,
vdot, outer, ger, matmul, linear, einsum): operands of matching matrix shapes, transposed,
stepped and expanded, empty along each dim (k = 0 included), beta/alpha and beta = 0.
Half, which torch 1.13 lacks here, is compared with torch in float32 rounded to half."""
import dataclasses

from opinfo import ALL_DTYPES, Layout, OpInfo, register

L = Layout
T = "transposed"


@dataclasses.dataclass
class MatmulInfo(OpInfo):
    cases: tuple = ()            # tuples of Layouts, one per operand

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
LINEAR_NO_BIAS = ((L((2, 4)), L((5, 4))), (L((2, 3, 4)), L((5, 4), T)), (L((4,)), L((4,))))
BETA_ALPHA = ({}, {"beta": 0.5, "alpha": 2}, {"beta": 0}, {"alpha": -1})


def product(name, cases, inplace=None, kwargs=({},), method=True, **kw):
    return MatmulInfo(name, lambda lib, *t, _n=name, **k: getattr(lib, _n)(*t, **k), arity=len(cases[0]),
                      cases=cases, kwargs=kwargs, method=name if method else None, inplace=inplace, **kw)


# products of a few terms: float32 sums differ from torch's BLAS in the last bits
TOL = {"rtol": 1e-5, "atol": 1e-5}

# torch 1.13 (Debian's build) returns 0 for every complex dot / vdot (its BLAS call loses
# the result): those are checked in test_matmul.py against torch's mv instead.
REAL = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))

register(
    product("mm", MM, **TOL),
    product("bmm", BMM, **TOL),
    product("addmm", ADDMM, inplace="addmm_", kwargs=BETA_ALPHA, **TOL),
    product("baddbmm", BADDBMM, inplace="baddbmm_", kwargs=BETA_ALPHA, **TOL),
    product("addbmm", ADDBMM, inplace="addbmm_", kwargs=BETA_ALPHA, **TOL),
    product("mv", MV, **TOL),
    product("addmv", ADDMV, inplace="addmv_", kwargs=BETA_ALPHA, **TOL),
    product("dot", DOT, dtypes=REAL, **TOL),
    product("vdot", DOT, dtypes=REAL, **TOL),
    MatmulInfo("matmul[1-D @ 1-D]", lambda lib, *t, **k: lib.matmul(*t, **k), arity=2, cases=DOT, dtypes=REAL,
               method="matmul", **TOL),
    product("outer", OUTER),
    product("ger", OUTER),
    product("matmul", MATMUL, **TOL),
    MatmulInfo("linear", lambda lib, *t, **k: (lib.nn.functional.linear if lib.__name__ == "torch" else lib.linear)(
        *t, **k), arity=3, cases=LINEAR, supports_out=False, **TOL),
    MatmulInfo("linear[no bias]", lambda lib, *t, **k: (lib.nn.functional.linear if lib.__name__ == "torch"
                                                         else lib.linear)(*t, **k),
               arity=2, cases=LINEAR_NO_BIAS, supports_out=False, **TOL),
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
register(*[MatmulInfo(f"einsum[{eq}]", lambda lib, *t, _eq=eq, **k: lib.einsum(_eq, *t, **k), arity=len(cases[0]),
                      cases=cases, supports_out=False, **TOL) for eq, cases in EINSUM.items()])
