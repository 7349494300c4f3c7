"""The stand-in for attributes of mocked modules. PackageExporter copies this file's source
into archives as the module `_mock`, so it imports nothing but builtins.

A mocked module answers every attribute lookup with a MockedObject; using one (calling it,
arithmetic, iteration, ...) raises NotImplementedError naming the attribute.
"""

_DUNDERS = [
    "__abs__", "__add__", "__and__", "__bool__", "__bytes__", "__call__", "__ceil__", "__cmp__", "__complex__",
    "__contains__", "__copy__", "__deepcopy__", "__delattr__", "__delitem__", "__dir__", "__div__", "__divmod__",
    "__enter__", "__eq__", "__exit__", "__float__", "__floor__", "__floordiv__", "__ge__", "__getattr__",
    "__getitem__", "__getstate__", "__gt__", "__hash__", "__hex__", "__iadd__", "__iand__", "__idiv__",
    "__ifloordiv__", "__ilshift__", "__imod__", "__imul__", "__index__", "__instancecheck__", "__int__",
    "__invert__", "__ior__", "__ipow__", "__irshift__", "__isub__", "__iter__", "__itruediv__", "__ixor__",
    "__le__", "__len__", "__long__", "__lshift__", "__lt__", "__mod__", "__mul__", "__ne__", "__neg__",
    "__nonzero__", "__oct__", "__or__", "__pos__", "__pow__", "__rand__", "__rdivmod__", "__reduce__",
    "__reversed__", "__rmul__", "__round__", "__rrshift__", "__rshift__", "__setattr__", "__setitem__",
    "__sizeof__", "__sub__", "__subclasscheck__", "__truediv__", "__trunc__", "__unicode__", "__xor__",
]


class MockedObject:
    _name: str

    def __new__(cls, *args, **kwargs):
        # Only a mocked module's __getattr__ creates these (it passes _suppress_err=True);
        # anything else constructing one, unpickling in particular, is using mocked code.
        if kwargs.pop("_suppress_err", False):
            return super().__new__(cls)
        label = getattr(cls, "_name", cls.__name__)
        raise NotImplementedError(
            f"Object '{label}' was mocked out during packaging but it is being "
            "used in '__new__'. If this error is happening during 'load_pickle', please ensure that your "
            "pickled object doesn't contain any mocked objects.")

    def __init__(self, name: str, _suppress_err: bool):
        # Stored through __dict__: __setattr__ itself refuses, like every other dunder.
        vars(self)["_name"] = name

    def __repr__(self):
        return "MockedObject(%s)" % (self._name,)


def _refusing(dunder):
    """A method that raises NotImplementedError naming `dunder` and the mocked attribute."""
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(
            f"Object '{self._name}' was mocked out during packaging but it is being used in {dunder}")
    refuse.__name__ = dunder
    return refuse


for _dunder in _DUNDERS:
    setattr(MockedObject, _dunder, _refusing(_dunder))
del _dunder
