"""tessera.random, tessera.hub and checkpoint's device-state helpers against torch 1.13:
seeding and fork_rng keep and restore the generator as torch's do; the hub loads
entry points from a local hubconf.py (and from a repository already in the cache), finds
its directory from the same environment variables, and downloads file:// URLs. Nothing
here touches the network."""
import hashlib
import os
import pathlib
import textwrap

import numpy as np
import pytest
import torch
import torch.hub
import torch.utils.checkpoint

import tessera
import tessera.utils.checkpoint


# ---- tessera.random ----

def test_random_names_are_the_top_level_ones():
    assert tessera.random.default_generator is tessera.default_generator
    for lib in (torch, tessera):
        assert lib.random.manual_seed(7) is lib.default_generator
        assert lib.random.initial_seed() == lib.initial_seed() == 7
        s = lib.random.seed()
        assert isinstance(s, int) and lib.random.initial_seed() == s
        assert lib.random.get_rng_state().dtype == lib.uint8


def test_rng_state_roundtrip_replays_draws():
    for lib in (torch, tessera):
        lib.random.manual_seed(3)
        state = lib.random.get_rng_state()
        first = lib.rand(5).tolist()
        lib.random.set_rng_state(state)
        assert lib.rand(5).tolist() == first
        lib.random.manual_seed(3)
        assert lib.rand(5).tolist() == first


@pytest.mark.parametrize("kwargs", [{}, {"devices": []}])
def test_fork_rng_restores_the_cpu_stream(kwargs):
    for lib in (torch, tessera):
        lib.manual_seed(11)
        expected = lib.rand(4).tolist()
        lib.manual_seed(11)
        with lib.random.fork_rng(**kwargs):
            inside = lib.rand(4).tolist()
            lib.rand(100)
        assert inside == expected  # the block starts from the same state...
        lib.manual_seed(11)
        lib.rand(4)
        after_plain = lib.rand(3).tolist()
        lib.manual_seed(11)
        lib.rand(4)
        with lib.random.fork_rng(**kwargs):
            lib.randn(50)
        assert lib.rand(3).tolist() == after_plain  # ...and leaves none of its draws behind


def test_fork_rng_disabled_and_errors():
    for lib in (torch, tessera):
        lib.manual_seed(5)
        lib.rand(2)
        expected = lib.rand(3).tolist()
        lib.manual_seed(5)
        with lib.random.fork_rng(enabled=False):
            lib.rand(2)
        assert lib.rand(3).tolist() == expected  # draws inside count when disabled
        lib.manual_seed(5)
        state = lib.get_rng_state()
        with pytest.raises(ValueError):
            with lib.random.fork_rng():
                lib.rand(9)
                raise ValueError("inside")
        assert lib.get_rng_state().tolist() == state.tolist()  # restored on an exception too
        with pytest.raises(AssertionError):  # a CUDA device in a CPU-only build
            with lib.random.fork_rng(devices=[0]):
                pass


def test_checkpoint_device_states_are_empty_without_cuda():
    for lib, ck in ((torch, torch.utils.checkpoint), (tessera, tessera.utils.checkpoint)):
        assert ck.get_device_states(lib.ones(2), 3, [lib.ones(1)]) == ([], [])
        assert ck.get_device_states() == ([], [])
        assert ck.set_device_states([], []) is None
        with pytest.raises(AssertionError):
            ck.set_device_states([0], [lib.get_rng_state()])


# ---- tessera.hub ----

HUBCONF = textwrap.dedent('''
    """A small hub repository for the tests."""
    dependencies = ["os", "json"]

    import helper_module_for_hub_tests as helper


    def tiny(n=2, scale=1.0):
        """Makes a list of n values."""
        return [helper.VALUE * scale] * n


    def with_kwargs(*args, **kwargs):
        return args, sorted(kwargs.items())


    def _private():
        return "hidden"


    NOT_CALLABLE = 3
''')


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    (d / "helper_module_for_hub_tests.py").write_text("VALUE = 1.5\n")
    return d


@pytest.fixture
def isolated_hub_dirs(monkeypatch, tmp_path):
    """Both hubs with no set_dir and a private TORCH_HOME, restored afterwards."""
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setattr(tessera.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize("args,kwargs", [((), {}), ((3,), {"scale": 2.0}), ((1, 4.0), {})])
def test_hub_load_local_matches_torch(repo, args, kwargs):
    ours = tessera.hub.load(str(repo), "tiny", *args, source="local", **kwargs)
    theirs = torch.hub.load(str(repo), "tiny", *args, source="local", **kwargs)
    assert ours == theirs
    assert tessera.hub.load(str(repo), "with_kwargs", 1, 2, source="LOCAL", a=3) == \
        torch.hub.load(str(repo), "with_kwargs", 1, 2, source="LOCAL", a=3)
    assert str(repo) not in __import__("sys").path


def test_hub_list_and_help_local(repo):
    # torch 1.13's list/help read GitHub only; `source` is later torch's keyword. Expected
    # values are those of the hubconf.py written above.
    assert tessera.hub.list(str(repo), source="local") == ["tiny", "with_kwargs"]
    assert tessera.hub.help(str(repo), "tiny", source="local") == "Makes a list of n values."
    assert tessera.hub.help(str(repo), "with_kwargs", source="local") is None
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        tessera.hub.help(str(repo), "missing", source="local")


@pytest.mark.parametrize("model,extra,kind", [
    ("missing_entry", "", RuntimeError),
    ("NOT_CALLABLE", "", RuntimeError),
    (3, "", ValueError),
    ("tiny", 'dependencies = ["os", "no_such_package_for_hub_tests", "other_missing_pkg"]\n', RuntimeError),
])
def test_hub_load_errors_match_torch(repo, model, extra, kind):
    if extra:
        (repo / "hubconf.py").write_text(HUBCONF + extra)
    messages = []
    for hub in (tessera.hub, torch.hub):
        with pytest.raises(kind) as info:
            hub.load(str(repo), model, source="local")
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_hub_unknown_source_matches_torch(repo):
    messages = []
    for hub in (tessera.hub, torch.hub):
        with pytest.raises(ValueError) as info:
            hub.load(str(repo), "tiny", source="gitlab")
        messages.append(str(info.value))
    assert messages[0] == messages[1] == 'Unknown source: "gitlab". Allowed values: "github" | "local".'


def test_hub_github_without_cache_raises_clearly(isolated_hub_dirs):
    with pytest.raises(RuntimeError, match="cannot fetch .*source='local'"):
        tessera.hub.load("someone/somerepo:main", "tiny", source="github")
    with pytest.raises(RuntimeError, match="cannot fetch"):
        tessera.hub.list("someone/somerepo")
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        tessera.hub.load("not-a-repo", "tiny")


def test_hub_github_served_from_cache_as_torch(isolated_hub_dirs, repo):
    # A repository torch downloaded earlier sits in <hub_dir>/<owner>_<repo>_<ref>; with an
    # explicit ref torch loads it without touching the network, and so does tessera.
    hub_dir = pathlib.Path(torch.hub.get_dir())
    assert str(hub_dir) == tessera.hub.get_dir()
    cached = hub_dir / "someone_somerepo_v1"
    cached.parent.mkdir(parents=True)
    (cached).mkdir()
    for f in repo.iterdir():
        (cached / f.name).write_text(f.read_text())
    ours = tessera.hub.load("someone/somerepo:v1", "tiny", 2, trust_repo=True, verbose=False)
    theirs = torch.hub.load("someone/somerepo:v1", "tiny", 2, trust_repo=True, verbose=False)
    assert ours == theirs
    assert tessera.hub.list("someone/somerepo:v1", trust_repo=True) == ["tiny", "with_kwargs"]
    with pytest.raises(RuntimeError, match="force_reload"):
        tessera.hub.load("someone/somerepo:v1", "tiny", force_reload=True)


@pytest.mark.parametrize("env", [
    {"TORCH_HOME": "/tmp/th_a"},
    {"XDG_CACHE_HOME": "/tmp/xdg_b"},
    {"TORCH_HOME": "~/th_c", "XDG_CACHE_HOME": "/tmp/xdg_c"},
    {},
])
def test_hub_get_dir_follows_torch_env_rules(monkeypatch, env):
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setattr(tessera.hub, "_hub_dir", None)
    for name in ("TORCH_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert tessera.hub.get_dir() == torch.hub.get_dir()
    torch.hub.set_dir("~/somewhere/hub")
    tessera.hub.set_dir("~/somewhere/hub")
    assert tessera.hub.get_dir() == torch.hub.get_dir() == os.path.expanduser("~/somewhere/hub")


def test_download_url_to_file_from_file_url(tmp_path):
    src = tmp_path / "src.bin"
    payload = bytes(range(256)) * 100
    src.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    for hub, name in ((tessera.hub, "ours.bin"), (torch.hub, "theirs.bin")):
        hub.download_url_to_file(src.as_uri(), str(tmp_path / name), hash_prefix=digest[:10], progress=False)
        assert (tmp_path / name).read_bytes() == payload
    messages = []
    for hub in (tessera.hub, torch.hub):
        with pytest.raises(RuntimeError) as info:
            hub.download_url_to_file(src.as_uri(), str(tmp_path / "bad.bin"), hash_prefix="0000", progress=False)
        messages.append(str(info.value))
        assert not (tmp_path / "bad.bin").exists()
    assert messages[0] == messages[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ours.bin", "src.bin", "theirs.bin"]  # no temp files left


def test_download_unreachable_url_fails_as_torch(tmp_path):
    kinds = []
    for hub in (tessera.hub, torch.hub):
        with pytest.raises(Exception) as info:
            hub.download_url_to_file("nosuchscheme://example/x.pt", str(tmp_path / "x.pt"), progress=False)
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1]


def test_load_state_dict_from_url(tmp_path):
    weights = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])}
    payload_path = tmp_path / "source" / "model.pt"
    payload_path.parent.mkdir()
    torch.save(weights, str(payload_path))
    digest = hashlib.sha256(payload_path.read_bytes()).hexdigest()
    named = payload_path.with_name(f"model-{digest[:8]}.pt")
    named.write_bytes(payload_path.read_bytes())

    ours = tessera.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(tmp_path / "ck"), progress=False,
                                                check_hash=True)
    theirs = torch.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(tmp_path / "ck_t"), progress=False,
                                                check_hash=True)
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        assert isinstance(ours[k], tessera.Tensor)
        np.testing.assert_array_equal(np.array(ours[k].tolist()), theirs[k].numpy())
    # cached: served from model_dir even when the source is gone
    named.unlink()
    again = tessera.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(tmp_path / "ck"), progress=False)
    assert again["w"].tolist() == weights["w"].tolist()
    # file_name overrides the name; a wrong hash in the name is rejected as torch does
    bad = payload_path.with_name("model-deadbeef.pt")
    bad.write_bytes(payload_path.read_bytes())
    messages = []
    for hub, d in ((tessera.hub, "ck2"), (torch.hub, "ck2_t")):
        with pytest.raises(RuntimeError) as info:
            hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(tmp_path / d), progress=False, check_hash=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    out = tessera.hub.load_state_dict_from_url(payload_path.as_uri(), model_dir=str(tmp_path / "ck3"), progress=False,
                                               file_name="renamed.pt")
    assert (tmp_path / "ck3" / "renamed.pt").exists() and out["b"].tolist() == [1, 2]


def test_load_state_dict_default_model_dir_under_hub_dir(isolated_hub_dirs, tmp_path):
    src = tmp_path / "w.pt"
    torch.save({"x": torch.ones(2)}, str(src))
    out = tessera.hub.load_state_dict_from_url(src.as_uri(), progress=False)
    assert out["x"].tolist() == [1.0, 1.0]
    assert (pathlib.Path(tessera.hub.get_dir()) / "checkpoints" / "w.pt").exists()
