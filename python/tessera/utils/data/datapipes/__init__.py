"""DataPipes under torch.utils.data.datapipes's names: the `iter` and `map` pipe families."""
from . import iter
from . import map
