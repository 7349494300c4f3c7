"""Directory: the tree of files in a package archive, as PackageImporter.file_structure()
returns it; str() draws it."""
from typing import Dict, List

from .glob_group import GlobGroup, GlobPattern

__all__ = ["Directory"]


class Directory:
    """A node of the file tree: a directory (`is_dir`, with `children` by name) or a file."""

    def __init__(self, name: str, is_dir: bool):
        self.name = name
        self.is_dir = is_dir
        self.children: Dict[str, "Directory"] = {}

    def _get_dir(self, dirs: List[str]) -> "Directory":
        """The directory at the relative path `dirs`, created along the way."""
        node = self
        for name in dirs:
            if name not in node.children:
                node.children[name] = Directory(name, True)
            node = node.children[name]
        return node

    def _add_file(self, file_path: str):
        *dirs, file = file_path.split("/")
        self._get_dir(dirs).children[file] = Directory(file, False)

    def has_file(self, filename: str) -> bool:
        """Whether the "/"-separated relative path `filename` exists under this directory."""
        head, _, rest = filename.partition("/")
        child = self.children.get(head)
        if child is None:
            return False
        return True if not rest else child.has_file(rest)

    def __str__(self):
        lines: List[str] = []
        self._stringify_tree(lines)
        return "".join(lines)

    def _stringify_tree(self, str_list: List[str], preamble: str = "", dir_ptr: str = "─── "):
        """Appends this node's line and, below it, its subdirectories then its files, both
        sorted by name, drawn with box-drawing connectors."""
        str_list.append(f"{preamble}{dir_ptr}{self.name}\n")
        preamble += "│   " if dir_ptr == "├── " else "    "
        dirs = sorted(k for k, v in self.children.items() if v.is_dir)
        files = sorted(k for k, v in self.children.items() if not v.is_dir)
        for i, key in enumerate(dirs):
            is_last_entry = i == len(dirs) - 1 and not files
            self.children[key]._stringify_tree(str_list, preamble, "└── " if is_last_entry else "├── ")
        for i, key in enumerate(files):
            str_list.append(f"{preamble}{'└── ' if i == len(files) - 1 else '├── '}{key}\n")


def _create_directory_from_file_list(filename: str, file_list: List[str], include: "GlobPattern" = "**",
                                     exclude: "GlobPattern" = ()) -> Directory:
    """A Directory named `filename` holding the paths of `file_list` that match `include`
    and not `exclude` (patterns over "/"-separated paths)."""
    wanted = GlobGroup(include, exclude=exclude, separator="/")
    top = Directory(filename, True)
    for path in file_list:
        if wanted.matches(path):
            top._add_file(path)
    return top
