"""QuantType (torch.ao.quantization.quant_type): the kinds of quantization, with their names."""
import enum

__all__ = ["QuantType", "quant_type_to_str"]


class QuantType(enum.IntEnum):
    DYNAMIC = 0
    STATIC = 1
    QAT = 2
    WEIGHT_ONLY = 3


_NAMES = {QuantType.STATIC: "static", QuantType.DYNAMIC: "dynamic", QuantType.QAT: "qat",
          QuantType.WEIGHT_ONLY: "weight_only"}


def quant_type_to_str(quant_type):
    """"static", "dynamic", "qat" or "weight_only"."""
    return _NAMES[quant_type]

