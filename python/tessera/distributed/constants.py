"""Defaults shared by the process groups and the stores (torch.distributed.constants)."""
from datetime import timedelta

default_pg_timeout = timedelta(minutes=30)
DEFAULT_STORE_TIMEOUT = timedelta(seconds=300)

__all__ = ["default_pg_timeout"]
