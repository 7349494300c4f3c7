"""tessera.onnx: present so programs that import it at start-up run; exporting a model to
ONNX is not implemented yet (the ecosystem issue owns it)."""

__all__ = ["export", "is_in_onnx_export"]


def is_in_onnx_export():
    """False: no export is ever running."""
    return False


def export(model, args, f, *rest, **kwargs):
    raise NotImplementedError("tessera.onnx.export: exporting to ONNX is not implemented in Tessera yet")
