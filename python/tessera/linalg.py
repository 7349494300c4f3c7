"""tessera.linalg: torch.linalg's functions. Each is the generated binding of an aten
linalg_* operator (ops.yaml entries with ``python_module: linalg``), named as torch names it:
``tessera.linalg.vector_norm`` is ``aten::linalg_vector_norm``."""
from ._C import _linalg

vector_norm = _linalg.linalg_vector_norm

__all__ = ["vector_norm"]
