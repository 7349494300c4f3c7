"""The program test_distributed_run.py launches with tessera-run: joins the group by env://,
all-reduces rank + 1, prints what the launcher set, sleeps SLEEP_SECONDS if given, and fails
on request (FAIL_RANK, for the first FAIL_TIMES attempts); with SLEEP_UNLESS_WORLD it waits in
a group of any other size."""
import os
import time

import tessera
import tessera.distributed as dist

dist.init_process_group("gloo")
t = tessera.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RESTART_COUNT",
        "MASTER_ADDR"]
line = "OUT " + " ".join(f"{k}={os.environ[k]}" for k in keys) + f" SUM={t.item():g} PID={os.getpid()}\n"
os.write(1, line.encode())  # one write: the workers share the launcher's stdout
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
if os.environ.get("FAIL_RANK") == os.environ["RANK"] and attempt < int(os.environ.get("FAIL_TIMES", "99")):
    raise ValueError(f"boom from rank {os.environ['RANK']}")
if os.environ.get("SLEEP_SECONDS"):
    time.sleep(float(os.environ["SLEEP_SECONDS"]))
if os.environ.get("SLEEP_UNLESS_WORLD", os.environ["WORLD_SIZE"]) != os.environ["WORLD_SIZE"]:
    time.sleep(120)  # an elastic test's first, smaller round: the launcher restarts it when nodes join
dist.destroy_process_group()
