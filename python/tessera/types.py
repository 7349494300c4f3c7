"""tessera.types: the type aliases that annotations in torch-style code use (Number,
Device, _size, _dtype, ...), as torch.types, naming tessera's own classes.
"""
import builtins
from typing import Any, List, Sequence, Tuple, Union  # noqa: F401  (re-exported, as torch.types does)
from typing import ForwardRef as _ForwardRef

import tessera

_TensorOrTensors = Union[tessera.Tensor, Sequence[tessera.Tensor]]

# The package shadows int, float and bool with dtypes; these spell the builtins.
_int = builtins.int
_float = builtins.float
_bool = builtins.bool

_dtype = tessera.dtype
_device = tessera.device
_size = Union[tessera.Size, List[_int], Tuple[_int, ...]]
_layout = tessera.layout
# Quantized tensors and dispatch-key objects have not landed in tessera yet: until they do,
# these name the classes as forward references, which annotations accept as they are.
_qscheme = getattr(tessera, "qscheme", _ForwardRef("tessera.qscheme"))
_dispatchkey_type = getattr(tessera, "DispatchKey", _ForwardRef("tessera.DispatchKey"))
_dispatchkey = Union[str, _dispatchkey_type]
del _ForwardRef, _dispatchkey_type


class SymInt:
    """A symbolic integer size, as torch.types.SymInt: a placeholder for annotations
    (Tessera's shapes are always concrete ints)."""


Number = Union[builtins.int, builtins.float, builtins.bool]

# "Device-like": what a device= argument accepts, None meaning the default device.
Device = Union[_device, str, _int, None]


class Storage:
    """The interface tessera's storages (TypedStorage, UntypedStorage and the legacy
    FloatStorage, ...) share, for annotations."""

    device: tessera.device

    def size(self) -> _int:
        ...

    def nbytes(self) -> _int:
        ...

    def tolist(self) -> List[Any]:
        ...

    def __len__(self) -> _int:
        ...

    def __getitem__(self, index: _int) -> Any:
        ...
