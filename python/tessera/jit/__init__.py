"""tessera.jit: the eager half of torch.jit, what model code calls when it is not being
scripted (torchvision's models and ops do at import and in forward): is_scripting and
is_tracing are False, the decorators (unused, ignore, export, _overload, _overload_method,
script_if_tracing, ...) mark the function as torch's do and return it unchanged, annotate
returns its value, Final is typing's.

TorchScript itself (script, trace, load, save, freeze, ...) needs a graph compiler that
tessera does not have: those raise NotImplementedError.
"""
import functools
import typing
import warnings

from . import annotations

__all__ = ["Error", "Final", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "TracerWarning", "annotate",
           "export", "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "script",
           "script_if_tracing", "trace", "trace_module", "unused", "load", "save", "freeze",
           "optimize_for_inference"]

Final = typing.Final


class FunctionModifiers:
    """What a decorator asked of the compiler, kept on the function as
    `_torchscript_modifier` (torch keeps an enum member of the same name)."""
    UNUSED = "unused"
    IGNORE = "ignore"
    EXPORT = "export"
    DEFAULT = "default"
    COPY_TO_SCRIPT_WRAPPER = "copy_to_script_wrapper"


def is_scripting() -> bool:
    """False: tessera runs eagerly, nothing is ever being compiled."""
    return False


def is_tracing() -> bool:
    """False: tessera has no tracer."""
    return False


def _mark(fn, modifier):
    if isinstance(fn, property):
        for part in (fn.fget, fn.fset):
            if part is not None:
                part._torchscript_modifier = modifier
        return fn
    fn._torchscript_modifier = modifier
    return fn


def unused(fn):
    """Marks `fn` as left out of compilation; eagerly it runs as written."""
    return _mark(fn, FunctionModifiers.UNUSED)


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=True): marks the function as left to Python; eagerly it
    runs as written."""
    if callable(drop):
        return _mark(drop, FunctionModifiers.IGNORE)
    if not isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    # torch's deprecated spellings of @unused, with its warnings
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", category=FutureWarning)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", category=FutureWarning)
    modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
    return lambda fn: _mark(fn, modifier)


def export(fn):
    """Marks a module method as an extra entry point for compilation; eagerly a no-op."""
    return _mark(fn, FunctionModifiers.EXPORT)


def _copy_to_script_wrapper(fn):
    return _mark(fn, FunctionModifiers.COPY_TO_SCRIPT_WRAPPER)


def annotate(the_type, the_value):
    """Returns `the_value`: the type is a hint for the compiler only."""
    return the_value


def _overload(func):
    """Declares one typed signature of an overloaded function (its body is `...`); the
    definition that follows under the same name is what runs eagerly."""
    return func


def _overload_method(func):
    """_overload for a method."""
    return func


def interface(obj):
    """Declares a TorchScript interface type; eagerly the class is returned unchanged."""
    if not isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    return obj


def _unwrap_optional(x):
    assert x is not None, "Unwrapping null optional"
    return x


def script_if_tracing(fn):
    """Compiles `fn` when a trace calls it; tessera never traces, so it always runs `fn`."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


_script_if_tracing = script_if_tracing


class TracerWarning(Warning):
    """torch's category for a tracer's warnings; programs filter it at start-up."""

    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")


class Error(RuntimeError):
    """What TorchScript raises from compiled code (torch.jit.Error); eager code raises the
    original exception, so nothing here raises this."""


class ScriptModule:
    """What torch.jit.script returns for a module. Tessera never makes one (no compiler),
    so `isinstance(m, tessera.jit.ScriptModule)` is False for every module, as it is for
    an eager torch module."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.jit.ScriptModule: TorchScript is not implemented in tessera")


class RecursiveScriptModule(ScriptModule):
    """See ScriptModule."""


class ScriptFunction:
    """What torch.jit.script returns for a function; never made by tessera (see ScriptModule)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.jit.ScriptFunction: TorchScript is not implemented in tessera")


def isinstance(obj, target_type):  # noqa: A001 (torch's name)
    """Whether obj is of a typing container type (List[int], Dict[str, Tensor],
    Tuple[int, str], Optional[T], Union) element by element, or of a plain class. As in
    torch, a tuple type lists every element (TorchScript has no Tuple[T, ...])."""
    return _matches(obj, target_type)


def _matches(obj, target):
    import builtins
    origin, args = typing.get_origin(target), typing.get_args(target)
    if origin is None:
        if target is None or target is type(None):
            return obj is None
        return builtins.isinstance(obj, target)
    if origin is typing.Union:
        return any(_matches(obj, a) for a in args)
    if origin is list:
        return builtins.isinstance(obj, list) and (not args or all(_matches(v, args[0]) for v in obj))
    if origin is dict:
        if not builtins.isinstance(obj, dict):
            return False
        return not args or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if not args:
            return True
        return len(obj) == len(args) and all(_matches(v, a) for v, a in zip(obj, args))
    return builtins.isinstance(obj, origin)


def _no_compiler(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"torch.jit.{name}: TorchScript is not implemented in tessera (it runs eagerly and has no graph "
            "compiler); call the module or function directly")
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"Not implemented: tessera has no TorchScript compiler (torch.jit.{name})."
    return refuse


script = _no_compiler("script")
trace = _no_compiler("trace")
trace_module = _no_compiler("trace_module")
load = _no_compiler("load")
save = _no_compiler("save")
freeze = _no_compiler("freeze")
optimize_for_inference = _no_compiler("optimize_for_inference")
script_method = _no_compiler("script_method")
