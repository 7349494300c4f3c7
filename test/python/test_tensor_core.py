"""The core of tessera._C against real PyTorch 1.13: tensor() (inference, conversions,
errors), metadata, item/tolist, printing, devices, dtypes, Size and the arithmetic
operators with their type promotion.

Every expression is written once with `lib` standing for the library and is evaluated
with lib=torch and lib=tessera; expected values always come from torch at test time.
Where tessera deliberately follows current PyTorch instead of 1.13, or has no 1.13
counterpart (Float8 dtypes, meta printing, item()'s message), the test says so.
"""
import cmath
import math
import pickle
import warnings
import weakref

import numpy as np
import pytest
import torch

import tessera

LIBS = {"torch": torch, "tessera": tessera}

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]


# ----------------------------------------------------------------------------- helpers

def norm_msg(msg):
    return str(msg).replace("torch.", "tessera.")


def norm_value(v):
    """Python values with NaNs made comparable, recursively."""
    if isinstance(v, list):
        return [norm_value(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, complex):
        return ("complex", norm_value(v.real), norm_value(v.imag))
    if v is None or isinstance(v, (bool, int, float, str)):
        return (type(v).__name__, v)
    return (type(v).__name__, norm_msg(repr(v)))  # devices, dtypes, layouts, ...


def dtype_name(dt):
    return repr(dt).split(".", 1)[1]


def summary(t):
    """What must agree between a torch and a tessera tensor."""
    if t.is_meta:
        return ("meta", dtype_name(t.dtype), tuple(t.shape))
    # Strides of empty tensors are arbitrary (torch keeps numpy's, tessera computes them).
    strides = t.stride() if t.numel() > 0 else None
    return (dtype_name(t.dtype), tuple(t.shape), strides, norm_value(t.tolist()))


def run(expr, lib, env=None, summarize=summary):
    """('ok', summary) or ('error', exception type name, normalised message)."""
    scope = {"lib": lib, "np": np, "math": math}
    scope.update(env or {})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = eval(expr, scope)
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return ("error", type(e).__name__, norm_msg(e))
    if isinstance(result, (torch.Tensor, tessera.Tensor)):
        return ("ok", (summarize or summary)(result))
    if isinstance(result, str):
        return ("ok", norm_msg(result))
    return ("ok", norm_value(result) if not isinstance(result, (tuple, str)) else result)


def check_same(expr, env_torch=None, env_tessera=None, summarize=summary, compare_message=True):
    expected = run(expr, torch, env_torch, summarize)
    actual = run(expr, tessera, env_tessera, summarize)
    if not compare_message and expected[0] == "error" and actual[0] == "error":
        assert actual[1] == expected[1], f"{expr}: {actual} vs torch {expected}"
        return expected
    assert actual == expected, f"{expr}:\n tessera {actual}\n torch   {expected}"
    return expected


# ----------------------------------------------------------------------------- tensor(): inference

INFERENCE_CASES = [
    "[1, 2, 3]", "[1., 2.]", "[True, False]", "[1+2j, 3]", "[True, 2]", "[True, 2.5]", "[1, 2.5]",
    "[1, 2.5, 1j]", "[]", "[[]]", "[[], []]", "[[[]]]", "[[], [1]]", "3", "3.5", "True", "1j", "(1, 2)",
    "[[1, 2], (3, 4)]", "range(3)", "[[1, 2], [3, 4]]", "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]",
    "[2**62]", "[-2**63]", "[2**63 - 1]", "[1e300]", "[1e-300]", "[float('inf'), float('nan'), -float('inf')]",
    "[0.1, 0.2]", "[-0.0]", "[[1.5], [2]]", "[(1, 2.5), [True, False]]", "[[1, 2], [3, 4.5]]",
    "[np.float32(1.5)]", "[np.float64(1.5), 2]", "[np.int32(1)]", "[np.int32(1), 2.5]", "[np.bool_(True)]",
    "np.float32(1.5)", "np.float64(2.0)", "np.int64(7)", "[np.float16(1.5), 1]", "[np.complex64(1j)]",
    "np.array([1, 2])", "np.array([[1.5, 2], [3, 4]])", "np.array([1, 2], dtype=np.int32)",
    "np.array([True, False])", "np.array([1+1j], dtype=np.complex64)", "np.array([1.5], dtype=np.float16)",
    "np.array([3], dtype=np.uint8)", "np.array([3], dtype=np.int8)", "np.array([3], dtype=np.int16)",
    "np.arange(12.).reshape(3, 4)[::2, 1::2]", "np.array([], dtype=np.float64)",
    "np.zeros((2, 0, 3))", "np.array(5)", "[np.array([1, 2]), np.array([3, 4])]",
    "[lib.tensor(1), lib.tensor(2)]", "[lib.tensor(1.5), 2]", "[[lib.tensor(True)], [False]]",
    "lib.tensor([1, 2])", "lib.tensor([[1.5, 2.5]])", "lib.tensor(3)",
]


@pytest.mark.parametrize("data", INFERENCE_CASES)
def test_tensor_inference(data):
    check_same(f"lib.tensor({data})")


ERROR_CASES = [
    "[[1, 2], [3]]", "[[1, 2], [3, 4, 5]]", "[[1], []]", "[[[1, 2]], [[3]]]", "[[1, 2], 3]", "[1, [2, 3]]",
    "[1.5, [2, 3]]", "['a']", "'a'", "b'ab'", "[1, 'a']", "[[1], ['a']]", "None", "[None]", "[1, None]",
    "{1: 2}", "object()", "[2**63]", "2**64", "[-2**63 - 1]", "np.array([1, 2], dtype=np.uint16)",
    "np.array(['a'])", "[1+2j, 'x']",
]


def test_tensor_from_negative_stride_array():
    # torch refuses arrays with negative strides (it goes through from_numpy); tessera.tensor
    # copies anyway, so it accepts them. Reference: torch on a contiguous copy.
    arr = np.arange(6).reshape(2, 3)[:, ::-1]
    assert summary(tessera.tensor(arr)) == summary(torch.tensor(arr.copy()))
    assert summary(tessera.tensor(arr, dtype=tessera.float16)) == summary(torch.tensor(arr.copy(), dtype=torch.float16))


@pytest.mark.parametrize("data", ERROR_CASES)
def test_tensor_errors(data):
    result = check_same(f"lib.tensor({data})")
    assert result[0] == "error"


@pytest.mark.parametrize("call", [
    "lib.tensor()", "lib.tensor(1, 2)", "lib.tensor([1], foo=1)",
])
def test_tensor_argument_errors(call):
    check_same(call)


@pytest.mark.parametrize("call", [
    "lib.tensor([1], dtype='float')", "lib.tensor([1], dtype=3)", "lib.tensor([1], device=1.5)",
])
def test_tensor_argument_type_errors(call):
    # Argument-type messages come from each library's argument parser; the type must agree.
    check_same(call, compare_message=False)


@pytest.mark.parametrize("pytype", ["float", "int", "bool"])
def test_tensor_python_type_as_dtype(pytype):
    check_same(f"lib.tensor([1, 0], dtype={pytype})")


def test_tensor_complex_type_as_dtype():
    # torch 1.13 rejects dtype=complex; tessera takes it as complex128, as its argument
    # parser does for every operator (current PyTorch's reading of Python types).
    assert tessera.tensor([1, 0], dtype=complex).dtype is tessera.complex128


# ----------------------------------------------------------------------------- tensor(): explicit dtype

CONVERSION_VALUES = [
    "0", "1", "300", "-1", "-129", "255", "256", "2**31", "2**40", "2**63 - 1", "-2**63", "2**63",
    "1e10", "1e40", "1e300", "float('nan')", "float('inf')", "-float('inf')", "1.7", "-1.7", "0.5", "-0.5",
    "-0.0", "True", "False", "1+2j", "2+0j", "np.float32(2.5)", "np.int64(7)", "np.float64(-3.5)",
    "65504.0", "65520.0", "1e-8", "3.3895e38", "3.4e38", "1/3",
]


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("value", CONVERSION_VALUES)
def test_tensor_dtype_conversion(value, dtype):
    check_same(f"lib.tensor([{value}], dtype=lib.{dtype})")


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("data", [
    "[[1, 2], [3, 4]]", "[1.5, -2.25]", "[True, False]", "[]", "[[], []]", "3",
    "np.array([1.7, -2.5])", "np.array([0, 1, 255], dtype=np.uint8)", "np.array([1+2j, 0])",
    "lib.tensor([1.25, 0.0])", "lib.tensor([[7, -8]])",
])
def test_tensor_dtype_of_sequences_and_arrays(data, dtype):
    check_same(f"lib.tensor({data}, dtype=lib.{dtype})")


def test_tensor_copies_its_source():
    for lib in (torch, tessera):
        src_np = np.array([1.0, 2.0])
        t = lib.tensor(src_np)
        src_np[0] = 5.0
        assert t.tolist() == [1.0, 2.0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            src = lib.tensor([1, 2])
            copy = lib.tensor(src)
        src += 10
        assert copy.tolist() == [1, 2]


def test_tensor_from_tensor_warns_like_torch():
    with pytest.warns(UserWarning, match="clone"):
        torch.tensor(torch.tensor([1]))
    with pytest.warns(UserWarning, match="clone"):
        tessera.tensor(tessera.tensor([1]))


def test_tensor_self_referential_list():
    a = [1]
    a.append(a)
    # Both see a self-referential list; torch 1.13's message is the reference.
    check_same("lib.tensor(a)", {"a": a}, {"a": a}, compare_message=False)


# ----------------------------------------------------------------------------- item() and tolist()

ITEM_VALUES = ["0", "1", "-3", "2.5", "-0.0", "1e-3", "1/3", "1e30", "float('inf')", "float('nan')",
               "True", "False", "1+2j", "-1.5-0.25j", "200", "65504.0", "1e-7"]


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("value", ITEM_VALUES)
def test_item_round_trip(value, dtype):
    check_same(f"lib.tensor({value}, dtype=lib.{dtype}).item()")
    check_same(f"lib.tensor([{value}], dtype=lib.{dtype}).item()")
    check_same(f"lib.tensor([[{value}, 1], [0, {value}]], dtype=lib.{dtype}).tolist()")
    check_same(f"lib.tensor({value}, dtype=lib.{dtype}).tolist()")


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_tolist_of_strided_views(dtype):
    check_same(f"lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=lib.{dtype}).as_strided((3, 2), (1, 3)).tolist()")
    check_same(f"lib.tensor([1, 2, 3, 4, 5, 6], dtype=lib.{dtype}).as_strided((2, 2), (2, 1), 1).tolist()")
    check_same(f"lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=lib.{dtype}).view(3, 2).tolist()")


def test_item_of_many_elements_follows_current_torch():
    # torch 1.13 raises ValueError here; current PyTorch (the reference for this case)
    # raises RuntimeError "a Tensor with 2 elements cannot be converted to Scalar".
    with pytest.raises(RuntimeError, match="^a Tensor with 2 elements cannot be converted to Scalar$"):
        tessera.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match="^a Tensor with 0 elements cannot be converted to Scalar$"):
        tessera.tensor([]).item()


@pytest.mark.parametrize("expr", [
    "float(lib.tensor(2.5))", "float(lib.tensor([3]))", "int(lib.tensor(2.7))", "int(lib.tensor(-2.7))",
    "int(lib.tensor([True]))", "bool(lib.tensor(0))", "bool(lib.tensor([0.5]))", "bool(lib.tensor([1, 2]))",
    "bool(lib.tensor([]))", "float(lib.tensor([1, 2]))", "int(lib.tensor([1, 2]))", "float(lib.tensor(1+1j))",
    "int(lib.tensor(1+1j))", "lib.tensor(3).__index__()", "lib.tensor(True).__index__()",
    "lib.tensor([1, 2]).__index__()", "lib.tensor(2.).__index__()", "[10, 20, 30][lib.tensor(1)]",
    "f'{lib.tensor(2.5):.3f}'", "f'{lib.tensor(7)}'", "f'{lib.tensor([2.5])}'", "'{:>6}'.format(lib.tensor(3))",
])
def test_python_number_conversions(expr):
    check_same(expr)


# ----------------------------------------------------------------------------- metadata

SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 0, 3), (4, 1, 2), (2, 1, 1, 3, 1), (1, 2, 1, 2, 1, 2), (2, 2, 2, 2, 2, 2, 2)]


def meta_summary(t):
    return (dtype_name(t.dtype), tuple(t.shape), t.size(), t.stride(), t.dim(), t.ndim, t.numel(), t.nelement(),
            t.element_size(), t.is_contiguous(), t.storage_offset(), repr(t.shape), repr(t.size()),
            type(t.shape).__name__, isinstance(t.shape, tuple))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float16", "complex128", "bool"])
def test_metadata(shape, dtype):
    check_same(f"lib.empty({shape}, dtype=lib.{dtype})",
               summarize=lambda t: tuple(norm_msg(x) if isinstance(x, str) else x for x in meta_summary(t)))
    for d in range(-len(shape) - 1, len(shape) + 1):
        check_same(f"lib.empty({shape}).size({d})")
        check_same(f"lib.empty({shape}).size(dim={d})")
        check_same(f"lib.empty({shape}).stride({d})")
    check_same(f"len(lib.empty({shape}))")


@pytest.mark.parametrize("expr", [
    "lib.empty(4, 6).as_strided((3, 2), (1, 6)).stride()",
    "lib.empty(4, 6).as_strided((3, 2), (1, 6)).is_contiguous()",
    "lib.empty(4, 6).as_strided((3, 2), (6, 1), 5).storage_offset()",
    "lib.empty(4, 6).as_strided((3, 2), (6, 1), 5).is_contiguous()",
    "lib.empty(2, 3, 4, 5).as_strided((2, 3, 4, 5), (60, 1, 15, 3)).is_contiguous(memory_format=lib.channels_last)",
    "lib.empty(2, 3, 4, 5).is_contiguous(memory_format=lib.channels_last)",
    "lib.empty(2, 3, 4, 5).is_contiguous(memory_format=lib.contiguous_format)",
    "lib.empty(2, 3).is_contiguous(lib.channels_last)",
    "lib.empty(2, 3).view(3, 2).stride()",
    "lib.empty(2, 3).view(6).shape",
    "lib.empty(2, 3).shape[1:]", "lib.empty(2, 3).size()[0]",
    "lib.tensor([1.]).layout", "lib.tensor([1.]).is_cuda", "lib.tensor([1.]).is_meta", "lib.tensor([1.]).is_cpu",
    "lib.tensor([1.]).is_sparse", "lib.tensor([1.]).is_quantized",
    "lib.tensor([1.]).device", "str(lib.tensor([1.]).device)", "lib.tensor([1., 2.]).data_ptr() != 0",
    "lib.tensor([1., 2.]).element_size()", "lib.tensor([1, 2]).dim()", "lib.tensor(1).ndimension()",
    "lib.empty(2, 3).size(2)", "lib.empty(2, 3).stride(-3)", "lib.tensor(1.).size(0)", "len(lib.tensor(1.))",
    "lib.empty(2, 3).size(1.5)",
])
def test_metadata_expressions(expr):
    check_same(expr, compare_message="size(1.5)" not in expr)


def test_data_ptr_addresses_the_first_element():
    a = tessera.tensor([1.0, 2.0, 3.0])
    v = a.as_strided((2,), (1,), 1)
    assert v.data_ptr() == a.data_ptr() + 4
    assert tessera.tensor([1], device="meta").data_ptr() == 0


# ----------------------------------------------------------------------------- printing

REPR_CASES = [
    "[1., 2.]", "[[1, 2], [3, 4]]", "3", "3.5", "-2", "True", "[]", "[[]]", "[[], []]", "[1., 2.], dtype=lib.float64",
    "[1.25, -3e-5, 1e10]", "[1.0, 100.0]", "[1.123456789, 100.0]", "[0.1, 0.0001]",
    "[float('inf'), float('nan'), 1.0]", "[float('nan')]", "[float('inf'), -float('inf')]", "[True, False]",
    "[1, 2], dtype=lib.int8", "[1, -2], dtype=lib.int32", "[200], dtype=lib.uint8", "[1, 2], dtype=lib.int16",
    "[[1.5, 2]], dtype=lib.float16", "[1.5, 2], dtype=lib.bfloat16", "[1+2j, 3]", "[1+2j, 3], dtype=lib.complex128",
    "[1.5+2j, -3.25-1j]", "[0.1234567+0j]", "1j", "[1j, 2]", "[-0.0, 1.5]", "[-0.0]", "[1e-5, 1.5]",
    "[123456.0, 1.5]", "[1e8, 2.0]", "[1e7, 2.0]", "[1e9, 1e9]", "[1.0, -2.0]", "[0., 0.]", "[1e-10, 1.0]",
    "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", "[[1.5, 2], [3, 4]], dtype=lib.float64", "[1, 2], dtype=lib.float64",
    "list(range(2000))", "[i * 0.37 for i in range(1500)]", "[[float(i) for i in range(30)]]",
    "[[i + 10 * j for i in range(40)] for j in range(40)]", "[[[i * j * k for i in range(12)] for j in range(10)] for k in range(10)]",
    "[i * 1.5 for i in range(30)], dtype=lib.float64", "[[1, 2], [3, 4]], dtype=lib.int8",
    "[123456789.0, 0.5]", "[[1j * i for i in range(12)]]", "[2**40, -2**40]", "[1.0] * 20, dtype=lib.float64",
    "[0.5, 0.25], dtype=lib.complex64",
]


@pytest.mark.parametrize("args", REPR_CASES)
def test_repr(args):
    expected = norm_msg(repr(eval(f"torch.tensor({args})", {"torch": torch, "lib": torch})))
    actual = repr(eval(f"tessera.tensor({args})", {"tessera": tessera, "lib": tessera}))
    assert actual == expected
    assert str(eval(f"tessera.tensor({args})", {"tessera": tessera, "lib": tessera})) == expected


@pytest.mark.parametrize("expr", [
    "lib.empty((0, 3))", "lib.empty((0, 3), dtype=lib.int64)", "lib.empty((2, 0, 3), dtype=lib.float64)",
    "lib.empty(0, dtype=lib.bool)", "lib.empty((0,))",
])
def test_repr_of_empty(expr):
    assert repr(eval(expr, {"lib": tessera})) == norm_msg(repr(eval(expr, {"lib": torch})))


@pytest.mark.parametrize("args", [
    "[1, 2]", "[[1., 2]]", "1.", "[]", "[1, 2], dtype=lib.float64", "[[True]]", "[[1, 2]] * 30",
])
def test_repr_of_meta(args):
    expr = f"lib.tensor({args}, device='meta')"
    assert repr(eval(expr, {"lib": tessera})) == norm_msg(repr(eval(expr, {"lib": torch})))


# ----------------------------------------------------------------------------- devices

DEVICE_CASES = [
    "'cpu'", "'cuda'", "'cuda:1'", "'cuda:0'", "'cuda:10'", "'meta'", "'cpu:1'", "'cuda', 1", "'cpu', 0", "1", "0",
    "'cuda', None", "type='cuda', index=3", "'cuda', index=2", "type='meta'", "lib.device('cuda:2')",
]


@pytest.mark.parametrize("args", DEVICE_CASES)
def test_device(args):
    check_same(f"lib.device({args})", summarize=None)
    for attr in ("repr({})", "str({})", "{}.type", "{}.index"):
        check_same(attr.format(f"lib.device({args})"))


# torch checks the whole string's form before the type ("Invalid device string: ' cuda'").
DEVICE_ERRORS = [
    "'cuda:x'", "'cuda:-1'", "'cuda:01'", "'cuda:1:2'", "''", "'cuda:1', 1", "'cuda', -1", "-1", "'cuda:'",
    "' cuda'", "'cuda '", "':1'", "'cuda1'",
]


@pytest.mark.parametrize("args", DEVICE_ERRORS)
def test_device_errors(args):
    assert check_same(f"lib.device({args})")[0] == "error"


@pytest.mark.parametrize("args", ["'gpu'", "'CPU'", "'Cuda'", "'gpu:1'"])
def test_device_unknown_type(args):
    # torch 1.13 lists its own device types; tessera lists its three. The rest agrees.
    expected = run(f"lib.device({args})", torch)
    actual = run(f"lib.device({args})", tessera)
    assert actual[:2] == expected[:2] == ("error", "RuntimeError")
    suffix = "device type at start of device string: " + eval(args).split(":")[0]
    assert expected[2].endswith(suffix) and actual[2].endswith(suffix)
    assert actual[2] == "Expected one of cpu, cuda, meta " + suffix


@pytest.mark.parametrize("args", ["'cuda', 1.5", "5.0", "", "None", "'cuda', 1, 2", "foo='cuda'"])
def test_device_argument_errors(args):
    check_same(f"lib.device({args})", compare_message=False)


@pytest.mark.parametrize("expr", [
    "lib.device('cpu') == lib.device('cpu')", "lib.device('cpu') == lib.device('cpu', None)",
    "lib.device('cuda:0') == lib.device('cuda')", "lib.device('cuda:1') != lib.device('cuda', 1)",
    "lib.device('cpu') == 'cpu'", "lib.device('cpu') != 'cpu'", "lib.device('meta') == lib.device('cpu')",
    "hash(lib.device('cuda:3')) == hash(lib.device('cuda', 3))", "len({lib.device('cpu'), lib.device('cpu', None)})",
    "len({lib.device('cuda'), lib.device('cuda:0'), lib.device('cuda', 0)})",
    "lib.tensor([1]).device == lib.device('cpu')", "lib.tensor([1], device='meta').device",
    "lib.tensor([1], device=lib.device('meta')).device.type", "type(lib.device('cpu')).__name__",
])
def test_device_semantics(expr):
    check_same(expr, summarize=lambda t: None)


def test_device_pickles():
    for d in (tessera.device("cpu"), tessera.device("cuda", 3), tessera.device("meta")):
        assert pickle.loads(pickle.dumps(d)) == d


# ----------------------------------------------------------------------------- dtypes, layouts, memory formats

TORCH_113_DTYPES = DTYPE_NAMES + ["qint8", "quint8", "qint32", "float", "double", "half", "cfloat", "cdouble",
                                  "short", "int", "long"]


@pytest.mark.parametrize("name", TORCH_113_DTYPES)
def test_dtype_objects(name):
    tdt, xdt = getattr(torch, name), getattr(tessera, name)
    assert isinstance(xdt, tessera.dtype)
    assert repr(xdt) == norm_msg(repr(tdt)) and str(xdt) == norm_msg(str(tdt))
    assert xdt.is_floating_point == tdt.is_floating_point
    assert xdt.is_complex == tdt.is_complex
    check_same(f"lib.{name}.is_signed")
    if not name.startswith("q"):
        assert xdt.itemsize == torch.empty((), dtype=tdt).element_size()
    assert xdt is getattr(tessera, repr(xdt).split(".")[1])
    assert pickle.loads(pickle.dumps(xdt)) is xdt


@pytest.mark.parametrize("name,itemsize", [("float8_e4m3fn", 1), ("float8_e5m2", 1)])
def test_float8_dtypes(name, itemsize):
    # Not in torch 1.13; the reference is current PyTorch's definition of these types.
    dt = getattr(tessera, name)
    assert repr(dt) == f"tessera.{name}"
    assert dt.is_floating_point and not dt.is_complex and dt.is_signed
    assert dt.itemsize == itemsize


def test_dtype_aliases_are_the_same_objects():
    for alias, name in [("float", "float32"), ("double", "float64"), ("half", "float16"), ("cfloat", "complex64"),
                        ("cdouble", "complex128"), ("short", "int16"), ("int", "int32"), ("long", "int64")]:
        assert getattr(tessera, alias) is getattr(tessera, name)
    with pytest.raises(TypeError):
        tessera.dtype()


@pytest.mark.parametrize("name", ["strided", "sparse_coo", "sparse_csr", "contiguous_format", "channels_last",
                                  "preserve_format"])
def test_layout_and_memory_format_objects(name):
    t, x = getattr(torch, name), getattr(tessera, name)
    assert repr(x) == norm_msg(repr(t))
    assert type(x).__name__ == type(t).__name__
    assert pickle.loads(pickle.dumps(x)) is x


# ----------------------------------------------------------------------------- Size

@pytest.mark.parametrize("expr", [
    "lib.Size([2, 3])", "lib.Size()", "lib.Size([])", "lib.Size((4,))", "lib.Size([2, 3])[1:]",
    "lib.Size([2, 3]) + (1,)", "lib.Size([2, 3]) + lib.Size([1])", "lib.Size([2, 3]) * 2",
    "lib.Size([2, 3])[0]", "lib.Size([2, 3]) == (2, 3)", "lib.Size([2, 3]).numel()", "lib.Size([]).numel()",
    "lib.Size([2, 0]).numel()", "lib.Size([2.5])", "lib.Size(['a'])", "lib.Size([lib.tensor(3)])",
    "lib.Size([np.int64(3)])", "len(lib.Size([1, 2, 3]))", "isinstance(lib.Size([1]), tuple)", "lib.Size(3)",
])
def test_size(expr):
    check_same(expr, summarize=None)
    check_same(f"repr({expr})")


def test_size_pickles():
    s = tessera.Size([2, 3])
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is tessera.Size


# ----------------------------------------------------------------------------- arithmetic operators

def make_operand(dtype, zero_dim):
    values = "3" if zero_dim else "[3, 0, 1]"
    return f"lib.tensor({values}, dtype=lib.{dtype})"


DTYPE_PAIRS = [(a, b) for a in DTYPE_NAMES for b in DTYPE_NAMES]


@pytest.mark.parametrize("lhs_dtype,rhs_dtype", DTYPE_PAIRS)
@pytest.mark.parametrize("op", ["+", "*"])
def test_binary_promotion_tensor_tensor(op, lhs_dtype, rhs_dtype):
    for lhs_zero, rhs_zero in [(False, False), (False, True), (True, False), (True, True)]:
        check_same(f"{make_operand(lhs_dtype, lhs_zero)} {op} {make_operand(rhs_dtype, rhs_zero)}")


# numpy.bool_ is left out: torch 1.13 reads it as a float (tensor(int) + np.bool_(True)
# is float32); tessera reads it as a Python bool.
SCALARS = ["2", "-1", "0", "2.5", "True", "False", "1+2j", "2**40", "-0.5", "1e10", "np.float64(1.5)",
           "np.int64(2)", "np.float32(2.0)"]


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("op", ["+", "*"])
def test_binary_promotion_tensor_scalar(op, scalar, dtype):
    for zero_dim in (False, True):
        operand = make_operand(dtype, zero_dim)
        check_same(f"{operand} {op} {scalar}")
        check_same(f"{scalar} {op} {operand}")


@pytest.mark.parametrize("shapes", [
    ((2, 1), (1, 3)), ((3,), (2, 3)), ((2, 3, 1), (3, 4)), ((1,), (2, 2)), ((2, 0), (1,)), ((), (2, 3)),
    ((4, 1, 3), (1, 5, 1)), ((2, 3), (4,)), ((1, 1, 1, 1, 1, 2), (3, 1)),
    ((2, 3), (3, 2)),  # torch reports the last mismatching dimension
], ids=str)
@pytest.mark.parametrize("op", ["+", "*"])
def test_broadcasting(op, shapes):
    a_shape, b_shape = shapes

    def data(shape, start):
        n = math.prod(shape)
        return np.arange(start, start + n, dtype=np.float64).reshape(shape).tolist() if shape else float(start)

    env = {"a": data(a_shape, 1), "b": data(b_shape, 100)}
    check_same(f"lib.tensor(a) {op} lib.tensor(b)", env, env)
    check_same(f"lib.tensor(b, dtype=lib.int32) {op} lib.tensor(a)", env, env)


@pytest.mark.parametrize("rhs", ["'a'", "None", "[1]", "(1,)", "object()", "{}"])
@pytest.mark.parametrize("op", ["+", "*"])
def test_binary_unsupported_operands(op, rhs):
    check_same(f"lib.tensor([1.0]) {op} {rhs}", compare_message=False)
    check_same(f"{rhs} {op} lib.tensor([1.0])", compare_message=False)


@pytest.mark.parametrize("array", ["np.array([1.5, 2])", "np.array([[1.], [2.]])", "np.array(3, dtype=np.int8)"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "uint8", "bool"])
@pytest.mark.parametrize("op", ["+", "*"])
def test_binary_with_numpy_arrays(op, dtype, array):
    # A numpy array operand is a tensor, as torch takes it. (torch 1.13 converts integer
    # and bool arrays oddly here, e.g. float32 + int32 array -> float64; tessera converts
    # arrays as tessera.tensor(array) does, so only float64 arrays are compared.)
    check_same(f"lib.tensor([3, 1], dtype=lib.{dtype}) {op} {array}")


@pytest.mark.parametrize("rhs_dtype", DTYPE_NAMES)
@pytest.mark.parametrize("lhs_dtype", DTYPE_NAMES)
@pytest.mark.parametrize("op", ["+=", "*="])
def test_inplace_operators(op, lhs_dtype, rhs_dtype):
    def body(lib):
        a = lib.tensor([3, 0, 1], dtype=getattr(lib, lhs_dtype))
        before = id(a)
        try:
            exec(f"a {op} lib.tensor([2, 1, 0], dtype=lib.{rhs_dtype})", {"lib": lib, "a": a}, env := {"a": a})
        except Exception as e:  # noqa: BLE001
            return ("error", type(e).__name__, norm_msg(e))
        result = env["a"]
        return ("ok", id(result) == before, summary(result), summary(a))
    assert body(tessera) == body(torch)


@pytest.mark.parametrize("scalar", ["2", "1.5", "True", "1j", "2**40", "-1"])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("op", ["+=", "*="])
def test_inplace_with_scalars(op, dtype, scalar):
    def body(lib):
        env = {"lib": lib, "a": lib.tensor([3, 0, 1], dtype=getattr(lib, dtype))}
        try:
            exec(f"a {op} {scalar}", env)
        except Exception as e:  # noqa: BLE001
            return ("error", type(e).__name__, norm_msg(e))
        return ("ok", summary(env["a"]))
    assert body(tessera) == body(torch)


def test_inplace_keeps_the_object_and_writes_through():
    a = tessera.tensor([1.0, 2.0])
    alias = a
    a += 1
    a *= tessera.tensor([2.0, 3.0])
    assert alias is a and a.tolist() == [4.0, 9.0]


@pytest.mark.parametrize("expr", [
    "lib.tensor([1, 2], device='meta') + 1", "lib.tensor([1, 2], device='meta') * 2.5",
    "lib.tensor([[1.]], device='meta') + lib.tensor([1., 2.], device='meta')",
    "lib.tensor(1, dtype=lib.int8, device='meta') * lib.tensor([1], dtype=lib.int16, device='meta')",
    "lib.tensor([1, 2], device='meta') + lib.tensor([1, 2, 3], device='meta')",
    "lib.tensor([1, 2], device='meta').shape", "lib.tensor([1, 2], device='meta').is_meta",
    "lib.tensor([1, 2], device='meta').device", "lib.tensor([[1, 2]], device='meta').stride()",
    "lib.tensor([[1, 2]], device='meta').tolist()", "lib.tensor(np.array([1.5]), device='meta')",
    "lib.tensor(['a'], device='meta')", "lib.tensor([[1], [2, 3]], device='meta')",
    "lib.tensor([300], dtype=lib.uint8, device='meta')",
])
def test_meta_tensors(expr):
    check_same(expr)


def test_meta_item_raises():
    # torch 1.13 raises NotImplementedError (no Meta kernel for _local_scalar_dense).
    with pytest.raises(NotImplementedError, match="meta"):
        tessera.tensor(1, device="meta").item()


# ----------------------------------------------------------------------------- the Tensor type

def test_subclass_and_attributes():
    class MyTensor(tessera.Tensor):
        pass

    m = MyTensor([1, 2])
    m.tag = "x"
    assert type(m) is MyTensor and isinstance(m, tessera.Tensor) and m.tag == "x"
    assert m.tolist() == [1.0, 2.0] and m.dtype is tessera.float32
    # as torch: results of operations on a subclass are the subclass (Tensor.__torch_function__)
    assert type(m + 1) is MyTensor and (m + m).tolist() == [2.0, 4.0] and repr(m) == "MyTensor([1., 2.])"
    r = weakref.ref(m)
    del m
    assert r() is None


def test_weakrefs_to_tensors():
    t = tessera.tensor([1.0])
    r = weakref.ref(t)
    assert r() is t
    del t
    assert r() is None


@pytest.mark.parametrize("expr", [
    "lib.Tensor(2, 3).shape", "lib.Tensor().shape", "lib.Tensor([1, 2]).tolist()", "lib.Tensor([1, 2]).dtype",
    "lib.Tensor(lib.Size([2, 1])).shape", "lib.Tensor(np.array([1, 2])).dtype", "lib.Tensor([[1], [2, 3]])",
])
def test_legacy_constructor(expr):
    check_same(expr, summarize=None)


def test_exception_types():
    assert issubclass(tessera.OutOfMemoryError, RuntimeError)
    assert tessera.OutOfMemoryError.__module__ == "tessera"
    with pytest.raises(IndexError):
        tessera.empty(2).size(3)
    with pytest.raises(ValueError):
        tessera.tensor([[1], [2, 3]])
    with pytest.raises(TypeError):
        tessera.tensor("a")
    with pytest.raises(NotImplementedError):
        tessera.tensor([1], device="meta").tolist()


def test_package_surface():
    assert tessera.__version__ == tessera._C._version and tessera.__version__.count(".") == 2
    for name in ("Tensor", "Size", "dtype", "device", "layout", "memory_format", "tensor", "float32", "strided",
                 "contiguous_format", "OutOfMemoryError", "add", "mul", "empty", "ops"):
        assert hasattr(tessera, name), name
    assert tessera.Tensor.__module__ == "tessera" and tessera.Tensor.__name__ == "Tensor"
    assert tessera.Tensor.__array_priority__ == torch.Tensor.__array_priority__
