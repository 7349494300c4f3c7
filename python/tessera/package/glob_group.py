"""GlobGroup: module-name (or path) patterns for PackageExporter's intern/extern/mock/deny
and for file_structure()."""
import re
from typing import Iterable, Union

GlobPattern = Union[str, Iterable[str]]


class GlobGroup:
    """Patterns a name such as "foo.bar.baz" (segments joined by `separator`) is matched
    against. A segment of a pattern is a literal ("foo"), a literal with `*` wildcards
    ("foo*", "a*b") that match any run of characters within one segment, or "**", which
    matches any number (zero included) of whole segments. So "torch.**" matches "torch"
    and everything under it, "torch.*" only its direct children.

    A name matches the group when it matches some `include` pattern and no `exclude`
    pattern; each may be one string or several.
    """

    def __init__(self, include: GlobPattern, *, exclude: GlobPattern = (), separator: str = "."):
        self._dbg = f"GlobGroup(include={include}, exclude={exclude})"
        self.include = GlobGroup._glob_list(include, separator)
        self.exclude = GlobGroup._glob_list(exclude, separator)
        self.separator = separator

    def __str__(self):
        return self._dbg

    __repr__ = __str__

    def matches(self, candidate: str) -> bool:
        # Every segment, the first included, is matched with its leading separator.
        candidate = self.separator + candidate
        return (any(p.fullmatch(candidate) for p in self.include)
                and not any(p.fullmatch(candidate) for p in self.exclude))

    @staticmethod
    def _glob_list(elems: GlobPattern, separator: str = "."):
        patterns = [elems] if isinstance(elems, str) else elems
        return [GlobGroup._glob_to_re(p, separator) for p in patterns]

    @staticmethod
    def _glob_to_re(pattern: str, separator: str = "."):
        sep = re.escape(separator)
        within_segment = "[^" + sep + "]"

        def segment(text):
            if text == "**":
                return f"({sep}{within_segment}+)*"
            if "**" in text:
                raise ValueError("** can only appear as an entire path segment")
            return sep + (within_segment + "*").join(re.escape(piece) for piece in text.split("*"))

        return re.compile("".join(segment(s) for s in pattern.split(separator)))
