"""tessera.library: defining and implementing operators from Python, as torch.library.

    lib = tessera.library.Library("myns", "DEF")
    lib.define("scale(Tensor x, float s) -> Tensor")
    lib.impl("scale", lambda x, s: x * s, "CPU")
    tessera.ops.myns.scale(t, 2.0)

A Library registers through the same dispatcher as TORCH_LIBRARY in C++: "DEF" owns a
namespace (one per namespace), "FRAGMENT" adds definitions to a namespace defined
elsewhere, "IMPL" only adds kernels. Registrations last as long as the Library object.
Kernels are Python functions called with the operator's arguments (keyword-only ones by
keyword) for one dispatch key ("CPU", "Meta", "CompositeImplicitAutograd", "Autograd", ...).
"""
from . import _C

__all__ = ["Library", "impl", "define"]

_reserved_namespaces = ["prim"]
# (namespace/op/key) of kernels registered from Python, to refuse a second one as torch does.
_impls = set()


class Library:
    """Library(ns, kind, dispatch_key=""): kind is "DEF", "IMPL" or "FRAGMENT"."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(ns, " is reserved namespace. Please try creating a library with another name.")
        self.m = _C._library_new(kind, ns, dispatch_key)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_impls = set()

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis=""):
        """Registers an operator schema ("name(Tensor x) -> Tensor"); returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        _C._library_define(self.m, schema)
        return schema.split("(", 1)[0]

    def impl(self, op_name, fn, dispatch_key=""):
        """Registers fn as op_name's kernel for dispatch_key (the library's key by default,
        else CompositeImplicitAutograd)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        if not isinstance(op_name, str):
            op_name = getattr(op_name, "__name__", None)
            if not isinstance(op_name, str):
                raise RuntimeError("impl should be passed either a name or an OpOverload object as the first argument")
            op_name = op_name.split("::", 1)[-1].replace(".default", "")
        key = f"{self.ns}/{op_name.split('::')[-1]}/{dispatch_key or 'CompositeImplicitAutograd'}"
        if key in _impls:
            raise RuntimeError("This is not allowed since there's already a kernel registered from python overriding "
                               f"{op_name.split('::')[-1]}'s behavior for {dispatch_key} dispatch key and {self.ns} "
                               "namespace.")
        _C._library_impl(self.m, op_name, dispatch_key, fn)
        _impls.add(key)
        self._op_impls.add(key)

    def _destroy(self):
        """Undoes every registration of this library now."""
        _impls.difference_update(self._op_impls)
        self._op_impls = set()
        self.m = None
        from .ops import ops
        ops._forget()

    def __del__(self):
        if getattr(self, "_op_impls", None):
            _impls.difference_update(self._op_impls)


def define(qualname, schema, *, lib=None):
    """define("ns::name", "(Tensor x) -> Tensor", lib=lib): a definition in a FRAGMENT
    library (created and kept alive here when none is given)."""
    ns, name = qualname.split("::", 1)
    if lib is None:
        lib = Library(ns, "FRAGMENT")
        _keep_alive.append(lib)
    lib.define(name + schema)


def impl(qualname, dispatch_key, func=None, *, lib=None):
    """impl("ns::name", "CPU", fn) or @impl("ns::name", "CPU"): registers a kernel."""
    ns, name = qualname.split("::", 1)

    def register(fn):
        target = lib
        if target is None:
            target = Library(ns, "FRAGMENT")
            _keep_alive.append(target)
        target.impl(name, fn, dispatch_key)
        return fn

    return register(func) if func is not None else register


_keep_alive = []
