"""The profiler's events and their summaries, as torch.autograd.profiler_util's:
FunctionEvent (one timed range: an operator call or a record_function block, with its
parent and children on its thread), FunctionEventAvg (the events of one key added up),
EventList (key_averages, table, export_chrome_trace, total_average)."""
from __future__ import annotations

import json
import os
from collections import OrderedDict

from ._device_type import DeviceType

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_percent(part, total):
    return f"{(part * 100.0 / total if total else 0.0):.2f}%"


class _TimeTotals:
    """The per-device totals an event reports; tessera records CPU time only, so the
    CUDA figures are zero (there is no CUDA activity to record)."""

    cuda_time_total = 0
    self_cuda_time_total = 0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0
    cpu_memory_usage = 0
    self_cpu_memory_usage = 0
    flops = 0

    @property
    def cuda_time(self):
        return 0.0


class FunctionEvent(_TimeTotals):
    """One recorded range. Times are in microseconds from the session's clock."""

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None, input_shapes=None, stack=None,
                 scope=0, cpu_memory_usage=0, cuda_memory_usage=0, is_async=False, is_remote=False,
                 sequence_nr=-1, node_id=-1, device_type=DeviceType.CPU, device_index=0, is_legacy=False,
                 flops=None, trace_name=None):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.input_types = None
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.is_legacy = is_legacy
        self.is_user_annotation = False

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count

    def append_cpu_child(self, child):
        assert isinstance(child, FunctionEvent) and child.device_type == DeviceType.CPU
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time={_format_time(self.cpu_time)} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} thread={self.thread}>")


class FunctionEventAvg(_TimeTotals):
    """The events that share a key (a name, or a name and input shapes), added up."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
        assert isinstance(other, (FunctionEvent, FunctionEventAvg)) and other.key == self.key
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.count += other.count
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of FunctionEvents (or their averages) with torch's summaries."""

    def __init__(self, *args, **kwargs):
        use_cuda = kwargs.pop("use_cuda", False)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_cuda = use_cuda
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self):
        """Links each event to the innermost event of its thread that encloses it."""
        by_thread = OrderedDict()
        for event in self:
            by_thread.setdefault(event.thread, []).append(event)
        for events in by_thread.values():
            open_events = []
            for event in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events and open_events[-1].time_range.end <= event.time_range.start:
                    open_events.pop()
                if open_events and event.time_range.end <= open_events[-1].time_range.end:
                    event.set_cpu_parent(open_events[-1])
                    open_events[-1].append_cpu_child(event)
                open_events.append(event)
        self._tree_built = True

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        """One FunctionEventAvg per key (and per input shapes when group_by_input_shapes),
        in the order the keys first occur."""
        group_by_input_shape = group_by_input_shapes
        if group_by_stack_n:
            raise NotImplementedError("key_averages(group_by_stack_n=...) needs with_stack=True, which tessera's "
                                      "profiler does not record yet")
        averages = OrderedDict()
        for event in self:
            key = (event.key, str(event.input_shapes)) if group_by_input_shape else event.key
            averages.setdefault(key, FunctionEventAvg()).add(event)
        result = EventList(averages.values(), use_cuda=self._use_cuda, profile_memory=self._profile_memory,
                           with_flops=self._with_flops)
        if not group_by_input_shape:
            for avg in result:
                avg.input_shapes = ""
        for avg in result:
            avg.stack = []
        return result

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
            total.count += event.count
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The events as torch prints them: Name, Self CPU %, Self CPU, CPU total %, CPU
        total, CPU time avg, # of Calls (and Input Shapes when recorded), largest `sort_by`
        first, then "Self CPU time total"."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Writes the events in the Trace Event Format (JSON object form) that
        chrome://tracing and Perfetto open: one complete ("X") event per range."""
        _write_trace(self, path)


def _trace_events(events):
    pid = os.getpid()
    out = []
    for event in events:
        args = {}
        if event.input_shapes:
            args["Input Dims"] = event.input_shapes
        if getattr(event, "input_types", None):
            args["Input type"] = event.input_types
        out.append({"ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
                    "name": event.trace_name, "pid": pid, "tid": event.thread,
                    "ts": event.time_range.start, "dur": event.time_range.elapsed_us(), "args": args})
    return out


def _write_trace(events, path, metadata=None):
    trace = {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": _trace_events(events)}
    if metadata:
        trace.update(metadata)
    opener = open
    if str(path).endswith(".gz"):
        import gzip
        opener = gzip.open
    with opener(path, "wt") as f:
        json.dump(trace, f)


def _build_table(events, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                 top_level_events_only):
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in rows)
    name_width = max(len(e.key) for e in rows) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in rows) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    column = 12
    spacing = "  "
    widths = [name_width] + [column] * 6 + ([shapes_width] if has_shapes else [])
    titles = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    if has_shapes:
        titles.append("Input Shapes")

    def line(cells):
        return "".join(f"{cell:>{w}}" + spacing for cell, w in zip(cells, widths))

    def name_of(e):
        # torch's rule: a name within three characters of the limit is cut to make room
        if max_name_column_width is not None and len(e.key) >= max_name_column_width - 3:
            return e.key[:max_name_column_width - 3] + "..."
        return e.key

    separator = "".join("-" * w + spacing for w in widths)
    rule = "=" * (len(separator) - len(spacing))
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += [rule, header]
    if top_level_events_only:
        out += [rule, "This report only display top-level ops statistics"]
    out += [separator, line(titles), separator]
    shown = 0
    for e in rows:
        if top_level_events_only and e.cpu_parent is not None:
            continue
        if row_limit is not None and shown == row_limit:
            break
        cells = [name_of(e), _format_percent(e.self_cpu_time_total, total),
                 _format_time(e.self_cpu_time_total), _format_percent(e.cpu_time_total, total),
                 _format_time(e.cpu_time_total), _format_time(e.cpu_time), e.count]
        if has_shapes:
            cells.append(str(e.input_shapes)[:shapes_width])
        out.append(line(cells))
        shown += 1
    out += [separator, f"Self CPU time total: {_format_time(total)}", ""]
    return "\n".join(out)


def _events_from_session(raw, record_shapes):
    """FunctionEvents (tree built) from _C._profiler_disable()'s tuples; times from the
    session's first event."""
    origin = min((r[1] for r in raw), default=0)
    events = EventList()
    for i, (name, start, end, thread, seq, user, shapes, dtypes) in enumerate(raw):
        e = FunctionEvent(id=i + 1, name=name, thread=thread, start_us=(start - origin) / 1000.0,
                          end_us=(end - origin) / 1000.0, input_shapes=shapes if record_shapes else None,
                          sequence_nr=seq)
        e.input_types = dtypes if record_shapes else None
        e.is_user_annotation = user
        events.append(e)
    events._build_tree()
    return events
