"""tessera.onnx: export(model, args, f, ...) writes an ONNX model of the modules' common
operators (linear, convolutions, batch and layer norm, activations, softmax, pooling,
embedding, dropout, the reshape family, elementwise arithmetic), traced through a
TorchFunctionMode (_exporter.py) and written with Debian's python3-onnx; other operators
raise OnnxExporterError naming them. Custom-operator symbolic functions register and
unregister as in torch.onnx (torchvision registers its own at import); the symbolic
modules they are written with are importable, and the graph they would build exists only
in torch's TorchScript-based exporter, so they raise NotImplementedError when called.
"""
import enum
import io
import os
import re

from . import errors, symbolic_helper, symbolic_opset9, symbolic_opset11  # noqa: F401
from .errors import OnnxExporterError  # noqa: F401

__all__ = ["export", "is_in_onnx_export", "TrainingMode", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic",
           "OnnxExporterError", "errors", "symbolic_helper", "symbolic_opset9", "symbolic_opset11"]

# (qualified operator name, opset version) -> symbolic function, as registered by users
_custom_symbolics = {}


_exporting = False


class TrainingMode(enum.IntEnum):
    """The mode a model is exported in (torch.onnx.TrainingMode)."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export():
    """Whether an export is tracing the model now."""
    return _exporting


def export(model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL, input_names=None,
           output_names=None, operator_export_type=None, opset_version=None, do_constant_folding=True,
           dynamic_axes=None, keep_initializers_as_inputs=None, custom_opsets=None,
           export_modules_as_functions=False):
    """Export ``model`` (an nn.Module) run on ``args`` (a tensor or a tuple of them) to the
    ONNX file or binary stream ``f``, as torch.onnx.export with its defaults: eval mode,
    parameters as initializers named by their state_dict keys, constants folded (an
    eval-mode BatchNorm after a convolution becomes part of the convolution). Sizes read
    during the trace are baked in; ``dynamic_axes`` names the dims of inputs and outputs
    that vary (refused when the graph holds traced sizes). What the graph cannot hold
    faithfully (writes into constants or views, .data, type-changing arithmetic) is
    refused with OnnxExporterError. ``opset_version``: 14 to 17 (default 14, as torch 1.13)."""
    global _exporting
    from .. import Tensor
    import tessera
    from . import _exporter, _symbolics

    if not export_params or training != TrainingMode.EVAL or not do_constant_folding or \
            keep_initializers_as_inputs or custom_opsets or export_modules_as_functions or \
            operator_export_type not in (None, 0):
        raise NotImplementedError("tessera.onnx.export: only torch's default export is implemented (export_params, "
                                  "eval mode, constant folding, no custom opsets or module functions)")
    if not hasattr(model, "named_parameters"):
        raise NotImplementedError("tessera.onnx.export: only nn.Module models can be exported (no ScriptModule or "
                                  "plain function)")
    if isinstance(args, Tensor):
        args = (args,)
    if isinstance(dynamic_axes, dict):
        dynamic_axes = {name: (axes if isinstance(axes, dict) else {int(d): f"{name}_dynamic_axes_{i + 1}"
                                                                      for i, d in enumerate(axes)})
                        for name, axes in dynamic_axes.items()}
    _exporting = True
    try:
        proto = _exporter.trace(tessera, model, tuple(args), 14 if opset_version is None else int(opset_version),
                                input_names, output_names, dynamic_axes, _symbolics.SYMBOLICS)
    finally:
        _exporting = False
    data = proto.SerializeToString()
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "wb") as out:
            out.write(data)
    elif isinstance(f, io.IOBase) or hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"tessera.onnx.export: f must be a file name or a binary stream, not {type(f).__name__}")
    if verbose:
        import onnx
        print(onnx.helper.printable_graph(proto.graph))


def _qualified_symbolic_name(symbolic_name):
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if not re.match(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$", symbolic_name):
        raise OnnxExporterError(f"Failed to register operator {symbolic_name}. The symbolic name must match the "
                                "format domain::name, and should start with a letter and contain only "
                                "alphanumerical characters")
    ns = symbolic_name.split("::")[0]
    if ns == "onnx":
        raise ValueError(f"Failed to register operator {symbolic_name}. {ns} domain cannot be modified.")
    return symbolic_name


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Register ``symbolic_fn`` as the ONNX symbolic of the operator ``domain::name`` from
    ``opset_version`` on (``::name`` means ``aten::name``)."""
    _custom_symbolics[(_qualified_symbolic_name(symbolic_name), int(opset_version))] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove the symbolic registered for ``symbolic_name`` at ``opset_version``."""
    _custom_symbolics.pop((_qualified_symbolic_name(symbolic_name), int(opset_version)), None)


def _registered_symbolic(symbolic_name, opset_version):
    """The symbolic registered for the operator at the highest opset <= opset_version."""
    name = _qualified_symbolic_name(symbolic_name)
    versions = [v for (n, v) in _custom_symbolics if n == name and v <= opset_version]
    return _custom_symbolics[(name, max(versions))] if versions else None
