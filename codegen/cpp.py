"""How schema types, names and defaults are spelled in Tessera's C++ API."""
from __future__ import annotations

import re

from model import Argument, Return, Schema, Type

_VALUE_TYPES = {
    "int": "int64_t", "SymInt": "int64_t", "float": "double", "bool": "bool",
    "str": "std::string_view", "ScalarType": "at::ScalarType", "Layout": "at::Layout",
    "Device": "at::Device", "MemoryFormat": "at::MemoryFormat", "Generator": "at::Generator",
    "Dimname": "at::Dimname", "QScheme": "at::QScheme",
}


def argument_type(arg: Argument, public: bool = False) -> str:
    """The C++ parameter type of an argument: what kernels and the dispatcher take, or with
    `public` what at:: functions and Tensor methods take (an optional list is then an
    OptionalArrayRef, which a single element cannot silently dangle into)."""
    t = arg.type
    if t.base == "Tensor":
        if t.is_list:
            inner = "std::optional<at::Tensor>" if t.elem_optional else "at::Tensor"
            return f"at::ArrayRef<{inner}>"
        if t.optional:
            return "const std::optional<at::Tensor>&"
        return "at::Tensor&" if arg.is_write else "const at::Tensor&"
    if t.is_list and t.base == "bool" and t.size is not None and not t.optional:
        return f"std::array<bool, {t.size}>"  # output_mask
    if t.is_list and t.base == "Dimname":
        # an optional name list (factories' names=) never binds a lone name, so one spelling serves
        return "std::optional<at::ArrayRef<at::Dimname>>" if t.optional else "at::ArrayRef<at::Dimname>"
    if t.is_list:
        elem = {"int": "int64_t", "SymInt": "int64_t", "float": "double"}.get(t.base)
        if elem is None:
            raise ValueError(f"unsupported list type {t}")
        ref = "at::IntArrayRef" if elem == "int64_t" else f"at::ArrayRef<{elem}>"
        if t.optional and public:
            return "at::OptionalIntArrayRef" if elem == "int64_t" else f"at::OptionalArrayRef<{elem}>"
        return f"std::optional<{ref}>" if t.optional else ref
    if t.base == "Scalar":
        return "const std::optional<at::Scalar>&" if t.optional else "const at::Scalar&"
    cpp = _VALUE_TYPES[t.base]
    return f"std::optional<{cpp}>" if t.optional else cpp


def return_type(schema: Schema) -> str:
    rets = schema.returns
    if len(rets) == 0:
        return "void"
    types = [_single_return(r) for r in rets]
    if len(types) == 1:
        return types[0]
    return f"std::tuple<{', '.join(types)}>"


def _single_return(r: Return) -> str:
    t = r.type
    if t.base == "Tensor":
        if t.is_list:
            return "std::vector<at::Tensor>"
        return "at::Tensor&" if r.is_write else "at::Tensor"
    if t.base == "Scalar":
        return "at::Scalar"
    return _VALUE_TYPES[t.base]


_ENUM_TYPES = {"ScalarType", "Layout", "MemoryFormat"}

_DEFAULT_WORDS = {
    "None": "std::nullopt", "True": "true", "False": "false",
    "contiguous_format": "at::MemoryFormat::Contiguous", "channels_last": "at::MemoryFormat::ChannelsLast",
    "channels_last_3d": "at::MemoryFormat::ChannelsLast3d",
    "preserve_format": "at::MemoryFormat::Preserve", "long": "at::kLong", "float": "at::kFloat",
    "strided": "at::kStrided",
}


def default_value(arg: Argument) -> str:
    d = arg.default
    if d in _DEFAULT_WORDS:
        return _DEFAULT_WORDS[d]
    if d.startswith("["):
        return "{" + d[1:-1] + "}"
    if d.startswith('"') or d.startswith("'"):
        return '"' + d[1:-1] + '"'
    if arg.type.is_list:        # `int[2] stride=1` means [1, 1]: one value, broadcast by kernels
        return d
    if arg.type.base in _ENUM_TYPES and re.fullmatch(r"-?\d+", d):
        # torch prints some enum defaults as numbers (`MemoryFormat memory_format=0`)
        return f"static_cast<{_VALUE_TYPES[arg.type.base]}>({d})"
    return d


def parameters(args, with_defaults: bool, required: int = 0, public: bool = False) -> str:
    """C++ parameters; defaults only on the trailing run of defaulted arguments, and not on
    the first `required` ones; `public` as in argument_type."""
    out = []
    trailing = True
    rendered = []
    for i, a in reversed(list(enumerate(args))):
        text = f"{argument_type(a, public)} {a.name}"
        if with_defaults and trailing and a.default is not None and i >= required:
            text += f"={default_value(a)}"
        else:
            trailing = False
        rendered.append(text)
    out = list(reversed(rendered))
    return ", ".join(out)


def required_for_overload(schema: Schema, base) -> int:
    """How many leading arguments of an overload go without defaults so that a call also
    valid for the base overload of the same name (conv2d vs conv2d.padding) is not
    ambiguous: up to and including the first whose C++ type differs from the base's."""
    if base is None or base is schema:
        return 0
    for i, a in enumerate(schema.arguments):
        if i >= len(base.arguments) or argument_type(a) != argument_type(base.arguments[i]):
            return i + 1
    return len(schema.arguments)


def signature_type(schema: Schema) -> str:
    """The function type callers and kernels share: `at::Tensor(const at::Tensor&, ...)`."""
    return f"{return_type(schema)}({', '.join(argument_type(a) for a in schema.arguments)})"


def cpp_name(schema: Schema) -> str:
    """The at:: function name: the base name, or name_out for out= overloads."""
    return f"{schema.name}_out" if schema.is_out else schema.name


def identifier(schema: Schema) -> str:
    """A unique C identifier for the overload: add_Tensor, add_out, empty_memory_format."""
    return schema.name + ("_" + schema.overload if schema.overload else "")
