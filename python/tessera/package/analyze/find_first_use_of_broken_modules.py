from typing import Dict, List

from ..package_exporter import PackagingError

__all__ = ["find_first_use_of_broken_modules"]


def find_first_use_of_broken_modules(exc: PackagingError) -> Dict[str, List[str]]:
    """For each module a PackagingError reports, the dependency path (from the first thing
    saved down to the module) through which it was first reached."""
    assert isinstance(exc, PackagingError), "exception must be a PackagingError"
    graph = exc.dependency_graph
    return {name: graph.first_path(name) for name, attrs in graph.nodes.items() if attrs.get("error", False)}
