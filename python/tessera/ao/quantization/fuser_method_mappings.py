"""Which module sequences fuse_modules can fuse, and how (torch.ao.quantization's
fuser_method_mappings): a fuser method takes is_qat and the modules and returns the fused
module. For inference (is_qat False) a batch norm is folded into the convolution or linear
layer before it; for quantization-aware training the modules stay separate inside a fused
container (ConvBn2d, ...) that the QAT modules replace."""
from ...nn.modules import activation, batchnorm, conv, linear
from ...nn.utils import fusion
from ..nn.intrinsic import modules as nni

__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_linear_bn", "fuse_convtranspose_bn", "get_fuser_method"]


def _check_bn_fusable_for_qat(bn, features, mismatch_message, bn_name):
    assert bn.num_features == features, mismatch_message
    assert bn.affine, f"Only support fusing {bn_name} with affine set to True"
    assert bn.track_running_stats, f"Only support fusing {bn_name} with tracking_running_stats set to True"


def fuse_conv_bn(is_qat, conv_mod, bn):
    """Conv + BatchNorm: a ConvBn{1,2,3}d for QAT, else the conv with the batch norm folded in."""
    assert conv_mod.training == bn.training, "Conv and BN both must be in the same mode (train or eval)."
    if not is_qat:
        return fusion.fuse_conv_bn_eval(conv_mod, bn)
    _check_bn_fusable_for_qat(bn, conv_mod.out_channels, "Output channel of Conv2d must match num_features of "
                              "BatchNorm2d", "BatchNorm2d")
    fused = {conv.Conv1d: nni.ConvBn1d, conv.Conv2d: nni.ConvBn2d, conv.Conv3d: nni.ConvBn3d}.get(type(conv_mod))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv_mod, bn)}")
    return fused(conv_mod, bn)


def fuse_conv_bn_relu(is_qat, conv_mod, bn, relu):
    """Conv + BatchNorm + ReLU: a ConvBnReLU{1,2,3}d for QAT, else ConvReLU{1,2,3}d of the
    conv with the batch norm folded in."""
    assert conv_mod.training == bn.training == relu.training, \
        "Conv and BN both must be in the same mode (train or eval)."
    if is_qat:
        _check_bn_fusable_for_qat(bn, conv_mod.out_channels, "Output channel of Conv must match num_features of "
                                  "BatchNorm", "BatchNorm")
        fused = {conv.Conv1d: nni.ConvBnReLU1d, conv.Conv2d: nni.ConvBnReLU2d,
                 conv.Conv3d: nni.ConvBnReLU3d}.get(type(conv_mod))
        if fused is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv_mod, bn, relu)}")
        return fused(conv_mod, bn, relu)
    fused = {conv.Conv1d: nni.ConvReLU1d, conv.Conv2d: nni.ConvReLU2d, conv.Conv3d: nni.ConvReLU3d}.get(type(conv_mod))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv_mod, bn, relu)}")
    return fused(fusion.fuse_conv_bn_eval(conv_mod, bn), relu)


def fuse_linear_bn(is_qat, linear_mod, bn):
    """Linear + BatchNorm1d: a LinearBn1d for QAT, else the linear layer with the batch norm folded in."""
    assert linear_mod.training == bn.training, "Linear and BN both must be in the same mode (train or eval)."
    if not is_qat:
        return fusion.fuse_linear_bn_eval(linear_mod, bn)
    _check_bn_fusable_for_qat(bn, linear_mod.out_features, "Output features of Linear must match num_features of "
                              "BatchNorm1d", "BatchNorm1d")
    return nni.LinearBn1d(linear_mod, bn)


def fuse_convtranspose_bn(is_qat, convt, bn):
    """ConvTranspose + BatchNorm, folded (inference only, as in torch)."""
    assert convt.training == bn.training, "ConvTranspose and BN both must be in the same mode (train or eval)."
    if is_qat:
        raise Exception("Fusing ConvTranspose+BatchNorm not yet supported in QAT.")
    return fusion.fuse_conv_bn_eval(convt, bn, transpose=True)


def _sequential(fused_class):
    # a pair that fuses by containment alone, the same for QAT and inference
    def fuser_method(is_qat, first, second):
        return fused_class(first, second)
    return fuser_method


def _default_op_list_to_fuser_method():
    # built on each call: the fused classes are looked up when a fusion is asked for
    bn1, bn2, bn3 = batchnorm.BatchNorm1d, batchnorm.BatchNorm2d, batchnorm.BatchNorm3d
    relu = activation.ReLU
    return {
        (conv.Conv1d, bn1): fuse_conv_bn, (conv.Conv1d, bn1, relu): fuse_conv_bn_relu,
        (conv.Conv2d, bn2): fuse_conv_bn, (conv.Conv2d, bn2, relu): fuse_conv_bn_relu,
        (conv.Conv3d, bn3): fuse_conv_bn, (conv.Conv3d, bn3, relu): fuse_conv_bn_relu,
        (conv.Conv1d, relu): _sequential(nni.ConvReLU1d), (conv.Conv2d, relu): _sequential(nni.ConvReLU2d),
        (conv.Conv3d, relu): _sequential(nni.ConvReLU3d),
        (linear.Linear, bn1): fuse_linear_bn, (linear.Linear, relu): _sequential(nni.LinearReLU),
        (bn2, relu): _sequential(nni.BNReLU2d), (bn3, relu): _sequential(nni.BNReLU3d),
        (conv.ConvTranspose1d, bn1): fuse_convtranspose_bn, (conv.ConvTranspose2d, bn2): fuse_convtranspose_bn,
        (conv.ConvTranspose3d, bn3): fuse_convtranspose_bn,
    }


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The fuser method for a tuple of module types (additional mappings first)."""
    mapping = {**_default_op_list_to_fuser_method(), **(additional_fuser_method_mapping or {})}
    fuser_method = mapping.get(op_list, None)
    assert fuser_method is not None, f"did not find fuser method for: {op_list} "
    return fuser_method
