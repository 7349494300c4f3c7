"""Issue 23's census: every public name of torch 1.13's namespaces (api_census.NAMESPACES)
exists in tessera, is listed as still to come (api_census_missing.txt, which may only
shrink), or is exempt with a reason (api_census.EXEMPT)."""
import pathlib

import pytest

import api_census

MISSING_FILE = pathlib.Path(__file__).with_name("api_census_missing.txt")


def listed():
    out = {}
    for line in MISSING_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            ns, name = line.split()
            out.setdefault("" if ns == "-" else ns, set()).add(name)
    return out


@pytest.fixture(scope="module")
def gap():
    return api_census.missing_now()


def test_every_missing_name_is_listed(gap):
    unlisted = [f"{ns or '-'} {n}" for ns, names in gap.items() for n in names if n not in listed().get(ns, set())]
    assert not unlisted, ("torch names tessera lacks that api_census_missing.txt does not list (a name was lost, "
                          f"or torch gained one): {unlisted}")


def test_listed_names_are_still_missing(gap):
    arrived = [f"{ns or '-'} {n}" for ns, names in listed().items() for n in sorted(names)
               if n not in gap.get(ns, [])]
    assert not arrived, f"these names exist now: delete their lines from api_census_missing.txt: {arrived}"


def test_exemptions_name_torch_names_with_reasons():
    for ns, names in api_census.EXEMPT.items():
        theirs = api_census.public(api_census.namespace(api_census.torch, ns))
        for name, reason in names.items():
            assert name in theirs, f"EXEMPT[{ns!r}] names {name}, which torch does not have"
            assert isinstance(reason, str) and len(reason) > 20, f"EXEMPT[{ns!r}][{name}] needs a reason"


def test_report(capsys):
    text = api_census.report()
    with capsys.disabled():
        print("\n" + text)
    assert "torch.nn.functional" in text
