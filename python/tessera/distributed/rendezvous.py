"""init_method URLs to stores (torch.distributed.rendezvous): tcp://host:port, env:// (the
MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE variables) and file:///path, each giving
(store, rank, world_size); register_rendezvous_handler adds schemes."""
import os
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

from tessera._C._distributed_c10d import FileStore, PrefixStore, TCPStore

from .constants import default_pg_timeout

__all__ = ["register_rendezvous_handler", "rendezvous"]

_rendezvous_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """Registers ``handler(url, **kwargs)``, a generator of (store, rank, world_size), for
    init_method URLs of ``scheme``."""
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def _query_to_dict(query):
    return {k: v[0] for k, v in parse_qs(query).items()}


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, int):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, int):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    result = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query_to_dict(result.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query["rank"] = rank
        if world_size != -1:
            query["world_size"] = world_size
        result = result._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        url = result.geturl()
    if result.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _rendezvous_handlers[result.scheme](url, **kwargs)


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _rank_and_world_size(query, error):
    if "rank" not in query:
        raise error("rank parameter missing")
    if "world_size" not in query:
        raise error("world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def _file_rendezvous_handler(url, **kwargs):
    def _error(msg):
        return _rendezvous_error("file:// rendezvous: " + msg)

    result = urlparse(url)
    path = result.path
    if not path:
        raise _error("path missing")
    rank, world_size = _rank_and_world_size(_query_to_dict(result.query), _error)
    store = FileStore(path, world_size)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _create_c10d_store(hostname, port, rank, world_size, timeout):
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == str(True):
        # the launcher's agent serves the store: a client, with this attempt's own keys
        attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
        return PrefixStore(f"/worker/attempt_{attempt}", TCPStore(hostname, port, world_size, False, timeout))
    # Every rank's store is a client; rank 0's process also serves (multi_tenant lets two
    # process groups of one process share the server).
    return TCPStore(hostname, port, world_size, rank == 0, timeout, multi_tenant=True)


def _tcp_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("tcp:// rendezvous: " + msg)

    result = urlparse(url)
    if not result.port:
        raise _error("port number missing")
    rank, world_size = _rank_and_world_size(_query_to_dict(result.query), _error)
    store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("env:// rendezvous: " + msg)

    def _env_error(var):
        return _error(f"environment variable {var} expected, but not set")

    def _get_env_or_raise(env_var):
        value = os.environ.get(env_var, None)
        if not value:
            raise _env_error(env_var)
        return value

    result = urlparse(url)
    query = _query_to_dict(result.query)
    rank = int(query["rank"]) if "rank" in query else int(_get_env_or_raise("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else int(_get_env_or_raise("WORLD_SIZE"))
    master_addr = _get_env_or_raise("MASTER_ADDR")
    master_port = int(_get_env_or_raise("MASTER_PORT"))
    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_rendezvous_handler)
register_rendezvous_handler("env", _env_rendezvous_handler)
register_rendezvous_handler("file", _file_rendezvous_handler)
