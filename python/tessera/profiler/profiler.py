"""torch.profiler.profile and its helpers (schedule, tensorboard_trace_handler,
ProfilerAction, ProfilerActivity) over tessera.autograd.profiler's recorder."""
from __future__ import annotations

import enum
import json
import os
import socket
import time
import warnings

from .. import _C
from ..autograd.profiler import _refuse_unrecorded
from ..autograd.profiler_util import EventList, _events_from_session, _write_trace

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler", "kineto_available"]


class ProfilerActivity(enum.IntEnum):
    """What a profile records: CPU operators (tessera records these) or CUDA kernels."""

    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities this build can record: the CPU's (no CUDA device here)."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """False: tessera's profiler is its own recorder, not PyTorch's Kineto library."""
    return False


class ProfilerAction(enum.Enum):
    """What a profile does during one step: nothing, warm up, record, or record and then
    hand the trace to on_trace_ready."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """The action for each step number: skip_first steps of nothing, then cycles of `wait`
    idle, `warmup` warm-up and `active` recorded steps (the last one saved), `repeat` times
    (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError("step must be non-negative")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each trace to dir_name as
    `<worker_name>.<milliseconds>.pt.trace.json[.gz]`, the files TensorBoard's profile
    plugin reads (worker_name defaults to `<hostname>_<pid>`)."""
    def handler(prof):
        nonlocal worker_name
        os.makedirs(dir_name, exist_ok=True)
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{int(time.time() * 1000)}.pt.trace.json"
        if use_gzip:
            name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


class _KinetoProfile:
    """Records between start() and stop(); the base of profile (no schedule)."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None):
        _refuse_unrecorded(profile_memory, with_stack, with_flops, with_modules)
        self.activities = set(activities) if activities else supported_activities()
        unknown = [a for a in self.activities if not isinstance(a, ProfilerActivity)]
        if unknown:
            raise TypeError(f"activities must be ProfilerActivity members, got {unknown}")
        if ProfilerActivity.CUDA in self.activities:
            warnings.warn("CUDA is not available: the profile records CPU activity only")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.profiler = None
        self._events = None
        self._metadata = {}
        self._recording = False

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        pass

    def start_trace(self):
        if ProfilerActivity.CPU in self.activities:
            _C._profiler_enable(self.record_shapes)
            self._recording = True

    def stop_trace(self):
        if self._recording:
            self._recording = False
            self._events = _events_from_session(_C._profiler_disable(), self.record_shapes)
        else:
            self._events = EventList()

    def events(self):
        """The last recorded events (an EventList of FunctionEvents)."""
        if self._events is None:
            raise AssertionError("no trace has been recorded yet")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        _write_trace(self.events(), path, {"traceName": str(path), **self._metadata})

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise NotImplementedError("export_stacks needs with_stack=True, which tessera's profiler does not record yet")

    def add_metadata(self, key, value):
        """A string entry in the exported trace's top level."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value):
        """A JSON entry (given as JSON text) in the exported trace's top level."""
        self._metadata[key] = json.loads(value)


class profile(_KinetoProfile):
    """torch.profiler.profile: records the block, or with a schedule the steps it selects
    (advance with step()), handing each finished trace to on_trace_ready."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        if use_cuda is not None:
            warnings.warn("use_cuda is deprecated, use activities argument instead")
            activities = set(activities or supported_activities())
            if use_cuda:
                activities.add(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config)
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_range = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Ends the current step and starts the next, as the schedule directs."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps and self._recording:
            self._step_range = _C._record_function_enter(f"ProfilerStep#{self.step_num}")

    def _close_step(self):
        if self._step_range is not None:
            _C._record_function_exit(self._step_range)
            self._step_range = None

    def _transit(self, previous, current):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous in recording and (current not in recording or previous == ProfilerAction.RECORD_AND_SAVE):
            self.stop_trace()
            if self.on_trace_ready:
                self.on_trace_ready(self)
        if current in recording and not self._recording:
            self.start_trace()
