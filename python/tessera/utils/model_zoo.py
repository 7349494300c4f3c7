"""tessera.utils.model_zoo: the older name of the hub's download helpers, as torch keeps
it (load_url is hub.load_state_dict_from_url)."""
from ..hub import load_state_dict_from_url as load_url, tqdm  # noqa: F401

__all__ = ["load_url", "tqdm"]
