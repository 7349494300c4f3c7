"""tessera.onnx.symbolic_helper: parse_args, the decorator custom symbolic functions are
written with (as torch.onnx.symbolic_helper's). Values that are not export-graph values
pass through unchanged, as in torch; graph values exist only inside torch's TorchScript
exporter, which tessera's exporter (a trace, _exporter.py) does not use."""
import functools

__all__ = ["parse_args", "quantized_args"]

_DESCRIPTORS = ("v", "i", "is", "f", "fs", "b", "s", "t", "none")


def parse_args(*arg_descriptors):
    """Decorate a symbolic ``fn(g, *args)``: each argument is converted as its descriptor
    says ("v" value, "i" int, "is" ints, "f" float, "fs" floats, "b" bool, "s" str,
    "t" tensor, "none" unused)."""
    for desc in arg_descriptors:
        if desc not in _DESCRIPTORS:
            raise ValueError(f"parse_args: unknown descriptor {desc!r}; expected one of {', '.join(_DESCRIPTORS)}")

    def decorator(fn):
        fn._arg_descriptors = arg_descriptors

        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            if len(args) > len(arg_descriptors):
                raise AssertionError(f"A mismatch between the number of arguments ({len(args)}) and their "
                                     f"descriptors ({len(arg_descriptors)}) was found at symbolic function "
                                     f"'{fn.__name__}'.")
            if len(kwargs) > 1 or (kwargs and "_outputs" not in kwargs):
                raise AssertionError(f"Symbolic function {fn.__name__}'s '**kwargs' can only contain '_outputs' "
                                     "key at '**kwargs'.")
            return fn(g, *args, **kwargs)

        return wrapper

    return decorator


def quantized_args(*arg_q_descriptors, scale=None, zero_point=None):
    """Decorate a symbolic so quantized inputs would be dequantized first; without an
    exporter no input is ever quantized, so the function runs as written."""
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            return fn(g, *args, **kwargs)
        return wrapper
    return decorator


def _is_value(x):
    """False: TorchScript export-graph values never exist in tessera."""
    return False

