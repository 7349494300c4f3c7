"""tessera.utils._pytree: nested containers ("pytrees") taken apart into their leaves and a
spec of their structure, and put back together, as torch.utils._pytree does.

Containers are the types in SUPPORTED_NODES: list, tuple, dict, OrderedDict, every
namedtuple (registered under `collections.namedtuple`) and tessera.return_types' types
(registered when first seen, as torch registers torch.return_types'), plus what
register_pytree_node adds. Anything else, None included (as torch 1.13), is a leaf. A TreeSpec records each
container's type, its context (a dict's keys, a namedtuple's class) and its children's
specs; its repr is torch's (``TreeSpec(tuple, None, [*, *])``, a leaf ``*``).
"""
import functools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

__all__ = ["LeafSpec", "SUPPORTED_NODES", "TreeSpec", "register_pytree_node", "tree_all", "tree_all_only",
           "tree_any", "tree_any_only", "tree_flatten", "tree_leaves", "tree_map", "tree_map_only",
           "tree_structure", "tree_unflatten"]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], Tuple[List[Any], Context]]
UnflattenFunc = Callable[[List[Any], Context], PyTree]


class NodeDef(NamedTuple):
    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc


SUPPORTED_NODES = {}


def _register_pytree_node(typ, flatten_fn, unflatten_fn):
    """Makes `typ` a container: flatten_fn(x) -> (children, context) and
    unflatten_fn(children, context) -> x (torch 1.13's name: a second registration replaces
    the first)."""
    SUPPORTED_NODES[typ] = NodeDef(flatten_fn, unflatten_fn)


def register_pytree_node(typ, flatten_fn, unflatten_fn):
    """_register_pytree_node under current PyTorch's public name, which refuses to register a
    type twice."""
    if typ in SUPPORTED_NODES:
        raise ValueError(f"{typ} is already registered as pytree node.")
    _register_pytree_node(typ, flatten_fn, unflatten_fn)

_register_pytree_node(list, lambda xs: (list(xs), None), lambda children, _: list(children))
_register_pytree_node(tuple, lambda xs: (list(xs), None), lambda children, _: tuple(children))
_register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                      lambda children, keys: dict(zip(keys, children)))
_register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                      lambda children, keys: OrderedDict(zip(keys, children)))
_register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda children, cls: cls(*children))


def _register_return_type(cls):
    """A tessera.return_types class (a struct sequence the extension makes on first use) as a
    container of its tensors, context None, as torch.return_types' are."""
    _register_pytree_node(cls, lambda r: (list(r), None), lambda children, _: cls(children))


def _is_namedtuple(x):
    """A direct subclass of tuple whose _fields is a tuple of str (what namedtuple makes)."""
    cls = type(x)
    if cls.__bases__ != (tuple,):
        return False
    fields = getattr(cls, "_fields", None)
    return isinstance(fields, tuple) and all(type(f) is str for f in fields)


def _node_type(x):
    if _is_namedtuple(x):
        return namedtuple
    cls = type(x)
    if cls not in SUPPORTED_NODES and cls.__module__ == "tessera.return_types" and hasattr(cls, "n_sequence_fields"):
        _register_return_type(cls)
    return cls


def _is_leaf(x):
    return _node_type(x) not in SUPPORTED_NODES


class TreeSpec:
    """The structure of a pytree: its root's type and context and its children's specs."""

    def __init__(self, typ, context, children_specs):
        self.type = typ
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum(child.num_leaves for child in children_specs)

    def __repr__(self):
        return f"TreeSpec({self.type.__name__}, {self.context}, {self.children_specs})"

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type == other.type and self.context == other.context
                and self.children_specs == other.children_specs and self.num_leaves == other.num_leaves)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None


class LeafSpec(TreeSpec):
    """The spec of one leaf."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self):
        return "*"


def _flatten_into(tree, leaves):
    """Appends tree's leaves to `leaves` and returns its spec."""
    if _is_leaf(tree):
        leaves.append(tree)
        return LeafSpec()
    kind = _node_type(tree)
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten_into(child, leaves) for child in children])


def tree_flatten(pytree: PyTree) -> Tuple[List[Any], TreeSpec]:
    """The leaves of `pytree` in order, and the spec that tree_unflatten rebuilds it from."""
    leaves = []
    spec = _flatten_into(pytree, leaves)
    return leaves, spec


def tree_leaves(pytree: PyTree) -> List[Any]:
    """The leaves of `pytree`, in tree_flatten's order."""
    return tree_flatten(pytree)[0]


def tree_structure(pytree: PyTree) -> TreeSpec:
    """The spec of `pytree`."""
    return tree_flatten(pytree)[1]


def tree_unflatten(values: List[Any], spec: TreeSpec) -> PyTree:
    """The pytree of structure `spec` whose leaves are `values` (tree_flatten's inverse)."""
    if not isinstance(spec, TreeSpec):
        raise ValueError(f"tree_unflatten(values, spec): Expected `spec` to be instance of TreeSpec but got item of "
                         f"type {type(spec)}.")
    if len(values) != spec.num_leaves:
        raise ValueError(f"tree_unflatten(values, spec): `values` has length {len(values)} but the spec refers to a "
                         f"pytree that holds {spec.num_leaves} items ({spec}).")
    leaves = iter(values)

    def build(node):
        if isinstance(node, LeafSpec):
            return next(leaves)
        children = [build(child) for child in node.children_specs]
        return SUPPORTED_NODES[node.type].unflatten_fn(children, node.context)

    return build(spec)


def tree_map(fn: Callable[[Any], Any], pytree: PyTree) -> PyTree:
    """`pytree` with fn applied to each leaf."""
    leaves, spec = tree_flatten(pytree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def map_only(ty):
    """Decorator: fn applied to leaves of type `ty` (a type or a tuple of types), others kept."""
    def wrap(fn):
        @functools.wraps(fn)
        def only(x):
            return fn(x) if isinstance(x, ty) else x
        return only
    return wrap


def tree_map_only(ty, fn: Callable[[Any], Any], pytree: PyTree) -> PyTree:
    """`pytree` with fn applied to its leaves of type `ty`."""
    return tree_map(map_only(ty)(fn), pytree)


def tree_all(pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    return all(map(pred, tree_leaves(pytree)))


def tree_any(pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    return any(map(pred, tree_leaves(pytree)))


def tree_all_only(ty, pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """pred holds for every leaf of type `ty` (others are not asked)."""
    return all(pred(x) for x in tree_leaves(pytree) if isinstance(x, ty))


def tree_any_only(ty, pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """pred holds for some leaf of type `ty`."""
    return any(pred(x) for x in tree_leaves(pytree) if isinstance(x, ty))


def _broadcast_to_and_flatten(pytree: PyTree, spec: TreeSpec) -> Optional[List[Any]]:
    """`pytree` as the leaves of `spec`, a leaf standing for every leaf of its subtree
    (vmap's in_dims against its inputs); None when the structures disagree."""
    if _is_leaf(pytree):
        return [pytree] * spec.num_leaves
    if isinstance(spec, LeafSpec) or _node_type(pytree) != spec.type:
        return None
    children, context = SUPPORTED_NODES[spec.type].flatten_fn(pytree)
    if len(children) != len(spec.children_specs) or context != spec.context:
        return None
    flat = []
    for child, child_spec in zip(children, spec.children_specs):
        part = _broadcast_to_and_flatten(child, child_spec)
        if part is None:
            return None
        flat.extend(part)
    return flat
