"""What the weighted quantized modules share (torch.ao.nn.quantized.modules.utils): quantizing
a float weight with its observer's qparams, and a repr that leaves the packed params out."""
from .... import _C
from ....nn.modules.module import Module, _addindent

__all__ = ["WeightedQuantizedModule"]


class WeightedQuantizedModule(Module):
    """The base of the quantized modules that hold a packed weight (Linear, Conv*)."""

    @classmethod
    def from_reference(cls, ref_module, output_scale, output_zero_point):
        raise NotImplementedError


def _quantize_weight(float_wt, observer):
    """The weight in the observer's qscheme and dtype (qint8 for the GEMM modules)."""
    wt_scale, wt_zp = observer.calculate_qparams()
    if observer.qscheme in (_C.per_tensor_symmetric, _C.per_tensor_affine):
        return _C.quantize_per_tensor(float_wt, float(wt_scale), int(wt_zp), _C.qint8)
    if observer.qscheme in (_C.per_channel_symmetric, _C.per_channel_affine):
        return _C.quantize_per_channel(float_wt, wt_scale.to(_C.double), wt_zp.to(_C.int64), observer.ch_axis,
                                       _C.qint8)
    if observer.qscheme == _C.per_channel_affine_float_qparams:
        return _C.quantize_per_channel(float_wt, wt_scale.to(_C.float), wt_zp.to(_C.float), observer.ch_axis,
                                       observer.dtype)
    raise ValueError(f"Unexpected qscheme {observer.qscheme}")


def _hide_packed_params_repr(self, params):
    """The module's repr without its packed-params child (which would print the weight)."""
    extra_lines = []
    extra_repr = self.extra_repr()
    if extra_repr:
        extra_lines = extra_repr.split("\n")
    child_lines = []
    for key, module in self._modules.items():
        if isinstance(module, params):
            continue
        child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
    lines = extra_lines + child_lines
    main_str = self._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            main_str += extra_lines[0]
        else:
            main_str += "\n  " + "\n  ".join(lines) + "\n"
    return main_str + ")"
