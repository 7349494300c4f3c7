"""Small helpers the layers share, where torch keeps them (torch.nn.modules.utils):
int-or-tuple converters (_single, _pair, _triple, _quadruple), the padding reversal F.pad
needs, and stripping a prefix from a state_dict's keys."""
import collections.abc
import itertools

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A converter that keeps an iterable as a tuple and repeats a scalar n times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(a, b) -> (b, b, a, a) for n=2: F.pad wants the last dim's padding first."""
    return tuple(itertools.chain.from_iterable((v,) * n for v in reversed(t)))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with None entries taken from the input's trailing
    sizes (``defaults``); an int passes through."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from every key of ``state_dict`` that has it, in place (and from
    the keys of its ``_metadata``), so a DataParallel/DDP checkpoint ("module.") loads
    into the bare model."""
    for key in sorted(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = state_dict.get("_metadata") if hasattr(state_dict, "get") else None
    if metadata is not None:
        for key in list(metadata.keys()):
            if key:  # '' is the wrapper's own entry and stays
                metadata[key[len(prefix):]] = metadata.pop(key)
