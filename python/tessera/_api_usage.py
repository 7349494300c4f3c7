"""torch._C's API-usage hooks, which libraries call as they start (torchvision logs every
model it builds): _log_api_usage_once(event) reports each event once per process, to
stderr when PYTORCH_API_USAGE_STDERR is set, as torch does, and is silent otherwise.
Also _get_tracing_state: None, as no TorchScript trace ever runs in tessera."""
import os
import sys
import threading

_seen = set()
_lock = threading.Lock()


def _log_api_usage_once(event):
    """Record that ``event`` (a str) happened; the first time, print it if asked to."""
    if not isinstance(event, str):
        raise TypeError(f"_log_api_usage_once(): argument 'event' must be str, not {type(event).__name__}")
    with _lock:
        if event in _seen:
            return
        _seen.add(event)
    if os.environ.get("PYTORCH_API_USAGE_STDERR"):
        sys.stderr.write(f"PYTORCH_API_USAGE {event}\n")


def _get_tracing_state():
    """The active TorchScript tracing state: None (tessera has no tracer)."""
    return None


def install(c_module):
    c_module._log_api_usage_once = _log_api_usage_once
    c_module._get_tracing_state = _get_tracing_state
