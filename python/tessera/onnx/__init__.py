"""tessera.onnx: what programs and libraries touch at start-up. Custom-operator symbolic
functions register and unregister as in torch.onnx (torchvision registers its own at
import); the symbolic modules they are written with are importable. Exporting a model
to ONNX is not implemented yet: export raises NotImplementedError.
"""
import re

from . import errors, symbolic_helper, symbolic_opset9, symbolic_opset11  # noqa: F401
from .errors import OnnxExporterError  # noqa: F401

__all__ = ["export", "is_in_onnx_export", "register_custom_op_symbolic", "unregister_custom_op_symbolic",
           "OnnxExporterError", "errors", "symbolic_helper", "symbolic_opset9", "symbolic_opset11"]

# (qualified operator name, opset version) -> symbolic function, as registered by users
_custom_symbolics = {}


def is_in_onnx_export():
    """False: no export is ever running."""
    return False


def export(model, args, f, *rest, **kwargs):
    """Not implemented in Tessera yet: raises NotImplementedError."""
    raise NotImplementedError("tessera.onnx.export: exporting to ONNX is not implemented in Tessera yet")


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
