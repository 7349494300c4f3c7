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


def DataPipeToQueuesLoop(source_datapipe, req_queue, res_queue):
    """Serves `source_datapipe` over the two queues (blocking on requests) until a
    TerminateRequest arrives; the body of a DataPipe's thread or process."""
    if isinstance(source_datapipe, IterDataPipe):
        loop, server = _iter_side.DataPipeBehindQueues, _protocol.IterDataPipeQueueProtocolServer
    elif isinstance(source_datapipe, MapDataPipe):
        loop, server = _map_side.DataPipeBehindQueues, _protocol.MapDataPipeQueueProtocolServer
    else:
        raise Exception('Only supports IterDataPipe or MapDataPipe, got', source_datapipe)

    _C.set_num_threads(1)
    for _ in loop(source_datapipe, server(req_queue, res_queue), blocking_request_get=True):
        pass


def SpawnProcessForDataPipeline(multiprocessing_ctx, datapipe):
    """A process of `multiprocessing_ctx` that will serve `datapipe`, with its queues:
    returns (process, req_queue, res_queue); the caller starts the process."""
    req_queue = multiprocessing_ctx.Queue()
    res_queue = multiprocessing_ctx.Queue()
    process = multiprocessing_ctx.Process(target=DataPipeToQueuesLoop, args=(datapipe, req_queue, res_queue))
    return process, req_queue, res_queue


def _dill_copy(datapipe):
    import dill
    dill.extend(use_dill=False)
    return dill.loads(dill.dumps(datapipe))


def SpawnThreadForDataPipeline(datapipe):
    """A daemon thread that will serve a copy of `datapipe` (copied through pickle, or dill
    when pickle fails and dill is installed), with ThreadingQueues: returns (thread,
    req_queue, res_queue, the copy). The caller starts the thread."""
    req_queue = _queues.ThreadingQueue()
    res_queue = _queues.ThreadingQueue()

    try:
        new_datapipe = pickle.loads(pickle.dumps(datapipe))
    except Exception as pe:
        if not HAS_DILL:
            raise Exception('Unable to pickle DataPipe to make thread local copy (consider installing `dill`)', pe)
        try:
            new_datapipe = _dill_copy(datapipe)
        except Exception as de:
            raise Exception('Unable to dill DataPipe to make thread local copy', de)

    thread = threading.Thread(target=DataPipeToQueuesLoop, args=(new_datapipe, req_queue, res_queue), daemon=True)
    return thread, req_queue, res_queue, new_datapipe
