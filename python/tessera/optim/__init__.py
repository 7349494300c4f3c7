"""tessera.optim: torch.optim's optimizers, whose updates run as multi-tensor C++
operators (_foreach_*, _fused_adam_), and its learning-rate schedulers."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]

# -- more optimizers
from .rmsprop import RMSprop  # noqa: F401,E402
from .adagrad import Adagrad  # noqa: F401,E402
from .adadelta import Adadelta  # noqa: F401,E402
from .adamax import Adamax  # noqa: F401,E402
from .nadam import NAdam  # noqa: F401,E402
from .radam import RAdam  # noqa: F401,E402
__all__ += ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
# -- lr_scheduler
from . import lr_scheduler  # noqa: F401,E402
__all__ += ["lr_scheduler"]
# -- the rest of torch 1.13's optimizers, and stochastic weight averaging
from .rprop import Rprop  # noqa: F401,E402
from .asgd import ASGD  # noqa: F401,E402
from .lbfgs import LBFGS  # noqa: F401,E402
from .sparse_adam import SparseAdam  # noqa: F401,E402
from . import swa_utils  # noqa: F401,E402
__all__ += ["Rprop", "ASGD", "LBFGS", "SparseAdam", "swa_utils"]
