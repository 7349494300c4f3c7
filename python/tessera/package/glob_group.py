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
        self._label = f"GlobGroup(include={include}, exclude={exclude})"
        self.separator = separator
        self.include = _compile_all(include, separator)
        self.exclude = _compile_all(exclude, separator)

    def __str__(self):
        return self._label

    __repr__ = __str__

    def matches(self, candidate: str) -> bool:
        # Every segment, the first included, is matched with its leading separator.
        subject = f"{self.separator}{candidate}"
        if not any(rx.fullmatch(subject) for rx in self.include):
            return False
        return all(rx.fullmatch(subject) is None for rx in self.exclude)


def _compile_all(spec, separator):
    """One compiled regex per pattern of `spec` (a single string or an iterable of them)."""
    if isinstance(spec, str):
        spec = (spec,)
    return [_compile_one(text, separator) for text in spec]


def _compile_one(pattern, separator):
    """A regex for one glob pattern, each segment of it anchored on a leading separator."""
    delim = re.escape(separator)
    non_delim = f"[^{delim}]"
    chunks = []
    for part in pattern.split(separator):
        if part == "**":
            chunks.append(f"(?:{delim}{non_delim}+)*")
            continue
        if "**" in part:
            raise ValueError("** can only appear as an entire path segment")
        literal_bits = [re.escape(bit) for bit in part.split("*")]
        chunks.append(delim + f"{non_delim}*".join(literal_bits))
    return re.compile("".join(chunks))
