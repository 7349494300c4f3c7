"""The profiler (tessera.profiler, tessera.autograd.profiler) against torch 1.13: the
operator calls it records and how they nest, input shapes, key_averages and the table (the
same text for the same events), schedules and on_trace_ready, and a chrome trace that is
valid Trace Event Format JSON.

Debian's torch 1.13 is built without Kineto, so its export_chrome_trace writes the JSON
array form; tessera writes the object form current PyTorch writes ({"traceEvents": ...}).
Both are the Trace Event Format that chrome://tracing and Perfetto open.
"""
import gzip
import json
import os
import re

import pytest
import torch
import torch.autograd.profiler_util as torch_util

import tessera
import tessera.autograd.profiler_util as tessera_util

LIBS = (torch, tessera)


def _profile(lib, fn, **kwargs):
    with lib.autograd.profiler.profile(**kwargs) as prof:
        fn(lib)
    return prof


def _top_level(prof, ignore=("aten::zeros", "aten::empty", "aten::zero_", "aten::fill_")):
    # torch 1.13's legacy profiler opens with a zeros() of its own, and its whole-microsecond
    # times can leave a short child (an empty or fill_) beside its parent
    return [e.name for e in prof.function_events if e.cpu_parent is None and e.name not in ignore]


PROGRAMS = {
    "arith": lambda T: (T.ones(4, 4).add(T.ones(4, 4)).mul(2).sum()),
    "mm": lambda T: T.mm(T.ones(3, 4), T.ones(4, 5)),
    "inplace": lambda T: T.zeros(3).add_(1),
    "softmax": lambda T: T.softmax(T.ones(2, 3), dim=1).neg_(),
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_records_the_calls_torch_records(program):
    top = _top_level(_profile(tessera, PROGRAMS[program]))
    # torch 1.13's tree is built from whole-microsecond times, which sometimes put a child
    # (softmax's _softmax) beside its parent: its events in start order are the reference
    # (and, run after run, it may show a call twice): compare the calls in order of first
    # appearance
    torch_events = [e.name for e in _profile(torch, PROGRAMS[program]).function_events]
    assert list(dict.fromkeys(name for name in torch_events if name in set(top))) == list(dict.fromkeys(top))


def test_nesting_and_times():
    for lib in LIBS:
        x = lib.ones(8, 8)
        with lib.autograd.profiler.profile() as prof:
            with lib.autograd.profiler.record_function("block"):
                y = x.add(x)
                z = y.matmul(y)
        block = next(e for e in prof.function_events if e.name == "block")
        assert block.cpu_parent is None
        # (torch 1.13's record_function makes an empty tensor as its handle)
        children = [c.name for c in block.cpu_children if c.name != "aten::empty"]
        assert children[:2] == ["aten::add", "aten::matmul"]
        matmul = next(e for e in prof.function_events if e.name == "aten::matmul")
        assert matmul.cpu_parent is block and "aten::mm" in [c.name for c in matmul.cpu_children]
        for e in prof.function_events:
            assert e.time_range.start <= e.time_range.end
            assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9
            assert sum(c.cpu_time_total for c in e.cpu_children) <= e.cpu_time_total + 1e-6
            for c in e.cpu_children:
                assert e.time_range.start <= c.time_range.start and c.time_range.end <= e.time_range.end
        assert z.shape == (8, 8)


def test_input_shapes_as_torch():
    shapes = []
    for lib in LIBS:
        prof = _profile(lib, lambda T: T.ones(4, 4).add(T.ones(4, 1), alpha=2).sum(dim=0), record_shapes=True)
        shapes.append([(e.name, e.input_shapes) for e in prof.function_events
                       if e.name in ("aten::add", "aten::sum")])
    assert shapes[0] == shapes[1] == [("aten::add", [[4, 4], [4, 1], []]), ("aten::sum", [[4, 4], [], [], []])]


def test_key_averages_counts_and_grouping():
    results = []
    for lib in LIBS:
        def run(T):
            a, b = T.ones(2, 2), T.ones(3)
            for _ in range(3):
                a.add(a)
            b.add(b)
            a.mul(a)
        prof = _profile(lib, run, record_shapes=True)
        avg = {e.key: e.count for e in prof.key_averages() if e.key in ("aten::add", "aten::mul")}
        grouped = sorted((e.key, str(e.input_shapes), e.count) for e in prof.key_averages(group_by_input_shape=True)
                         if e.key == "aten::add")
        total = prof.key_averages().total_average()
        assert total.count == len(prof.function_events)
        results.append((avg, grouped))
    assert results[0] == results[1]
    assert results[1] == ({"aten::add": 4, "aten::mul": 1},
                          [("aten::add", "[[2, 2], [2, 2], []]", 3), ("aten::add", "[[3], [3], []]", 1)])


def _synthetic(util):
    """The same events in either library's FunctionEvent: a block with two calls, one of
    which has a child, and a second thread."""
    def make(**kw):
        return util.FunctionEvent(stack=[], **kw)
    events = [
        make(id=1, name="block", thread=1, start_us=0, end_us=1000),
        make(id=2, name="aten::matmul", thread=1, start_us=10, end_us=610, input_shapes=[[64, 64], [64, 64]]),
        make(id=3, name="aten::mm", thread=1, start_us=20, end_us=600, input_shapes=[[64, 64], [64, 64]]),
        make(id=4, name="aten::relu", thread=1, start_us=620, end_us=900, input_shapes=[[64, 64]]),
        make(id=5, name="aten::relu", thread=2, start_us=5, end_us=45, input_shapes=[[8]]),
        make(id=6, name="a_rather_long_operator_name_that_needs_more_room_than_the_name_column",
             thread=2, start_us=50, end_us=2050, input_shapes=[]),
    ]
    lst = util.EventList(events)
    lst._build_tree()
    return lst


@pytest.mark.parametrize("kwargs", [{}, {"sort_by": "cpu_time_total"}, {"sort_by": "self_cpu_time_total",
                                                                        "row_limit": 3},
                                    {"top_level_events_only": True}, {"header": "My profile"},
                                    {"max_name_column_width": 20, "max_shapes_column_width": 12}])
def test_table_text_is_torchs(kwargs):
    # the same events give the same text, line for line
    assert tessera_util.EventList.table(_synthetic(tessera_util), **kwargs) == \
        torch_util.EventList.table(_synthetic(torch_util), **kwargs)


@pytest.mark.parametrize("group", [False, True])
def test_key_averages_table_is_torchs(group):
    t = _synthetic(torch_util).key_averages(group_by_input_shapes=group)
    s = _synthetic(tessera_util).key_averages(group_by_input_shapes=group)
    assert [(e.key, e.count, e.cpu_time_total, e.self_cpu_time_total, e.input_shapes) for e in s] == \
           [(e.key, e.count, e.cpu_time_total, e.self_cpu_time_total, e.input_shapes) for e in t]
    assert s.table(sort_by="self_cpu_time_total") == t.table(sort_by="self_cpu_time_total")


def test_tree_is_torchs():
    t, s = _synthetic(torch_util), _synthetic(tessera_util)
    assert [(e.id, e.cpu_parent.id if e.cpu_parent else None, [c.id for c in e.cpu_children]) for e in s] == \
           [(e.id, e.cpu_parent.id if e.cpu_parent else None, [c.id for c in e.cpu_children]) for e in t]
    assert s.self_cpu_time_total == t.self_cpu_time_total


def _check_trace_event_format(trace):
    """The Trace Event Format's rules for complete events: each has ph "X", a name, numeric
    ts and non-negative dur (microseconds), pid and tid; on one thread, events nest."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    assert trace.get("displayTimeUnit", "ms") in ("ms", "ns")
    by_thread = {}
    for ev in trace["traceEvents"]:
        assert ev["ph"] == "X" and isinstance(ev["name"], str) and ev["name"]
        assert isinstance(ev["ts"], (int, float)) and isinstance(ev["dur"], (int, float)) and ev["dur"] >= 0
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        assert isinstance(ev.get("args", {}), dict) and ev["cat"] in ("cpu_op", "user_annotation")
        by_thread.setdefault((ev["pid"], ev["tid"]), []).append(ev)
    for events in by_thread.values():
        stack = []
        for ev in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= ev["ts"]:
                stack.pop()
            if stack:
                assert ev["ts"] + ev["dur"] <= stack[-1]["ts"] + stack[-1]["dur"] + 1e-6
            stack.append(ev)


def test_export_chrome_trace(tmp_path):
    x = tessera.ones(16, 16, requires_grad=True)
    with tessera.profiler.profile(record_shapes=True) as prof:
        with tessera.profiler.record_function("forward"):
            loss = (x @ x).relu().sum()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    _check_trace_event_format(trace)
    names = [ev["name"] for ev in trace["traceEvents"]]
    assert "forward" in names and "aten::mm" in names and "aten::relu" in names
    fwd = next(ev for ev in trace["traceEvents"] if ev["name"] == "forward")
    assert fwd["cat"] == "user_annotation"
    mm = next(ev for ev in trace["traceEvents"] if ev["name"] == "aten::mm")
    assert mm["args"]["Input Dims"] == [[16, 16], [16, 16]] and mm["args"]["Input type"] == ["float", "float"]
    # backward's operators are recorded too (the engine runs on the calling thread)
    assert names.count("aten::mm") >= 2


def test_schedule_matches_torchs():
    for kw in ({"wait": 1, "warmup": 1, "active": 2}, {"wait": 0, "warmup": 2, "active": 1, "repeat": 2},
               {"wait": 2, "warmup": 1, "active": 3, "repeat": 1, "skip_first": 3}):
        t, s = torch.profiler.schedule(**kw), tessera.profiler.schedule(**kw)
        assert [s(i).name for i in range(30)] == [t(i).name for i in range(30)]


def test_scheduled_steps_and_on_trace_ready():
    # the same traces at the same steps as torch 1.13; each holds its steps' ProfilerStep#N
    # ranges, as current PyTorch's (1.13's legacy recorder leaves them out)
    results = []
    for lib in LIBS:
        traces = []

        def ready(prof):
            traces.append(sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep#")}))
        x = lib.ones(4)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  schedule=lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                  on_trace_ready=ready) as prof:
            for _ in range(10):
                x.add(1)
                prof.step()
        results.append(traces)
    assert len(results[0]) == len(results[1]) == 2
    assert results[1] == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]


def test_tensorboard_trace_handler(tmp_path):
    for use_gzip in (False, True):
        out = tmp_path / f"gz{use_gzip}"
        with tessera.profiler.profile(on_trace_ready=tessera.profiler.tensorboard_trace_handler(
                str(out), worker_name="worker0", use_gzip=use_gzip)):
            tessera.ones(3).mul(2)
        (name,) = os.listdir(out)
        suffix = r"\.pt\.trace\.json" + (r"\.gz" if use_gzip else "")
        assert re.fullmatch(r"worker0\.\d+" + suffix, name)
        opener = gzip.open if use_gzip else open
        with opener(out / name, "rt") as f:
            _check_trace_event_format(json.load(f))


def test_profile_api_and_errors():
    p = tessera.profiler
    assert p.supported_activities() == {p.ProfilerActivity.CPU} and not p.kineto_available()
    assert [a.name for a in p.ProfilerAction] == [a.name for a in torch.profiler.ProfilerAction]
    with tessera.autograd.profiler.profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with tessera.autograd.profiler.profile():
                pass
    assert not tessera._C._profiler_enabled()
    with pytest.raises(NotImplementedError, match="profile_memory"):
        tessera.profiler.profile(profile_memory=True)
    with pytest.raises(NotImplementedError, match="with_stack"):
        tessera.autograd.profiler.profile(with_stack=True)
    prof = tessera.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="didn't finish"):
        prof.table()
    with tessera.autograd.profiler.profile(enabled=False) as off:
        tessera.ones(2)
    assert off.enabled is False
    # record_function as a decorator, and with no profiler running (a no-op)
    @tessera.profiler.record_function("decorated")
    def work():
        return tessera.ones(2).neg()
    assert work().tolist() == [-1.0, -1.0]
    with tessera.autograd.profiler.profile() as prof:
        work()
    assert [e.name for e in prof.function_events if e.cpu_parent is None][:1] == ["decorated"]


def test_only_the_profiling_thread_is_recorded():
    import threading
    done = []
    with tessera.autograd.profiler.profile() as prof:
        t = threading.Thread(target=lambda: done.append(tessera.ones(5).neg()))
        t.start()
        t.join()
        tessera.ones(1).exp()
    assert done and {e.thread for e in prof.function_events} == {prof.function_events[0].thread}
    assert "aten::neg" not in [e.name for e in prof.function_events]
