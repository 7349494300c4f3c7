"""Training across ranks against torch in one process on the whole batch: SyncBatchNorm
(uneven shards, an empty shard, inside DDP after convert_sync_batchnorm), DDP's join for
uneven inputs (both divisors, early termination, with ZeroRedundancyOptimizer) and
ZeroRedundancyOptimizer (plain and bucket-view parameters, consolidate_state_dict /
state_dict / load_state_dict). The ranks run distributed_training_worker.py on 127.0.0.1,
each bounded in time. torch 1.13 synchronises batch norm only on GPUs, so the oracle is its
BatchNorm on the concatenated batch."""
import os
import sys

import numpy as np
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from distributed_training_worker import join_iterations, model_data, shard_sizes, syncbn_data  # noqa: E402
from test_distributed import _same_everywhere as same_everywhere, launch  # noqa: E402


def run(scenario, world, tmp_path):
    procs, outputs, results = launch(scenario, world, tmp_path, script="distributed_training_worker.py")
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    return results


def close(got, want, rtol=1e-9, atol=1e-11, msg=""):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=msg)


def torch_net(init):
    m = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    m.load_state_dict({k.replace("seq.", ""): torch.tensor(v) for k, v in init.items() if k != "scale"})
    return m


def shard_grads(m, x, y, rank):
    m.zero_grad()
    torch.nn.functional.mse_loss(m(torch.tensor(x[4 * rank: 4 * rank + 4])),
                                 torch.tensor(y[4 * rank: 4 * rank + 4])).backward()
    return [p.grad.clone() for p in m.parameters()]


def assert_state(got, m):
    for k, v in m.state_dict().items():
        close(got["seq." + k], v.numpy(), msg=k)


@pytest.mark.parametrize("world", [2, 3])
def test_sync_batchnorm_is_batch_norm_of_the_whole_batch(world, tmp_path):
    results = run("syncbn", world, tmp_path)
    sizes = shard_sizes(world)
    bounds = np.cumsum([0] + sizes)
    bn = torch.nn.BatchNorm2d(3, momentum=0.3).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([0.5, 1.5, -1.0], dtype=torch.float64))
        bn.bias.copy_(torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64))
    for step, (x, t) in enumerate(syncbn_data(world)):
        xs = torch.tensor(x, requires_grad=True)
        y = bn(xs)
        (y * torch.tensor(t)).sum().backward()
        for r in range(world):
            rows = slice(bounds[r], bounds[r + 1])
            close(results[r][f"syncbn/y{step}"], y.detach().numpy()[rows])
            close(results[r][f"syncbn/dx{step}"], xs.grad.numpy()[rows])
            close(results[r][f"syncbn/running{step}"][0], bn.running_mean.numpy())
            close(results[r][f"syncbn/running{step}"][1], bn.running_var.numpy())
        close(sum(results[r][f"syncbn/dw{step}"] for r in range(world)), bn.weight.grad.numpy())
        close(sum(results[r][f"syncbn/db{step}"] for r in range(world)), bn.bias.grad.numpy())
        bn.zero_grad()
    bn.eval()
    for out in results.values():
        close(out["syncbn/eval"], bn(torch.ones(2, 3, 1, 1, dtype=torch.float64)).detach().numpy())
        assert out["syncbn/empty_grad_shape"] in (None, (0, 3), (2, 3))
    assert results[1]["syncbn/empty_grad_shape"] == (2, 3)

    # DDP over a converted model: the gradient of the whole batch's loss
    init = same_everywhere(results, "ddp_bn/init")
    net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(),
                              torch.nn.Linear(4, 3)).double()
    net.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    x, y = model_data(world, 1)[0]
    torch.nn.functional.mse_loss(net(torch.tensor(x)), torch.tensor(y)).backward()
    for out in results.values():
        for n, p in net.named_parameters():
            close(out["ddp_bn/grads"][n], p.grad.numpy(), msg=n)
        close(out["ddp_bn/state"]["1.running_var"], net[1].running_var.numpy())


def simulate(init, world, optimizer, divide_by_world):
    """Each iteration: the ranks still running contribute their shard's grads, averaged
    over the whole group or over the running ranks."""
    m = torch_net(init)
    opt = optimizer(m.parameters())
    iterations = join_iterations(world)
    data = model_data(world, max(iterations))
    for i, (x, y) in enumerate(data):
        running = [r for r in range(world) if i < iterations[r]]
        grads = [shard_grads(m, x, y, r) for r in running]
        divisor = world if divide_by_world else len(running)
        for k, p in enumerate(m.parameters()):
            p.grad = sum(g[k] for g in grads) / divisor
        opt.step()
    return m


@pytest.mark.parametrize("world", [2, 3])
def test_join_trains_on_uneven_inputs(world, tmp_path):
    results = run("join", world, tmp_path)
    for divide in (True, False):
        init = same_everywhere(results, f"join/{divide}/init")
        want = simulate(init, world, lambda ps: torch.optim.SGD(ps, lr=0.1), divide)
        same_everywhere(results, f"join/{divide}/final")
        assert_state(results[0][f"join/{divide}/final"], want)
    init = same_everywhere(results, "join_zero/init")
    want = simulate(init, world, lambda ps: torch.optim.Adam(ps, lr=0.05), True)
    same_everywhere(results, "join_zero/final")
    assert_state(results[0]["join_zero/final"], want)
    init = same_everywhere(results, "stale/init")
    m = torch_net(init)
    x, y = model_data(world, 1)[0]
    grads = [shard_grads(m, x, y, r) for r in range(world)]
    for out in results.values():
        for (name, _), k in zip(m.named_parameters(), range(len(grads[0]))):
            close(out["stale/grads"]["seq." + name], (sum(g[k] for g in grads) / world).numpy(), msg=name)
    assert results[0]["throw"] == "Rank 0 exhausted all inputs."
    for r in range(1, world):
        assert results[r]["throw"] == "Detected at least one rank that exhausted inputs. Throwing across all ranks."


@pytest.mark.parametrize("world", [2, 3])
def test_zero_redundancy_optimizer_steps_like_one_adam(world, tmp_path):
    results = run("zero", world, tmp_path)
    for view in (False, True):
        init = same_everywhere(results, f"zero/{view}/init")
        m = torch_net(init)
        opt = torch.optim.Adam(m.parameters(), lr=0.05, betas=(0.8, 0.9))
        for x, y in model_data(world, 3):
            grads = [shard_grads(m, x, y, r) for r in range(world)]
            for k, p in enumerate(m.parameters()):
                p.grad = sum(g[k] for g in grads) / world
            opt.step()
        same_everywhere(results, f"zero/{view}/final")
        assert_state(results[0][f"zero/{view}/final"], m)
        # each rank holds a share of the 75 elements, every element on exactly one rank
        shares = [results[r][f"zero/{view}/owned"] for r in range(world)]
        assert sum(shares) == sum(p.numel() for p in m.parameters()) and all(s > 0 for s in shares)
        want = opt.state_dict()
        got = results[0][f"zero/{view}/state_dict"]
        assert got["param_groups"][0]["params"] == want["param_groups"][0]["params"]
        assert got["param_groups"][0]["lr"] == 0.02 and tuple(got["param_groups"][0]["betas"]) == (0.8, 0.9)
        for r in range(world):
            keys, adam_keys = results[r][f"zero/{view}/keys"]
            assert keys == adam_keys
        assert sorted(got["state"]) == sorted(want["state"])
        for i, s in want["state"].items():
            for k in ("exp_avg", "exp_avg_sq"):
                close(got["state"][i][k], s[k].numpy(), msg=f"{i} {k}")
            assert float(got["state"][i]["step"]) == float(s["step"])
        for r in range(world):
            assert results[r][f"zero/{view}/unconsolidated"] == (
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={r})` on all ranks beforehand if you meant to save the global state.")
    assert results[0]["zero/reloaded_same"] is True
