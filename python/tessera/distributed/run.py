"""tessera.distributed.run (``python -m tessera.distributed.run`` or ``tessera-run``): torchrun
for tessera. Starts --nproc_per_node workers on this node with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set for env:// init, restarts the whole group
up to --max_restarts times when a worker fails, and otherwise exits 1 after printing which
rank failed, its exit code and its traceback.

Nodes meet by --rdzv_backend static (--node_rank, --master_addr, --master_port) or c10d
(--rdzv_endpoint host:port, where node ranks are handed out in order of arrival). With c10d,
--nnodes MIN:MAX is elastic: a round starts with MAX nodes, or with at least MIN once
--rdzv_conf last_call_timeout (seconds, default 30) has passed; a node that arrives later
waits, and the running nodes restart their workers to take it in (not counted against
--max_restarts)."""
import argparse
import os
import sys

from ._agent import LaunchConfig, launch_agent

__all__ = ["get_args_parser", "parse_args", "main", "run", "config_from_args"]


def get_args_parser():
    p = argparse.ArgumentParser(description="Tessera distributed launcher (torchrun's options)")
    p.add_argument("--nnodes", type=str, default="1:1", help="Number of nodes, or MIN:MAX (elastic, with c10d).")
    p.add_argument("--nproc_per_node", "--nproc-per-node", type=str, default="1",
                   help="Workers per node: a number, or 'cpu' / 'auto' (the CPU count).")
    p.add_argument("--rdzv_backend", "--rdzv-backend", type=str, default="static", help="static or c10d.")
    p.add_argument("--rdzv_endpoint", "--rdzv-endpoint", type=str, default="",
                   help="host:port of the c10d rendezvous store.")
    p.add_argument("--rdzv_id", "--rdzv-id", type=str, default="none", help="The job's id.")
    p.add_argument("--rdzv_conf", "--rdzv-conf", type=str, default="",
                   help="key=value,...: last_call_timeout and join_timeout (seconds) are used.")
    p.add_argument("--standalone", action="store_true",
                   help="One node: c10d rendezvous on a free local port.")
    p.add_argument("--max_restarts", "--max-restarts", type=int, default=0,
                   help="Times the worker group is restarted after a failure.")
    p.add_argument("--monitor_interval", "--monitor-interval", type=float, default=5,
                   help="Seconds between checks of the workers.")
    p.add_argument("--start_method", "--start-method", type=str, default="spawn",
                   choices=["spawn", "fork", "forkserver"], help="Accepted for torchrun's sake (workers are "
                   "always new processes).")
    p.add_argument("--role", type=str, default="default", help="The workers' role.")
    p.add_argument("-m", "--module", action="store_true", help="Run training_script as a module (python -m).")
    p.add_argument("--no_python", "--no-python", action="store_true",
                   help="Run training_script as a program, not with the interpreter.")
    p.add_argument("--run_path", "--run-path", action="store_true", help="Run the script with runpy.run_path.")
    p.add_argument("--log_dir", "--log-dir", type=str, default=None, help="Where to keep each worker's output.")
    p.add_argument("-r", "--redirects", type=str, default="0", help="Accepted (output always passes through).")
    p.add_argument("-t", "--tee", type=str, default="0", help="Accepted (output always passes through).")
    p.add_argument("--node_rank", "--node-rank", type=int, default=0, help="This node's rank (static).")
    p.add_argument("--master_addr", "--master-addr", default="127.0.0.1", type=str,
                   help="Address of rank 0's node (static).")
    p.add_argument("--master_port", "--master-port", default=29500, type=int,
                   help="Port of the store on rank 0's node (static).")
    p.add_argument("training_script", type=str, help="The program each worker runs.")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nnodes(text):
    parts = text.split(":")
    if len(parts) == 1:
        return int(parts[0]), int(parts[0])
    if len(parts) == 2:
        return int(parts[0]), int(parts[1])
    raise RuntimeError(f'nnodes={text} is not in "MIN:MAX" format')


def _rdzv_conf(text):
    conf = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"The rendezvous configuration string must be in format <key1>=<value1>,...,"
                             f"<keyN>=<valueN>. Got: {text}")
        conf[key.strip()] = value.strip()
    return conf


def _nproc(text):
    if text in ("cpu", "auto"):
        return os.cpu_count() or 1
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {text}") from None


def config_from_args(args):
    min_nodes, max_nodes = _nnodes(args.nnodes)
    if min_nodes < 1:
        raise ValueError(f"The minimum number of nodes ({min_nodes}) must be greater than zero.")
    if max_nodes < min_nodes:
        raise ValueError(f"The maximum number of nodes ({max_nodes}) must be greater than or equal to the "
                         f"minimum number of nodes ({min_nodes}).")
    conf = _rdzv_conf(args.rdzv_conf)
    nproc = _nproc(args.nproc_per_node)
    if nproc < 1:
        raise ValueError(f"--nproc_per_node must be positive, got {nproc}")
    backend, endpoint = args.rdzv_backend, args.rdzv_endpoint
    if args.standalone:
        backend, endpoint = "c10d", "127.0.0.1:0"
    if backend not in ("static", "c10d"):
        raise ValueError(f"unsupported --rdzv_backend {backend!r} (static or c10d)")
    if backend == "c10d" and not endpoint:
        raise ValueError("--rdzv_backend c10d needs --rdzv_endpoint host:port")
    if backend == "static" and min_nodes != max_nodes:
        raise ValueError("--nnodes MIN:MAX (elastic) needs --rdzv_backend c10d: a static rendezvous has a fixed "
                         "number of nodes")
    if "OMP_NUM_THREADS" not in os.environ and nproc > 1:
        print("*****************************************\n"
              "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
              "system being overloaded, please further tune the variable for optimal performance in your "
              "application as needed. \n*****************************************", file=sys.stderr)
        os.environ["OMP_NUM_THREADS"] = "1"
    if args.module and args.no_python:
        raise ValueError("Don't use both the '--no_python' flag and the '--module' flag at the same time.")
    if args.no_python:
        cmd = [args.training_script]
    elif args.module:
        cmd = [sys.executable, "-u", "-m", args.training_script]
    else:
        cmd = [sys.executable, "-u", args.training_script]
    return LaunchConfig(nnodes=max_nodes, min_nodes=min_nodes, last_call_timeout=float(conf.get("last_call_timeout",
                                                                                                   30)),
                        join_timeout=float(conf.get("join_timeout", 600)), nproc_per_node=nproc,
                        node_rank=args.node_rank, rdzv_backend=backend, rdzv_endpoint=endpoint, run_id=args.rdzv_id, max_restarts=args.max_restarts,
                        monitor_interval=args.monitor_interval, role=args.role, master_addr=args.master_addr,
                        master_port=args.master_port, log_dir=args.log_dir,
                        entrypoint=cmd + list(args.training_script_args), name=args.training_script)


def run(args):
    return launch_agent(config_from_args(args))


def main(args=None):
    from ._agent import SignalException
    try:
        sys.exit(run(parse_args(sys.argv[1:] if args is None else args)))
    except SignalException as e:  # the workers are stopped already
        print(f"[tessera-run] {e}; workers stopped", file=sys.stderr)
        sys.exit(128 + e.sigval)


if __name__ == "__main__":
    main()
