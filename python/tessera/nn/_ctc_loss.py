"""Connectionist Temporal Classification loss (torch.nn.functional.ctc_loss) as a composite:
the forward (alpha) recursion in log space, vectorised over the batch and the extended
label positions, with a Python loop over time only; autograd differentiates it."""
import math

import tessera as _t
from tessera.autograd.grad_mode import no_grad

from . import functional as _F

_WHERE = " (while checking arguments for ctc_loss_cpu)"


def _scalar_name(dtype):
    # imported when needed: _losses_extra imports this module while it loads
    from ._losses_extra import _scalar_name as name
    return name(dtype)


def _lengths(lengths, name):
    """A length per batch element, from a tensor (any shape) or a sequence of ints."""
    if isinstance(lengths, _t.Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == _t.bool:
            raise RuntimeError(f"{name} must be integral")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, (list, tuple)):
        return [int(v) if isinstance(v, int) else _int_or_type_error(v, name) for v in lengths]
    raise TypeError(f"ctc_loss(): argument '{name}' must be a Tensor or a tuple of ints, not "
                    f"{type(lengths).__name__}")


def _int_or_type_error(v, name):
    if isinstance(v, _t.Tensor) and v.numel() == 1 and not v.is_floating_point():
        return int(v.item())
    raise TypeError(f"ctc_loss(): argument '{name}' must be a Tensor or a tuple of ints, but found an element "
                    f"of type {type(v).__name__}")


def _padded_targets(targets, target_lengths, batch, blank):
    """(batch, max target length) int64 labels from padded or concatenated targets, checked
    as torch checks them; positions past each target's length hold `blank`."""
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
                           f"argument #2 'targets'" + _WHERE)
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length}"
                               + _WHERE)
    max_len = max(target_lengths, default=0)
    targets = targets.to(_t.int64)
    if targets.dim() == 1:
        total = sum(target_lengths)
        if targets.size(0) != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size "
                               f"{targets.size(0)} for argument #2 'targets'" + _WHERE)
        if max_len == 0:
            return _t.zeros((batch, 0), dtype=_t.int64)
        starts = [sum(target_lengths[:b]) for b in range(batch)]
        index = (_t.tensor(starts).unsqueeze(1) + _t.arange(max_len).unsqueeze(0)).clamp(0, max(total - 1, 0))
        padded = targets.index_select(0, index.reshape(-1)).reshape(batch, max_len)
    else:
        if targets.size(0) != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size "
                               f"{targets.size(0)} for argument #2 'targets'" + _WHERE)
        if targets.size(1) < max_len:
            raise RuntimeError(f"Expected tensor to have size at least {max_len} at dimension 1, but got size "
                               f"{targets.size(1)} for argument #2 'targets'" + _WHERE)
        padded = targets[:, :max_len]
    inside = _t.arange(max_len).unsqueeze(0) < _t.tensor(target_lengths).reshape(batch, 1)
    return padded.masked_fill(~inside, blank)


def _log_add(terms, dim):
    """log(sum(exp(terms))) along dim, -inf where every term is -inf, and with a finite
    gradient there too (a plain logsumexp's gradient is NaN when all its terms are -inf,
    which would poison every alpha reached from an unreachable one)."""
    with no_grad():
        shift = terms.amax(dim, keepdim=True)
        empty = shift == -math.inf
        shift = shift.masked_fill(empty, 0.0)
    total = (terms - shift).exp().sum(dim, keepdim=True)
    # total >= 1 wherever some term is finite; the clamp only keeps log finite where none is
    summed = total.clamp_min(1e-30).log() + shift
    return summed.masked_fill(empty, -math.inf).squeeze(dim)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Negative log-likelihood of each target under all alignments of log_probs (T, N, C) or
    (T, C); 'mean' divides each loss by its target length, then averages over the batch.

    The gradient is the exact derivative with respect to log_probs. torch's ctc backward
    instead returns that derivative plus exp(log_probs) times the incoming gradient (it
    assumes the input came out of log_softmax), so the two agree on gradients taken through
    log_softmax, the documented use, and differ for unnormalised log_probs."""
    enum = _F._reduction_enum(reduction)
    in_lens = _lengths(input_lengths, "input_lengths")
    tg_lens = _lengths(target_lengths, "target_lengths")
    if log_probs.dtype not in (_t.float32, _t.float64):
        raise RuntimeError(f"\"ctc_loss_cpu\" not implemented for '{_scalar_name(log_probs.dtype)}'")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional tensor for "
                           f"argument #1 'log_probs'" + _WHERE)
    steps, batch, num_labels = lp.shape
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    if len(in_lens) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_lens) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    labels = _padded_targets(targets, tg_lens, batch, blank)
    for length in in_lens:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length}" + _WHERE)
        if length > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {length}"
                               + _WHERE)
    # torch reads out of bounds for such labels; tessera refuses them.
    if labels.numel() and (bool((labels < 0).any()) or bool((labels >= num_labels).any())):
        raise RuntimeError(f"ctc_loss: target labels must lie in [0, {num_labels}) (the classes of log_probs)")

    max_len = labels.size(1)
    width = 2 * max_len + 1
    blanks = _t.full((batch, max_len), blank, dtype=_t.int64)
    # extended labels: blank, l1, blank, l2, ..., blank
    extended = _t.cat([_t.stack([blanks, labels], 2).reshape(batch, 2 * max_len),
                       _t.full((batch, 1), blank, dtype=_t.int64)], 1)
    # a label may be reached from two positions back unless it repeats the label there
    # (blanks always equal the blank two back, so they never skip)
    can_skip = _t.cat([_t.zeros((batch, 2), dtype=_t.bool), extended[:, 2:] != extended[:, :-2]], 1)[:, :width]
    emit = lp.gather(2, extended.unsqueeze(0).expand(steps, batch, width))

    dtype = lp.dtype
    pad1 = _t.full((batch, 1), -math.inf, dtype=dtype)
    pad2 = _t.full((batch, 2), -math.inf, dtype=dtype)
    # alpha before the first step: the empty prefix, so that step 0 yields the standard
    # start (blank or first label) and a zero-length input keeps it
    alpha = _t.cat([_t.zeros((batch, 1), dtype=dtype), _t.full((batch, width - 1), -math.inf, dtype=dtype)], 1)
    lengths_col = _t.tensor(in_lens, dtype=_t.int64).reshape(batch, 1)
    for t in range(max(in_lens, default=0)):
        stay = alpha
        step = _t.cat([pad1, alpha], 1)[:, :width]
        skip = _t.cat([pad2, alpha], 1)[:, :width].masked_fill(~can_skip, -math.inf)
        advanced = _log_add(_t.stack([stay, step, skip]), 0) + emit[t]
        alpha = _t.where(lengths_col > t, advanced, alpha)

    tg_col = _t.tensor(tg_lens, dtype=_t.int64).reshape(batch, 1)
    ends = alpha.gather(1, _t.cat([2 * tg_col, (2 * tg_col - 1).clamp_min(0)], 1))
    ends = ends.masked_fill(_t.cat([_t.zeros((batch, 1), dtype=_t.bool), tg_col == 0], 1), -math.inf)
    loss = -_log_add(ends, 1)
    if zero_infinity:
        loss = loss.masked_fill(loss == math.inf, 0.0)
    if enum == 1:
        return (loss / tg_col.reshape(batch).clamp_min(1).to(dtype)).mean()
    if enum == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)

