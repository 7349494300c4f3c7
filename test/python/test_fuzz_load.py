"""Mutation fuzzing of tessera.load, seeded with real torch.save files (a state dict, every
dtype, views sharing a storage, nested containers): bytes flipped, cut, repeated and
spliced, and the pickle's integers (sizes, strides, offsets, storage lengths) replaced by
hostile values. Every mutant loads, raises RuntimeError (corrupt data) or raises
pickle.UnpicklingError (a global the safe loader refuses, as torch); nothing else, never a crash
(this file also runs under ASan/UBSan). TESSERA_FUZZ_LOAD_CASES sets the count
(scripts/fuzz.sh runs many more); the seed is fixed."""
import io
import os
import pickle
import pickletools
import random
import struct
import zipfile

import pytest
import torch

import tessera

CASES = int(os.environ.get("TESSERA_FUZZ_LOAD_CASES", "400"))
SEED = int(os.environ.get("TESSERA_FUZZ_SEED", "0"))
HOSTILE_INTS = [0, 1, -1, 2**31 - 1, 2**31, 2**32, 2**62 - 64, 2**62, 2**63 - 1, -2**63, 7, 1000]


def seed_files():
    base = torch.arange(24.).view(4, 6)
    objects = [
        {"w": torch.randn(3, 4, generator=torch.Generator().manual_seed(0)), "b": torch.zeros(4)},
        [base, base[1:, ::2], base.t()],
        {str(d): torch.ones(3, dtype=d) for d in (torch.float16, torch.bfloat16, torch.int8, torch.int64,
                                                   torch.bool, torch.complex64, torch.uint8)},
        (torch.tensor(3.5), torch.empty(0, 5), {"nested": [torch.arange(5)]}),
        torch.nn.Linear(3, 2).state_dict(),
    ]
    files = []
    for obj in objects:
        buf = io.BytesIO()
        torch.save(obj, buf)
        files.append(buf.getvalue())
    return files


def pickle_int_positions(data):
    """(offset, width) of each BININT/BININT1/BININT2/LONG1 operand in a pickle."""
    positions = []
    try:
        for op, _arg, pos in pickletools.genops(io.BytesIO(data)):
            if op.name in ("BININT", "BININT1", "BININT2", "LONG1"):
                positions.append((pos + 1, {"BININT": 4, "BININT1": 1, "BININT2": 2, "LONG1": 1}[op.name]))
            if op.name == "STOP":
                break
    except Exception:  # noqa: BLE001 - a truncated pickle just has fewer positions
        pass
    return positions


def mutate(archive, rng):
    """Half the time raw bytes of the zip (its reader's checks); else the records inside,
    zipped again with valid checksums so the mutants reach the unpickler and the tensor
    rebuild (sizes, strides, offsets against storage lengths)."""
    if rng.random() < 0.5:
        return mutate_bytes(archive, rng)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        records = {info.filename: zf.read(info) for info in zf.infolist()}
    names = sorted(records)
    pkl = next(n for n in names if n.endswith("data.pkl"))
    target = pkl if rng.random() < 0.8 else rng.choice(names)
    records[target] = mutate_bytes(records[target], rng)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in names:
            zf.writestr(name, records[name])
    return out.getvalue()


def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "cut", "repeat", "splice", "int", "int", "int"])
        if kind == "flip" and data:
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif kind == "cut" and data:
            del data[rng.randrange(len(data)):]
        elif kind == "repeat" and data:
            i = rng.randrange(len(data))
            data[i:i] = data[i:i + rng.randint(1, 64)]
        elif kind == "splice" and data:
            i, j = sorted(rng.randrange(len(data)) for _ in range(2))
            data[i:j] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 16)))
        elif kind == "int":
            positions = pickle_int_positions(bytes(data))
            if positions:
                at, width = rng.choice(positions)
                value = rng.choice(HOSTILE_INTS)
                if width == 4:
                    data[at:at + 4] = struct.pack("<i", max(min(value, 2**31 - 1), -2**31))
                elif width == 2:
                    data[at:at + 2] = struct.pack("<H", value % 2**16)
                else:
                    data[at] = value % 256
    return bytes(data)


@pytest.mark.filterwarnings("ignore")
def test_mutated_checkpoints_load_or_raise_runtime_error():
    rng = random.Random(SEED)
    seeds = seed_files()
    outcomes = {"loaded": 0, "refused": 0}
    for case in range(CASES):
        mutant = mutate(rng.choice(seeds), rng)
        try:
            result = tessera.load(io.BytesIO(mutant))
        except (RuntimeError, pickle.UnpicklingError):
            outcomes["refused"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - anything but RuntimeError is the finding
            raise AssertionError(f"case {case}: {type(e).__name__}: {e}") from e
        outcomes["loaded"] += 1
        # whatever loaded is readable to its last byte
        for t in _tensors(result):
            t.tolist() if t.numel() < 10**6 else None
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == CASES


def _tensors(obj):
    if isinstance(obj, tessera.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)
