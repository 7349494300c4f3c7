"""Checks behind quantized-order-ops-torch113.md. Run with Debian's /usr/bin/python3 (torch 1.13.1).
Prints one line per fact; crashes (the 0-d topk) run in a child process."""
import subprocess, sys, warnings, random
import torch
torch.set_num_threads(1)

def q(shape=(3, 4), dt=torch.quint8, scale=0.5, zp=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.quantize_per_tensor(torch.randn(shape, generator=g) * 3, scale, 0 if dt == torch.qint8 else zp, dt)

def pc(shape=(3, 4), axis=0):
    n = shape[axis]
    return torch.quantize_per_channel(torch.randn(shape), torch.linspace(0.1, 0.5, n).double(), torch.arange(n), axis, torch.quint8)

def mk(ints, scale=0.5, zp=1):
    return torch._make_per_tensor_quantized_tensor(ints, scale, zp)

def show(name, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            print(f"{name}: OK {desc(r)}")
        except Exception as e:
            msg = str(e).split("\nException raised from")[0].split(" This could be because")[0].strip()
            print(f"{name}: {type(e).__name__}: {msg}")
        for x in w:
            print(f"    warning: {str(x.message)[:90]}")

def desc(t):
    if isinstance(t, (tuple, list)):
        return "(" + ", ".join(desc(x) for x in t) + ")"
    if not isinstance(t, torch.Tensor):
        return repr(t)
    s = f"{str(t.dtype)[6:]}{list(t.shape)} strides={t.stride()}"
    if t.is_quantized:
        s += f" q=({t.q_scale():g},{t.q_zero_point()})" if t.qscheme() == torch.per_tensor_affine else f" {t.qscheme()}"
    return s

def child(name, code):
    p = subprocess.run([sys.executable, "-c", "import torch\n" + code], capture_output=True, text=True)
    print(f"{name}: " + (f"killed by signal {-p.returncode}" if p.returncode < 0 else (p.stdout + p.stderr).strip()[-200:]))

print("== topk: same indices as topk(int_repr), not always as topk(dequantize()) ==")
random.seed(0)
bad_int = bad_float = 0
for it in range(400):
    dt, lo = random.choice([(torch.quint8, 0), (torch.qint8, -128), (torch.qint32, 2 ** 30)])
    n = random.choice([5, 17, 100, 300])
    ints = (torch.randint(0, random.choice([2, 3, 256]), (4, n)) + lo).to({torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}[dt])
    x = mk(ints, 0.37, 2)
    k, largest, srt = random.randint(0, n), random.random() < 0.5, random.random() < 0.5
    v, i = torch.topk(x, k, 1, largest, srt)
    bad_int += not (torch.equal(i, torch.topk(ints, k, 1, largest, srt)[1]) and torch.equal(v.int_repr(), torch.topk(ints, k, 1, largest, srt)[0]))
    bad_float += not torch.equal(i, torch.topk(x.dequantize(), k, 1, largest, srt)[1])
print(f"mismatches vs int_repr: {bad_int}, vs dequantize (qint32 near 2^30 collapses in float): {bad_float}")
x = mk(torch.tensor([3, 1, 3, 2, 3], dtype=torch.uint8))
print("ties [3,1,3,2,3] k=3:", torch.topk(x, 3)[1].tolist(), " smallest unsorted:", torch.topk(x, 3, largest=False, sorted=False)[1].tolist())
child("topk 0-d k=1", "x=torch.quantize_per_tensor(torch.tensor(1.),0.5,3,torch.quint8); print(torch.topk(x,1))")
child("topk 0-d k=0 (values uninitialised)", "x=torch.quantize_per_tensor(torch.tensor(1.),0.5,3,torch.quint8); v,i=torch.topk(x,0); print(v.int_repr().item(), i.item())")
show("topk k=0", lambda: torch.topk(q(), 0))
show("topk k>n", lambda: torch.topk(q(), 5))
show("topk per-channel", lambda: torch.topk(pc(), 1))
show("topk quint4x2", lambda: torch.topk(torch.quantize_per_tensor(torch.rand(4, 4), 0.1, 0, torch.quint4x2), 1))
show("topk out=", lambda: torch.topk(q(), 2, out=(torch._empty_affine_quantized([0], scale=1.0, zero_point=0, dtype=torch.quint8), torch.empty(0, dtype=torch.long))))
x = mk(torch.tensor([1, 2, 3], dtype=torch.uint8), -0.5, 0)
print("negative scale: topk orders the integers:", torch.topk(x, 1)[0].dequantize().tolist(), "of", x.dequantize().tolist())

print("== sort / argsort / msort ==")
x = mk(torch.randint(0, 2, (100,)).to(torch.uint8))
print("sort(stable=False) == sort(int_repr, stable=False):", torch.equal(torch.sort(x, stable=False)[1], torch.sort(x.int_repr(), stable=False)[1]),
      " and is stable:", torch.equal(torch.sort(x, stable=False)[1], torch.sort(x.int_repr(), stable=True)[1]))
show("sort stable=None", lambda: torch.sort(q(), stable=None))
show("sort channels_last dim1", lambda: torch.sort(q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), 1))
show("sort transposed", lambda: torch.sort(q((4, 6)).t(), 1))
show("sort per-channel", lambda: torch.sort(pc()))
show("sort quint4x2 (packed bytes!)", lambda: torch.sort(torch.quantize_per_tensor(torch.rand(4, 4), 0.1, 0, torch.quint4x2)))
show("sort out=", lambda: torch.sort(q(), out=(torch._empty_affine_quantized([0], scale=1.0, zero_point=0, dtype=torch.quint8), torch.empty(0, dtype=torch.long))))
show("argsort", lambda: torch.argsort(q()))
show("argsort stable=True", lambda: torch.argsort(q(), stable=True))
show("msort", lambda: torch.msort(q()))
for name, f in [("kthvalue", lambda: torch.kthvalue(q(), 1)), ("median", lambda: torch.median(q())), ("mode", lambda: torch.mode(q()))]:
    show(name, f)

print("== max / min ==")
x = mk(torch.tensor([[3, 7, 7, 1], [2, 2, 0, 0]], dtype=torch.uint8))
print("max(x,1) indices:", torch.max(x, 1)[1].tolist(), " min(x,1) indices:", torch.min(x, 1)[1].tolist(), "(first occurrence)")
show("max() empty", lambda: torch.max(q((2, 0))))
show("max(dim=1) empty", lambda: torch.max(q((2, 0)), 1))
show("max(dim=0) of (2,0)", lambda: torch.max(q((2, 0)), 0))
show("max() per-channel", lambda: torch.max(pc()))
show("min(dim) per-channel", lambda: torch.min(pc(), 1))
show("max() quint4x2 (packed bytes!)", lambda: torch.max(torch.quantize_per_tensor(torch.rand(4, 4), 0.1, 0, torch.quint4x2)))
show("max(dim) out=", lambda: torch.max(q(), 1, out=(torch._empty_affine_quantized([0], scale=1.0, zero_point=0, dtype=torch.quint8), torch.empty(0, dtype=torch.long))))
show("max channels_last keepdim", lambda: torch.max(q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), 1, True))
for name, f in [("amax", torch.amax), ("amin", torch.amin), ("aminmax", torch.aminmax), ("argmax", torch.argmax), ("argmin", torch.argmin)]:
    show(name, lambda: f(q()))
show("max(x, other)", lambda: torch.max(q(), q()))

print("== flip ==")
show("flip channels_last", lambda: torch.flip(q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), [1]))
show("flip transposed", lambda: torch.flip(q((4, 6)).t(), [0]))
show("flip per-channel", lambda: torch.flip(pc(), [1]))
show("flip per-channel, only size-1 dims", lambda: torch.flip(pc((3, 1)), [1]))
show("flip repeated dim", lambda: torch.flip(q(), [0, -2]))
q4 = torch.quantize_per_tensor(torch.arange(16.).reshape(4, 4) / 16, 1 / 16, 0, torch.quint4x2)
show("flip quint4x2 dim1", lambda: torch.flip(q4, [1]))
print("flip quint4x2 dim0 (garbage):", torch.flip(q4, [0]).dequantize().mul(16)[0].tolist())

print("== index_select ==")
x = q((3, 5))
show("index_select neg, dim0", lambda: torch.index_select(x, 0, torch.tensor([-1])))
show("index_select oob, dim1 (fast path)", lambda: torch.index_select(x, 1, torch.tensor([5])))
show("index_select float index", lambda: torch.index_select(x, 1, torch.tensor([1.])))
show("index_select 2-d index", lambda: torch.index_select(x, 1, torch.tensor([[1]])))
show("index_select channels_last", lambda: torch.index_select(q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), 1, torch.tensor([1, 0])))
show("index_select per-channel", lambda: torch.index_select(pc(), 0, torch.tensor([0])))
show("index_select empty self axis 0", lambda: torch.index_select(q((0, 3)), 0, torch.tensor([0])))
o = torch._empty_affine_quantized([0], scale=0.1, zero_point=7, dtype=torch.quint8)
torch.index_select(x, 1, torch.tensor([0, 1]), out=o)
print("index_select out= keeps out's qparams, raw ints copied:", (o.q_scale(), o.q_zero_point()), torch.equal(o.int_repr(), x.int_repr()[:, :2]))
show("index_select out= other dtype", lambda: torch.index_select(x, 1, torch.tensor([0]), out=torch.empty(0)))
print("index_select quint4x2 (garbage):", torch.index_select(q4, 0, torch.tensor([2])).dequantize().mul(16).tolist())

print("== aten::index (x[idx]) = dequantize -> float index -> quantize_per_tensor ==")
big = mk(torch.tensor([16777217, 2 ** 30 + 1, 7], dtype=torch.int32), 1.0, 0)
print("qint32 x[arange]:", big[torch.arange(3)].int_repr().tolist(), "from", big.int_repr().tolist())
print("scale 0 x[arange]:", mk(torch.tensor([1, 2, 3], dtype=torch.uint8), 0.0, 5)[torch.arange(3)].int_repr().tolist())
cl = q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last)
show("cl[idx]", lambda: cl[torch.tensor([1, 0])])
show("cl[..., idx]", lambda: cl[..., torch.tensor([1, 0])])
show("x[per-channel]", lambda: pc()[torch.tensor([0])])
show("x[oob]", lambda: x[:, torch.tensor([5])])
show("x[int32 idx]", lambda: x[torch.tensor([1], dtype=torch.int32)])
print("quint4x2 x[idx] is right:", q4[torch.tensor([2])].dequantize().mul(16).tolist())

print("== unfold ==")
u = x.unfold(1, 2, 1)
print("unfold is a view:", u._base is x, desc(u))
show("unfold per-channel", lambda: pc().unfold(1, 1, 1))
show("unfold step 0", lambda: x.unfold(1, 2, 0))
show("unfold size > dim", lambda: x.unfold(1, 6, 1))

print("== fill_ ==")
def fv(v, dt=torch.quint8, scale=0.5, zp=3):
    return torch._empty_affine_quantized([1], scale=scale, zero_point=zp, dtype=dt).fill_(v).int_repr().item()
print("0.25,0.75,-0.25,-0.75 @0.5,zp3:", [fv(v) for v in (0.25, 0.75, -0.25, -0.75)], "(half to even)")
print("1000,-1000:", fv(1000), fv(-1000), " nan,inf,-inf:", fv(float('nan')), fv(float('inf')), fv(float('-inf')), " quint8 1e19:", fv(1e19))
print("qint32 @1,zp0: 16777217 ->", fv(16777217, torch.qint32, 1.0, 0), " 9e18 ->", fv(9e18, torch.qint32, 1.0, 0), " 1e19 ->", fv(1e19, torch.qint32, 1.0, 0))
print("qint32 @1,zp1: 16777218 ->", fv(16777218, torch.qint32, 1.0, 1), "(zp added in float32)")
print("double 0.5+2^-30 @1,zp0:", fv(0.5 + 2 ** -30, torch.quint8, 1.0, 0), "(value rounded to float32 first)")
show("fill_ complex", lambda: q().fill_(1 + 2j))
show("fill_ non-contiguous", lambda: q((4, 6))[:, ::2].fill_(1.0))
show("fill_ channels_last_3d", lambda: q((2, 3, 2, 2, 2)).contiguous(memory_format=torch.channels_last_3d).fill_(1.0))
show("fill_ 1-d tensor value", lambda: q().fill_(torch.tensor([1.0])))
p = pc()
print("fill_ per-channel quantizes per channel:", p.clone().fill_(1.0).int_repr()[:, 0].tolist())
show("fill_ quint4x2", lambda: q4.clone().fill_(0.5))
show("zero_", lambda: q().zero_())

print("== masked_fill_ ==")
m = torch.tensor([[True, False, True, False]] * 3)
print("same ints as fill_:", all(torch.equal(q().masked_fill_(torch.ones(3, 4, dtype=torch.bool), v).int_repr(), q().fill_(v).int_repr()) for v in (0.1, 0.25, 1.3, -7.77, 1000, 3)))
show("masked_fill_ 1e39", lambda: q().masked_fill_(m, 1e39))
show("masked_fill_ complex", lambda: q().masked_fill_(m, 1 + 1j))
show("masked_fill_ uint8 mask", lambda: q().masked_fill_(m.to(torch.uint8), 1.0))
show("masked_fill_ uint8 mask with a 2", lambda: q((1, 2)).masked_fill_(torch.tensor([[2, 0]], dtype=torch.uint8), 1.0))
y = q()
print("float mask 1.0 reads the low byte, fills nothing:", torch.equal(y.clone().masked_fill_(m.float(), 100.).int_repr(), y.int_repr()))
show("masked_fill_ per-channel", lambda: pc().masked_fill_(m, 1.0))
show("masked_fill_ mask bigger than self", lambda: q().masked_fill_(torch.ones(2, 3, 4, dtype=torch.bool), 1.0))
show("masked_fill_ transposed self", lambda: q((4, 3)).t().masked_fill_(m, 1.0))
show("masked_fill (out of place) channels_last", lambda: torch.masked_fill(q((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), torch.tensor(True), 1.0))
show("masked_fill (out of place) broadcast self", lambda: torch.masked_fill(q((1, 4)), m, 1.0))
show("masked_fill_ 1-d value", lambda: q().masked_fill_(m, torch.tensor([1.0])))

print("== channel_shuffle ==")
x = q((2, 6, 3, 4))
r = torch.channel_shuffle(x, 2)
print("out channel c <- in (c % g)*(C/g) + c//g:", torch.equal(r.int_repr(), x.int_repr()[:, [0, 3, 1, 4, 2, 5]]), desc(r))
show("cs channels_last", lambda: torch.channel_shuffle(x.contiguous(memory_format=torch.channels_last), 2))
show("cs g=0", lambda: torch.channel_shuffle(x, 0))
show("cs 3-d", lambda: torch.channel_shuffle(q((2, 6, 3)), 2))
show("cs qint8", lambda: torch.channel_shuffle(q((2, 6, 3, 4), torch.qint8), 2))
show("cs C % g", lambda: torch.channel_shuffle(x, 4))
show("cs C=0", lambda: torch.channel_shuffle(q((2, 0, 3, 4)), 2))
show("cs N=0", lambda: torch.channel_shuffle(q((0, 6, 3, 4)), 2))
show("cs per-channel", lambda: torch.channel_shuffle(torch.quantize_per_channel(torch.randn(2, 6, 3, 4), torch.ones(6).double(), torch.zeros(6, dtype=torch.long), 1, torch.quint8), 2))
show("native_channel_shuffle qint8", lambda: torch.native_channel_shuffle(q((2, 6, 3, 4), torch.qint8), 2))
