"""QConfig (torch.ao.quantization.qconfig): which observer classes make a module's activation
and weight observers, and the default configurations that need no histogram observer
(default_qconfig, default_per_channel_qconfig, the dynamic ones). get_default_qconfig and
the other engine defaults wait for HistogramObserver."""
from collections import namedtuple

from ...nn.modules.module import Module
from .observer import (default_dynamic_quant_observer, default_observer, default_per_channel_weight_observer,
                       default_weight_observer)

__all__ = ["QConfig", "default_qconfig", "default_per_channel_qconfig", "default_dynamic_qconfig",
           "per_channel_dynamic_qconfig", "assert_valid_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """Observer classes (or callables making observers) for activations and weights: prepare
    and convert make one observer of each per module."""

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. "
                             "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)


def assert_valid_qconfig(qconfig, mod):
    """torch's check: a ConvTranspose may not take a per-channel (symmetric or affine) weight."""
    if qconfig is None:
        return
    from ...nn.modules import conv
    if isinstance(mod, (conv.ConvTranspose1d, conv.ConvTranspose2d, conv.ConvTranspose3d)):
        example = qconfig.weight()
        from ... import _C
        is_per_channel = getattr(example, "qscheme", None) in (_C.per_channel_symmetric, _C.per_channel_affine)
        assert not is_per_channel, "Per channel weight observer is not supported yet for ConvTranspose{n}d."
