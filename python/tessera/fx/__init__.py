"""tessera.fx: torch.fx's symbolic tracing on tessera. ``symbolic_trace(module)`` runs the
module's forward on Proxies and returns a GraphModule: a Module whose forward is Python
code generated from the recorded Graph of Nodes, which can be inspected, edited and
recompiled. Tracer is the hook point (which modules stay whole, what each call records);
``wrap`` marks module-level functions to be recorded as one call. torchvision's
feature extraction (create_feature_extractor) is built on these, unmodified.

Not here (yet): the subgraph rewriter, Interpreter/Transformer, shape propagation passes
and torch.fx.experimental.
"""
from . import graph, graph_module, node, proxy  # noqa: F401
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import Graph  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .node import Node, map_arg  # noqa: F401
from .proxy import Proxy  # noqa: F401

__all__ = ["symbolic_trace", "wrap", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "PH", "map_arg"]
