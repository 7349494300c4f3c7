"""Starting a DataPipe's server loop elsewhere: in a new process (SpawnProcessForDataPipeline)
or a new thread (SpawnThreadForDataPipeline). Both hand back the (not yet started) worker
and the request/response queues a client protocol talks over."""
import importlib.util
import pickle
import threading

from .... import _C
from ..datapipes.datapipe import IterDataPipe, MapDataPipe
from . import iter as _iter_side
from . import map as _map_side
from . import protocol as _protocol
from . import queue as _queues

# dill, when installed, copies pipes pickle cannot (lambdas). It is imported only when
# needed, and its hook into the standard pickler is switched off at once.
HAS_DILL = importlib.util.find_spec("dill") is not None

__all__ = [
    "DataPipeToQueuesLoop",
    "SpawnProcessForDataPipeline",
    "SpawnThreadForDataPipeline",
]


def _loop_and_server_for(pipe):
    """The serving loop and protocol-server class that fit the kind of `pipe`."""
    kinds = ((IterDataPipe, _iter_side.DataPipeBehindQueues, _protocol.IterDataPipeQueueProtocolServer),
             (MapDataPipe, _map_side.DataPipeBehindQueues, _protocol.MapDataPipeQueueProtocolServer))
    for base, loop_fn, server_cls in kinds:
        if isinstance(pipe, base):
            return loop_fn, server_cls
    raise Exception('Only supports IterDataPipe or MapDataPipe, got', pipe)


def DataPipeToQueuesLoop(source_datapipe, req_queue, res_queue):
    """Serves `source_datapipe` over the two queues (blocking on requests) until a
    TerminateRequest arrives; the body of a DataPipe's thread or process."""
    loop_fn, server_cls = _loop_and_server_for(source_datapipe)
    _C.set_num_threads(1)
    steps = loop_fn(source_datapipe, server_cls(req_queue, res_queue), blocking_request_get=True)
    for _ in steps:
        continue


def SpawnProcessForDataPipeline(multiprocessing_ctx, datapipe):
    """A process of `multiprocessing_ctx` that will serve `datapipe`, with its queues:
    returns (process, req_queue, res_queue); the caller starts the process."""
    inbox, outbox = multiprocessing_ctx.Queue(), multiprocessing_ctx.Queue()
    worker = multiprocessing_ctx.Process(target=DataPipeToQueuesLoop, args=(datapipe, inbox, outbox))
    return worker, inbox, outbox


def _dill_copy(pipe):
    import dill
    dill.extend(use_dill=False)
    return dill.loads(dill.dumps(pipe))


def _private_copy(pipe):
    """A deep copy of `pipe` for a thread of its own: through pickle, falling back on dill."""
    try:
        blob = pickle.dumps(pipe)
        return pickle.loads(blob)
    except Exception as pickle_err:
        if not HAS_DILL:
            raise Exception('Unable to pickle DataPipe to make thread local copy (consider installing `dill`)',
                            pickle_err)
        failure = pickle_err
    try:
        return _dill_copy(pipe)
    except Exception as dill_err:
        raise Exception('Unable to dill DataPipe to make thread local copy', dill_err) from failure


def SpawnThreadForDataPipeline(datapipe):
    """A daemon thread that will serve a copy of `datapipe` (copied through pickle, or dill
    when pickle fails and dill is installed), with ThreadingQueues: returns (thread,
    req_queue, res_queue, the copy). The caller starts the thread."""
    inbox, outbox = _queues.ThreadingQueue(), _queues.ThreadingQueue()
    replica = _private_copy(datapipe)
    worker = threading.Thread(target=DataPipeToQueuesLoop, args=(replica, inbox, outbox), daemon=True)
    return worker, inbox, outbox, replica
