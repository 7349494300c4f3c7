#!/usr/bin/python3
"""Writes reference tables from the installed PyTorch (1.13) into the build tree.

Run by CTest as the `torch_reference_tables` fixture before the C++ tests that read them:
  promote_types.txt   one line per ordered pair of dtypes: "a b result" or "a b error"
  contiguity.txt      "sizes | strides | is_contiguous is_channels_last(_3d)_contiguous"
  torch_schemas.txt   every operator schema torch reports (torch._C._jit_get_all_schemas())
Names are torch's ScalarType names (Float, Long, ...), which c10 shares.
"""
import pathlib
import sys

import torch

DTYPES = {
    "Byte": torch.uint8, "Char": torch.int8, "Short": torch.int16, "Int": torch.int32,
    "Long": torch.int64, "Half": torch.float16, "Float": torch.float32, "Double": torch.float64,
    "ComplexHalf": torch.complex32, "ComplexFloat": torch.complex64, "ComplexDouble": torch.complex128, "Bool": torch.bool,
    "QInt8": torch.qint8, "QUInt8": torch.quint8, "QInt32": torch.qint32, "BFloat16": torch.bfloat16,
}

# (sizes, strides) cases covering 0-dim, empty, size-1 dims, transposes, gaps and 4-d
# channels-last layouts; torch decides each tensor's contiguity flags.
CONTIGUITY_CASES = [
    ((), ()), ((0,), (1,)), ((5,), (1,)), ((5,), (2,)), ((1,), (7,)), ((0, 3), (3, 1)),
    ((0, 3), (1, 5)), ((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3), (4, 1)), ((2, 1), (1, 1)),
    ((2, 1), (1, 9)), ((1, 3), (99, 1)), ((3, 1, 2), (2, 2, 1)), ((3, 1, 2), (2, 5, 1)),
    ((2, 3, 4, 5), (60, 20, 5, 1)), ((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3, 4, 5), (60, 1, 5, 20)),
    ((1, 3, 4, 5), (60, 1, 15, 3)), ((2, 1, 4, 5), (20, 20, 5, 1)), ((2, 1, 4, 5), (20, 1, 5, 1)),
    ((2, 3, 1, 1), (3, 1, 3, 3)), ((2, 3, 1, 1), (3, 1, 1, 1)), ((1, 1, 1, 1), (1, 1, 1, 1)),
    ((0, 3, 4, 5), (60, 1, 15, 3)), ((0, 3, 4, 5), (60, 20, 5, 1)), ((2, 3, 4, 5), (120, 1, 30, 6)),
    ((2, 3, 4, 5), (60, 20, 5, 2)), ((2, 3, 4, 5, 6), (360, 120, 30, 6, 1)), ((4, 4), (0, 1)),
    ((1, 3, 1, 5), (15, 1, 15, 3)), ((1, 3, 1, 5), (15, 5, 5, 1)),
    # 5-d: channels_last_3d (NDHWC) and its size-0 / size-1 corner cases
    ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3)), ((0, 3, 1, 1, 1), (3, 1, 3, 3, 3)), ((2, 0, 3, 4, 5), (0, 1, 0, 0, 0)),
    ((1, 3, 1, 1, 5), (15, 1, 15, 15, 3)), ((2, 3, 1, 1, 1), (3, 1, 3, 3, 3)), ((2, 3, 4, 5, 6), (360, 1, 90, 18, 6)),
    ((1, 1, 1, 1, 1), (1, 1, 1, 1, 1)), ((2, 3, 4, 5, 6), (360, 120, 30, 6, 1)),
]


def promote_lines():
    for a_name, a in DTYPES.items():
        for b_name, b in DTYPES.items():
            try:
                result = torch.promote_types(a, b)
                name = next(n for n, d in DTYPES.items() if d == result)
            except RuntimeError:
                name = "error"
            yield f"{a_name} {b_name} {name}"


def contiguity_lines():
    for sizes, strides in CONTIGUITY_CASES:
        t = torch.empty_strided(sizes, strides)
        flags = (t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last),
                 t.is_contiguous(memory_format=torch.channels_last_3d))
        fmt = lambda xs: ",".join(map(str, xs))
        yield f"{fmt(sizes)} | {fmt(strides)} | {' '.join(str(int(f)) for f in flags)}"


def main(out_dir):
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "promote_types.txt").write_text("\n".join(promote_lines()) + "\n")
    (out / "contiguity.txt").write_text("\n".join(contiguity_lines()) + "\n")
    schemas = sorted({str(s) for s in torch._C._jit_get_all_schemas()})
    (out / "torch_schemas.txt").write_text("\n".join(schemas) + "\n")
    print(f"wrote torch {torch.__version__} reference tables to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
