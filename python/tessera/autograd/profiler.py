"""tessera.autograd.profiler: the operator profiler's context manager (profile) and
record_function, as torch.autograd.profiler's.

    with tessera.autograd.profiler.profile(record_shapes=True) as prof:
        with tessera.autograd.profiler.record_function("block"):
            y = model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

Every operator call on the profiling thread (backward's included) becomes a
FunctionEvent, nested under the calls and blocks that enclose it. CPU time only: tessera
has no CUDA activity to record, and memory, stacks, FLOPs and modules are not recorded
yet (asking for them is a NotImplementedError).
"""
from __future__ import annotations

import contextlib
import functools

from .. import _C
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, _events_from_session  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


def _refuse_unrecorded(profile_memory=False, with_stack=False, with_flops=False, with_modules=False):
    for flag, name in ((profile_memory, "profile_memory"), (with_stack, "with_stack"), (with_flops, "with_flops"),
                       (with_modules, "with_modules")):
        if flag:
            raise NotImplementedError(f"the profiler does not record {name} yet: only CPU time and input shapes")


class profile:
    """Profiles the operators the calling thread runs while the block runs.

    enabled=False makes it a no-op; use_cuda asks for CUDA timing, which tessera (no CUDA
    device) cannot give: a warning, then CPU time as usual."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False, profile_memory=False,
                 with_stack=False, with_modules=False, use_kineto=False, use_cpu=True, experimental_config=None):
        self.enabled = enabled
        if not enabled:
            return
        _refuse_unrecorded(profile_memory, with_stack, with_flops, with_modules)
        if not use_cpu:
            raise NotImplementedError("the profiler records CPU operators only: use_cpu=False leaves nothing to record")
        if use_cuda:
            import warnings
            warnings.warn("CUDA is not available, disabling CUDA profiling")
        self.use_cuda = False
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.entered = False
        self.function_events = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        _C._profiler_enable(self.record_shapes)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self.function_events = _events_from_session(_C._profiler_disable(), self.record_shapes)
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __repr__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else str(self.function_events)


class record_function(contextlib.ContextDecorator):
    """Labels a block (or, as a decorator, a function) in the profile: its time and the
    operators it runs appear under `name`. Costs one call when no profiler runs."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._handle = None

    def __enter__(self):
        self._handle = _C._record_function_enter(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self.run_callbacks_on_exit and self._handle is not None:
            _C._record_function_exit(self._handle)
            self._handle = None
        return False

    def _call_end_callbacks_on_future(self, fut):
        raise NotImplementedError("record_function on futures needs torch.futures, which tessera does not have")


def _wrap_for_profiling(fn, name):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with record_function(name):
            return fn(*args, **kwargs)
    return wrapper
