"""The data model of Tessera's codegen: operator schemas parsed from ops.yaml.

Only the aten subset of PyTorch's schema language appears in ops.yaml, so this parser
reads that subset (the C++ parser in aten/schema reads the whole language). A schema
that uses something outside it fails loudly with the op's name.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

# The keys an ops.yaml `dispatch:` line may name (gen.py writes one Register<key>.cpp each).
DISPATCH_KEYS = ("CPU", "Meta", "MkldnnCPU", "NestedTensorCPU", "SparseCPU", "SparseCsrCPU", "SparseMeta",
                 "SparseCsrMeta", "QuantizedCPU", "QuantizedMeta", "CompositeExplicitAutograd")
# Layouts whose kernels take the operator's own signature even on a structured op or its
# delegates (add.out's MkldnnCPU kernel fills `out` itself; no shape function runs first).
PLAIN_KERNEL_KEYS = ("MkldnnCPU", "NestedTensorCPU", "SparseCPU", "SparseCsrCPU", "SparseMeta", "SparseCsrMeta",
                     "QuantizedCPU", "QuantizedMeta")

BASE_TYPES = {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
              "Device", "MemoryFormat", "Generator", "Dimname", "QScheme"}


@dataclasses.dataclass(frozen=True)
class Type:
    base: str                      # "Tensor", "int", ...
    optional: bool = False         # T?
    is_list: bool = False          # T[] / T[N]
    size: Optional[int] = None     # N of T[N]
    elem_optional: bool = False    # Tensor?[]

    @staticmethod
    def parse(text: str) -> "Type":
        m = re.fullmatch(r"(\w+)(\?)?(?:\[(\d*)\])?(\?)?", text)
        if not m or m.group(1) not in BASE_TYPES:
            raise ValueError(f"unsupported type '{text}'")
        base, q1, size, q2 = m.groups()
        is_list = size is not None
        if is_list:
            return Type(base, optional=bool(q2), is_list=True, size=int(size) if size else None,
                        elem_optional=bool(q1))
        return Type(base, optional=bool(q1))

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.size if self.size is not None else ''}]"
        return s + ("?" if self.optional else "")

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def carries_tensors(self) -> bool:
        return self.base == "Tensor"


@dataclasses.dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: Optional[str]
    kwarg_only: bool
    alias: Optional[str]           # "a", "a!" ... as written inside the parentheses

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")

    @property
    def is_out(self) -> bool:
        return self.kwarg_only and self.is_write


@dataclasses.dataclass(frozen=True)
class Return:
    name: Optional[str]
    type: Type
    alias: Optional[str]

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")


@dataclasses.dataclass(frozen=True)
class Schema:
    name: str                      # "add"
    overload: str                  # "Tensor", "" for none
    arguments: tuple
    returns: tuple
    text: str                      # as written in ops.yaml

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.endswith("__")

    @property
    def is_out(self) -> bool:
        return any(a.is_out for a in self.arguments)

    @property
    def out_arguments(self):
        return [a for a in self.arguments if a.is_out]

    @property
    def non_out_arguments(self):
        return [a for a in self.arguments if not a.is_out]

    @property
    def has_tensor_arguments(self) -> bool:
        return any(a.type.carries_tensors for a in self.arguments)

    @property
    def tensor_options_group(self) -> bool:
        names = [a.name for a in self.arguments]
        return all(n in names for n in ("dtype", "layout", "device", "pin_memory"))


_ARG = re.compile(r"^(?P<type>[\w?\[\]]+?)(?:\((?P<alias>[^)]*)\))?(?P<after>[\w?\[\]]*)\s+(?P<name>\w+)(?:=(?P<default>.+))?$")
_RET = re.compile(r"^(?P<type>[\w?\[\]]+?)(?:\((?P<alias>[^)]*)\))?(?P<after>[\w?\[\]]*)(?:\s+(?P<name>\w+))?$")


def _split_top_level(text: str):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_schema(text: str) -> Schema:
    m = re.fullmatch(r"\s*([\w.]+)\((.*)\)\s*->\s*(.+?)\s*", text)
    if not m:
        raise ValueError(f"cannot parse schema '{text}'")
    full, args_text, rets_text = m.groups()
    name, _, overload = full.partition(".")
    args, kwarg_only = [], False
    for part in _split_top_level(args_text):
        if part == "*":
            kwarg_only = True
            continue
        a = _ARG.match(part)
        if not a:
            raise ValueError(f"{full}: cannot parse argument '{part}'")
        typ = Type.parse(a.group("type") + a.group("after"))
        args.append(Argument(a.group("name"), typ, a.group("default"), kwarg_only, a.group("alias")))
    rets_text = rets_text.strip()
    if rets_text.startswith("("):
        ret_parts = _split_top_level(rets_text[1:-1])
    else:
        ret_parts = [rets_text]
    rets = []
    for part in ret_parts:
        r = _RET.match(part)
        if not r:
            raise ValueError(f"{full}: cannot parse return '{part}'")
        rets.append(Return(r.group("name"), Type.parse(r.group("type") + r.group("after")), r.group("alias")))
    return Schema(name, overload, tuple(args), tuple(rets), text.strip())


@dataclasses.dataclass
class Op:
    """One ops.yaml entry."""
    schema: Schema
    variants: tuple = ("function",)
    dispatch: dict = dataclasses.field(default_factory=dict)  # key -> native kernel name
    structured: bool = False
    structured_delegate: Optional[str] = None
    python: bool = True
    # A TensorIterator family (unary, unary_float, binary, ...): the shape function and the
    # CPU kernel are generated; a per-ISA kernel registered on <name>_stub does the math.
    iterator: Optional[str] = None
    manual_meta: bool = False
    # Arguments checked by a hand-written meta::check_<name>(...) before the generated
    # shape function (and the CPU kernel's single iterator) run: alpha, matching dtypes.
    iterator_check: bool = False
    # The per-ISA file (its stem, under the op's family's cpu/ folder) that defines the
    # iterator op's <name>_kernel and includes the generated Register<stem>.h; by default
    # the iterator family's (ITERATOR_KERNEL_FILES).
    cpu_kernels: Optional[str] = None
    # A Scalar overload (add.Scalar) that calls the named Tensor overload (add.Tensor) with
    # its Scalar operands as wrapped-number tensors: its kernel is generated.
    wraps: Optional[str] = None
    # An out= op computed by a functional overload (its full name): the generated
    # CompositeExplicitAutograd kernel calls it, resizes `out` and copies the result in.
    functional: Optional[str] = None
    # A factory made by another one and filled: `empty.memory_format(0)` calls that op with
    # the arguments of the same names (others at their defaults), then fill_(0); the value
    # is a number or one of the op's Scalar arguments. Its composite kernel is generated.
    fill: Optional[str] = None
    # A Python number may stand for the op's Tensor arguments in its binding (torch allows it
    # for add, sub, mul, div, true_divide, floor_divide, to, _to_copy and copy_ only).
    python_numbers: bool = False
    # The Python operator this op implements on tessera.Tensor (__add__, __iadd__, __eq__,
    # __neg__, ...): its number slot or rich comparison is generated (gen_python.py).
    python_operator: Optional[str] = None
    # The Python submodule a function binding lives in (torch.linalg.vector_norm is
    # linalg_vector_norm with python_module: linalg): tessera._C._<module>.
    python_module: Optional[str] = None
    # The op's Autograd kernel is hand-written (autograd/VariableTypeManual.cpp), as torch's
    # VariableTypeManual: detach_ and requires_grad_ change a tensor's autograd state rather
    # than compute; no Autograd or ADInplaceOrView kernel is generated for it.
    manual_autograd: bool = False
    # Registered for the dispatcher only (tessera.ops.aten, boxed calls): no at:: function,
    # Tensor method or Python binding is generated; the hand-written Tensor method and
    # Python attribute are the op's bindings (torch's manual_cpp_binding: is_leaf, data, ...).
    manual_cpp_binding: bool = False
    # torch's autocast list the op is on (lower_precision_fp, fp32 or promote): its
    # AutocastCPU kernel casts the arguments so (aten/autocast); unlisted ops fall through.
    autocast: Optional[str] = None

    @property
    def is_composite_implicit(self) -> bool:
        return not self.dispatch and self.structured_delegate is None and self.functional is None

    @staticmethod
    def from_yaml(entry: dict) -> "Op":
        unknown = set(entry) - {"func", "variants", "dispatch", "structured", "structured_delegate", "python",
                                "iterator", "manual_meta", "iterator_check", "wraps", "functional", "python_module",
                                "fill", "python_numbers", "python_operator", "cpu_kernels", "manual_autograd",
                                "manual_cpp_binding", "autocast"}
        if unknown:
            raise ValueError(f"{entry.get('func')}: unknown ops.yaml fields {sorted(unknown)}")
        schema = parse_schema(entry["func"])
        dispatch = {}
        for keys, kernel in (entry.get("dispatch") or {}).items():
            for key in str(keys).split(","):
                if key.strip() not in DISPATCH_KEYS:
                    raise ValueError(f"{entry.get('func')}: dispatch key '{key.strip()}' is not one of {DISPATCH_KEYS}")
                dispatch[key.strip()] = kernel
        variants = tuple(v.strip() for v in str(entry.get("variants", "function")).split(","))
        op = Op(schema, variants, dispatch, bool(entry.get("structured", False)),
                entry.get("structured_delegate"), bool(entry.get("python", True)), entry.get("iterator"),
                bool(entry.get("manual_meta", False)), wraps=entry.get("wraps"), functional=entry.get("functional"),
                python_module=entry.get("python_module"), iterator_check=bool(entry.get("iterator_check", False)),
                fill=entry.get("fill"), python_numbers=bool(entry.get("python_numbers", False)),
                python_operator=entry.get("python_operator"), cpu_kernels=entry.get("cpu_kernels"),
                manual_autograd=bool(entry.get("manual_autograd", False)),
                manual_cpp_binding=bool(entry.get("manual_cpp_binding", False)), autocast=entry.get("autocast"))
        if op.autocast is not None and op.autocast not in AUTOCAST_POLICIES:
            raise ValueError(f"{schema.full_name}: autocast: '{op.autocast}' is not one of {AUTOCAST_POLICIES}")
        if op.manual_cpp_binding:
            if "variants" in entry or "python" in entry:
                raise ValueError(f"{schema.full_name}: manual_cpp_binding: has no generated variants or binding")
            op.variants, op.python = (), False
        if op.cpu_kernels is not None and op.iterator is None:
            raise ValueError(f"{schema.full_name}: cpu_kernels: is for iterator: ops")
        for generated in ("wraps", "fill"):
            if getattr(op, generated) is not None and (op.dispatch or op.structured or op.structured_delegate):
                raise ValueError(f"{schema.full_name}: {generated}: is a composite; it takes no dispatch or structured keys")
        if op.functional is not None and (not schema.is_out or op.dispatch or op.structured or op.structured_delegate):
            raise ValueError(f"{schema.full_name}: functional: is for out= ops without dispatch or structured keys")
        if op.iterator is not None:
            if op.iterator not in ITERATOR_FAMILIES:
                raise ValueError(f"{schema.full_name}: unknown iterator family '{op.iterator}'")
            if not op.structured:
                raise ValueError(f"{schema.full_name}: iterator: needs structured: True")
            if op.iterator_check and op.manual_meta:
                raise ValueError(f"{schema.full_name}: iterator_check: is for generated shape functions, not manual_meta")
            op.dispatch.setdefault("CPU", f"iterator_kernel_{schema.name}_{schema.overload}".rstrip("_"))
        return op


# torch's autocast policies, as the `autocast:` field names them.
AUTOCAST_POLICIES = ("lower_precision_fp", "fp32", "promote")

# The per-ISA file whose loops an iterator family's ops use unless cpu_kernels: says otherwise.
ITERATOR_KERNEL_FILES = {"unary": "UnaryOpsKernel", "unary_float": "UnaryOpsKernel", "unary_bool": "UnaryOpsKernel",
                         "unary_real_output": "UnaryOpsKernel", "binary": "BinaryOpsKernel",
                         "binary_float": "BinaryOpsKernel", "comparison": "BinaryOpsKernel",
                         "ternary": "TernaryOpsKernel"}

# TensorIterator families (at::IteratorFamily in aten/native/TensorIterator.h).
ITERATOR_FAMILIES = {"unary": "Unary", "unary_float": "UnaryFloat", "unary_real_output": "UnaryRealOutput",
                     "binary": "Binary",
                     "binary_float": "BinaryFloat", "comparison": "Comparison", "ternary": "Ternary",
                     "unary_bool": "UnaryBool"}
