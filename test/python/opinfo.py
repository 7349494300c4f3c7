"""The operator registry: one OpInfo entry per operator, from which every per-operator
test is generated against torch.

- test_ops.py: values and dtypes on every supported dtype and on 0-dim, empty, broadcast
  and non-contiguous inputs (or the entry's own sample generator), the method, in-place
  and out= forms, meta shapes, and torch's exception class where neither library
  supports a dtype; on each backend the entry names.
- test_op_grads.py: gradients. Each entry's float64 samples (and its explicit GradSamples)
  are differentiated by both libraries: torch's grads compared, tessera's gradchecked
  (and gradgradchecked where the entry asks); where torch records no graph, or a Node
  that is "not implemented", tessera must do the same.
- test_op_coverage.py: every ops.yaml operator has an entry (by name, or listed in an
  entry's `covers`), or a stated exemption; every derivatives.yaml Node is reached by
  some entry's gradient samples.

A new op is one OpInfo(...) in the family file opinfo_<family>.py that mirrors its
ops.yaml section (each calls register()).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

import torch

import tessera

ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128"]
FLOATING = ["float16", "bfloat16", "float32", "float64"]
REDUCED = ["float16", "bfloat16"]


def resolve_dtype(lib, kwargs):
    """kwargs with a dtype named by string ("float64") as lib's dtype object: samples name
    dtypes once for both libraries."""
    if isinstance(kwargs.get("dtype"), str):
        return dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
    return kwargs


def torch_dtype(name):
    return getattr(torch, name)


def tessera_dtype(name):
    return getattr(tessera, name)


# ---------------------------------------------------------------- tensors on both sides

def make_torch(shape, dtype, seed, low=-4.0, high=4.0):
    """Deterministic values in [low, high): integers for integral dtypes, bools from signs."""
    g = torch.Generator().manual_seed(seed)
    if dtype == "bool":
        return torch.rand(shape, generator=g) > 0.5
    if dtype in ("uint8",):
        return torch.randint(0, 10, shape, generator=g, dtype=torch.uint8)
    if dtype in ("int8", "int16", "int32", "int64"):
        return torch.randint(int(low) if low < 0 else 0, max(int(high), 1) + 1, shape, generator=g,
                             dtype=torch_dtype(dtype))
    if dtype.startswith("complex"):
        real = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        imag = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        return torch.complex(real, imag).to(torch_dtype(dtype))
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(torch_dtype(dtype))


def to_tessera(t: torch.Tensor):
    """The same values with the same sizes, strides and storage offset (views included)."""
    if t.dim() == 0:
        return tessera.tensor(t.item(), dtype=tessera_dtype(str(t.dtype).split(".")[1]))
    span = 0 if t.numel() == 0 else 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    flat = torch.as_strided(t, (span,), (1,), t.storage_offset())
    base = tessera.tensor(flat.tolist(), dtype=tessera_dtype(str(t.dtype).split(".")[1]))
    return tessera.as_strided(base, tuple(t.shape), tuple(t.stride()), 0)


def to_torch(t):
    dtype = torch_dtype(str(t.dtype).split(".")[1])
    if t.dim() == 0:
        return torch.tensor(t.item(), dtype=dtype)
    return torch.tensor(t.tolist(), dtype=dtype).reshape(tuple(t.shape))


@dataclasses.dataclass
class Layout:
    """How a sample operand is laid out: a shape plus a way to make it non-contiguous."""
    shape: tuple
    kind: str = "contiguous"   # contiguous | transposed | stepped | expanded

    def make(self, dtype, seed, low, high):
        if self.kind == "transposed":
            base = make_torch(tuple(reversed(self.shape)), dtype, seed, low, high)
            return base.permute(*reversed(range(len(self.shape))))
        if self.kind == "stepped":
            big = list(self.shape)
            big[-1] = big[-1] * 2
            return make_torch(tuple(big), dtype, seed, low, high)[..., ::2]
        if self.kind == "expanded":
            small = tuple(1 if i == 0 else s for i, s in enumerate(self.shape))
            return make_torch(small, dtype, seed, low, high).expand(*self.shape)
        return make_torch(self.shape, dtype, seed, low, high)

    def __str__(self):
        return f"{self.kind}{list(self.shape)}"


UNARY_LAYOUTS = [Layout(()), Layout((0,)), Layout((5,)), Layout((3, 4)), Layout((3, 4), "transposed"),
                 Layout((2, 6), "stepped"), Layout((3, 4), "expanded"), Layout((2, 0, 3))]
BINARY_LAYOUTS = [(Layout((3, 4)), Layout((3, 4))), (Layout((3, 4)), Layout((4,))), (Layout((4, 1)), Layout((1, 5))),
                  (Layout(()), Layout((2, 3))), (Layout((2, 3)), Layout(())), (Layout(()), Layout(())),
                  (Layout((0, 3)), Layout((3,))), (Layout((3, 4), "transposed"), Layout((3, 4))),
                  (Layout((2, 6), "stepped"), Layout((2, 6), "transposed")), (Layout((3, 4), "expanded"), Layout((4,)))]


# Values for hand-written gradient samples (GradSample.inputs), on float64 leaves.
M = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.3]]
V = [0.2, -0.7, 1.1]
P = [[0.5, 1.25, 2.0], [1.5, 0.75, 0.3]]   # positive
U = [[0.2, -0.5, 0.6], [0.1, 0.7, -0.3]]   # inside (-1, 1)
R = [[0.37, -1.21, 2.3], [1.62, 0.71, -0.33]]   # away from rounding and integer-quotient jumps


@dataclasses.dataclass
class GradSample:
    """A hand-written gradient check: fn(lib, *leaves) on float64 leaves made from the
    nested lists in inputs (integer lists give index tensors, which do not require grad)."""
    fn: Callable
    inputs: tuple
    label: str = ""
    gradgrad: bool = False


@dataclasses.dataclass
class Backend:
    """One value of the registry's device / layout axis: where a sample runs, and how a
    dense CPU tensor gets there. An entry lists its backends (OpInfo.backends); a backend
    that this build or machine lacks is skipped with its reason."""
    name: str
    available: Callable[[], bool]
    convert: Callable           # tessera CPU tensor -> tensor on this backend
    reason: str = ""
    # Whether a sample tensor can live on this backend (a CSR tensor is 2-D); samples with
    # a tensor it does not take run on the other backends only.
    accepts: Callable = lambda t: True


SPARSE_DTYPES = ("float32", "float64", "complex64", "complex128", "int32", "int64")


def _sparse_accepts(t, dims=None):
    return str(t.dtype).split(".")[1] in SPARSE_DTYPES and (dims is None or t.dim() == dims)


# The layout axis: SparseCPU runs a sample as COO (t.to_sparse()), SparseCsrCPU as CSR
# (2-D samples); results come back dense (assert_same densifies them) and are compared
# with torch's dense result. QuantizedCPU and CUDA (t.cuda(), available when
# tessera.cuda.is_available()) join here when their backends land.
BACKENDS = {
    "CPU": Backend("CPU", lambda: True, lambda t: t),
    "SparseCPU": Backend("SparseCPU", lambda: True, lambda t: t.to_sparse(), accepts=_sparse_accepts),
    "SparseCsrCPU": Backend("SparseCsrCPU", lambda: True, lambda t: t.to_sparse_csr(),
                            accepts=lambda t: _sparse_accepts(t, 2)),
}


@dataclasses.dataclass
class OpInfo:
    name: str
    # (lib, *tensors, **kwargs) -> result, written once for both libraries
    call: Callable
    arity: int = 1
    dtypes: tuple = tuple(ALL_DTYPES)
    # value range of generated inputs (for domains: log wants positives, ...)
    low: float = -4.0
    high: float = 4.0
    kwargs: tuple = ({},)
    method: Optional[str] = None        # Tensor method with the same semantics
    # in-place method name (a_.op_(b)), or (lib, target, *others, **kwargs) -> target where
    # the method takes its arguments in another order (scatter_(dim, index, src))
    inplace: Optional[object] = None
    supports_out: bool = True
    # False for ops whose result is a Python value read from the data (allclose, equal).
    supports_meta: bool = True
    # Half/BFloat16 where torch 1.13 lacks them: compare with torch in float32, rounded.
    reduced_via_float: bool = True
    rtol: Optional[float] = None
    atol: Optional[float] = None
    dtype_tolerances: dict = dataclasses.field(default_factory=dict)  # dtype -> (rtol, atol)
    # The output's shape depends on the input's values (unique, bincount): on meta tensors
    # the op raises NotImplementedError, as torch's data-dependent ops do.
    data_dependent: bool = False
    # (dtype) -> iterable of (label, torch tensors, kwargs): the entry's own inputs, in
    # place of the layout sweep (nn ops, index ops, factories with no tensor input).
    sample_inputs: Optional[Callable] = None
    # "values" compares results with torch's; "meta" only their shapes and dtypes (random
    # draws, uninitialised memory: an exemption that says why).
    compare: str = "values"
    # Gradients: the entry's own float64 samples are differentiated (unless exempt "grad"
    # says why not), then these hand-written ones; gradgrad asks gradgradcheck too.
    grads: tuple = ()
    gradgrad: bool = False
    grad_samples: int = 3
    # The value range of the gradient samples where it differs from the forward's (log's
    # forward checks NaN on negatives; its gradients need positives).
    grad_domain: Optional[tuple] = None
    # (tensors, kwargs) -> whether a float64 sample is a gradient sample (a comment says why
    # the others are not: a single element has no degrees of freedom for var, ...).
    grad_filter: Optional[Callable] = None
    # Positions of sample tensors that are data rather than parameters (a loss's target and
    # class weights, running statistics): they never require grad in the gradient cases.
    no_grad_inputs: tuple = ()
    # Known exemptions, each with its reason: "grad" (the samples are not gradient cases),
    # "gradcheck" (finite differences cannot resolve it), "torch_grad" (torch 1.13 has no
    # derivative; current torch's formula is followed), "forward" (values are not
    # compared: compare="meta"; the reason names where they are checked).
    exempt: dict = dataclasses.field(default_factory=dict)
    # Other ops.yaml operators this entry exercises (the backward ops its gradients run,
    # the kernels a composite reaches), for the coverage test.
    covers: tuple = ()
    backends: tuple = ("CPU",)

    def layouts(self):
        if self.arity == 1:
            return [(layout,) for layout in UNARY_LAYOUTS]
        if self.arity == 2:
            return BINARY_LAYOUTS
        return [(Layout((3, 4)),) * self.arity, (Layout((3, 1)), Layout((4,)), Layout(())),
                (Layout((3, 4), "transposed"), Layout((3, 4)), Layout((3, 4), "stepped"))]

    def samples(self, dtype):
        if self.sample_inputs is not None:
            yield from self.sample_inputs(dtype)
            return
        for i, layouts in enumerate(self.layouts()):
            for kwargs in self.kwargs:
                tensors = [lay.make(dtype, seed=1000 * i + k, low=self.low, high=self.high)
                           for k, lay in enumerate(layouts)]
                yield f"{'-'.join(map(str, layouts))}{kwargs or ''}", tensors, kwargs


REGISTRY: list[OpInfo] = []


def register(*infos: OpInfo):
    REGISTRY.extend(infos)


def tolerances(info: OpInfo, dtype: str):
    default = {"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
    rtol, atol = default.get(dtype, (0, 0))
    if dtype in info.dtype_tolerances:  # an entry's own (rtol, atol) for one dtype
        return info.dtype_tolerances[dtype]
    return info.rtol if info.rtol is not None else rtol, info.atol if info.atol is not None else atol


def assert_same(got, want, info: OpInfo, dtype: str, context: str):
    """Values, dtype and shape of a tessera result against torch's."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), context
        for g, w in zip(got, want):
            assert_same(g, w, info, dtype, context)
        return
    if not isinstance(want, torch.Tensor):
        assert got == want or (isinstance(want, float) and math.isnan(want) and math.isnan(got)), context
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], f"{context}: dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{context}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    rtol, atol = tolerances(info, str(want.dtype).split(".")[1])
    if want.layout == torch.strided and got.layout != tessera.strided and got.layout != tessera._mkldnn:
        got = got.to_dense()  # a sparse backend's result against torch's dense one
    torch.testing.assert_close(to_torch(got), want, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{context}: {m}")


def assert_same_shapes(got, want, context: str):
    """Shapes and dtypes only: for results whose values no two libraries share (random
    draws, uninitialised memory)."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), context
        for g, w in zip(got, want):
            assert_same_shapes(g, w, context)
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], f"{context}: dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{context}: shape {tuple(got.shape)} vs {tuple(want.shape)}"


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e


def torch_reference(info, dtype, tensors, kwargs):
    """torch's result, or for Half/BFloat16 that torch 1.13 lacks, torch's float32 result
    rounded to the dtype (current PyTorch computes these ops in float for reduced types)."""
    status, want = outcome(lambda: info.call(torch, *tensors, **kwargs))
    if status == "error" and dtype in REDUCED and info.reduced_via_float:
        status, want32 = outcome(lambda: info.call(torch, *[t.float() for t in tensors], **kwargs))
        if status == "ok":
            target = torch_dtype(dtype)

            def rounded(w):
                return w.to(target) if w.is_floating_point() else w
            if isinstance(want32, tuple):  # (values, indices), ...
                return "ok", tuple(rounded(w) for w in want32)
            return "ok", rounded(want32)
    return status, want


def same_outcome(want_status, want, got_status, got, context, same, strict=False):
    """torch's outcome (want) against tessera's (got), each ("ok", value) or ("error", exc).
    Where torch refused, tessera refuses with the same exception class, or (unless strict)
    accepts: tessera supports at least torch 1.13's dtypes and follows current torch where
    1.13 refuses. Where torch gave a result, tessera gives one and same(got, want) holds.
    Returns whether there was a result to compare."""
    if want_status == "error":
        if strict:
            assert got_status == "error", f"{context}: torch raised {want!r}, tessera gave a result"
        if got_status == "error":
            assert type(got).__name__ == type(want).__name__, f"{context}: {got!r} vs {want!r}"
        return False
    assert got_status == "ok", f"{context}: tessera raised {got!r}, torch gave a result"
    same(got, want)
    return True


def assert_raises_like_torch(expr: str, first_line_only: bool = False):
    """Evaluates expr with `lib` bound to torch, then to tessera (and `F` to each library's
    nn.functional): both must raise, with the same exception class and message (its first
    line only, if asked; a size printed in it names the library's Size class)."""
    import pytest
    import torch.nn.functional
    import tessera.nn.functional
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch, "F": torch.nn.functional})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera, "F": tessera.nn.functional})
    assert got.type.__name__ == want.type.__name__
    g, w = str(got.value), str(want.value).replace("torch.Size", "tessera.Size")
    if first_line_only:
        g, w = g.split("\n")[0], w.split("\n")[0]
    assert g == w


def assert_error_starts_like_torch(fn, exc, chars: int = 40):
    """fn(torch) and fn(tessera) both raise exc, and tessera's message holds the start of
    torch's first line (torch's "(Could this error message be improved?" tail left out)."""
    import pytest
    import tessera
    with pytest.raises(exc) as want:
        fn(torch)
    with pytest.raises(exc) as got:
        fn(tessera)
    first = str(want.value).splitlines()[0].split("(Could")[0].strip()
    assert first[:chars] in str(got.value), (str(got.value), str(want.value))


# ---------------------------------------------------------------- the whole registry

def load_all():
    """Imports every opinfo_<family>.py beside this file (each registers its entries)."""
    import importlib
    import pathlib
    for path in sorted(pathlib.Path(__file__).parent.glob("opinfo_*.py")):
        importlib.import_module(path.stem)
    return REGISTRY


def base_name(entry_name: str) -> str:
    """The ops.yaml operator an entry is named for: "sum[method]" -> sum,
    "linalg.vector_norm" -> linalg_vector_norm."""
    return entry_name.split("[")[0].replace(".", "_")


# ---------------------------------------------------------------- gradient cases

@dataclasses.dataclass
class GradCase:
    label: str
    fn: Callable            # (lib, *leaves) -> result
    inputs: list            # torch tensors; the floating ones become leaves that require grad
    gradgrad: bool
    # False for an entry's own samples of random draws: only what autograd records is compared
    compare_values: bool = True
    no_grad_inputs: tuple = ()


def _leaf_tensor(values):
    t = torch.tensor(values)
    return t.to(torch.float64) if t.is_floating_point() else t


def grad_cases(info: OpInfo, dtype: str = "float64"):
    """The entry's gradient cases: its own float64 (or complex128) samples first (non-empty,
    unexpanded, small enough for finite differences; up to grad_samples of them), then, for
    float64, its GradSamples."""
    cases = []
    if "grad" not in info.exempt and dtype in info.dtypes:
        source = info if info.grad_domain is None else dataclasses.replace(
            info, low=info.grad_domain[0], high=info.grad_domain[1])
        for label, tensors, kwargs in source.samples(dtype):
            if len(cases) >= info.grad_samples:
                break
            floats = [t for t in tensors if _differentiable(t)]
            if not floats or any(t.numel() == 0 or t.numel() > 64 for t in floats):
                continue
            if any(0 in t.stride() and t.numel() > 1 for t in tensors):
                continue  # expanded: one memory cell stands for several elements
            if info.grad_filter is not None and not info.grad_filter(tensors, kwargs):
                continue
            if outcome(lambda: info.call(torch, *tensors, **kwargs))[0] == "error":
                continue  # a refused sample: test_ops compares the errors
            inputs = [t.contiguous() for t in tensors]
            cases.append(GradCase(label, lambda lib, *xs, _k=kwargs: info.call(lib, *xs, **_k), inputs,
                                  info.gradgrad, info.compare == "values", info.no_grad_inputs))
            if info.inplace and len(cases) == 1:
                # the in-place form on a non-leaf copy of the first sample (its own Node)
                cases.append(GradCase(label + " in-place", lambda lib, *xs, _k=kwargs: _run_inplace(
                    info, lib, xs[0] * 1, *xs[1:], **_k), inputs, info.gradgrad, info.compare == "values",
                    info.no_grad_inputs))
    if dtype != "float64":
        return cases
    for k, g in enumerate(info.grads):
        cases.append(GradCase(g.label or f"sample{k}", g.fn, [_leaf_tensor(v) for v in g.inputs], g.gradgrad))
    return cases


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


def _run_inplace(info, lib, target, *rest, **kwargs):
    if callable(info.inplace):
        return info.inplace(lib, target, *rest, **kwargs)
    return getattr(target, info.inplace)(*rest, **kwargs)


def leaves(lib, inputs, no_grad=()):
    """The same values as leaves of lib: floating and complex ones require grad (but those
    at the positions in no_grad)."""
    out = []
    for k, t in enumerate(inputs):
        x = t.detach().clone() if lib is torch else to_tessera(t).detach()
        out.append(x.requires_grad_() if _differentiable(t) and k not in no_grad else x)
    return out


def differentiate(lib, fn, inputs, no_grad=()):
    """What autograd makes of fn on fresh leaves: ("error", exc) when the forward raises,
    ("no graph", None), ("not implemented", None) when backward refuses as unimplemented,
    ("backward error", exc) when it raises otherwise, or ("graph",
    the grads of a weighted sum of the outputs with respect to each floating leaf). A
    complex output enters the sum through its real and imaginary parts, weighted apart."""
    xs = leaves(lib, inputs, no_grad)
    try:
        out = fn(lib, *xs)
    except Exception as e:  # noqa: BLE001 - compared by class
        return "error", e
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, lib.Tensor) and o.requires_grad]
    if not outs:
        return "no graph", None
    def weighted(o, k):
        if o.is_complex():
            # (both libraries return some results as lazily conjugated views, which view_as_real refuses)
            parts = lib.view_as_real(o.resolve_conj())
            return (parts * lib.tensor([k + 1.0, 0.5 - k], dtype=parts.dtype)).sum()
        return (o * (k + 1)).sum()
    total = sum(weighted(o, k) for k, o in enumerate(outs))
    wrt = [x for x in xs if x.requires_grad]
    try:
        grads = lib.autograd.grad(total, wrt, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        if "not implemented" in str(e):
            return "not implemented", None
        return "backward error", e
    return "graph", [lib.zeros_like(x) if g is None else g for g, x in zip(grads, wrt)]


def graph_names(out):
    """The names of every Node reachable from the result's grad_fn(s)."""
    outs = out if isinstance(out, (tuple, list)) else [out]
    seen, names = set(), set()
    stack = [o.grad_fn for o in outs if isinstance(o, tessera.Tensor)]
    while stack:
        node = stack.pop()
        if node is None or node._id() in seen:
            continue
        seen.add(node._id())
        names.add(node.name())
        stack.extend(fn for fn, _ in node.next_functions)
    return names
