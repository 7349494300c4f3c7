"""Run unmodified torch programs and libraries on tessera: after ``install()`` the import
system answers ``import torch`` and ``import torch.<anything>`` with tessera's module of
the same path (``torch.nn`` *is* ``tessera.nn``), so a package such as torchvision, which
imports torch itself, runs on tessera without a line changed.

    import tessera.as_torch
    tessera.as_torch.install()
    import torchvision                      # its `import torch` gets tessera

    python3 -m tessera.as_torch train.py --epochs 3   # the same for a whole script

PyTorch itself must not be imported in the same process first (install refuses: two
tensor libraries under one name would mix silently). A submodule tessera lacks fails as
``No module named 'torch.<name>'``, as it would with a torch that lacks it. Processes
started with multiprocessing's spawn method install the alias too.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys

__all__ = ["install", "uninstall", "is_installed"]

_ALIAS = "torch"
_TARGET = "tessera"


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system the tessera module that is already imported instead of
    executing a file: the alias and the original are one object (which keeps its own
    __spec__ and, if it is not a package, no __path__)."""

    def __init__(self, module):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        module.__spec__ = self._spec  # the import system set the alias's spec on it


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        real = _TARGET + fullname[len(_ALIAS):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name != real:
                raise  # tessera's module exists but an import inside it failed
            # None: the import system goes on to the path finder, which looks for the
            # submodule inside tessera's package (the parent torch is tessera) and fails
            # with "No module named 'torch.<name>'"; PyTorch's files are never reached.
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"))


_finder = _TorchAliasFinder()


def is_installed():
    """Whether ``import torch`` currently resolves to tessera."""
    return _finder in sys.meta_path


def _spawn_command_line(original):
    """multiprocessing's spawn starts a fresh interpreter (``python -c 'from
    multiprocessing.spawn import spawn_main; ...'``): the alias is installed there first,
    so its ``import torch`` is tessera too."""
    def command_line(**kwds):
        cmd = list(original(**kwds))
        if "-c" in cmd:
            i = cmd.index("-c") + 1
            cmd[i] = "import tessera.as_torch; tessera.as_torch.install(); " + cmd[i]
        return cmd
    command_line._tessera_as_torch = True
    command_line._original = original
    return command_line


def install():
    """Make ``torch`` and every ``torch.*`` import resolve to tessera in this process (and
    in processes multiprocessing spawns from it)."""
    existing = sys.modules.get(_ALIAS)
    if existing is not None and existing is not sys.modules[_TARGET]:
        raise RuntimeError("tessera.as_torch.install(): PyTorch is already imported in this process; "
                           "install the alias before anything imports torch")
    if not is_installed():
        sys.meta_path.insert(0, _finder)
    import multiprocessing.spawn as spawn
    if not getattr(spawn.get_command_line, "_tessera_as_torch", False):
        spawn.get_command_line = _spawn_command_line(spawn.get_command_line)
    # tessera's modules already loaded answer under both names at once
    for name, module in list(sys.modules.items()):
        if module is not None and (name == _TARGET or name.startswith(_TARGET + ".")):
            sys.modules.setdefault(_ALIAS + name[len(_TARGET):], module)


def uninstall():
    """Remove the alias and every ``torch.*`` entry it put in sys.modules."""
    if is_installed():
        sys.meta_path.remove(_finder)
    import multiprocessing.spawn as spawn
    if getattr(spawn.get_command_line, "_tessera_as_torch", False):
        spawn.get_command_line = spawn.get_command_line._original
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        module = sys.modules[name]
        if getattr(module, "__name__", "").split(".")[0] == _TARGET:
            del sys.modules[name]


def _main(argv):
    if len(argv) < 1 or argv[0] in ("-h", "--help"):
        print("usage: python3 -m tessera.as_torch SCRIPT [ARGS...] | -m MODULE [ARGS...]")
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("tessera.as_torch: -m needs a module name", file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        # as `python3 script.py` does: the script's directory comes first on the path
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    # run by `python3 -m tessera.as_torch`: this file is __main__, a second copy of the
    # module; the alias is tessera.as_torch's own, so use that one
    from tessera.as_torch import _main as main
    sys.exit(main(sys.argv[1:]))
