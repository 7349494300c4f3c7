"""Flatten and Unflatten: reshaping layers that merge a range of dims or split one dim,
with torch.nn's argument checks and printed form."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merges dims start_dim..end_dim into one (by default all but the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into unflattened_size. A str dim with ((name, size), ...) is torch's
    named-tensor form: accepted here, but tessera has no named tensors to apply it to."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        elif isinstance(dim, str):
            self._require_tuple_tuple(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_tuple(value):
        if not isinstance(value, tuple):
            raise TypeError(f"unflattened_size must be a tuple of tuples, but found type {type(value).__name__}")
        for idx, elem in enumerate(value):
            if not isinstance(elem, tuple):
                raise TypeError("unflattened_size must be tuple of tuples, "
                                f"but found element of type {type(elem).__name__} at pos {idx}")

    @staticmethod
    def _require_tuple_int(value):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(value).__name__}")
        for idx, elem in enumerate(value):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, "
                                f"but found element of type {type(elem).__name__} at pos {idx}")

    def forward(self, input):
        if isinstance(self.dim, str):
            raise NotImplementedError("Unflatten with a named dim needs named tensors, which tessera does not "
                                      "support; pass the dim's index and a tuple of ints instead")
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
