"""tessera.package against torch 1.13's torch.package.

A tiny package of pure-Python modules is written to a temporary folder and put on
sys.path; the same export scripts run with each library's PackageExporter, and the archives
(their records), the modules each exporter interns / externs / mocks / denies, the loaded
objects and the errors must agree. Archives cross over: torch.package loads tessera's
(plain objects, tensors, mocked modules) and tessera loads torch's. tessera nn.Modules and
tensors round-trip through tessera's exporter and importer, storages as .data/ records."""
import importlib
import io
import platform
import re
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import torch
import torch.package as tpk
from torch.package.analyze import find_first_use_of_broken_modules as t_first_use

import tessera
import tessera.package as spk
from tessera.package.analyze import find_first_use_of_broken_modules as s_first_use

LIBS = {"torch": (torch, tpk), "tessera": (tessera, spk)}

SOURCES = {
    "pkgdemo/__init__.py": "",
    "pkgdemo/shapes.py": """
        import math
        from . import util
        from pkgdemo_ext import colors


        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def norm(self):
                return math.hypot(self.x, self.y)

            def color(self):
                return colors.name_of(self.x)

            def __eq__(self, other):
                return type(other).__name__ == "Point" and (self.x, self.y) == (other.x, other.y)


        def scaled(p, k):
            return Point(util.mul(p.x, k), util.mul(p.y, k))
        """,
    "pkgdemo/util.py": """
        def mul(a, b):
            return a * b
        """,
    "pkgdemo/uses_sys.py": """
        import sys
        BIG = sys.maxsize > 0
        """,
    "pkgdemo/uses_importer.py": """
        def who():
            import torch_package_importer  # only inside a package
            return torch_package_importer.id()
        """,
    "pkgdemo/custom.py": """
        class Blob:
            def __init__(self, payload):
                self.payload = payload

            def __reduce_package__(self, exporter):
                name = f"blob_{exporter.get_unique_id()}.txt"
                exporter.save_text("blobs", name, self.payload)
                return (load_blob, (name,))


        def load_blob(importer, name):
            return Blob(importer.load_text("blobs", name))
        """,
    "pkgdemo/sub/__init__.py": "from .leaf import LEAF\n",
    "pkgdemo/sub/leaf.py": "LEAF = 'leaf'\n",
    "pkgdemo_ext/__init__.py": "",
    "pkgdemo_ext/colors.py": """
        PALETTE = ["red", "green", "blue"]


        def name_of(i):
            return PALETTE[int(i) % 3]


        class Swatch:
            def __init__(self, c):
                self.c = c
        """,
    "tnet.py": """
        import tessera


        class Net(tessera.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = tessera.nn.Linear(3, 4)
                self.fc2 = tessera.nn.Linear(4, 2)
                self.register_buffer("scale", tessera.tensor([2.0, 0.5]))

            def forward(self, x):
                return self.fc2(tessera.relu(self.fc1(x))) * self.scale
        """,
}
OUR_MODULES = ("pkgdemo", "pkgdemo_ext", "tnet")


@pytest.fixture(scope="module", autouse=True)
def demo_modules(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkgsrc")
    for rel, src in SOURCES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    yield root
    sys.path.remove(str(root))
    for name in list(sys.modules):
        if name.split(".")[0] in OUR_MODULES:
            del sys.modules[name]


def normalize(text):
    text = re.sub(r"<torch_package_\d+>", "<torch_package_N>", text)
    text = re.sub(r" at 0x[0-9a-f]+", "", text)
    return text.replace("tessera", "torch")


def outcome(fn, name):
    lib, pk = LIBS[name]
    try:
        return ("ok", fn(lib, pk))
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return ("error", type(e).__name__, normalize(str(e)))


def both(fn, ok=True):
    """fn(lib, package module) for torch and tessera: outcomes (values, or error class and
    text) must agree, and be a success (ok=True) or an error (ok=False). Returns torch's."""
    want, got = outcome(fn, "torch"), outcome(fn, "tessera")
    assert got == want
    assert (want[0] == "ok") == ok, want
    return want


def both_err(fn):
    return both(fn, ok=False)


def export(pk, script, f=None, **kwargs):
    """The archive bytes of running script(exporter)."""
    buf = f if f is not None else io.BytesIO()
    with pk.PackageExporter(buf, **kwargs) as exp:
        script(exp)
    return buf.getvalue() if f is None else None


def records(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {name: z.read(name) for name in z.namelist()}


# ----------------------------------------------------------------------------- the namespace

def test_namespace_like_torch():
    assert "tessera.package" in sys.modules and tessera.package is spk  # imported eagerly, as torch does
    public = {n for n in dir(tpk) if not n.startswith("_")}
    assert public <= set(dir(spk)), public - set(dir(spk))
    for sub in ("package_exporter", "package_importer", "importer", "file_structure_representation",
                "glob_group", "find_file_dependencies", "analyze"):
        t_mod, s_mod = getattr(tpk, sub), getattr(spk, sub)
        assert getattr(s_mod, "__all__", None) == getattr(t_mod, "__all__", None), sub
    assert {n for n in dir(tpk.analyze) if not n.startswith("_")} <= set(dir(spk.analyze))
    assert [r.name for r in spk.package_exporter.PackagingErrorReason] == \
           [r.name for r in tpk.package_exporter.PackagingErrorReason]
    assert [r.value for r in spk.package_exporter.PackagingErrorReason] == \
           [r.value for r in tpk.package_exporter.PackagingErrorReason]


def test_glob_group():
    patterns = ["torch.**", "torch.*", "torch*.**", "a.b", "a.*.c", "**", "a.**.z", "x*y", ["a", "b.*"]]
    names = ["torch", "torch.nn", "torch.nn.functional", "torchvision", "torchvision.io", "a", "a.b", "a.q.c",
             "a.q.r.c", "a.z", "a.m.n.z", "xy", "xqqy", "b.k", "b"]

    def run(lib, pk):
        table = [[pk.GlobGroup(p).matches(n) for n in names] for p in patterns]
        excl = pk.GlobGroup("torch.**", exclude=["torch.nn.*", "torch.jit"])
        table.append([excl.matches(n) for n in ("torch", "torch.nn", "torch.nn.f", "torch.jit", "torch.optim")])
        table.append(pk.GlobGroup("a/**/c.py", separator="/").matches("a/x/y/c.py"))
        table.append(str(pk.GlobGroup(["a", "b"], exclude="c")))
        return table
    both(run)
    both_err(lambda lib, pk: pk.GlobGroup("a**b"))


def test_find_file_dependencies():
    src = textwrap.dedent("""
        import os, a.b as ab
        from . import sibling
        from ..up import thing
        from ..other import *
        from pkg.sub import *
        __import__("dyn.mod")
        __import__("rel", globals(), locals(), ["x", "y"], 1)
        __import__(name="kw.mod", fromlist=["f"])
        """)
    both(lambda lib, pk: pk.find_file_dependencies.find_files_source_depends_on(src, "top.mid"))
    both_err(lambda lib, pk: pk.find_file_dependencies.find_files_source_depends_on("from ... import x", "a"))


# ----------------------------------------------------------------------------- exporting

def full_script(exp):
    import pkgdemo.shapes as shapes
    exp.intern("pkgdemo.**")
    exp.extern("pkgdemo_ext.**")
    exp.save_pickle("res", "points.pkl", {"p": shapes.Point(3, 4), "list": [1, 2.5, "x", (None, True)],
                                          "fn": shapes.scaled})
    exp.save_text("res", "note.txt", "héllo")
    exp.save_binary("res", "raw.bin", b"\x00\x01\xff")
    exp.save_source_string("extra.code", "VALUE = 41 + 1\n")
    exp.save_module("pkgdemo.uses_importer")


def test_archive_records_match_torch():
    archives = {name: export(LIBS[name][1], full_script) for name in LIBS}
    want, got = records(archives["torch"]), records(archives["tessera"])
    assert list(got) == list(want)  # the same records, in the same order
    for name in want:
        if not name.endswith(".pkl"):
            assert got[name] == want[name], name
    assert got["archive/.data/version"] == b"6\n"
    assert got["archive/.data/python_version"] == platform.python_version().encode()
    # records start on 64-byte boundaries, as torch's writer puts them
    with zipfile.ZipFile(io.BytesIO(archives["tessera"])) as z:
        for info in z.infolist():
            header = archives["tessera"][info.header_offset:info.header_offset + 30]
            start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + \
                int.from_bytes(header[28:30], "little")
            assert start % 64 == 0, info.filename


def test_exporter_module_lists_and_graph():
    def run(lib, pk):
        out = {}
        with pk.PackageExporter(io.BytesIO()) as exp:
            full_script(exp)
            out["intern"] = exp.interned_modules()
            out["extern"] = exp.externed_modules()
            out["mock"] = exp.mocked_modules()
            out["deny"] = exp.denied_modules()
            out["rdeps"] = sorted(exp.get_rdeps("pkgdemo.util"))
            out["dot"] = exp.dependency_graph_string()
            out["ids"] = [exp.get_unique_id() for _ in range(3)]
        return out
    both(run)


def test_round_trip_plain_objects():
    def run(lib, pk):
        imp = pk.PackageImporter(io.BytesIO(export(pk, full_script)))
        obj = imp.load_pickle("res", "points.pkl")
        p = obj["p"]
        extra = imp.import_module("extra.code")
        who = imp.import_module("pkgdemo.uses_importer").who()
        ext = imp.import_module("pkgdemo_ext.colors")
        return {
            "p": (p.x, p.y, p.norm(), p.color()), "list": obj["list"],
            "scaled": vars(obj["fn"](p, 2)),
            "module": normalize(type(p).__module__), "from_pkg": [pk.is_from_package(p),
                                                                pk.is_from_package(imp.import_module("pkgdemo")),
                                                                pk.is_from_package(ext), pk.is_from_package(1)],
            "ext_is_env": ext is sys.modules["pkgdemo_ext.colors"],
            "sys_has_copy": normalize(type(p).__module__) in sys.modules,
            "text": imp.load_text("res", "note.txt"), "bin": imp.load_binary("res", "raw.bin"),
            "extra": extra.VALUE, "who_is_me": who == imp.id(), "id": normalize(imp.id()),
            "python": imp.python_version(), "extern": imp.extern_modules,
            "same_module_twice": imp.import_module("pkgdemo.shapes") is imp.import_module("pkgdemo.shapes"),
            "file": normalize(imp.import_module("pkgdemo.shapes").__file__),
            "tree": str(imp.file_structure()).replace("<binary>", "ARCHIVE"),
            "tree_filtered": str(imp.file_structure(include=["res/**", "pkgdemo/*.py"], exclude="**/util.py")),
            "has_file": [imp.file_structure().has_file(f) for f in ("res/note.txt", "res/none", ".data/version")],
        }
    both(run)


def test_source_file_and_directory(demo_modules):
    def run(lib, pk):
        def script(exp):
            exp.extern(["pkgdemo_ext.**", "sys"])
            exp.save_source_file("copied", str(demo_modules / "pkgdemo"))
            exp.save_source_file("single", str(demo_modules / "pkgdemo" / "util.py"))
        imp = pk.PackageImporter(io.BytesIO(export(pk, script)))
        return (imp.import_module("copied.util").mul(6, 7), imp.import_module("copied.sub").LEAF,
                imp.import_module("single").mul(2, 3), sorted(records_of(imp)))
    both(run)


def records_of(imp):
    return [r for r in imp.zip_reader.get_all_records()]


def test_hooks():
    def run(lib, pk):
        seen = []
        with pk.PackageExporter(io.BytesIO()) as exp:
            exp.intern("pkgdemo.**")
            exp.extern("pkgdemo_ext.**")
            exp.register_intern_hook(lambda e, name: seen.append(("intern", name)))
            exp.register_extern_hook(lambda e, name: seen.append(("extern", name)))
            gone = exp.register_extern_hook(lambda e, name: seen.append(("removed", name)))
            exp.register_mock_hook(lambda e, name: seen.append(("mock", name)))
            gone.remove()
            exp.save_module("pkgdemo.shapes")
        return seen
    both(run)


def test_reduce_package():
    def run(lib, pk):
        import pkgdemo.custom as custom
        blob = custom.Blob("payload")

        def script(e):
            e.intern("pkgdemo.**")
            e.save_pickle("res", "blobs.pkl", [blob, blob, custom.Blob("other")])
        data = export(pk, script)
        got = pk.PackageImporter(io.BytesIO(data)).load_pickle("res", "blobs.pkl")
        return ([b.payload for b in got], got[0] is got[1], type(got[0]).__name__, pk.is_from_package(got[0]),
                sorted(n for n in records(data) if "blob_" in n))
    both(run)


def test_resource_reader_and_tracing():
    def run(lib, pk):
        imp = pk.PackageImporter(io.BytesIO(export(pk, full_script)))
        reader = imp.get_resource_reader("res")
        out = [reader.open_resource("note.txt").read(), reader.is_resource("raw.bin"),
               reader.is_resource("nope"), sorted(reader.contents()), imp.get_resource_reader("nothing_here")]
        try:
            reader.resource_path("note.txt")
        except FileNotFoundError:
            out.append("no path inside a zip")
        import pkgdemo.shapes as shapes
        out.append(sorted(pk.analyze.trace_dependencies(shapes.scaled, [(shapes.Point(1, 2), 3)])))
        return out
    both(run)


def test_file_and_directory_archives(tmp_path):
    def run(lib, pk):
        path = tmp_path / f"{lib.__name__}_model.pt"
        export(pk, full_script, f=str(path))
        names = zipfile.ZipFile(path).namelist()
        imp = pk.PackageImporter(str(path))
        unzipped = tmp_path / f"{lib.__name__}_unzipped"
        with zipfile.ZipFile(path) as z:
            z.extractall(unzipped)
        top = unzipped / names[0].split("/")[0]
        imp_dir = pk.PackageImporter(str(top))
        return ([n.split("/", 1)[1] for n in names], names[0].split("/")[0].replace(lib.__name__, "LIB"),
                vars(imp.load_pickle("res", "points.pkl")["p"]), imp_dir.load_text("res", "note.txt"),
                imp_dir.import_module("extra.code").VALUE)
    both(run)


# ----------------------------------------------------------------------------- patterns and errors

def scenario(script, load=None, **kwargs):
    """An export through `script`, then load(importer) on the result."""
    def run(lib, pk):
        data = export(pk, script, **kwargs)
        return load(pk.PackageImporter(io.BytesIO(data))) if load else sorted(records(data))
    return run


def test_no_action_is_an_error():
    both_err(scenario(lambda e: e.save_module("pkgdemo.shapes")))
    both_err(scenario(lambda e: (e.intern("pkgdemo.**"), e.save_module("pkgdemo.uses_sys"))))  # sys is not implicit


def test_intern_extern():
    def load(imp):
        shapes = imp.import_module("pkgdemo.shapes")
        p = shapes.scaled(shapes.Point(1, 2), 3)
        return vars(p), p.color(), shapes.math is sys.modules["math"], sorted(imp.modules)
    both(scenario(lambda e: (e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"), e.save_module("pkgdemo.shapes")),
                  load))
    # interning a module whose package was never saved: an empty placeholder package
    both(scenario(lambda e: (e.intern("pkgdemo.util"), e.save_module("pkgdemo.util")),
                  lambda imp: (imp.import_module("pkgdemo.util").mul(2, 5), imp.import_module("pkgdemo").__file__)))
    # the first matching pattern wins
    both(scenario(lambda e: (e.extern("pkgdemo.util"), e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"),
                             e.save_module("pkgdemo.shapes")), lambda imp: imp.extern_modules))
    # exclude: the excluded module matches nothing else
    both_err(scenario(lambda e: (e.intern("pkgdemo.**", exclude="pkgdemo.util"), e.extern(["pkgdemo_ext.**"]),
                             e.save_module("pkgdemo.shapes"))))


def test_mock():
    def load(imp):
        shapes = imp.import_module("pkgdemo.shapes")
        colors = imp.import_module("pkgdemo_ext.colors")
        out = [repr(colors.name_of), repr(colors.PALETTE), repr(shapes.colors)]
        for use in (lambda: shapes.Point(1, 2).color(), lambda: colors.PALETTE[0], lambda: len(colors.PALETTE),
                    lambda: colors.Swatch("x")):
            try:
                use()
            except NotImplementedError as e:
                out.append(str(e))
        return [normalize(text) for text in out]
    both(scenario(lambda e: (e.intern("pkgdemo.**"), e.mock("pkgdemo_ext.**"), e.save_module("pkgdemo.shapes")),
                  load))

    def mocked_in_pickle(e):
        import pkgdemo_ext.colors as colors
        e.mock("pkgdemo_ext.**")
        e.save_pickle("res", "swatch.pkl", colors.Swatch("red"))
    both_err(scenario(mocked_in_pickle))


def test_deny_and_empty_matches():
    both_err(scenario(lambda e: (e.intern("pkgdemo.**"), e.deny("pkgdemo_ext.**"), e.save_module("pkgdemo.shapes"))))
    both_err(scenario(lambda e: (e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"),
                             e.mock("nothing.**", allow_empty=False), e.save_module("pkgdemo.shapes"))))
    both_err(scenario(lambda e: e.extern("nothing", allow_empty=False)))
    both_err(scenario(lambda e: e.intern(["nothing", "nada.*"], allow_empty=False)))


def test_first_use_of_broken_modules():
    def run(lib, pk):
        first_use = t_first_use if pk is tpk else s_first_use
        try:
            export(pk, lambda e: (e.intern("pkgdemo.shapes"), e.save_module("pkgdemo.shapes")))
        except pk.PackagingError as err:
            return first_use(err), sorted(err.dependency_graph.nodes)
    both(run)


def test_source_errors():
    both_err(scenario(lambda e: e.save_source_string("broken", "def f(:\n    pass\n")))
    both_err(scenario(lambda e: e.save_module(sys)))
    both_err(scenario(lambda e: e.save_module("no_such_module_here")))
    builtin = "_imp"  # a built-in module: no __file__
    both_err(scenario(lambda e: e.save_module(builtin)))
    both_err(scenario(lambda e: e.save_module("_json")))  # a C extension (or built in), not Python source


def test_writer_errors():
    both_err(scenario(lambda e: (e.save_text("a", "b.txt", "1"), e.save_text("a", "b.txt", "2"))))
    both_err(scenario(lambda e: e.save_text("a", "dir/b.txt", "1")))
    both_err(scenario(lambda e: e.save_pickle("a", "b.pkl", 1, pickle_protocol=2)))
    both_err(lambda lib, pk: pk.PackageExporter(io.BytesIO(), importer=5))
    both_err(scenario(lambda e: e.save_pickle("a", "b.pkl", lambda: 1)))
    # protocol 4 pickles: dependencies are found through STACK_GLOBAL
    both_err(scenario(lambda e: e.save_pickle("a", "b.pkl", importlib.import_module("pkgdemo.shapes").Point(1, 1),
                                          pickle_protocol=4)))


def test_importer_errors():
    def run(lib, pk):
        data = export(pk, lambda e: (e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"),
                                     e.save_module("pkgdemo.shapes"), e.save_text("pkgdemo", "t.txt", "t")))
        imp = pk.PackageImporter(io.BytesIO(data))
        out = []
        for attempt in (lambda: imp.import_module("pkgdemo.absent"), lambda: imp.import_module("json"),
                        lambda: imp.load_text("pkgdemo.shapes", "t.txt"), lambda: imp.load_text("pkgdemo", "a/b"),
                        lambda: imp.import_module("pkgdemo.shapes.inner"),
                        lambda: imp.import_module(""), lambda: imp.import_module(3)):
            try:
                attempt()
                out.append("ok")
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, normalize(str(e)).replace("<binary>", "ARCHIVE")))
        try:
            pk.PackageImporter(io.BytesIO(data), module_allowed=lambda name: not name.startswith("pkgdemo_ext"))
        except ImportError as e:
            out.append(re.sub(r"package '.*?' needs", "package needs", str(e)))
        return out
    both(run)

    # a missing resource: torch's reader says so in its own words
    for name in LIBS:
        lib, pk = LIBS[name]
        imp = pk.PackageImporter(io.BytesIO(export(pk, lambda e: e.save_text("pkgdemo", "t.txt", "t"))))
        with pytest.raises(RuntimeError, match="file not found"):
            imp.load_binary("pkgdemo", "absent.txt")


def test_repackaging_loaded_objects():
    def run(lib, pk):
        first = pk.PackageImporter(io.BytesIO(export(pk, full_script)))
        p = first.load_pickle("res", "points.pkl")["p"]
        out = []
        again = export(pk, lambda e: (e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"),
                                      e.save_pickle("res", "p.pkl", p)), importer=(first, pk.sys_importer))
        second = pk.PackageImporter(io.BytesIO(again))
        q = second.load_pickle("res", "p.pkl")
        out.append((vars(q), normalize(type(q).__module__) == normalize(type(p).__module__),
                    type(q) is not type(p)))
        # the environment's class of the same name is another class
        for importer in ((pk.sys_importer, first), pk.sys_importer):
            try:
                export(pk, lambda e: (e.intern("pkgdemo.**"), e.extern("pkgdemo_ext.**"),
                                      e.save_pickle("res", "p.pkl", p)), importer=importer)
            except Exception as e:  # noqa: BLE001
                out.append(type(e).__name__)
        return out
    both(run)


def test_importers():
    def run(lib, pk):
        first = pk.PackageImporter(io.BytesIO(export(pk, full_script)))
        p = first.load_pickle("res", "points.pkl")["p"]
        ordered = pk.OrderedImporter(first, pk.sys_importer)
        import pkgdemo.util as util
        out = [ordered.get_name(type(p)), pk.sys_importer.get_name(util.mul),
               pk.OrderedImporter(pk.sys_importer, first).get_name(util.mul),
               ordered.import_module("json").__name__, normalize(ordered.whichmodule(p, "x"))]
        for attempt in (lambda: pk.sys_importer.get_name(type(p)), lambda: ordered.get_name(util.mul),
                        lambda: pk.sys_importer.get_name(object()), lambda: pk.OrderedImporter(5).import_module("x"),
                        lambda: pk.OrderedImporter(first).import_module("not_there_at_all")):
            try:
                attempt()
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, normalize(str(e)).replace("<binary>", "ARCHIVE")))
        return out
    both(run)


# ----------------------------------------------------------------------------- torch <-> tessera archives

def plain_script(exp):
    import pkgdemo.shapes as shapes
    exp.intern("pkgdemo.**")
    exp.mock("pkgdemo_ext.**")
    exp.save_pickle("res", "obj.pkl", {"p": shapes.Point(5, 12), "nums": list(range(5)), "s": {"a", "b"}})
    exp.save_module("pkgdemo.shapes")
    exp.save_text("res", "t.txt", "text")


def read_plain(imp):
    obj = imp.load_pickle("res", "obj.pkl")
    shapes = imp.import_module("pkgdemo.shapes")
    try:
        shapes.Point(0, 0).color()
    except NotImplementedError as e:
        mocked = str(e)
    return vars(obj["p"]), obj["p"].norm(), obj["nums"], sorted(obj["s"]), imp.load_text("res", "t.txt"), mocked


@pytest.mark.parametrize("writer,reader", [("tessera", "torch"), ("torch", "tessera")])
def test_archives_cross_over(writer, reader):
    data = export(LIBS[writer][1], plain_script)
    got = read_plain(LIBS[reader][1].PackageImporter(io.BytesIO(data)))
    want = read_plain(LIBS[writer][1].PackageImporter(io.BytesIO(data)))
    assert got == want
    assert got[1] == 13.0


def tensor_values(x):
    return (str(x.dtype).split(".")[1], list(x.shape), x.numpy().tolist(), bool(x.requires_grad))


@pytest.mark.parametrize("writer,reader", [("tessera", "torch"), ("torch", "tessera")])
def test_tensor_archives_cross_over(writer, reader):
    lib = LIBS[writer][0]
    base = lib.arange(12, dtype=lib.float32).reshape(3, 4)
    obj = {"base": base, "row": base[1], "ints": lib.tensor([1, 2, 3], dtype=lib.int64),
           "flags": lib.tensor([True, False]), "param": lib.nn.Parameter(lib.ones(2, dtype=lib.float64)),
           "nested": [base.t(), (lib.tensor(7.5),)]}
    data = export(LIBS[writer][1], lambda e: e.save_pickle("w", "t.pkl", obj))
    got = LIBS[reader][1].PackageImporter(io.BytesIO(data)).load_pickle("w", "t.pkl")
    rlib = LIBS[reader][0]
    assert isinstance(got["base"], rlib.Tensor) and isinstance(got["param"], rlib.nn.Parameter)
    for key in ("base", "row", "ints", "flags", "param"):
        assert tensor_values(got[key].detach())[:3] == tensor_values(obj[key].detach())[:3], key
    assert got["param"].requires_grad
    assert tensor_values(got["nested"][0]) == tensor_values(obj["nested"][0])
    assert got["nested"][1][0].item() == 7.5
    got["base"][1, 0] = 100.0  # views of one storage still share it
    assert got["row"][0].item() == 100.0
    storages = [n for n in records(data) if "/.data/" in n and n.endswith(".storage")]
    assert len(storages) == 5  # base (and its views), ints, flags, param, the scalar


# ----------------------------------------------------------------------------- tessera modules and tensors

def test_tessera_module_round_trip(tmp_path):
    import tnet
    tessera.manual_seed(0)
    net = tnet.Net()
    seq = tessera.nn.Sequential(tessera.nn.Linear(2, 3), tessera.nn.Tanh())
    x = tessera.randn(5, 3)
    path = tmp_path / "net.pt"
    with spk.PackageExporter(str(path)) as exp:
        exp.intern("tnet")
        exp.save_pickle("model", "net.pkl", net)
        exp.save_pickle("model", "seq.pkl", seq)
        exp.save_pickle("model", "both.pkl", {"net": net, "again": net.fc1.weight})
        assert exp.interned_modules() == ["tnet"]
        assert "tessera.nn.modules.container" in exp.externed_modules()
    imp = spk.PackageImporter(str(path))
    loaded = imp.load_pickle("model", "net.pkl")
    assert spk.is_from_package(loaded) and type(loaded).__name__ == "Net" and type(loaded) is not tnet.Net
    assert isinstance(loaded, tessera.nn.Module)
    assert np.allclose(loaded(x).detach().numpy(), net(x).detach().numpy())
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in net.named_parameters()]
    assert isinstance(loaded.fc1.weight, tessera.nn.Parameter) and loaded.fc1.weight.requires_grad
    assert loaded.scale.tolist() == [2.0, 0.5]
    loaded_seq = imp.load_pickle("model", "seq.pkl", map_location="cpu")
    y = tessera.randn(4, 2)
    assert np.allclose(loaded_seq(y).detach().numpy(), seq(y).detach().numpy())
    # one pickle: the same parameter object twice; storages are shared between pickles of a package
    pair = imp.load_pickle("model", "both.pkl", map_location=lambda storage, location: storage)
    assert pair["again"] is pair["net"].fc1.weight
    names = zipfile.ZipFile(path).namelist()
    assert sum(n.startswith("net/.data/") and n.endswith(".storage") for n in names) == 7  # net's 5 + seq's 2
    assert "net/tnet.py" in names
    # training the loaded copy leaves the original alone
    loss = loaded(x).sum()
    loss.backward()
    assert loaded.fc1.weight.grad is not None and net.fc1.weight.grad is None


def test_torch_module_archive_loads_as_tessera_module():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    data = export(tpk, lambda e: e.save_pickle("m", "model.pkl", model))
    loaded = spk.PackageImporter(io.BytesIO(data)).load_pickle("m", "model.pkl")
    assert isinstance(loaded, tessera.nn.Sequential) and isinstance(loaded[0], tessera.nn.Linear)
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    assert np.allclose(loaded(tessera.tensor(x)).detach().numpy(), model(torch.tensor(x)).detach().numpy(), atol=1e-6)


def test_tessera_tensors_need_no_torch():
    """The importer resolves the tensor format's torch names to tessera's objects itself:
    loading never imports torch modules through the package's extern list."""
    data = export(spk, lambda e: e.save_pickle("w", "t.pkl", [tessera.ones(2), tessera.float16, tessera.Size([2]),
                                                              tessera.device("cpu")]))
    imp = spk.PackageImporter(io.BytesIO(data))
    assert "torch._utils" in imp.extern_modules
    t, dt, size, dev = imp.load_pickle("w", "t.pkl")
    assert isinstance(t, tessera.Tensor) and dt is tessera.float16 and size == tessera.Size([2])
    assert dev == tessera.device("cpu")
    assert not any(isinstance(m, type(torch)) and m.__name__.startswith("torch") for m in imp.modules.values())
