"""The Python-level entry points fuzz_python_entry (libFuzzer in an embedded interpreter)
drives: each target takes the fuzzer's bytes, returns quietly when tessera behaved, and
raises when it did not (the harness then prints the traceback and aborts, which libFuzzer
reports as a crash and saves the input). Crashes of the process itself are findings too.

  load    tessera.load on the bytes as a checkpoint: raw zip bytes when they start like a
          zip, else the bytes as the data.pkl of a real torch.save archive, re-zipped with
          valid checksums so they reach the restricted unpickler and the tensor rebuild.
          Loads (and what loads reads to its last element), or RuntimeError /
          pickle.UnpicklingError, as test_fuzz_load.py.
  numpy   from_numpy and DLPack on numpy views; nested: tensor() of nested data. Both run
          the Hypothesis tests of test_fuzz_inputs.py on the bytes (fuzz_one_input), whose
          oracle is torch 1.13: same values, strides and dtype, or the same error class.

seed_corpus(target, folder) writes the seeds: real torch.save files and their pickles."""
import io
import pathlib
import pickle
import sys
import zipfile
import warnings

_TESTS = pathlib.Path(__file__).resolve().parent.parent / "python"
sys.path.insert(0, str(_TESTS))
warnings.simplefilter("ignore")

import tessera  # noqa: E402
import test_fuzz_load as _load  # noqa: E402

_SEEDS = None


def _seed_archives():
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = _load.seed_files()
    return _SEEDS


def _archive_with_pickle(pkl):
    """The first seed archive's records with data.pkl replaced by `pkl`."""
    with zipfile.ZipFile(io.BytesIO(_seed_archives()[1])) as zf:
        records = {info.filename: zf.read(info) for info in zf.infolist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(records):
            zf.writestr(name, pkl if name.endswith("data.pkl") else records[name])
    return out.getvalue()


def load(data):
    archive = data if data[:2] == b"PK" else _archive_with_pickle(data)
    try:
        result = tessera.load(io.BytesIO(archive))
    except (RuntimeError, pickle.UnpicklingError):
        return
    for t in _load._tensors(result):
        if t.numel() < 10**6:
            t.tolist()


def numpy(data):
    import test_fuzz_inputs as inputs
    inputs.test_from_numpy_matches_torch.hypothesis.fuzz_one_input(data)
    inputs.test_dlpack_from_numpy_matches_torch.hypothesis.fuzz_one_input(data)


def nested(data):
    import test_fuzz_inputs as inputs
    inputs.test_tensor_of_nested_data_matches_torch.hypothesis.fuzz_one_input(data)


def seed_corpus(target, folder):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if target == "load":
        for i, archive in enumerate(_seed_archives()):
            (folder / f"archive{i}").write_bytes(archive)
            with zipfile.ZipFile(io.BytesIO(archive)) as zf:
                pkl = next(n for n in zf.namelist() if n.endswith("data.pkl"))
                (folder / f"pickle{i}").write_bytes(zf.read(pkl))
    else:
        for i in range(8):
            (folder / f"bytes{i}").write_bytes(bytes(range(i * 16, i * 16 + 64)))
