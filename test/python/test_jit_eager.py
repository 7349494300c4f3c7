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


def test_isinstance_on_typing_containers_matches_torch():
    from typing import Any, Tuple, Union
    cases = [([1, 2], List[int]), ([1, "a"], List[int]), ([], List[str]), ({"a": 1}, Dict[str, int]),
             ({"a": "b"}, Dict[str, int]), ((1, "a"), Tuple[int, str]), ((1, 2, 3), Tuple[int, ...]),
             ((1, 2), Tuple[int]), (None, Optional[int]), (3, Optional[int]), ("x", Optional[int]),
             (3, Union[str, int]), (2.5, float), ([[1], [2, 3]], List[List[int]]), ([1, None], List[Optional[int]]),
             ({"k": [1.0]}, Dict[str, List[float]])]
    for obj, target in cases:
        assert tessera.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target), (obj, target)
    for lib in (torch, tessera):  # Any is not a class: both pass it to the builtin, which refuses
        with pytest.raises(TypeError):
            lib.jit.isinstance(5, Any)


def test_the_classes_eager_code_names():
    m = tessera.nn.Linear(2, 2)
    assert not isinstance(m, tessera.jit.ScriptModule) and not isinstance(m, tessera.jit.RecursiveScriptModule)
    assert not isinstance(len, tessera.jit.ScriptFunction)
    assert issubclass(tessera.jit.TracerWarning, Warning) and issubclass(tessera.jit.Error, RuntimeError)
    with pytest.raises(NotImplementedError, match="TorchScript is not implemented in tessera"):
        tessera.jit.ScriptModule()
    from tessera.jit.annotations import BroadcastingList6, Dict as D, List as L
    assert BroadcastingList6[int] is None and D is Dict and L is List
