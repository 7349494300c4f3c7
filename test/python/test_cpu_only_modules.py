"""tessera.cuda, tessera.backends, tessera.nn.parallel and tessera.onnx behave as a
CPU-only torch's (torch 1.13 here is such a build): the same answers to the start-up
probes, the same exception type where a device is needed."""
import pytest
import torch

import tessera

PROBES = ["is_available", "device_count", "is_initialized", "seed", "seed_all", "empty_cache", "memory_allocated",
          "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats", "get_rng_state_all",
          "get_arch_list"]
NEEDS_DEVICE = ["synchronize", "current_device", "get_device_name", "initial_seed", "is_bf16_supported", "init"]


@pytest.mark.parametrize("name", PROBES)
def test_cuda_probes_answer_as_torch(name):
    assert getattr(tessera.cuda, name)() == getattr(torch.cuda, name)()


@pytest.mark.parametrize("name", NEEDS_DEVICE)
def test_cuda_calls_that_need_a_device_raise_as_torch(name):
    with pytest.raises(AssertionError):
        getattr(torch.cuda, name)()
    with pytest.raises(AssertionError, match="no CUDA"):
        getattr(tessera.cuda, name)()


def test_cuda_seeding_is_accepted_and_device_contexts():
    for lib in (torch, tessera):
        assert lib.cuda.manual_seed(1) is None and lib.cuda.manual_seed_all(2) is None
        with pytest.raises(AssertionError):
            lib.cuda.device(0).__enter__()
    with tessera.cuda.device_of(tessera.ones(1)):
        pass


def test_backends_flags_and_queries_match_a_cpu_build():
    for path in ["cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic", "cudnn.allow_tf32",
                 "cuda.matmul.allow_tf32", "mkldnn.enabled"]:
        def get(root):
            obj = root.backends
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        assert get(tessera) == get(torch), path
    for query in ["cudnn.is_available", "cudnn.version", "mps.is_available", "openmp.is_available",
                  "mkldnn.is_available", "cuda.is_built"]:
        mod, fn = query.split(".")
        assert getattr(getattr(tessera.backends, mod), fn)() == getattr(getattr(torch.backends, mod), fn)(), query
    # flags are set and read back, as programs do at start-up
    tessera.backends.cudnn.benchmark = True
    assert tessera.backends.cudnn.benchmark is True
    tessera.backends.cudnn.benchmark = False
    import tessera.backends.cudnn as cudnn
    assert cudnn is tessera.backends.cudnn


def test_data_parallel_runs_the_module_without_gpus():
    mine, theirs = tessera.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in mine.state_dict().items()})
    dp_m, dp_t = tessera.nn.DataParallel(mine), torch.nn.DataParallel(theirs)
    assert dp_m.module is mine and dp_m.device_ids == dp_t.device_ids == []
    x = torch.randn(4, 3)
    got, want = dp_m(tessera.from_numpy(x.numpy().copy())), dp_t(x)
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy().copy()), want.detach())
    assert list(dict(dp_m.named_parameters())) == list(dict(dp_t.named_parameters()))  # "module.weight", ...
    out = tessera.nn.parallel.data_parallel(mine, tessera.from_numpy(x.numpy().copy()))
    torch.testing.assert_close(torch.from_numpy(out.detach().numpy().copy()), want.detach())
    with pytest.raises(AssertionError):
        tessera.nn.DataParallel(mine, device_ids=[0])
    # DDP needs a process group, as torch's says when there is none (test_distributed.py runs it)
    for lib, m in ((tessera, mine), (torch, torch.nn.Linear(3, 2))):
        with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
            lib.nn.parallel.DistributedDataParallel(m)


def test_onnx_is_importable():
    assert tessera.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    # (exporting itself: test_onnx_export.py)
    with pytest.raises(NotImplementedError, match="only torch's default export"):
        tessera.onnx.export(tessera.nn.Linear(1, 1), (tessera.ones(1),), "model.onnx", export_params=False)
