"""convert_conv2d_weight_memory_format, as torch.nn.utils.memory_format: only the
weights of 2-d (transposed) convolutions change layout, e.g. to channels_last, rather
than every 4-d tensor as ``module.to(memory_format=...)`` would."""
from ..modules.conv import Conv2d, ConvTranspose2d

__all__ = ["convert_conv2d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Re-lays out the weight of every Conv2d / ConvTranspose2d in ``module`` (itself
    included) in ``memory_format``, keeping the Parameter objects. Returns ``module``."""
    if isinstance(module, (Conv2d, ConvTranspose2d)):
        module.weight.data = module.weight.detach().clone().contiguous(memory_format=memory_format)
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module
