"""The complex32 dtype (tessera.chalf, ComplexHalf) against torch 1.13: the dtype object and
its promotion rules, creation and conversion, the operators torch 1.13 runs on it on the
CPU (copy, fill, add/sub/mul, comparisons, neg, conj, views, indexing, where, ...), and the
same "not implemented for 'ComplexHalf'" refusal for the rest. Each expression runs
through torch and tessera and the outcomes must agree (values compared in complex128)."""
import pytest
import torch

import tessera

from opinfo import to_torch

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

DATA = [[0.5 + 1.25j, -2.0 + 0.0j, 3.5 - 0.75j], [0.0 - 1.0j, 1.0 + 1.0j, -0.25 + 4.0j]]


def _env(lib):
    z = lib.tensor(DATA, dtype=lib.complex64)
    return {"lib": lib, "z": z, "c": z.chalf(), "h": lib.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=lib.half),
            "i": lib.tensor([1, 2, 3])}


def _describe(v):
    if isinstance(v, (torch.Tensor, tessera.Tensor)):
        dtype = str(v.dtype).split(".")[1]
        plain = to_torch(v.to(tessera.complex128) if v.is_complex() else v) if isinstance(v, tessera.Tensor) else (
            v.to(torch.complex128) if v.is_complex() else v)
        return ("tensor", dtype, tuple(v.shape), plain)
    if isinstance(v, (torch.dtype, tessera.dtype)):
        return ("dtype", str(v).split(".")[1])
    if isinstance(v, (tuple, list)):
        return ("seq", [_describe(x) for x in v])
    return ("value", v)


def _same(want, got, where):
    if isinstance(want, torch.Tensor):
        assert want.shape == got.shape and want.dtype == got.dtype, where
        same = (want == got) | (want.isnan() & got.isnan()) if want.is_floating_point() or want.is_complex() else \
            want == got
        assert bool(same.all()), f"{where}: {want} vs {got}"
    elif isinstance(want, (tuple, list)):
        assert len(want) == len(got), where
        for w, g in zip(want, got):
            _same(w, g, where)
    else:
        assert want == got, f"{where}: torch {want!r}, tessera {got!r}"


def check_like_torch(expr):
    out = []
    for lib in (torch, tessera):
        try:
            out.append(("ok", _describe(eval(expr, _env(lib)))))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(("error", (type(e).__name__, str(e).split("\n")[0])))
    (ws, w), (gs, g) = out
    assert gs == ws, f"{expr}: torch {ws} {w}, tessera {gs} {g}"
    if ws == "error":
        assert g == w, f"{expr}: torch raised {w}, tessera {g}"
    else:
        _same(w, g, expr)


EXPRS = [
    # the dtype
    "lib.complex32", "lib.chalf", "lib.complex32 is lib.chalf", "lib.chalf.is_complex", "lib.chalf.is_floating_point",
    "lib.chalf.is_signed", "c.element_size()", "c.is_complex()", "c.dtype", "c.type()",
    "lib.promote_types(lib.chalf, lib.half)", "lib.promote_types(lib.chalf, lib.bfloat16)",
    "lib.promote_types(lib.chalf, lib.float)", "lib.promote_types(lib.chalf, lib.int64)",
    "lib.promote_types(lib.chalf, lib.bool)", "lib.promote_types(lib.chalf, lib.cfloat)",
    "lib.promote_types(lib.chalf, lib.double)", "lib.promote_types(lib.int8, lib.chalf)",
    "lib.result_type(c, 1.0)", "lib.result_type(h, 1j)", "(h + 1j).dtype", "(h * 2j)",
    "lib.can_cast(lib.chalf, lib.half)", "lib.can_cast(lib.half, lib.chalf)", "lib.can_cast(lib.cfloat, lib.chalf)",
    # creation and conversion
    "c", "z.to(lib.chalf)", "lib.zeros(2, dtype=lib.chalf)", "lib.ones(2, 3, dtype=lib.chalf)",
    "lib.full((2,), 1j, dtype=lib.chalf)", "lib.tensor([1 + 2j, 3.5], dtype=lib.chalf)", "lib.empty(2, dtype=lib.chalf).shape",
    "lib.zeros_like(c)", "lib.ones_like(c)", "c.cfloat()", "c.cdouble()", "c.to(lib.float)", "c.half()", "c.long()",
    "h.chalf()", "i.chalf()", "lib.tensor([True, False]).chalf()", "c.clone()", "c.contiguous()",
    "c.t().contiguous()", "lib.zeros(2, 3, dtype=lib.half).copy_(c)", "lib.zeros(2, 3, dtype=lib.chalf).copy_(z)",
    "c.clone().fill_(1 + 2j)", "c.clone().zero_()", "c[0, 0].item()", "c.tolist()",
    "lib.tensor(70000.).chalf()", "lib.tensor(1e-8 + 1e-8j).chalf().item()",
    # views and indexing
    "c.real", "c.imag", "lib.view_as_real(c)", "lib.view_as_complex(lib.view_as_real(c))",
    "lib.view_as_complex(h[:, :2].contiguous())", "c[1:]", "c[:, 1]", "c.reshape(3, 2)", "c.view(-1)", "c.t()",
    "c.unsqueeze(0)", "c.expand(2, 2, 3)", "c.permute(1, 0)", "c.select(0, 1)", "c.unbind(0)", "c.split(1, 1)",
    "c.conj()", "c.conj().resolve_conj()", "c.conj().imag", "c.view(lib.float32)",
    "lib.cat([c, c])", "lib.stack([c, c])", "c.index_select(1, lib.tensor([2, 0]))", "c[lib.tensor([True, False])]",
    "c.masked_fill(c.real > 0, 0)", "lib.where(c.real > 0, c, c.conj())", "c.nonzero()",
    # arithmetic torch 1.13 has on the CPU
    "c + c", "c - c", "c * c", "c + 1", "c * 2", "c + 1j", "-c", "c.neg()", "c + z", "c + h", "c * i",
    "lib.add(c, c, alpha=2)", "lib.add(c, z.chalf() * 0.1, alpha=3)", "lib.sub(c, z.chalf() * 0.3, alpha=0.7)",
    "lib.add(c, c, alpha=1e6)", "lib.full((2,), 1e6 + 0j, dtype=lib.chalf)", "lib.full((1,), 1e6 + 0j, dtype=lib.chalf)",
    "lib.zeros(2, dtype=lib.chalf).fill_(1e6j)", "lib.full((3,), 65519. + 1j, dtype=lib.chalf)", "c.clone().add_(c)", "c.clone().mul_(c)", "c == c", "c != c.conj()", "c == 1", "c.eq(z)",
    "lib.isnan(c)", "lib.isfinite(c)", "c.abs()", "c.sgn()",
    "c.sum()", "lib.arange(3, dtype=lib.chalf)", "c @ c.t()", "c.mean()", "c.prod()", "c.numpy()",
    # accumulation by index (complex<float> opmath) and the variance (a half result)
    "c.clone().index_put_((lib.tensor([0, 1, 0]),), lib.ones(3, 3, dtype=lib.chalf), accumulate=True)",
    "c.clone().index_put_((lib.tensor([1, 1]), lib.tensor([2, 2])), c[0, :2], accumulate=True)",
    "c.index_add(1, lib.tensor([2, 0, 2]), c)", "c.index_add(0, lib.tensor([1, 1]), c, alpha=2)",
    "c.var()", "c.var(0)", "c.var(1, keepdim=True)", "lib.var_mean(c, 1)", "c.var(unbiased=False)", "c[:0].var()",
    # ... but not its root, nor put_'s accumulation
    "c.std()", "lib.std_mean(c, 0)", "c.clone().put_(lib.tensor([0, 0]), c[0, :2], accumulate=True)",
]


@pytest.mark.parametrize("expr", EXPRS)
def test_complex32_matches_torch(expr):
    check_like_torch(expr)


# Refused by both; the kernel named in the message differs ("exp_vml_cpu" in torch 1.13,
# "exp" here; ordered comparisons of complex use current torch's wording).
@pytest.mark.parametrize("expr", ["c.exp()", "c / c", "c.sqrt()", "c.sigmoid()", "c.angle()", "c.sort()", "c < c",
                                  "c.scatter_add(0, lib.zeros(1, 3, dtype=lib.long), c[:1])",
                                  "c.scatter(0, lib.zeros(1, 3, dtype=lib.long), c[:1], reduce='add')",
                                  "c.scatter_reduce(0, lib.zeros(1, 3, dtype=lib.long), c[:1], 'sum')"])
def test_refused_like_torch(expr):
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="ComplexHalf|complex"):
            eval(expr, _env(lib))


def test_bool_of_complex32_tests_both_parts_like_complex64():
    # torch 1.13 tests only the real part (tensor([-1j]).bool() is False); current torch and
    # tessera test both, for complex32 as for complex64.
    c = tessera.tensor([0.5 + 1j, -1j, 0j], dtype=tessera.chalf)
    assert c.bool().tolist() == c.cfloat().bool().tolist() == [True, True, False]


def test_flip_of_complex32_moves_elements():
    # torch 1.13's flip has no ComplexHalf kernel; tessera's moves elements whatever the dtype.
    c = tessera.tensor(DATA, dtype=tessera.chalf)
    assert c.flip(0).cfloat().tolist() == c.cfloat().flip(0).tolist()


def test_add_with_alpha_rounds_like_torch_over_many_values():
    torch.manual_seed(0)
    a, b = torch.randn(2000, dtype=torch.cfloat).chalf(), torch.randn(2000, dtype=torch.cfloat).chalf()
    ta, tb = tessera.tensor(a.cfloat().tolist(), dtype=tessera.chalf), tessera.tensor(b.cfloat().tolist(), dtype=tessera.chalf)
    for alpha in (3, 0.7, 1.3, -2.5):
        assert tessera.add(ta, tb, alpha=alpha).cfloat().tolist() == torch.add(a, b, alpha=alpha).cfloat().tolist()
        assert tessera.sub(ta, tb, alpha=alpha).cfloat().tolist() == torch.sub(a, b, alpha=alpha).cfloat().tolist()


def test_grad_of_a_half_operand_broadcast_against_complex32():
    grads = []
    for lib in (torch, tessera):
        x = lib.tensor([1 + 2j, 3 - 4j], dtype=lib.chalf)
        b = lib.tensor([1.], dtype=lib.half, requires_grad=True)
        (g,) = lib.autograd.grad((x * b).real.float().sum(), b)
        assert g.dtype == lib.half
        grads.append(g.tolist())
    assert grads[0] == grads[1]


def test_random_complex32_has_the_dtype_and_finite_parts():
    for lib in (torch, tessera):
        for f in (lib.randn, lib.rand):
            t = f(1000, dtype=lib.chalf)
            assert t.dtype == lib.chalf and bool(lib.isfinite(t).all())
    r = tessera.rand(1000, dtype=tessera.chalf)
    assert 0 <= float(r.real.min()) and float(r.real.max()) < 1 and 0 <= float(r.imag.min())


def test_finfo_of_complex32_is_half_precision():
    f, t = tessera.finfo(tessera.chalf), torch.finfo(torch.chalf)
    assert (f.bits, f.eps, f.max, f.min, f.tiny) == (t.bits, t.eps, t.max, t.min, t.tiny)
    assert f.dtype == t.dtype == "float16"


def test_dlpack_round_trips_complex32_with_torch():
    c = tessera.tensor(DATA, dtype=tessera.chalf)
    back = torch.from_dlpack(c)
    assert back.dtype == torch.chalf and back.to(torch.complex64).tolist() == c.cfloat().tolist()
    again = tessera.from_dlpack(torch.tensor(DATA, dtype=torch.chalf))
    assert again.dtype == tessera.chalf and again.cfloat().tolist() == back.to(torch.complex64).tolist()


def test_save_refuses_complex32_clearly():
    import io
    with pytest.raises(NotImplementedError, match="complex32"):
        tessera.save(tessera.zeros(2, dtype=tessera.chalf), io.BytesIO())


def test_first_complex32_tensor_warns_once():
    import subprocess
    import sys
    code = ("import warnings, tessera\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    tessera.zeros(2, dtype=tessera.chalf); tessera.ones(2).chalf()\n"
            "print(len(w), str(w[0].message))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "1 ComplexHalf support is experimental and many operators don't support it yet."


def test_indexing_backward_on_complex32_accumulates_like_torch():
    """The index's backward is index_put_ with accumulate=True, which complex32 now has."""
    grads = []
    for lib in (torch, tessera):
        c = lib.tensor(DATA, dtype=lib.complex64).chalf().requires_grad_()
        picked = c[lib.tensor([1, 0, 1])]
        picked.backward(lib.ones(3, 3, dtype=lib.chalf) * (1 + 2j))
        grads.append(c.grad.to(lib.complex128).tolist())
    assert grads[0] == grads[1]
