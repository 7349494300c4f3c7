"""tessera.nn's module classes, one file per family, as torch.nn.modules."""
from .module import Module  # noqa: F401

__all__ = ["Module"]

# -- layers (linear, conv, pooling, normalization, dropout, sparse, flatten, upsampling, container,
#    adaptive softmax)
from . import (adaptive, batchnorm, container, conv, dropout, flatten, fold, instancenorm, lazy,  # noqa: E402
               linear, normalization, padding, pixelshuffle, pooling, sparse, upsampling)
from .adaptive import *  # noqa: F401,F403,E402
from .batchnorm import *  # noqa: F401,F403,E402
from .container import *  # noqa: F401,F403,E402
from .conv import *  # noqa: F401,F403,E402
from .dropout import *  # noqa: F401,F403,E402
from .flatten import *  # noqa: F401,F403,E402
from .fold import *  # noqa: F401,F403,E402
from .instancenorm import *  # noqa: F401,F403,E402
from .linear import *  # noqa: F401,F403,E402
from .normalization import *  # noqa: F401,F403,E402
from .padding import *  # noqa: F401,F403,E402
from .pixelshuffle import *  # noqa: F401,F403,E402
from .pooling import *  # noqa: F401,F403,E402
from .sparse import *  # noqa: F401,F403,E402
from .upsampling import *  # noqa: F401,F403,E402

# (lazy's LazyModuleMixin stays in nn.modules.lazy, as torch keeps it out of torch.nn)
for _layer_file in (adaptive, batchnorm, container, conv, dropout, flatten, fold, instancenorm, linear,
                    normalization, padding, pixelshuffle, pooling, sparse, upsampling):
    __all__ += _layer_file.__all__
del _layer_file
# -- activations and losses
from .activation import *  # noqa: F401,F403,E402
from .activation import __all__ as _activation_all  # noqa: E402
from .loss import *  # noqa: F401,F403,E402
from .loss import __all__ as _loss_all  # noqa: E402
from .distance import *  # noqa: F401,F403,E402
from .distance import __all__ as _distance_all  # noqa: E402

__all__ += _activation_all + _loss_all + _distance_all
# -- attention, transformer, rnn
from .multihead import *  # noqa: F401,F403,E402
from .multihead import __all__ as _multihead_all  # noqa: E402
from .transformer import *  # noqa: F401,F403,E402
from .transformer import __all__ as _transformer_all  # noqa: E402
from .rnn import *  # noqa: F401,F403,E402
from .rnn import __all__ as _rnn_all  # noqa: E402

__all__ += _multihead_all + _transformer_all + _rnn_all
