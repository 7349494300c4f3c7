"""tessera.profiler: torch.profiler's API over tessera's operator profiler.

    with tessera.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                                  schedule=tessera.profiler.schedule(wait=1, warmup=1, active=2),
                                  on_trace_ready=tessera.profiler.tensorboard_trace_handler("./log")) as p:
        for batch in data:
            train_step(batch)
            p.step()

The events are tessera.autograd.profiler's (CPU operators and record_function blocks);
export_chrome_trace writes the Trace Event Format that chrome://tracing, Perfetto and
TensorBoard's profile plugin open.
"""
from ..autograd.profiler import record_function  # noqa: F401
from ..autograd._device_type import DeviceType  # noqa: F401
from .profiler import (ProfilerAction, ProfilerActivity, _KinetoProfile, kineto_available, profile,  # noqa: F401
                       schedule, supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function"]
