"""OpInfo entries for the elementwise families (binary arithmetic so far)."""
from opinfo import OpInfo, register

register(
    OpInfo("add", lambda lib, a, b, **kw: lib.add(a, b, **kw), arity=2, kwargs=({}, {"alpha": 2}), method="add",
           inplace="add_"),
    OpInfo("mul", lambda lib, a, b, **kw: lib.mul(a, b, **kw), arity=2, method="mul", inplace="mul_"),
)
