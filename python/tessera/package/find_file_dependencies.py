"""The modules a piece of Python source may import, found by walking its syntax tree:
`import a.b`, `from a import b` (b may be a submodule, so (a, b) is reported and the
exporter checks), relative imports resolved against the package, and literal
`__import__(...)` calls."""
import ast
from typing import List, Optional, Tuple

from ._importlib import _resolve_name


def _literal(expr):
    """The value of a constant expression node (AttributeError for anything else)."""
    return expr.value


def _call_argument(call, position, keyword):
    """The node passed to `call` at `position` or as `keyword=`, or None."""
    if len(call.args) > position:
        return call.args[position]
    for kw in getattr(call, "keywords", ()):
        if kw.arg == keyword:
            return kw.value
    return None


class _ImportCollector(ast.NodeVisitor):
    """Collects (module, name-or-None) pairs, in order of first appearance, without
    duplicates."""

    def __init__(self, anchor_package):
        super().__init__()
        self._anchor = anchor_package
        self.found = {}

    def _absolute(self, modname, depth):
        if not depth:
            return modname
        return _resolve_name(modname, self._anchor, depth)

    def _record(self, modname, member=None):
        key = (modname, member if member != "*" else None)
        self.found.setdefault(key, None)

    def visit_Import(self, node):
        for entry in node.names:
            self._record(entry.name)

    def visit_ImportFrom(self, node):
        source = self._absolute(node.module, node.level or 0)
        for entry in node.names:
            self._record(source, entry.name)

    def visit_Call(self, node):
        if getattr(node.func, "id", None) == "__import__":
            try:
                self._dunder_import(node)
            except Exception:
                # A call whose arguments are not literals is skipped.
                pass

    def _dunder_import(self, call):
        # __import__(name, globals, locals, fromlist, level)
        target = _literal(call.args[0])
        members_node = _call_argument(call, 3, "fromlist")
        depth_node = _call_argument(call, 4, "level")
        members = [] if members_node is None else [_literal(elt) for elt in members_node.elts]
        depth = 0 if depth_node is None else _literal(depth_node)
        if members:
            source = self._absolute(target, depth)
            for member in members:
                self._record(source, member)
            return
        # Without a fromlist, __import__ returns the top package but loads the whole
        # dotted name: both are dependencies.
        self._record(target)
        if "." in target:
            self._record(self._absolute(target.rsplit(".", 1)[0], depth))


def find_files_source_depends_on(src: str, package: str) -> List[Tuple[str, Optional[str]]]:
    """(module, attribute-or-None) pairs that the source text `src`, a module of `package`,
    may import."""
    collector = _ImportCollector(package)
    collector.visit(ast.parse(src))
    return [*collector.found]
