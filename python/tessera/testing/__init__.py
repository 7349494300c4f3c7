"""tessera.testing: torch.testing's helpers for writing tests.

``assert_close`` compares tensors, numbers and nested containers with per-dtype
tolerances; ``make_tensor`` makes random tensors in torch's ranges. The dtype-list
helpers, ``assert_allclose``, ``make_non_contiguous``, ``rand`` and ``randn`` are the
names torch 1.13 keeps deprecated, and warn likewise. (FileCheck, TorchScript's IR
checker, is left out: tessera has no TorchScript.)
"""
from ._comparison import assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401
from ._deprecated import *  # noqa: F401,F403
from ._deprecated import __all__ as _deprecated_all

__all__ = ["assert_close", "make_tensor", *_deprecated_all]
