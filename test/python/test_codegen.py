"""codegen/: the ops.yaml model, the C++ spellings, and what the generator emits; plus the
check that every ops.yaml schema is torch 1.13's own."""
import pathlib
import re
import sys

import pytest
import torch
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import cpp  # noqa: E402
import gen  # noqa: E402
import gen_python  # noqa: E402
from model import Op, Type, parse_schema  # noqa: E402


# Operators of current PyTorch that 1.13 lacks (DESIGN.md: where 1.13 lags, follow current
# PyTorch), with the schema current PyTorch gives them.
_FUSED_ADAM_ARGS = ("Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, "
                    "Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, "
                    "float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, "
                    "Tensor? found_inf=None) -> ()")
CURRENT_TORCH_ONLY = {
    # prelu became a composite over _prelu_kernel (1.13's prelu had a kernel of its own)
    "aten::_prelu_kernel": "aten::_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
    # attention (PyTorch 2.x; enable_gqa since 2.5)
    "aten::scaled_dot_product_attention": "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
                                          "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, "
                                          "float? scale=None, bool enable_gqa=False) -> Tensor",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "aten::_scaled_dot_product_flash_attention_for_cpu(Tensor "
                                                         "query, Tensor key, Tensor value, float dropout_p=0., bool "
                                                         "is_causal=False, *, Tensor? attn_mask=None, float? "
                                                         "scale=None) -> (Tensor output, Tensor logsumexp)",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward":
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor key, "
        "Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, Tensor? attn_mask=None, "
        "float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
    # multi-tensor lerp (PyTorch 2.0) and the fused Adam / AdamW / SGD updates (CPU since 2.4)
    "aten::_foreach_lerp.Scalar": "aten::_foreach_lerp.Scalar(Tensor[] self, Tensor[] tensors1, Scalar weight) -> Tensor[]",
    "aten::_foreach_lerp_.Scalar": "aten::_foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) -> ()",
    "aten::_foreach_lerp.List": "aten::_foreach_lerp.List(Tensor[] self, Tensor[] tensors1, Tensor[] weights) -> Tensor[]",
    "aten::_foreach_lerp_.List": "aten::_foreach_lerp_.List(Tensor(a!)[] self, Tensor[] tensors1, Tensor[] weights) -> ()",
    "aten::_fused_adam_": "aten::_fused_adam_(" + _FUSED_ADAM_ARGS,
    "aten::_fused_adamw_": "aten::_fused_adamw_(" + _FUSED_ADAM_ARGS,
    "aten::_fused_sgd_": "aten::_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] momentum_buffer_list, "
                         "*, float weight_decay, float momentum, float lr, float dampening, bool nesterov, "
                         "bool maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
    # sparse (current PyTorch: SymInt sizes, is_coalesced=, to_sparse's layout/blocksize/dense_dim)
    "aten::_sparse_coo_tensor_with_dims_and_tensors":
        "aten::_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] size, Tensor indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? is_coalesced=None) -> Tensor",
    "aten::_sparse_coo_tensor_unsafe":
        "aten::_sparse_coo_tensor_unsafe(Tensor indices, Tensor values, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool? is_coalesced=None) -> Tensor",
    "aten::sparse_coo_tensor.indices":
        "aten::sparse_coo_tensor.indices(Tensor indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool? is_coalesced=None) -> Tensor",
    "aten::sparse_coo_tensor.indices_size":
        "aten::sparse_coo_tensor.indices_size(Tensor indices, Tensor values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool? is_coalesced=None) -> Tensor",
    "aten::_sparse_compressed_tensor_unsafe":
        "aten::_sparse_compressed_tensor_unsafe(Tensor compressed_indices, Tensor plain_indices, Tensor values, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::sparse_compressed_tensor.comp_plain_value_size":
        "aten::sparse_compressed_tensor.comp_plain_value_size(Tensor compressed_indices, Tensor plain_indices, Tensor values, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False) -> Tensor",
    "aten::to_sparse":
        "aten::to_sparse(Tensor self, *, Layout? layout=None, int[2]? blocksize=None, int? dense_dim=None) -> Tensor",
    "aten::to_sparse_csr":
        "aten::to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor",
    "aten::to_sparse_csc":
        "aten::to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor",
    "aten::to_sparse_bsr":
        "aten::to_sparse_bsr(Tensor self, int[2] blocksize, int? dense_dim=None) -> Tensor",
    "aten::to_sparse_bsc":
        "aten::to_sparse_bsc(Tensor self, int[2] blocksize, int? dense_dim=None) -> Tensor",
}


def test_every_ops_yaml_schema_is_torchs():
    torch_schemas = {str(s) for s in torch._C._jit_get_all_schemas()}
    by_name = {}
    for s in torch_schemas:
        by_name[s.split("(")[0]] = s
    by_name.update(CURRENT_TORCH_ONLY)
    ops = yaml.safe_load((ROOT / "ops.yaml").read_text())
    assert ops, "ops.yaml is empty"
    checked = 0
    for entry in ops:
        name = "aten::" + entry["func"].split("(")[0]
        if name not in by_name:
            # the Dimname overloads are in torch's dispatcher but not among its JIT schemas
            base, _, overload = name[len("aten::"):].partition(".")
            packet = getattr(torch.ops.aten, base, None)
            if packet is not None and overload in packet.overloads():
                by_name[name] = str(getattr(packet, overload)._schema)
        if name in by_name:
            # torch prints a Dimname (as its JIT type) as str; native_functions.yaml says Dimname
            assert "aten::" + re.sub(r"\bDimname(?=(\[\d*\])?\??\s)", "str", entry["func"]) == by_name[name]
            checked += 1
    assert checked == len(ops), "every current ops.yaml entry is a torch 1.13 operator"


def test_parse_schema_fields():
    s = parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert (s.name, s.overload, s.full_name) == ("add", "out", "add.out")
    assert [a.name for a in s.arguments] == ["self", "other", "alpha", "out"]
    assert [a.kwarg_only for a in s.arguments] == [False, False, True, True]
    assert s.arguments[2].default == "1"
    assert s.is_out and not s.is_inplace
    assert s.returns[0].is_write
    v = parse_schema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert str(v.arguments[1].type) == "SymInt[]" and v.arguments[0].alias == "a" and not v.arguments[0].is_write
    m = parse_schema("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert [r.name for r in m.returns] == ["values", "indices"]
    assert parse_schema("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)").is_inplace


@pytest.mark.parametrize("text,parsed", [
    ("int[2]", Type("int", is_list=True, size=2)), ("Tensor?", Type("Tensor", optional=True)),
    ("Tensor?[]", Type("Tensor", is_list=True, elem_optional=True)), ("int[1]?", Type("int", optional=True, is_list=True, size=1)),
])
def test_types(text, parsed):
    assert Type.parse(text) == parsed
    assert str(parsed) == text


def test_bad_types_and_schemas_are_errors():
    with pytest.raises(ValueError, match="unsupported type"):
        Type.parse("Dict(str, Tensor)")
    with pytest.raises(ValueError, match="cannot parse schema"):
        parse_schema("add(Tensor self")


def test_cpp_spellings():
    s = parse_schema("f(Tensor self, Tensor(a!) out, Tensor? w, Tensor[] ts, int[2] k, SymInt? n, float x, str? mode, "
                     "ScalarType? dtype, Scalar alpha, bool b=False, MemoryFormat m=contiguous_format) -> (Tensor, Tensor)")
    types = [cpp.argument_type(a) for a in s.arguments]
    assert types == ["const at::Tensor&", "at::Tensor&", "const std::optional<at::Tensor>&", "at::ArrayRef<at::Tensor>",
                     "at::IntArrayRef", "std::optional<int64_t>", "double", "std::optional<std::string_view>",
                     "std::optional<at::ScalarType>", "const at::Scalar&", "bool", "at::MemoryFormat"]
    assert cpp.return_type(s) == "std::tuple<at::Tensor, at::Tensor>"
    params = cpp.parameters(s.arguments, True)
    assert params.endswith("bool b=false, at::MemoryFormat m=at::MemoryFormat::Contiguous")
    assert "alpha=" not in params  # only the trailing run of defaults is spelled


SMALL_YAML = """
- func: empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CPU: empty_cpu
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: add_out_cpu
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
  variants: function, method
- func: zeros_like(Tensor self) -> Tensor
"""


def generated(tmp_path, text=SMALL_YAML):
    path = tmp_path / "ops.yaml"
    path.write_text(text)
    return gen.generate(gen.load_ops(path))


def test_generated_registrations(tmp_path):
    files = generated(tmp_path)
    schema = files["aten/ops/RegisterSchema.cpp"]
    assert 'm.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");' in schema
    cpu = files["aten/ops/RegisterCPU.cpp"]
    assert 'm.impl("empty.memory_format", TORCH_FN(native::empty_cpu));' in cpu
    assert 'm.impl("add.Tensor", TORCH_FN(wrapper_CPU_add_Tensor));' in cpu
    assert "native::add_out_cpu(self, other, alpha, out);" in cpu
    meta = files["aten/ops/RegisterMeta.cpp"]
    assert 'm.impl("add.out", TORCH_FN(wrapper_Meta_add_out));' in meta and "add_out_cpu" not in meta
    select = files["aten/ops/RegisterBackendSelect.cpp"]
    assert "backend_select_empty_memory_format" in select
    implicit = files["aten/ops/RegisterCompositeImplicitAutograd.cpp"]
    assert 'm.impl("zeros_like", TORCH_FN(native::zeros_like));' in implicit


def test_generated_api(tmp_path):
    files = generated(tmp_path)
    fns = files["aten/ops/Functions.h"]
    assert "TORCH_API at::Tensor empty(at::IntArrayRef size, at::TensorOptions options={}, " \
           "std::optional<at::MemoryFormat> memory_format=std::nullopt);" in fns
    assert "TORCH_API at::Tensor& add_out(at::Tensor& out, const at::Tensor& self, const at::Tensor& other, " \
           "const at::Scalar& alpha=1);" in fns
    assert "at::Tensor add(const at::Tensor& other, const at::Scalar& alpha=1) const;" in files["aten/ops/TensorMethods.inc"]
    native = files["aten/native/NativeFunctions.h"]
    assert "TORCH_API void add_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, " \
           "const at::Tensor& out);" in native
    assert "TORCH_API TensorMeta add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);" \
           in files["aten/native/MetaFunctions.h"]
    py = "".join(text for name, text in files.items() if name.startswith("csrc/"))
    assert 'PythonArgParser parser("add", {&at::ops::op_add_Tensor().schema()}, {&at::ops::op_add_out().schema()}, ' \
           'false, false, true);' in py
    assert '{"add", ' in py


@pytest.mark.parametrize("text,error", [
    ("- func: f(Tensor self) -> Tensor\n- func: f(Tensor self) -> Tensor\n", "defines f twice"),
    ("- func: f(Tensor self) -> Tensor\n  colour: red\n", "unknown ops.yaml fields"),
    ("- func: f(Tensor self) -> Tensor\n  structured_delegate: g.out\n", "is not a structured op"),
    ("- func: f(Tensor self) -> Tensor\n  structured: True\n", "only out= ops can be structured"),
])
def test_bad_yaml_is_rejected(tmp_path, text, error):
    with pytest.raises(ValueError, match=error):
        generated(tmp_path, text)


POLICY_YAML = SMALL_YAML.replace("  variants: function, method\n", "  variants: function, method\n"
                                  "  python_numbers: True\n  python_operator: __add__\n") + """
- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  fill: empty.memory_format(0)
- func: full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  fill: empty.memory_format(fill_value)
"""


def test_python_policy_fields(tmp_path):
    files = generated(tmp_path, POLICY_YAML)
    py = "".join(text for name, text in files.items() if name.startswith("csrc/python_bindings"))
    # numbers may stand for add's tensors; zeros takes requires_grad= (the parser's rule)
    assert 'PythonArgParser parser("add", {&at::ops::op_add_Tensor().schema()}, {&at::ops::op_add_out().schema()}, ' \
           'false, true, true);' in py
    assert "r.with_requires_grad(at::ops::op_zeros().call(" in py
    assert "r.with_requires_grad(at::ops::op_add_Tensor()" not in py
    slots = files["csrc/python_number_slots.cpp"]
    assert "return at::ops::op_add_Tensor().call(a, b, 1);" in slots
    assert "n.nb_add = binary_slot<operator_add, operator_add_api, operator_add_rapi>;" in slots
    filled = files["aten/ops/FilledFactories.cpp"]
    assert "at::Tensor result = ops::op_empty_memory_format().call(size, dtype, layout, device, pin_memory, " \
           "std::nullopt);\n  result.zero_();" in filled  # (zero_: a sparse zeros has no fill_)
    assert "result.fill_(fill_value);" in filled


@pytest.mark.parametrize("extra,error", [
    ("  python_operator: __spaceship__\n", "unknown python_operator"),
    ("  fill: nothing(0)\n", "fill: expects"),
    ("  fill: empty.memory_format(colour)\n", "neither a number nor a Scalar argument"),
])
def test_bad_policy_fields_are_rejected(tmp_path, extra, error):
    text = SMALL_YAML + "- func: g(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
                        "bool? pin_memory=None) -> Tensor\n" + extra
    with pytest.raises(ValueError, match=error):
        generated(tmp_path, text)


def test_out_twins_pair_functional_and_out(tmp_path):
    path = tmp_path / "ops.yaml"
    path.write_text(SMALL_YAML)
    ops = gen.load_ops(path)
    add = next(o for o in ops if o.schema.full_name == "add.Tensor")
    assert gen_python.out_twin(add, ops).schema.full_name == "add.out"
    assert gen_python.out_twin(next(o for o in ops if o.schema.name == "zeros_like"), ops) is None


def test_files_are_rewritten_only_when_changed(tmp_path):
    out = tmp_path / "gen"
    (tmp_path / "ops.yaml").write_text(SMALL_YAML)
    gen.main(["--ops", str(tmp_path / "ops.yaml"), "--out", str(out)])
    target = out / "aten/ops/Functions.h"
    mtime = target.stat().st_mtime_ns
    gen.main(["--ops", str(tmp_path / "ops.yaml"), "--out", str(out)])
    assert target.stat().st_mtime_ns == mtime


FUNCTIONAL_OUT_YAML = """
- func: rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
- func: rand_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
  functional: rand_like
  python: False
- func: clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
  variants: function, method
- func: clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
  functional: clone
"""


def test_functional_out_kernels_are_generated(tmp_path):
    files = generated(tmp_path, FUNCTIONAL_OUT_YAML)
    explicit = files["aten/ops/RegisterCompositeExplicitAutograd.cpp"]
    # the functional op with out's dtype/layout/device where the out= op lacks them
    assert "ops::op_rand_like().call(self, out.scalar_type(), out.layout(), out.device(), std::nullopt, " \
           "memory_format);" in explicit
    assert "ops::op_clone().call(self, memory_format);" in explicit
    assert 'native::resize_out_sizes(out, result.sizes(), "clone");' in explicit and "out.copy_(result);" in explicit
    assert 'm.impl("rand_like.out", TORCH_FN(functional_out_rand_like_out));' in explicit
    # no hand-written kernel is declared, and nothing else registers the op
    assert "rand_like_out" not in files["aten/native/NativeFunctions.h"]
    assert "rand_like.out" not in files["aten/ops/RegisterCompositeImplicitAutograd.cpp"]
    assert "rand_like.out" not in files["aten/ops/RegisterCPU.cpp"]
    # python: False keeps an out= op from becoming its functional twin's out= keyword
    py = "".join(text for name, text in files.items() if name.startswith("csrc/"))
    assert "op_rand_like_out" not in py and "&at::ops::op_clone_out().schema()" in py


@pytest.mark.parametrize("text,error", [
    ("- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  functional: g\n", "is not a functional op"),
    ("- func: f(Tensor self) -> Tensor\n  functional: g\n", "functional: is for out= ops"),
    ("- func: g(Tensor self, int n) -> Tensor\n- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  functional: g\n", "needs 'n'"),
    ("- func: g(Tensor self) -> Tensor\n- func: f.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  functional: g\n", r"arguments \['n'\] are not g's"),
    ("- func: g(Tensor self, float n) -> Tensor\n- func: f.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  functional: g\n", "argument n is int here but float in g"),
    ("- func: g(Tensor self) -> Tensor\n- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  functional: g\n  dispatch:\n    CPU: k\n", "without dispatch or structured keys"),
])
def test_bad_functional_keys_are_rejected(tmp_path, text, error):
    with pytest.raises(ValueError, match=error):
        generated(tmp_path, text)
