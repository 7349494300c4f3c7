import sys
from typing import Any, Callable, Iterable, List, Tuple

__all__ = ["trace_dependencies"]


def trace_dependencies(callable: Callable[[Any], Any], inputs: Iterable[Tuple[Any, ...]]) -> List[str]:
    """The names of the modules whose Python functions run while `callable(*inp)` is called
    for each `inp` of `inputs` (found with a profile hook), for deciding what to package."""
    modules_used = set()

    def on_event(frame, event, arg):
        if event != "call":
            return
        name = frame.f_code.co_name
        # The function's module: through the frame's globals, then its locals, then, for a
        # method, through `self`.
        if name in frame.f_globals:
            module = frame.f_globals[name].__module__
        elif name in frame.f_locals:
            module = frame.f_locals[name].__module__
        elif "self" in frame.f_locals:
            method = getattr(frame.f_locals["self"], name, None)
            module = method.__module__ if method else None
        else:
            module = None
        if module:
            modules_used.add(module)

    try:
        sys.setprofile(on_event)
        for inp in inputs:
            callable(*inp)
    finally:
        sys.setprofile(None)
    return list(modules_used)
