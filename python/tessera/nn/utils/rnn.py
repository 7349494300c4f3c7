"""tessera.nn.utils.rnn: batches of variable-length sequences for the recurrent layers, as
torch.nn.utils.rnn has them: PackedSequence and the functions that pack, pad and unpad.
Everything is built from differentiable tessera ops (narrow, cat, index_select, stack), so
gradients flow through packing and padding."""
import collections
import collections.abc

import tessera as _t
from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def invert_permutation(permutation):
    """The permutation q with q[p[i]] = i, on p's device; None for None."""
    if permutation is None:
        return None
    inverse = _t.empty_like(permutation)
    return inverse.scatter_(0, permutation, _t.arange(permutation.numel(), device=permutation.device))


# the plain four-field tuple under PackedSequence (public under this name in torch)
PackedSequence_ = collections.namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                             "unsorted_indices"])
_PackedSequenceBase = PackedSequence_
Tensor = _C.Tensor  # re-exported, as torch.nn.utils.rnn has it


def bind(optional, fn):
    """fn(optional), or None when optional is None."""
    return None if optional is None else fn(optional)


class PackedSequence(_PackedSequenceBase):
    """A batch of sequences stored step by step: data holds step 0 of every sequence, then
    step 1 of those that have one, ...; batch_sizes[t] (int64, CPU) says how many sequences
    reach step t. The sequences are ordered longest first; sorted_indices maps that order
    back to the caller's batch (None when it already was sorted), unsorted_indices is its
    inverse. Make these with pack_padded_sequence or pack_sequence, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            # the old two-field form PackedSequence((data, batch_sizes))
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise TypeError("PackedSequence: without batch_sizes, data must be a (data, batch_sizes) pair")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data.to(*args, **kwargs), with the index tensors following data's device (never
        its dtype); self when nothing changes. batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        # tessera's Tensor.to may hand back a new wrapper of the same tensor where torch
        # returns self; the same storage, dtype and device mean nothing was converted
        if data is self.data or (data.dtype == self.data.dtype and data.device == self.data.device
                                 and data.data_ptr() == self.data.data_ptr()):
            return self
        rest = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(data.device, **rest)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(data.device, **rest)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=_t.float64)

    def float(self):
        return self.to(dtype=_t.float32)

    def half(self):
        return self.to(dtype=_t.float16)

    def long(self):
        return self.to(dtype=_t.int64)

    def int(self):
        return self.to(dtype=_t.int32)

    def short(self):
        return self.to(dtype=_t.int16)

    def char(self):
        return self.to(dtype=_t.int8)

    def byte(self):
        return self.to(dtype=_t.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _lengths_tensor(lengths):
    if isinstance(lengths, _t.Tensor):
        return lengths.to(dtype=_t.int64)
    return _t.as_tensor(lengths, dtype=_t.int64, device="cpu")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) whose sequence b is
    lengths[b] long. With enforce_sorted the lengths must not increase; otherwise the batch
    is sorted here and the PackedSequence remembers the order."""
    lengths = _lengths_tensor(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        # stable, so equal lengths keep the caller's order (torch's sort leaves ties unspecified)
        lengths, sorted_indices = _t.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    # (the operator checks lengths, as torch's does: 1-D CPU int64, sorted, positive)
    data, batch_sizes = _t._pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths), in the
    caller's original batch order; T is total_length when given."""
    max_len = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    padded, lengths = _t._pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first, padding_value,
                                              total_length)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.to("cpu"))
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), filling with
    padding_value; the result has the first sequence's dtype and device. padding_side
    ('right' or 'left') is current torch's; 1.13 always pads on the right."""
    if not isinstance(sequences, collections.abc.Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side == "right":
        return _t._C._nn.pad_sequence(list(sequences), batch_first, padding_value)
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    max_len = max(s.size(0) for s in sequences)
    rows = []
    for s in sequences:
        s = s.to(dtype=first.dtype, device=first.device)
        if tuple(s.shape[1:]) != trailing:
            # torch copies each sequence into the output, which broadcasts its trailing dims
            s = s.expand((s.size(0),) + trailing)
        if s.size(0) < max_len:
            fill = _t.full((max_len - s.size(0),) + trailing, padding_value, dtype=first.dtype, device=first.device)
            s = _t.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return _t.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of pad_sequence (right padding): a list of the B sequences, each cut to its
    length. Unlike torch, a time-major input is not transposed in place."""
    batch_major = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lens = lengths.tolist() if isinstance(lengths, _t.Tensor) else list(lengths)
    max_len = batch_major.size(1)
    return [seq.narrow(0, 0, min(int(l), max_len)) for seq, l in zip(batch_major.unbind(0), lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of (L_i, *) tensors (longest first, unless enforce_sorted=False)."""
    lengths = _t.as_tensor([s.size(0) for s in sequences], dtype=_t.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The inverse of pack_sequence: the list of sequences in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
