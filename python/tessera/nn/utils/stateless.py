"""functional_call, with the interface of torch.nn.utils.stateless (1.13): run a module
with given tensors standing in for some of its parameters and buffers. For the duration
of the call every submodule concerned is given a throwaway subclass whose attribute
reads and writes of the replaced names go to the given tensors."""
import contextlib
import warnings

from tessera import Tensor  # noqa: F401 (part of torch's module namespace)

__all__ = ["functional_call"]


class _Substitution:
    """One functional_call's replacements: ``values`` maps dotted paths to tensors; for
    each submodule touched, its real class and its {attribute: path} table are kept."""

    def __init__(self, values):
        self.values = values
        self.patched = {}  # id(submodule) -> (submodule, real class, {attribute: path})
        self.first_given = {}  # id(tensor being replaced) -> the value given for it first

    def _owner(self, root, path):
        *parents, attr = path.split(".")
        for part in parents:
            root = getattr(root, part)
        return root, attr

    def _note_tied(self, module, attr, path):
        # Tied weights: only the paths given are replaced. Two different values for one
        # shared tensor get torch 1.13's deprecation warning.
        if not hasattr(module, attr):
            return
        shared = getattr(module, attr)
        given = self.values[path]
        earlier = self.first_given.setdefault(id(shared), given)
        if earlier is not given:
            warnings.warn("functional_call was passed multiple values for tied weights. "
                          "This behavior is deprecated and will be an error in future versions")

    def install(self, root):
        for path in self.values:
            module, attr = self._owner(root, path)
            self._note_tied(module, attr, path)
            entry = self.patched.get(id(module))
            if entry is None:
                entry = (module, type(module), {})
                self.patched[id(module)] = entry
                module.__class__ = self._stand_in(entry[1], entry[2])
            entry[2][attr] = path

    def _stand_in(self, real, table):
        values = self.values

        def __getattribute__(obj, name):
            if name in table:
                return values[table[name]]
            return real.__getattribute__(obj, name)

        def __setattr__(obj, name, value):
            if name in table:
                values[table[name]] = value
                return None
            return real.__setattr__(obj, name, value)

        return type("StatelessReplacer" + real.__name__, (real,),
                    {"__getattribute__": __getattribute__, "__setattr__": __setattr__})

    def uninstall(self):
        for module, real, _ in self.patched.values():
            module.__class__ = real
        self.patched.clear()


@contextlib.contextmanager
def _substituted(module, parameters_and_buffers):
    sub = _Substitution(parameters_and_buffers)
    try:
        sub.install(module)
        yield
    finally:
        sub.uninstall()


def functional_call(module, parameters_and_buffers, args, kwargs=None):
    """``module(*args, **kwargs)`` computed with the tensors of ``parameters_and_buffers``
    (named as by ``named_parameters``/``named_buffers``, e.g. ``"0.weight"``) instead of the
    module's own; the module is left as it was. An ``args`` that is not a tuple is the one
    positional argument."""
    positional = args if isinstance(args, tuple) else (args,)
    with _substituted(module, parameters_and_buffers):
        return module(*positional, **(kwargs or {}))
