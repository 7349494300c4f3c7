"""tessera.utils.data.communication, torch 1.13's protocol for running a DataPipe somewhere
else (a thread or a process) and reading it through a pair of queues.

- messages: the requests a client puts on the request queue and the responses the server
  answers with;
- protocol: the client and server sides (one outstanding request at a time), for
  IterDataPipes and for MapDataPipes;
- queue: LocalQueue (same thread) and ThreadingQueue (between threads);
- iter / map: the server loop (`DataPipeBehindQueues`, a generator that serves one request
  per step) and the client pipe reading from the queues (`QueueWrapper`,
  `QueueWrapperForMap`);
- eventloop: helpers that start the server loop in a thread or a process.
"""
from . import messages  # noqa: F401
from . import protocol  # noqa: F401
from . import queue  # noqa: F401
from . import iter  # noqa: F401
from . import map  # noqa: F401
from . import eventloop  # noqa: F401
