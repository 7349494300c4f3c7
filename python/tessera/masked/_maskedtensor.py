"""torch.masked's MaskedTensor names: is_masked_tensor, MaskedTensor, masked_tensor and
as_masked_tensor.

torch builds MaskedTensor as a Tensor subclass whose every operator goes through
__torch_dispatch__, so that each aten operator sees (data, mask) pairs and returns masked
results, autograd included. tessera has no __torch_dispatch__ (nor __torch_function__)
protocol yet (issue 28 owns it), and a subclass without it would hand its bare data to
every operator, giving unmasked answers. So the class exists (isinstance checks and
is_masked_tensor work, and no tessera tensor is one), but making one raises
NotImplementedError until the protocol lands. The masked reductions and normalizations
of tessera.masked take a plain tensor with a ``mask=`` argument and work today.
"""
from .. import _C

__all__ = ["MaskedTensor", "is_masked_tensor", "masked_tensor", "as_masked_tensor"]

_WHY = ("needs the __torch_dispatch__ protocol, which tessera does not have yet (issue 28): torch routes every "
        "operator on a MaskedTensor through it. Use the functions of tessera.masked (sum, amax, softmax, ...) "
        "with a plain tensor and their mask= argument instead")


def is_masked_tensor(a):
    """True when ``a`` is a MaskedTensor, for any object ``a``. No tessera tensor is one
    (MaskedTensor cannot be made yet, see MaskedTensor)."""
    return isinstance(a, MaskedTensor)


class MaskedTensor(_C.Tensor):
    """torch.masked.MaskedTensor(data, mask, requires_grad=False): a tensor whose elements
    where ``mask`` is False are unspecified. Not available in tessera yet: creating one
    raises NotImplementedError, because its operators need __torch_dispatch__ (issue 28)."""

    def __new__(cls, data, mask, requires_grad=False):
        raise NotImplementedError(f"MaskedTensor {_WHY}.")

    def __init__(self, data, mask, requires_grad=False):  # pragma: no cover - __new__ raises first
        raise NotImplementedError(f"MaskedTensor {_WHY}.")

    @staticmethod
    def _from_values(data, mask):
        raise NotImplementedError(f"MaskedTensor {_WHY}.")


def masked_tensor(data, mask, requires_grad=False):
    """torch.masked.masked_tensor: a leaf MaskedTensor of ``data`` and ``mask``. Raises
    NotImplementedError in tessera (MaskedTensor needs __torch_dispatch__, issue 28)."""
    raise NotImplementedError(f"masked_tensor: MaskedTensor {_WHY}.")


def as_masked_tensor(data, mask):
    """torch.masked.as_masked_tensor: a MaskedTensor that keeps ``data``'s autograd
    history. Raises NotImplementedError in tessera (MaskedTensor needs __torch_dispatch__,
    issue 28)."""
    raise NotImplementedError(f"as_masked_tensor: MaskedTensor {_WHY}.")
