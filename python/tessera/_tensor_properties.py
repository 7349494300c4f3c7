"""Tensor properties written in Python over the generated operators: ``T`` and ``mT``.

``T(t)`` and ``mT(t)`` are the getters; ``PROPERTIES`` maps each attribute name to its
property object. Importing this module installs them on ``tessera.Tensor`` where the type
allows it; the C Tensor type is immutable, so until it forwards these names (a tp_getset
entry calling the getters here) they are reached through this module.
"""
import warnings

from ._C import Tensor

_T_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
              "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
              "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
_warned_T = False


def T(self):
    """The tensor with its dimensions reversed (a view); the transpose of a matrix."""
    global _warned_T
    n = self.dim()
    if n not in (0, 2) and not _warned_T:
        _warned_T = True  # torch warns once per process
        warnings.warn(_T_WARNING, UserWarning, stacklevel=2)
    return self.permute(*range(n - 1, -1, -1))


def mT(self):
    """The last two dimensions swapped (a view): the transpose of each matrix in a batch."""
    n = self.dim()
    if n == 1:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    if n == 0:
        return self.transpose(0, 0)  # torch 1.13 accepts a 0-dim tensor
    return self.transpose(-2, -1)


PROPERTIES = {"T": property(T, doc=T.__doc__), "mT": property(mT, doc=mT.__doc__)}


def install(tensor_type=Tensor) -> bool:
    """Sets the properties on tensor_type; False when the type is immutable."""
    try:
        for name, prop in PROPERTIES.items():
            setattr(tensor_type, name, prop)
    except TypeError:
        return False
    return True


install()
