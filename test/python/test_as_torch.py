"""tessera.as_torch (``import torch`` answering tessera, for packages that import torch
themselves) and the small pieces of torch's surface that such packages touch as they
start: torch._C's API-usage hooks, torch._assert, torch.nn.modules.utils,
torch.utils.model_zoo, torch.ao.quantization's float-mode stubs, torch.onnx's custom
symbolic registry, and float arguments given as 0-dim tensors. Each is compared with
torch 1.13 where torch has it."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import tessera


def run(code, *args, module=False):
    cmd = [sys.executable, "-m", "tessera.as_torch"] + (["-m"] if module else []) + list(args) if args else \
        [sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_install_makes_torch_tessera_in_a_fresh_process():
    proc = run("""
        import sys, tessera.as_torch
        tessera.as_torch.install()
        import torch, torch.nn.functional as F, tessera
        from torch.nn.modules.utils import _pair
        print(torch is tessera, torch.nn is tessera.nn, F is tessera.nn.functional, sys.modules["torch.fx"] is tessera.fx)
        print(tessera.as_torch.is_installed(), _pair(3))
        try:
            import torch.not_a_module
        except ModuleNotFoundError as e:
            print("missing:", e)
        import importlib.util, torch.utils.model_zoo as zoo
        print(importlib.util.find_spec("torch._dynamo"), zoo.__spec__.name, hasattr(zoo, "__path__"))
        tessera.as_torch.uninstall()
        print("torch" in sys.modules, tessera.as_torch.is_installed())
    """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True True True True"
    assert lines[1] == "True (3, 3)"
    assert lines[2] == "missing: No module named 'torch.not_a_module'"
    # a missing submodule is None to find_spec (feature probes), and an aliased module keeps
    # its own spec (not a package: no __path__)
    assert lines[3] == "None tessera.utils.model_zoo False"
    assert lines[4] == "False False"


def test_spawned_processes_get_the_alias_too(tmp_path):
    script = tmp_path / "spawner.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing as mp, tessera.as_torch
        tessera.as_torch.install()

        def child(q):
            import torch
            q.put(torch.__name__)

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(q.get(timeout=60))
            p.join(60)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "tessera"


def test_install_refuses_when_pytorch_is_already_imported():
    proc = run("""
        import torch, tessera.as_torch
        try:
            tessera.as_torch.install()
        except RuntimeError as e:
            print(e)
        print(tessera.as_torch.is_installed())
    """)
    assert proc.returncode == 0, proc.stderr
    assert "PyTorch is already imported in this process" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "False"


def test_running_a_script_and_a_module_with_torch_as_tessera(tmp_path):
    (tmp_path / "helper.py").write_text("import torch\nNAME = torch.__name__\n")
    script = tmp_path / "train.py"
    script.write_text("import sys, torch, tessera.as_torch\nfrom helper import NAME\n"
                      "print(torch.__name__, NAME, sys.argv[1:], __name__, tessera.as_torch.is_installed())\n")
    proc = run(None, str(script), "--epochs", "3")  # from another directory: the script's own is on the path
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "tessera tessera ['--epochs', '3'] __main__ True"
    (tmp_path / "mymod.py").write_text("import torch\nprint(torch.ones(2).sum().item())\n")
    env = dict(os.environ, PYTHONPATH=os.environ["PYTHONPATH"] + os.pathsep + str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "tessera.as_torch", "-m", "mymod"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2.0"


def test_api_usage_hooks_and_assert():
    for lib in (torch, tessera):
        lib._C._log_api_usage_once("tessera.test.event")
        assert lib._C._get_tracing_state() is None
        lib._assert(True, "fine")
        with pytest.raises(AssertionError, match="shape mismatch"):
            lib._assert(False, "shape mismatch")
    with pytest.raises(TypeError):
        tessera._C._log_api_usage_once(3)
    proc = subprocess.run([sys.executable, "-c", "import tessera; tessera._C._log_api_usage_once('my.event'); "
                           "tessera._C._log_api_usage_once('my.event')"], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTORCH_API_USAGE_STDERR="1"))
    assert proc.stderr.count("PYTORCH_API_USAGE my.event") == 1


def test_nn_modules_utils_as_torch():
    import torch.nn.modules.utils as ref

    import tessera.nn.modules.utils as mine
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (2, (1, 2), [3]):
            assert getattr(mine, name)(value) == getattr(ref, name)(value)
    assert mine._reverse_repeat_tuple((1, 2, 3), 2) == ref._reverse_repeat_tuple((1, 2, 3), 2)
    assert mine._list_with_default([None, 4], [1, 2, 7, 9]) == ref._list_with_default([None, 4], [1, 2, 7, 9])
    assert mine._list_with_default(5, [1]) == ref._list_with_default(5, [1])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        mine._list_with_default([None, 4], [1, 2])
    states = []
    for lib in (torch, tessera):
        state = lib.nn.Sequential(lib.nn.Linear(2, 2)).state_dict()
        wrapped = type(state)((f"module.{k}", v) for k, v in state.items())
        wrapped._metadata = type(state._metadata)((f"module.{k}" if k else k, v) for k, v in state._metadata.items())
        (ref if lib is torch else mine).consume_prefix_in_state_dict_if_present(wrapped, "module.")
        states.append((list(wrapped), list(wrapped._metadata)))
    assert states[0] == states[1]


def test_model_zoo_and_hub_progress(tmp_path):
    import tessera.utils.model_zoo as zoo
    assert zoo.load_url is tessera.hub.load_state_dict_from_url
    src = tmp_path / "weights-abcdef.pt"
    tessera.save({"w": tessera.arange(3.0)}, src)
    state = zoo.load_url(src.as_uri(), model_dir=str(tmp_path / "cache"), progress=False)
    assert state["w"].tolist() == [0.0, 1.0, 2.0]


def test_quantization_stubs_are_identities_before_convert():
    from torch.ao.quantization import DeQuantStub as RefDeQuant
    from torch.ao.quantization import QuantStub as RefQuant

    from tessera.ao.quantization import DeQuantStub, QuantStub, QuantWrapper
    x = tessera.randn(3)
    assert QuantStub()(x) is x and DeQuantStub()(x) is x
    assert repr(QuantStub()) == repr(RefQuant()) and repr(DeQuantStub()) == repr(RefDeQuant())
    wrapped = QuantWrapper(tessera.nn.Linear(3, 2))
    assert [n for n, _ in wrapped.named_children()] == ["quant", "dequant", "module"]
    assert tessera.equal(wrapped(x), wrapped.module(x))


def test_onnx_custom_symbolic_registry_as_torch():
    def symbolic(g, x):
        return x

    for lib in (torch, tessera):
        lib.onnx.register_custom_op_symbolic("mydomain::op", symbolic, 11)
        lib.onnx.register_custom_op_symbolic("::relu6x", symbolic, 9)
        lib.onnx.unregister_custom_op_symbolic("mydomain::op", 11)
    assert tessera.onnx._registered_symbolic("aten::relu6x", 13) is symbolic
    assert tessera.onnx._registered_symbolic("mydomain::op", 13) is None
    for name, error in (("bad name", tessera.onnx.OnnxExporterError), ("nodomain", tessera.onnx.OnnxExporterError),
                        ("onnx::Relu", ValueError)):
        with pytest.raises(Exception) as ref_error:
            torch.onnx.register_custom_op_symbolic(name, symbolic, 9)
        with pytest.raises(error) as got:
            tessera.onnx.register_custom_op_symbolic(name, symbolic, 9)
        assert str(got.value) == str(ref_error.value)
    from tessera.onnx.symbolic_helper import parse_args
    from tessera.onnx.symbolic_opset11 import unsqueeze

    @parse_args("v", "i")
    def my_symbolic(g, x, dim):
        return (x, dim)
    assert my_symbolic(None, "x", 2) == ("x", 2)
    with pytest.raises(NotImplementedError, match="TorchScript export graph"):
        unsqueeze(None, "x", 0)


def test_float_arguments_accept_zero_dim_tensors_as_torch():
    for lib in (torch, tessera):
        lo, hi = lib.tensor(0.25), lib.tensor(0.5)
        out = lib.empty(100).uniform_(lo, hi)
        assert float(out.min()) >= 0.25 and float(out.max()) <= 0.5
        with pytest.raises(TypeError):
            lib.empty(3).uniform_(lib.tensor(0.1, requires_grad=True), 0.5)
        with pytest.raises(TypeError):
            lib.empty(3).uniform_(lib.tensor([0.1]), 0.5)
