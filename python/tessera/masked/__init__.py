"""tessera.masked: torch.masked's reductions and normalizations that skip masked-out
elements (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median,
logsumexp, logaddexp, norm, var, std, softmax, log_softmax, softmin, normalize), each
taking a plain tensor and ``mask=``.

    x = tessera.tensor([[1., 2., 3.], [4., 5., 6.]])
    keep = tessera.tensor([[True, False, True], [False, False, False]])
    tessera.masked.amax(x, 1, mask=keep)        # tensor([3., -inf])

MaskedTensor and its factories need __torch_dispatch__, which tessera lacks (issue 28):
is_masked_tensor answers False for every tessera tensor, and making a MaskedTensor raises
NotImplementedError.
"""
from ._maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor  # noqa: F401
from ._ops import (  # noqa: F401
    _canonical_dim,
    _combine_input_and_mask,
    _input_mask,
    _output_mask,
    _reduction_identity,
    _where,
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)

__all__ = ["as_masked_tensor", "is_masked_tensor", "masked_tensor", "MaskedTensor"]
