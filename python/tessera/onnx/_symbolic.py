"""What the symbolic-function modules (symbolic_helper, symbolic_opset9, ...) share:
symbolic functions build nodes of an export graph, which exists only while the exporter
runs, and tessera has no exporter yet; the functions libraries import at start-up
(torchvision imports select, squeeze, unsqueeze and _cast_Long to define its own
symbolics) therefore exist and raise NotImplementedError when called."""


def unavailable(module, name):
    def symbolic(g, *args, **kwargs):
        raise NotImplementedError(f"tessera.onnx.{module}.{name}: ONNX export is not implemented in Tessera yet, "
                                  "so no export graph exists to build nodes in")
    symbolic.__name__ = symbolic.__qualname__ = name
    symbolic.__module__ = f"tessera.onnx.{module}"
    symbolic.__doc__ = f"The ONNX symbolic of {name.lstrip('_')} (needs the exporter: raises NotImplementedError)."
    return symbolic


def define(namespace, module, names):
    for name in names:
        namespace[name] = unavailable(module, name)
