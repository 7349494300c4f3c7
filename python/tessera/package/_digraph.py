"""A small directed graph (networkx-like API) for PackageExporter's dependency graph. Nodes
carry attribute dicts; an edge u -> v means u depends on v. Insertion order is kept, for
`first_path`."""
from collections import deque
from typing import List, Set


class DiGraph:
    def __init__(self):
        self._attrs = {}   # node -> its attribute dict
        self._out = {}     # node -> {successor: None}, in insertion order
        self._pred = {}    # node -> {predecessor: None}, in insertion order
        self._rank = {}    # node -> position at which it was first added

    def add_node(self, n, **kwargs):
        """Adds `n` with attributes `kwargs`, or merges them into an existing node's."""
        if n in self._attrs:
            self._attrs[n].update(kwargs)
            return
        self._rank[n] = len(self._rank)
        self._attrs[n] = kwargs
        self._out[n] = {}
        self._pred[n] = {}

    def add_edge(self, u, v):
        """Adds the edge u -> v (and either node when missing)."""
        for end in (u, v):
            self.add_node(end)
        self._out[u][v] = None
        self._pred[v][u] = None

    def _adjacent(self, table, n):
        try:
            return iter(table[n])
        except KeyError:
            raise ValueError(f"The node {n} is not in the digraph.") from None

    def successors(self, n):
        return self._adjacent(self._out, n)

    def predecessors(self, n):
        return self._adjacent(self._pred, n)

    @property
    def edges(self):
        """All edges, as (u, v) pairs."""
        for tail, heads in self._out.items():
            for head in heads:
                yield tail, head

    @property
    def nodes(self):
        """The dict node -> attributes."""
        return self._attrs

    def __iter__(self):
        return iter(self._attrs)

    def __contains__(self, n):
        try:
            return n in self._attrs
        except TypeError:  # unhashable
            return False

    @staticmethod
    def _reach(start, neighbours) -> Set[str]:
        """`start` plus everything `neighbours` leads to, transitively."""
        visited = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for node in frontier:
                for other in neighbours(node):
                    if other not in visited:
                        visited.add(other)
                        nxt.append(other)
            frontier = nxt
        return visited

    def forward_transitive_closure(self, src: str) -> Set[str]:
        """`src` and every node reachable from it."""
        return self._reach(src, self.successors)

    def backward_transitive_closure(self, src: str) -> Set[str]:
        """`src` and every node from which it is reachable."""
        return self._reach(src, self.predecessors)

    def all_paths(self, src: str, dst: str):
        """The dot text of the subgraph of all paths from `src` to `dst`."""
        downstream = self.forward_transitive_closure(src)
        paths = DiGraph()
        if dst not in downstream:
            return paths.to_dot()
        # Walk back from dst, keeping only nodes that src can reach.
        pending = deque([dst])
        while pending:
            head = pending.popleft()
            for tail in self.predecessors(head):
                if tail not in downstream:
                    continue
                fresh = tail not in paths._out or head not in paths._out[tail]
                paths.add_edge(tail, head)
                if fresh:
                    pending.append(tail)
        return paths.to_dot()

    def first_path(self, dst: str) -> List[str]:
        """The chain of nodes through which `dst` was first added: from a root to `dst`,
        following at each step the earliest-added predecessor."""
        chain = []
        node = dst
        while node:
            chain.insert(0, node)
            node = self._earliest_predecessor(node)
        return chain

    def _earliest_predecessor(self, node):
        """The predecessor of `node` added first ("" when none, or at an unranked one)."""
        choice, choice_rank = "", None
        for parent in self._pred[node]:
            if parent not in self._rank:
                break
            if choice_rank is None or self._rank[parent] < choice_rank:
                choice, choice_rank = parent, self._rank[parent]
        return choice

    def to_dot(self) -> str:
        """The graph in Graphviz's dot language."""
        body = "".join(f'"{u}" -> "{v}";\n' for u, v in self.edges)
        return "digraph G {\nrankdir = LR;\nnode [shape=box];\n" + body + "}\n"
