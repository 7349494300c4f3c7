"""What the symbolic-function modules (symbolic_helper, symbolic_opset9, ...) share:
torch's symbolic functions build nodes of its TorchScript export graph, which tessera's
exporter (a trace through a TorchFunctionMode, _exporter.py) does not have; the functions
libraries import at start-up (torchvision imports select, squeeze, unsqueeze and
_cast_Long to define its own symbolics) therefore exist and raise NotImplementedError
when called."""


def unavailable(module, name):
    def symbolic(g, *args, **kwargs):
        raise NotImplementedError(f"tessera.onnx.{module}.{name}: symbolic functions build nodes of torch's "
                                  "TorchScript export graph, which tessera's ONNX exporter does not use")
    symbolic.__name__ = symbolic.__qualname__ = name
    symbolic.__module__ = f"tessera.onnx.{module}"
    symbolic.__doc__ = (f"The ONNX symbolic of {name.lstrip('_')} (needs torch's TorchScript export graph: raises "
                        "NotImplementedError).")
    return symbolic


def define(namespace, module, names):
    for name in names:
        namespace[name] = unavailable(module, name)
