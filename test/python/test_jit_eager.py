"""tessera.jit against torch.jit outside scripting: the same answers from is_scripting /
is_tracing, the decorators leave functions and methods working and marked as torch marks
them, annotate and BroadcastingList behave the same, and TorchScript entry points refuse
with NotImplementedError (tessera has no graph compiler; torch would compile)."""
from typing import Dict, List, Optional

import pytest
import torch

import tessera


@pytest.mark.parametrize("lib", [torch, tessera])
def test_the_eager_answers(lib):
    assert lib.jit.is_scripting() is False
    assert lib.jit.is_tracing() is False
    d = lib.jit.annotate(Dict[str, int], {})
    assert d == {} and type(d) is dict
    assert lib.jit.annotate(Optional[int], 3) == 3
    assert lib.jit._unwrap_optional(5) == 5
    with pytest.raises(AssertionError, match="Unwrapping null optional"):
        lib.jit._unwrap_optional(None)
    assert lib.jit.Final is torch.jit.Final
    from importlib import import_module
    ann = import_module(lib.__name__ + ".jit.annotations")
    assert ann.BroadcastingList2[int] is None and ann.BroadcastingList3[float] is None


def _module_with_marked_methods(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        @lib.jit.unused
        def helper(self, x):
            return x * self.scale

        @lib.jit.ignore
        def debug(self, x):
            return x + 1

        with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
            @lib.jit.ignore(drop=True)
            def training_only(self, x):
                return x - 1

        @lib.jit.export
        def other_forward(self, x):
            return self.helper(x) + self.debug(x) + self.training_only(x)

        @property
        @lib.jit.unused
        def prop(self):
            return 7

        def forward(self, x):
            if lib.jit.is_scripting():
                return x
            return self.other_forward(x)

    return M()


def test_decorated_methods_run_eagerly_and_carry_torchs_marks():
    m_torch, m_tessera = _module_with_marked_methods(torch), _module_with_marked_methods(tessera)
    x = [1.0, -2.0, 3.5]
    assert m_tessera(tessera.tensor(x)).tolist() == m_torch(torch.tensor(x)).tolist()
    assert m_tessera.prop == m_torch.prop == 7
    # torch marks with FunctionModifiers' long strings, tessera with their short names
    from torch._jit_internal import FunctionModifiers
    short = {v: k.lower() for k, v in vars(FunctionModifiers).items() if k.isupper()}
    for name in ("helper", "debug", "training_only", "other_forward"):
        want = getattr(type(m_torch), name)._torchscript_modifier
        assert getattr(type(m_tessera), name)._torchscript_modifier == short[want], name
    assert type(m_tessera).prop.fget._torchscript_modifier == short[type(m_torch).prop.fget._torchscript_modifier]


def test_overloads_and_script_if_tracing():
    for lib in (torch, tessera):
        @lib.jit._overload
        def double(x: int) -> int:
            ...

        @lib.jit._overload
        def double(x: float) -> float:  # noqa: F811
            ...

        def double(x):  # noqa: F811
            return x * 2

        assert double(3) == 6 and double(1.5) == 3.0

        @lib.jit._script_if_tracing
        def add_one(x: List[int]) -> List[int]:
            return [v + 1 for v in x]

        assert add_one([1, 2]) == [2, 3] and add_one.__name__ == "add_one"


@pytest.mark.parametrize("name", ["script", "trace", "load", "save", "freeze"])
def test_torchscript_itself_is_refused_clearly(name):
    with pytest.raises(NotImplementedError, match=f"torch.jit.{name}: TorchScript is not implemented in tessera"):
        getattr(tessera.jit, name)(tessera.nn.Linear(2, 2))


def test_ignore_rejects_a_non_bool_like_torch():
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="Argument to @torch.jit.ignore must be a bool or a function"):
            lib.jit.ignore(3)
