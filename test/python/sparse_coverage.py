"""The sparse coverage table of docs/sparse.md, generated from the operator registry so it
cannot drift: one row per registry entry that runs sparse operands (opinfo_sparse.py, and
the entries whose backends include SparseCPU / SparseCsrCPU), the layouts its samples use,
and how its gradients are checked.

  python3 sparse_coverage.py --write   # rewrites the table in docs/sparse.md
"""
import pathlib
import sys

import opinfo

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sparse.md"
BEGIN, END = "<!-- sparse-coverage:begin -->", "<!-- sparse-coverage:end -->"
NAMES = {"sparse_coo": "COO", "sparse_csr": "CSR", "sparse_csc": "CSC", "sparse_bsr": "BSR", "sparse_bsc": "BSC"}
ORDER = list(NAMES.values())


def _layouts(info):
    found = set()
    for backend, layout in (("SparseCPU", "COO"), ("SparseCsrCPU", "CSR")):
        if backend in info.backends:
            found.add(layout)
    if info.__module__ == "opinfo_sparse" or getattr(info.call, "__module__", "") == "opinfo_sparse":
        for _, _, kwargs in info.samples("float64"):
            if "layout" in kwargs:
                found.add(NAMES[kwargs["layout"]])
        for key, name in NAMES.items():
            if key.split("_")[1] in info.name:
                found.add(name)
        if not found:
            found.add("COO")
    return [n for n in ORDER if n in found]


def _autograd(info):
    if "grad" in info.exempt:
        return "none (" + info.exempt["grad"].split(":")[0].split(";")[0] + ")"
    if info.backends != ("CPU",) and getattr(info.call, "__module__", "") != "opinfo_sparse":
        return "dense samples (the sparse axis is forward only)"
    if "torch_grad" in info.exempt:
        return "gradcheck (torch 1.13 has no derivative)"
    return "gradcheck + torch's grads"


def rows():
    out = []
    for info in opinfo.load_all():
        sparse_entry = getattr(info.call, "__module__", "") == "opinfo_sparse"
        if not sparse_entry and not ({"SparseCPU", "SparseCsrCPU"} & set(info.backends)):
            continue
        out.append((info.name, ", ".join(_layouts(info)), _autograd(info)))
    return sorted(out)


def table():
    lines = ["| registry entry | layouts | autograd |", "|---|---|---|"]
    lines += [f"| `{name}` | {layouts} | {grad} |" for name, layouts, grad in rows()]
    return "\n".join(lines)


def current_doc_table():
    text = DOC.read_text()
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()


def write():
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + BEGIN + "\n" + table() + "\n" + END + tail)


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
    else:
        print(table())
