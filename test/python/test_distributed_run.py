"""The launcher (python -m tessera.distributed.run, torchrun's options) and
tessera.multiprocessing.spawn, on 127.0.0.1: the environment each worker gets, restarts
after a failure, the failure summary, two nodes meeting through a c10d rendezvous, and
spawn's errors as torch.multiprocessing's. Every launch is bounded in time."""
import os
import re
import socket
import subprocess
import sys

import pytest
import torch.multiprocessing as tmp

import tessera.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "distributed_run_script.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher(*args, env=None, background=False):
    cmd = [sys.executable, "-m", "tessera.distributed.run", "--monitor_interval", "0.1", *args]
    full_env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **(env or {}))
    if background:
        return subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=180)


def parsed(text):
    rows = [dict(kv.split("=", 1) for kv in line.split()[1:]) for line in text.splitlines() if line.startswith("OUT ")]
    return sorted(rows, key=lambda r: (int(r["TORCHELASTIC_RESTART_COUNT"]), int(r["RANK"])))


def test_workers_get_torchrun_environment():
    r = launcher("--nproc_per_node", "3", "--master_port", str(free_port()), SCRIPT)
    assert r.returncode == 0, r.stderr
    rows = parsed(r.stdout)
    assert [(x["RANK"], x["LOCAL_RANK"], x["WORLD_SIZE"], x["LOCAL_WORLD_SIZE"], x["GROUP_RANK"]) for x in rows] == \
        [(str(i), str(i), "3", "3", "0") for i in range(3)]
    assert all(x["SUM"] == "6" and x["MASTER_ADDR"] == "127.0.0.1" for x in rows)


def test_a_failed_worker_is_summarized_with_rank_exit_code_and_traceback():
    r = launcher("--nproc_per_node", "2", "--master_port", str(free_port()), SCRIPT, env={"FAIL_RANK": "1"})
    assert r.returncode == 1
    assert "distributed_run_script.py FAILED" in r.stderr
    root = r.stderr.split("Root Cause (first observed failure):")[1]
    assert re.search(r"rank\s+: 1 \(local_rank: 1\)", root)
    assert re.search(r"exitcode\s+: 1 \(pid: \d+\)", root)
    assert "ValueError: boom from rank 1" in root and "Traceback (most recent call last)" in root


def test_max_restarts_restarts_the_group():
    r = launcher("--nproc_per_node", "2", "--max_restarts", "2", "--master_port", str(free_port()), SCRIPT,
                 env={"FAIL_RANK": "0", "FAIL_TIMES": "1"})
    assert r.returncode == 0, r.stderr
    rows = parsed(r.stdout)
    assert [(x["TORCHELASTIC_RESTART_COUNT"], x["RANK"]) for x in rows] == [("0", "0"), ("0", "1"), ("1", "0"),
                                                                           ("1", "1")]
    assert "restarting (1/2)" in r.stderr


def test_restarts_run_out():
    r = launcher("--nproc_per_node", "2", "--max_restarts", "1", "--master_port", str(free_port()), SCRIPT,
                 env={"FAIL_RANK": "1"})
    assert r.returncode == 1
    assert len(parsed(r.stdout)) == 4 and "FAILED" in r.stderr


def test_two_nodes_meet_through_c10d_rendezvous():
    endpoint = f"127.0.0.1:{free_port()}"
    args = ("--nnodes", "2", "--nproc_per_node", "2", "--rdzv_backend", "c10d", "--rdzv_endpoint", endpoint,
            "--rdzv_id", "job7", SCRIPT)
    first = launcher(*args, background=True)
    second = launcher(*args)
    out, err = first.communicate(timeout=180)
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    rows = parsed(out + second.stdout)
    assert sorted(int(x["RANK"]) for x in rows) == [0, 1, 2, 3]
    assert all(x["WORLD_SIZE"] == "4" and x["SUM"] == "10" for x in rows)
    assert sorted((x["GROUP_RANK"], x["LOCAL_RANK"]) for x in rows) == [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]


def test_a_node_arriving_at_a_full_job_is_refused():
    args = ("--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}", SCRIPT)
    first = launcher(*args, env={"SLEEP_SECONDS": "4"}, background=True)
    first.stdout.readline()  # its worker runs
    late = launcher(*args)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert late.returncode != 0 and "is full: its 1 nodes have joined" in late.stderr


def test_two_static_nodes_restart_together():
    # Node 1's worker fails at once; node 0's agent (serving the store at the master port)
    # hears of it and restarts its worker too, and both nodes' second attempt succeeds.
    port = str(free_port())
    args = ("--nnodes", "2", "--nproc_per_node", "1", "--master_port", port, "--max_restarts", "1")
    env = {"FAIL_RANK": "1", "FAIL_TIMES": "1", "SLEEP_SECONDS": "2"}
    first = launcher(*args, "--node_rank", "0", SCRIPT, env=env, background=True)
    second = launcher(*args, "--node_rank", "1", SCRIPT, env=env)
    out, err = first.communicate(timeout=180)
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    rows = parsed(out + second.stdout)
    assert [(x["TORCHELASTIC_RESTART_COUNT"], x["RANK"], x["SUM"]) for x in rows] == [
        ("0", "0", "3"), ("0", "1", "3"), ("1", "0", "3"), ("1", "1", "3")]
    assert "restarting (1/1)" in err and "restarting (1/1)" in second.stderr


def test_sigterm_stops_the_workers():
    import signal
    import time
    proc = launcher("--nproc_per_node", "2", "--master_port", str(free_port()), SCRIPT,
                    env={"SLEEP_SECONDS": "60"}, background=True)
    pids, deadline = [], time.monotonic() + 60
    while len(pids) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("OUT "):
            pids.append(int(line.split("PID=")[1]))
    assert len(pids) == 2
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive, f"worker {pid} outlived the launcher"


def test_module_mode_and_option_errors():
    r = launcher("--standalone", "--nproc_per_node", "2", "-m", "distributed_run_script",
                 env={"PYTHONPATH": os.environ.get("PYTHONPATH", "") + os.pathsep + HERE})
    assert r.returncode == 0, r.stderr
    assert [x["SUM"] for x in parsed(r.stdout)] == ["3", "3"]
    bad = launcher("--nnodes", "1:2", SCRIPT)
    assert bad.returncode != 0 and "needs --rdzv_backend c10d" in bad.stderr
    bad = launcher("--nnodes", "3:2", "--standalone", SCRIPT)
    assert bad.returncode != 0 and "must be greater than or equal to the minimum number of nodes (3)" in bad.stderr


def test_elastic_round_starts_with_the_fewest_nodes_after_the_last_call():
    r = launcher("--nnodes", "1:2", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}",
                 "--rdzv_conf", "last_call_timeout=1", SCRIPT)
    assert r.returncode == 0, r.stderr
    rows = parsed(r.stdout)
    assert [(x["RANK"], x["WORLD_SIZE"], x["SUM"]) for x in rows] == [("0", "1", "1")]


def test_elastic_nodes_joining_later_restart_the_group_with_them():
    # The first node runs alone (1 of at most 2) until the second arrives; both then run a
    # group of two. A membership change is not a failure: the restart count stays 0.
    import time
    args = ("--nnodes", "1:2", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}",
            "--rdzv_id", "grow", "--rdzv_conf", "last_call_timeout=0.5", SCRIPT)
    env = {"SLEEP_UNLESS_WORLD": "2"}
    first = launcher(*args, env=env, background=True)
    seen, deadline = "", time.monotonic() + 60
    while "WORLD_SIZE=1" not in seen and time.monotonic() < deadline:
        seen += first.stdout.readline()
    assert "WORLD_SIZE=1" in seen
    second = launcher(*args, env=env)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    rows = [x for x in parsed(seen + out + second.stdout) if x["WORLD_SIZE"] == "2"]
    assert sorted(x["RANK"] for x in rows) == ["0", "1"] and all(x["SUM"] == "3" for x in rows)
    assert all(x["TORCHELASTIC_RESTART_COUNT"] == "0" for x in rows)
    assert "nodes are waiting to join" in err


# ---- tessera.multiprocessing.spawn ----

def _square(i, out_dir):
    with open(os.path.join(out_dir, str(i)), "w") as f:
        f.write(str(i * i))


def _raise_on_one(i):
    if i == 1:
        raise ValueError("spawned failure")


def _exit_three(i):
    if i == 0:
        sys.exit(3)


def test_spawn_runs_every_process(tmp_path):
    assert mp.spawn(_square, args=(str(tmp_path),), nprocs=3) is None
    assert sorted((p.name, p.read_text()) for p in tmp_path.iterdir()) == [("0", "0"), ("1", "1"), ("2", "4")]
    ctx = mp.spawn(_square, args=(str(tmp_path),), nprocs=2, join=False)
    while not ctx.join(timeout=30):
        pass
    assert len(ctx.pids()) == 2


@pytest.mark.parametrize("fn", [_raise_on_one, _exit_three])
def test_spawn_errors_match_torch(fn):
    with pytest.raises(Exception) as ours:
        mp.spawn(fn, nprocs=2)
    with pytest.raises(Exception) as theirs:
        tmp.spawn(fn, nprocs=2)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert ours.value.error_index == theirs.value.error_index
    first_line = lambda e: str(e).strip().splitlines()[0]  # noqa: E731
    assert first_line(ours.value) == first_line(theirs.value)
    if fn is _raise_on_one:
        assert "ValueError: spawned failure" in str(ours.value)
    else:
        assert ours.value.exit_code == theirs.value.exit_code == 3


def test_digits_example_trains_with_ddp_on_two_processes(tmp_path):
    example = os.path.join(HERE, "..", "..", "examples", "train_digits.py")
    common = ["--epochs", "8", "--quiet", "--no-plot", "--out", str(tmp_path)]
    r = launcher("--nproc_per_node", "2", "--master_port", str(free_port()), example, "--ddp", *common)
    assert r.returncode == 0, r.stderr
    finals = [line for line in r.stdout.splitlines() if "final test accuracy" in line]
    assert len(finals) == 1  # rank 0 reports
    ddp_acc = float(re.search(r"final test accuracy ([0-9.]+)", finals[0]).group(1))
    single = subprocess.run([sys.executable, example, *common], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert single.returncode == 0, single.stderr
    single_acc = float(re.search(r"final test accuracy ([0-9.]+)", single.stdout).group(1))
    assert ddp_acc >= single_acc - 0.03 and ddp_acc > 0.9, (ddp_acc, single_acc)
