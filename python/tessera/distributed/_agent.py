"""The launcher's agent (internal; tessera.distributed.run parses the options): rendezvous
of the nodes, the worker processes of this node, the monitor loop that restarts the group
after a failure, and torchrun's failure summary."""
import collections
import dataclasses
import datetime
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from tessera._C._distributed_c10d import TCPStore

_RENDEZVOUS_TIMEOUT = datetime.timedelta(seconds=900)


@dataclasses.dataclass
class LaunchConfig:
    nnodes: int  # the most nodes (MAX of --nnodes MIN:MAX)
    nproc_per_node: int
    node_rank: int
    rdzv_backend: str
    rdzv_endpoint: str
    run_id: str
    max_restarts: int
    monitor_interval: float
    role: str
    master_addr: str
    master_port: int
    log_dir: str
    entrypoint: list
    name: str
    min_nodes: int = 0  # 0: as many as nnodes
    last_call_timeout: float = 30.0
    join_timeout: float = 600.0


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class RendezvousClosedError(RuntimeError):
    """This node arrived after the job had finished."""


class _Rendezvous:
    """Where this node's workers find the others: for each round (a round starts at launch,
    at every restart and when nodes wait to join), this node's rank, the round's node count
    and the master's address. With c10d the first node of a round closes it: at the most
    nodes, or with at least the fewest once last_call_timeout has passed; a node whose
    rank falls outside the closed count waits for the next round."""

    def __init__(self, config):
        self.config = config
        self.store = None
        self.hosting = False
        self.sizes = {}
        self.agent_store = False
        if config.rdzv_backend == "static" and config.nnodes > 1:
            # node 0's agent serves the store at the master port: the agents coordinate
            # restarts through it, and the workers use it too (TORCHELASTIC_USE_AGENT_STORE)
            self.hosting = config.node_rank == 0
            self.store = TCPStore(config.master_addr, config.master_port, None, self.hosting, _RENDEZVOUS_TIMEOUT,
                                  wait_for_workers=False, multi_tenant=True)
            self.agent_store = True
        elif config.rdzv_backend == "c10d":
            host, _, port = config.rdzv_endpoint.rpartition(":")
            host, port = host or "127.0.0.1", int(port or 29400)
            try:  # the first agent on the endpoint's host serves the store; the others are clients
                self.store = TCPStore(host, port, None, True, _RENDEZVOUS_TIMEOUT, wait_for_workers=False)
                self.hosting = True
            except RuntimeError:  # taken, or an address of another machine
                self.store = TCPStore(host, port, None, False, _RENDEZVOUS_TIMEOUT, wait_for_workers=False)
            self.host = host

    def _key(self, round_, name):
        return f"rdzv/{self.config.run_id}/{round_}/{name}"

    def _count(self, round_, name):
        return self.store.add(self._key(round_, name), 0)

    def next_round(self, round_):
        """(round, node_rank, node count, master_addr, master_port); the round is later than
        asked when this node came too late for it."""
        c = self.config
        if self.store is None or self.agent_store:
            self.sizes[round_] = c.nnodes
            return round_, c.node_rank, c.nnodes, c.master_addr, c.master_port
        fewest = c.min_nodes or c.nnodes
        start = time.monotonic()
        while True:
            node_rank = self.store.add(self._key(round_, "joined"), 1) - 1
            if node_rank == 0:
                self.store.set(self._key(round_, "master"), f"{self.host}:{_free_port()}")
                self.store.set(self._key(round_, "open"), "1")  # nodes waiting for this round may join
                self._close(round_, fewest, start)
            size_key = self._key(round_, "size")
            self._wait_for(size_key, start, f"at least {fewest} nodes")
            size = int(self.store.get(size_key))
            if node_rank < size:
                break
            if fewest == c.nnodes:
                raise RuntimeError(f"rendezvous {c.run_id} is full: its {c.nnodes} nodes have joined")
            # Too late for this round: wait until the running nodes open the next one (they
            # restart their workers when they see a node waiting), then join it.
            round_ += 1
            self.store.add(self._key(round_, "waiting"), 1)
            self._wait_for(self._key(round_, "open"), start, "the running nodes to take this node in",
                           leaving=self._key(round_, "left"))
        self.sizes[round_] = size
        addr, _, port = self.store.get(self._key(round_, "master")).decode().rpartition(":")
        return round_, node_rank, size, addr, int(port)

    def _wait_for(self, key, start, what, leaving=None):
        c = self.config
        while not self.store.check([key]):
            if self.store.check([f"rdzv/{c.run_id}/done"]):
                if leaving:
                    self.store.add(leaving, 1)
                raise RendezvousClosedError(f"rendezvous {c.run_id} is closed: the job has finished")
            if time.monotonic() - start > c.join_timeout:
                raise RuntimeError(f"rendezvous {c.run_id} timed out after {c.join_timeout:g} s waiting for {what}")
            time.sleep(0.05)

    def _close(self, round_, fewest, start):
        c = self.config
        enough_since = None
        while True:
            joined = self._count(round_, "joined")
            if joined >= c.nnodes:
                break
            if joined >= fewest:
                enough_since = enough_since or time.monotonic()
                if time.monotonic() - enough_since >= c.last_call_timeout:
                    break
            if time.monotonic() - start > c.join_timeout:
                raise RuntimeError(f"rendezvous {c.run_id} timed out after {c.join_timeout:g} s waiting for at "
                                   f"least {fewest} nodes ({joined} joined)")
            time.sleep(0.05)
        self.store.set(self._key(round_, "size"), str(min(joined, c.nnodes)))

    def nodes_waiting(self, round_):
        """Whether nodes wait to join the next round (elastic scale-up)."""
        try:
            key = self._key(round_ + 1, "waiting")
            return self.store is not None and self.store.check([key]) and self._count(round_ + 1, "waiting") > 0
        except RuntimeError:
            return False

    def request_restart(self, round_):
        if self.store is not None:
            try:
                self.store.set(self._key(round_, "restart"), "1")
            except RuntimeError:
                pass  # the store's host is gone: the other nodes' workers fail on their own

    def restart_requested(self, round_):
        try:
            return self.store is not None and self.store.check([self._key(round_, "restart")])
        except RuntimeError:
            return False  # the store's host is gone; this node's workers decide

    def finish(self, round_, succeeded):
        """Says this node is done; the agent serving the store keeps it up until every node
        of the round has said so, so that no node loses the store while it still watches its
        workers. After success, nodes still waiting to join are told the job is over."""
        if self.store is None:
            return
        try:
            if succeeded:
                self.store.set(f"rdzv/{self.config.run_id}/done", "1")
            self.store.add(self._key(round_, "finished"), 1)
            start = time.monotonic()
            while self.hosting and self._count(round_, "finished") < self.sizes.get(round_, self.config.nnodes):
                if time.monotonic() - start > _RENDEZVOUS_TIMEOUT.total_seconds():
                    return
                time.sleep(0.05)
            # nodes waiting for a next round learn that there is none before the store goes
            start = time.monotonic()
            while (self.hosting and succeeded and time.monotonic() - start < 10 and
                   self._count(round_ + 1, "waiting") > self._count(round_ + 1, "left")):
                time.sleep(0.05)
        except RuntimeError:
            pass


class _Worker:
    """One worker process; its stderr passes through and its tail is kept for the summary."""

    def __init__(self, cmd, env, local_rank, log_path):
        self.local_rank = local_rank
        self.rank = int(env["RANK"])
        self.tail = collections.deque(maxlen=400)
        self.log = open(log_path, "w") if log_path else None
        self.proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
        self.start_time = time.time()
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self):
        for raw in iter(self.proc.stderr.readline, b""):
            sys.stderr.buffer.write(raw)
            sys.stderr.flush()
            line = raw.decode(errors="replace")
            self.tail.append(line)
            if self.log:
                self.log.write(line)
                self.log.flush()

    def traceback(self):
        self.reader.join(timeout=5)
        lines = list(self.tail)
        starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
        if not starts:
            return "<N/A>"
        return "".join(lines[starts[-1]:]).rstrip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        if self.log:
            self.log.close()


def _start_workers(config, node_rank, num_nodes, master_addr, master_port, restart_count, agent_store=False):
    world = num_nodes * config.nproc_per_node
    workers = []
    for local_rank in range(config.nproc_per_node):
        rank = node_rank * config.nproc_per_node + local_rank
        env = dict(os.environ)
        env.update({
            "LOCAL_RANK": str(local_rank), "RANK": str(rank), "GROUP_RANK": str(node_rank),
            "ROLE_RANK": str(rank), "ROLE_NAME": config.role, "LOCAL_WORLD_SIZE": str(config.nproc_per_node),
            "WORLD_SIZE": str(world), "GROUP_WORLD_SIZE": str(num_nodes), "ROLE_WORLD_SIZE": str(world),
            "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
            "TORCHELASTIC_RESTART_COUNT": str(restart_count), "TORCHELASTIC_MAX_RESTARTS": str(config.max_restarts),
            "TORCHELASTIC_RUN_ID": config.run_id, "TORCHELASTIC_USE_AGENT_STORE": str(agent_store),
        })
        log_path = None
        if config.log_dir:
            directory = os.path.join(config.log_dir, f"attempt_{restart_count}", str(local_rank))
            os.makedirs(directory, exist_ok=True)
            log_path = os.path.join(directory, "stderr.log")
        workers.append(_Worker(config.entrypoint, env, local_rank, log_path))
    return workers


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:  # real-time signals have no name in Python
        return f"SIG{number}"


class SignalException(Exception):
    """The launcher got SIGTERM, SIGHUP or SIGQUIT: its workers are stopped, then it exits."""

    def __init__(self, msg, sigval):
        super().__init__(msg)
        self.sigval = sigval


def _raise_on_signal(signum, frame):
    raise SignalException(f"Process {os.getpid()} got signal: {signum}", sigval=signum)


def _failure_entry(index, worker, code):
    started = datetime.datetime.fromtimestamp(worker.start_time).strftime("%Y-%m-%d_%H:%M:%S")
    if code < 0:
        exit_text = f"{code} (pid: {worker.proc.pid})\n  signal    : {-code} ({_signal_name(-code)})"
    else:
        exit_text = f"{code} (pid: {worker.proc.pid})"
    trace = worker.traceback().replace("\n", "\n              ")
    return (f"[{index}]:\n  time      : {started}\n  host      : {socket.getfqdn()}\n"
            f"  rank      : {worker.rank} (local_rank: {worker.local_rank})\n  exitcode  : {exit_text}\n"
            f"  error_file: <N/A>\n  traceback : {trace}")


def _summary(name, failures):
    bar, rule = "=" * 60, "-" * 60
    root, others = failures[0], failures[1:]
    other_text = "\n".join(_failure_entry(i + 1, w, c) for i, (w, c) in enumerate(others)) or "  <NO_OTHER_FAILURES>"
    return (f"{bar}\n{name} FAILED\n{rule}\nFailures:\n{other_text}\n{rule}\nRoot Cause (first observed failure):\n"
            f"{_failure_entry(0, *root)}\n{bar}")


def launch_agent(config):
    """Runs this node's workers to the end; 0 when every worker succeeded, else 1. SIGTERM,
    SIGHUP and SIGQUIT stop the workers first (SignalException), as torchrun's agent does."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, _raise_on_signal)
    rdzv = _Rendezvous(config)
    round_, restarts_left = 0, config.max_restarts
    workers = []
    try:
        while True:
            round_, node_rank, num_nodes, master_addr, master_port = rdzv.next_round(round_)
            # TORCHELASTIC_RESTART_COUNT counts failures only, as torch's: a scale-up is not one
            workers = _start_workers(config, node_rank, num_nodes, master_addr, master_port,
                                     config.max_restarts - restarts_left, rdzv.agent_store)
            failures, peer_restart, scale_up = [], False, False
            while True:
                time.sleep(min(config.monitor_interval, 0.5))
                codes = [w.proc.poll() for w in workers]
                failures = [(w, c) for w, c in zip(workers, codes) if c not in (None, 0)]
                if all(c == 0 for c in codes):
                    break
                if num_nodes < config.nnodes and rdzv.nodes_waiting(round_):
                    scale_up = True  # (workers failing as peers stop for it are part of the change)
                    break
                if failures:
                    break
                if rdzv.restart_requested(round_):
                    peer_restart = True
                    break
            if not failures and not peer_restart and not scale_up:
                rdzv.finish(round_, True)
                return 0
            if failures and not scale_up:
                rdzv.request_restart(round_)
            for w in workers:
                w.stop()
            if scale_up:
                print("[tessera-run] nodes are waiting to join; restarting the workers with them", file=sys.stderr)
                round_ += 1
                continue
            if restarts_left > 0:
                restarts_left -= 1
                round_ += 1
                print(f"[tessera-run] worker group failed; restarting ({config.max_restarts - restarts_left}/"
                      f"{config.max_restarts})", file=sys.stderr)
                continue
            if failures:
                print(_summary(config.name, failures), file=sys.stderr)
            rdzv.finish(round_, False)
            return 1
    finally:
        for w in workers:
            w.stop()
