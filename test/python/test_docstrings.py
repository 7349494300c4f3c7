"""Every generated binding documents itself: its __doc__ is its Python signatures (from
the schemas) and its prose (opdocs.yaml), and the signatures name the parameters torch's
documented signature names."""
import pathlib
import pydoc
import re
import sys

import pytest
import torch
import yaml

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import gen  # noqa: E402
import gen_python  # noqa: E402

OPS = gen.load_ops(ROOT / "ops.yaml")
DOCS = yaml.safe_load((ROOT / "opdocs.yaml").read_text())
FUNCTIONS = sorted(gen_python._groups(OPS, "function"))
METHODS = sorted(gen_python._groups(OPS, "method"))
NN = sorted(gen_python._groups(OPS, "function", "nn"))
SPECIAL = sorted(gen_python._groups(OPS, "function", "special"))
FFT = sorted(gen_python._groups(OPS, "function", "fft"))
NESTED = sorted(gen_python._groups(OPS, "function", "nested"))


def _bound(name, kind):
    if kind == "function":
        return getattr(tessera._C, name)
    if kind == "method":
        return getattr(tessera.Tensor, name)
    if kind == "special":
        return getattr(tessera._C._special, name)
    if kind == "fft":
        return getattr(tessera._C._fft, name)
    if kind == "nested":
        return getattr(tessera._C._nested, name)
    return getattr(tessera._C._nn, name)


BINDINGS = ([(n, "function") for n in FUNCTIONS] + [(n, "method") for n in METHODS] + [(n, "nn") for n in NN]
            + [(n, "special") for n in SPECIAL] + [(n, "fft") for n in FFT] + [(n, "nested") for n in NESTED])


@pytest.mark.parametrize("name,kind", BINDINGS, ids=[f"{k}-{n}" for n, k in BINDINGS])
def test_every_binding_has_signatures_and_prose(name, kind):
    bound = _bound(name, kind)
    doc = bound.__doc__
    assert doc, f"{kind} {name} has no docstring"
    if type(bound).__name__ not in ("builtin_function_or_method", "method_descriptor"):
        return  # a Python wrapper (Tensor.to, ...) documents itself
    signatures, _, text = doc.partition("\n\n")
    for line in signatures.splitlines():
        assert line.startswith(f"{name}(") and ") -> " in line, line
    assert len(text.split()) >= 5, f"{kind} {name}: {text!r}"


def test_every_docs_entry_names_a_binding():
    names = set(FUNCTIONS) | set(METHODS) | set(NN) | set(SPECIAL) | set(FFT) | set(NESTED) | set(
        gen_python._groups(OPS, "function", "linalg"))
    assert sorted(set(DOCS) - names) == []


def _torch_parameters(doc):
    """Parameter names of the first signature line of a torch docstring."""
    first = next((line.strip() for line in (doc or "").splitlines() if line.strip()), "")
    m = re.match(r"^\w+\((.*)\)\s*->", first)
    if not m:
        return None
    names = set()
    for part in m.group(1).split(","):
        part = part.strip().split("=")[0].strip()
        if part and part not in ("*", "...") and re.fullmatch(r"\w+", part):
            names.add(part)
    return names


def _documented_in_torch():
    cases = []
    for name in FUNCTIONS:
        theirs = _torch_parameters(getattr(getattr(torch, name, None), "__doc__", None))
        if theirs is not None:
            cases.append(name)
    return cases


# Where torch's docstring names a parameter otherwise than its schema does (both parsers
# accept the schema's name: torch.dot(a, tensor=b)), or documents an out= that no overload
# takes (std_mean, var_mean).
TORCH_DOC_NAMES_DIFFER = {"dot", "result_type", "searchsorted", "true_divide", "where", "std_mean", "var_mean",
                          "broadcast_to",
                          # torch's docs name one `indices_or_sections` (or `axis`, or split's
                          # `split_size_or_sections`) where its bindings take the schema's names
                          "tensor_split", "hsplit", "vsplit", "dsplit", "concatenate", "unsafe_split",
                          # torch's docs call the right-hand side `b`; the schema names it self
                          # (`input` in Python), as tessera's does
                          "lu_solve", "triangular_solve",
                          # torch's docs say matrix_exp(A), orgqr(A, tau), ormqr(A, tau, C)
                          # where the schemas (and both bindings) take self, input2, input3
                          "matrix_exp", "orgqr", "ormqr",
                          # torch 1.13 documents adjoint's signature as `adjoint(Tensor) -> Tensor`
                          "adjoint",
                          # torch's docs say smm(input, mat); its binding (as tessera's) takes
                          # the schema's mat2
                          "smm",
                          # torch's docs say dequantize(tensor); the schema (and both
                          # bindings) take self, `input` in Python
                          "dequantize"}


@pytest.mark.parametrize("name", [n for n in _documented_in_torch() if n not in TORCH_DOC_NAMES_DIFFER])
def test_signatures_name_torchs_parameters(name):
    """torch's documented parameters (its first signature line) appear in ours; torch
    documents `input`, `out` and the factory options by the same names."""
    theirs = _torch_parameters(getattr(torch, name).__doc__)
    ours = set(re.findall(r"(\w+)(?==|,|\))", getattr(tessera._C, name).__doc__.partition("\n\n")[0]))
    missing = theirs - ours - {"generator", "memory_format", "size_average", "reduce", "names"}
    assert not missing, f"{name}: torch documents {sorted(missing)}"


def test_help_renders_the_docstring():
    text = pydoc.render_doc(tessera.add, renderer=pydoc.plaintext)
    assert "add(input, other, *, alpha=1, out=None) -> Tensor" in text and "alpha" in text
    assert tessera.Tensor.add.__doc__.startswith("add(other, *, alpha=1) -> Tensor")
    assert "In-place version of `add`" in tessera.Tensor.add_.__doc__
