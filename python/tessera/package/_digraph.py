"""A small directed graph (networkx-like API) for PackageExporter's dependency graph. Nodes
carry attribute dicts; an edge u -> v means u depends on v. Insertion order is kept, for
`first_path`."""
from collections import deque
from typing import List, Set


class DiGraph:
    def __init__(self):
        self._node = {}        # node -> its attributes
        self._succ = {}        # node -> {successor: True}
        self._pred = {}        # node -> {predecessor: True}
        self._node_order = {}  # node -> when it was first added
        self._insertion_idx = 0

    def add_node(self, n, **kwargs):
        """Adds `n` with attributes `kwargs`, or merges them into an existing node's."""
        attrs = self._node.get(n)
        if attrs is not None:
            attrs.update(kwargs)
            return
        self._node[n] = kwargs
        self._succ[n] = {}
        self._pred[n] = {}
        self._node_order[n] = self._insertion_idx
        self._insertion_idx += 1

    def add_edge(self, u, v):
        """Adds the edge u -> v (and either node when missing)."""
        self.add_node(u)
        self.add_node(v)
        self._succ[u][v] = True
        self._pred[v][u] = True

    def _neighbours(self, table, n):
        if n not in table:
            raise ValueError(f"The node {n} is not in the digraph.")
        return iter(table[n])

    def successors(self, n):
        return self._neighbours(self._succ, n)

    def predecessors(self, n):
        return self._neighbours(self._pred, n)

    @property
    def edges(self):
        """All edges, as (u, v) pairs."""
        return ((u, v) for u, succ in self._succ.items() for v in succ)

    @property
    def nodes(self):
        """The dict node -> attributes."""
        return self._node

    def __iter__(self):
        return iter(self._node)

    def __contains__(self, n):
        try:
            return n in self._node
        except TypeError:  # unhashable
            return False

    def _closure(self, src, step) -> Set[str]:
        seen = {src}
        todo = deque([src])
        while todo:
            for n in step(todo.popleft()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    def forward_transitive_closure(self, src: str) -> Set[str]:
        """`src` and every node reachable from it."""
        return self._closure(src, self.successors)

    def backward_transitive_closure(self, src: str) -> Set[str]:
        """`src` and every node from which it is reachable."""
        return self._closure(src, self.predecessors)

    def all_paths(self, src: str, dst: str):
        """The dot text of the subgraph of all paths from `src` to `dst`."""
        sub = DiGraph()
        reachable = self.forward_transitive_closure(src)
        if dst in reachable:
            todo = deque([dst])
            while todo:
                cur = todo.popleft()
                for n in self.predecessors(cur):
                    if n in reachable:
                        first_visit = n not in sub or cur not in sub._succ[n]
                        sub.add_edge(n, cur)
                        if first_visit:
                            todo.append(n)
        return sub.to_dot()

    def first_path(self, dst: str) -> List[str]:
        """The chain of nodes through which `dst` was first added: from a root to `dst`,
        following at each step the earliest-added predecessor."""
        path = []
        while dst:
            path.append(dst)
            earliest, best = "", None
            for candidate in self._pred[dst]:
                idx = self._node_order.get(candidate)
                if idx is None:
                    break
                if best is None or idx < best:
                    earliest, best = candidate, idx
            dst = earliest
        path.reverse()
        return path

    def to_dot(self) -> str:
        """The graph in Graphviz's dot language."""
        lines = ["digraph G {", "rankdir = LR;", "node [shape=box];"]
        lines.extend(f'"{u}" -> "{v}";' for u, v in self.edges)
        return "\n".join(lines) + "\n}\n"
