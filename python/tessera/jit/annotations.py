"""tessera.jit.annotations: the type hints TorchScript reads and eager code only names
(torchvision's ops write BroadcastingList2[int] in signatures)."""

from typing import Dict, List, Optional, Tuple  # noqa: F401  (older model code imports them from here)

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "BroadcastingList4", "BroadcastingList5",
           "BroadcastingList6", "Dict", "List", "Optional", "Tuple"]


class BroadcastingListCls:
    """`BroadcastingListN[T]`: a T or N of them, for the compiler; subscripting gives None,
    as torch's does."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingListCls()
BroadcastingList3 = BroadcastingListCls()
BroadcastingList4 = BroadcastingListCls()
BroadcastingList5 = BroadcastingListCls()
BroadcastingList6 = BroadcastingListCls()
