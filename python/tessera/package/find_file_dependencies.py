"""The modules a piece of Python source may import, found by walking its syntax tree:
`import a.b`, `from a import b` (b may be a submodule, so (a, b) is reported and the
exporter checks), relative imports resolved against the package, and literal
`__import__(...)` calls."""
import ast
from typing import List, Optional, Tuple

from ._importlib import _resolve_name


class _ExtractModuleReferences(ast.NodeVisitor):
    """Collects (module, name-or-None) pairs, in order of first appearance, without
    duplicates."""

    @classmethod
    def run(cls, src: str, package: str) -> List[Tuple[str, Optional[str]]]:
        visitor = cls(package)
        visitor.visit(ast.parse(src))
        return list(visitor.references)

    def __init__(self, package):
        super().__init__()
        self.package = package
        self.references = {}

    def _absmodule(self, module_name: str, level: int) -> str:
        return _resolve_name(module_name, self.package, level) if level > 0 else module_name

    def _add(self, module, name=None):
        self.references[(module, None if name == "*" else name)] = True

    def visit_Import(self, node):
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node):
        module = self._absmodule(node.module, node.level or 0)
        for alias in node.names:
            self._add(module, alias.name)

    def _grab_node_int(self, node):
        return node.value

    def _grab_node_str(self, node):
        return node.value

    def visit_Call(self, node):
        if getattr(node.func, "id", None) != "__import__":
            return
        # A call whose arguments are not literals is skipped.
        try:
            self._visit_dunder_import(node)
        except Exception:
            return

    def _keyword(self, node, name):
        return next((k.value for k in getattr(node, "keywords", ()) if k.arg == name), None)

    def _visit_dunder_import(self, node):
        name = self._grab_node_str(node.args[0])
        # __import__(name, globals, locals, fromlist, level)
        fromlist_node = node.args[3] if len(node.args) > 3 else self._keyword(node, "fromlist")
        fromlist = [self._grab_node_str(v) for v in fromlist_node.elts] if fromlist_node is not None else []
        level_node = node.args[4] if len(node.args) > 4 else self._keyword(node, "level")
        level = self._grab_node_int(level_node) if level_node is not None else 0
        if not fromlist:
            # Without a fromlist, __import__ returns the top package but loads the whole
            # dotted name: both are dependencies.
            self._add(name)
            parent = name.rsplit(".", maxsplit=1)[0]
            if parent != name:
                self._add(self._absmodule(parent, level))
        else:
            module = self._absmodule(name, level)
            for alias in fromlist:
                self._add(module, alias)


find_files_source_depends_on = _ExtractModuleReferences.run
