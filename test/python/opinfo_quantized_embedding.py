"""OpInfo entries for the packed embedding tables (aten/native/quantized/EmbeddingBag.cpp):
quantized::embedding_bag_{byte,4bit,2bit}_prepack / _unpack and _rowwise_offsets, plain
uint8 tables on CPU and Meta. The prepacked bytes, the unpacked floats and the bag sums are
compared with torch 1.13's exactly (Note [Packed embedding rows]); test_quantized_embedding.py
has the random cases and the errors. Nothing here is differentiable."""
import torch

from opinfo_quantized import NOT_DIFFERENTIABLE
from opinfo import OpInfo, make_torch, register

QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, rtol=0, atol=0)


def table_samples(dtype):
    yield "table", [make_torch((6, 8), "float32", 1, -3.0, 3.0)], {}
    ties = make_torch((3, 8), "float32", 2).round()
    yield "ties and a constant row", [torch.cat([torch.full((1, 8), 2049.0), ties])], {}
    yield "optimized qparams", [make_torch((4, 16), "float32", 3, -2.0, 5.0)], {"optimized": True}
    yield "empty table", [make_torch((0, 8), "float32", 4)], {}


def _pack(bits):
    def call(lib, w, optimized=False):
        ops = lib.ops.quantized
        prepack = getattr(ops, f"embedding_bag_{bits}_prepack")
        packed = prepack(w, True, 50, 0.3) if optimized and bits != "byte" else prepack(w)
        return packed, getattr(ops, f"embedding_bag_{bits}_unpack")(packed)
    return call


def bag_samples(dtype):
    w = make_torch((6, 8), "float32", 5, -3.0, 3.0)
    yield "offsets", [w, torch.tensor([0, 5, 2, 2, 1]), torch.tensor([0, 2, 2])], {}
    yield "int32 indices, last offset", [w, torch.tensor([3, 4, 5, 0], dtype=torch.int32), torch.tensor([0, 1, 4])], \
        {"include_last_offset": True}
    yield "weights", [w, torch.tensor([1, 1, 3]), torch.tensor([0, 1]), torch.tensor([0.5, -2.0, 1.25])], {}
    yield "2-d indices", [w, torch.tensor([[0, 1], [4, 5], [2, 2]])], {}


def _bags(bits):
    def call(lib, w, indices, offsets=None, weights=None, **kwargs):
        ops = lib.ops.quantized
        packed = getattr(ops, f"embedding_bag_{bits}_prepack")(w)
        return getattr(ops, f"embedding_bag_{bits}_rowwise_offsets")(packed, indices, offsets, False, 0, False,
                                                                     weights, None, **kwargs)
    return call


register(*[OpInfo(f"quantized::embedding_bag_{bits}_{op}", _pack(bits), sample_inputs=table_samples, **QOP)
           for bits in ("byte", "4bit", "2bit") for op in ("prepack", "unpack")],
         *[OpInfo(f"quantized::embedding_bag_{bits}_rowwise_offsets", _bags(bits), sample_inputs=bag_samples, **QOP)
           for bits in ("byte", "4bit", "2bit")])
