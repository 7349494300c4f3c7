"""tessera.nn.utils: torch.nn.utils' training helpers: gradient clipping, conversion
between a model's parameters and one flat vector, weight and spectral normalization
(hooks, or parametrizations through submodule parametrize), pruning (prune),
conv/linear + batch-norm fusion, functional_call (stateless), skip_init, and
(submodule rnn) packed sequences."""
from . import rnn  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format  # noqa: F401
from . import parametrize, parametrizations, prune, fusion, stateless  # noqa: F401
from .init import skip_init  # noqa: F401

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "convert_conv2d_weight_memory_format", "skip_init", "parametrize", "parametrizations", "prune",
           "fusion", "stateless"]
