"""tessera.hub, as torch.hub for what works without a network: entry points of a local
directory's ``hubconf.py`` (list, help, load with source='local'), the hub cache directory
(get_dir, set_dir, with torch's TORCH_HOME / XDG_CACHE_HOME rules), and downloads through
urllib (download_url_to_file, load_state_dict_from_url), which serve file:// URLs and
files already in the cache.

Fetching a repository from GitHub is not implemented: source='github' uses a repository
already unpacked in the hub cache (``<hub_dir>/<owner>_<repo>_<ref>``, as torch leaves it)
and otherwise raises RuntimeError saying to clone it and load it with source='local'.
"""
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import warnings
import zipfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
# the variable torch.hub reads a GitHub token from (tessera never contacts GitHub)
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 8192
# The hash part of a file name such as resnet18-bfd8deac.pth (check_hash=True).
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")

_hub_dir = None

try:
    from tqdm.auto import tqdm  # the progress bar torch.hub uses (torch.utils.model_zoo re-exports it)
except ImportError:
    class tqdm:  # noqa: N801  (torch's fallback when tqdm is not installed: a percentage on stderr)
        """Minimal progress bar: update(n) writes the percentage (or bytes) done to stderr."""

        def __init__(self, total=None, disable=False, unit=None, unit_scale=None, unit_divisor=None):
            self.total, self.disable, self.n = total, disable, 0

        def update(self, n):
            if self.disable:
                return
            self.n += n
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%" if self.total else f"\r{self.n:.1f} bytes")
            sys.stderr.flush()

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_val, exc_tb):
            if not self.disable:
                sys.stderr.write("\n")


def _get_torch_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir():
    """The hub cache directory: the one set_dir chose, else ``$TORCH_HOME/hub``, where
    TORCH_HOME defaults to ``$XDG_CACHE_HOME/torch`` and XDG_CACHE_HOME to ``~/.cache``
    (the same directory torch uses, so both share downloaded weights)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Makes ``d`` (``~`` expanded) the hub cache directory for this process."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _import_hubconf(repo_dir):
    """The repository's hubconf.py as a module, imported with the repository on sys.path."""
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _missing_dependencies(module):
    deps = getattr(module, VAR_DEPENDENCY, None) if VAR_DEPENDENCY in dir(module) else None
    if deps is None:
        return
    missing = [name for name in deps if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError("Missing dependencies: {}".format(", ".join(missing)))


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _missing_dependencies(module)
    fn = getattr(module, model) if model in dir(module) else None
    if fn is None or not callable(fn):
        raise RuntimeError("Cannot find callable {} in hubconf".format(model))
    return fn


def _cached_github_repo(github, force_reload):
    """The directory of a GitHub repository already unpacked in the hub cache; tessera
    downloads no code, so anything else is an error."""
    spec, _, ref = github.partition(":")
    parts = spec.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f'Invalid GitHub repository "{github}": expected "repo_owner/repo_name[:ref]"')
    owner, name = parts
    candidates = [ref] if ref else ["main", "master"]
    if not force_reload:
        for branch in candidates:
            path = os.path.join(get_dir(), "_".join([owner, name, branch.replace("/", "_")]))
            if os.path.isdir(path):
                return path
    raise RuntimeError(
        f'tessera.hub cannot fetch "{github}" from GitHub: tessera.hub downloads no code (it is used without network '
        f'access), and no copy of the repository is in the hub cache {get_dir()}'
        f'{" (force_reload=True ignores it)" if force_reload else ""}. Clone the repository yourself and call '
        f"tessera.hub.load(path, model, source='local').")


def _repo_dir(repo_or_dir, source, force_reload):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        return _cached_github_repo(repo_or_dir, force_reload)
    return repo_or_dir


def list(github, force_reload=False, skip_validation=False, trust_repo=None, *, source="github"):  # noqa: A001
    """The names of the public callables (entry points) in the repository's hubconf.py.
    ``source='local'`` (as in later torch) reads a local directory; 'github' needs the
    repository in the hub cache (see the module's docstring)."""
    module = _import_hubconf(_repo_dir(github, source, force_reload))
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None, *, source="github"):  # noqa: A001
    """The docstring of entry point ``model`` in the repository's hubconf.py."""
    return _entry(_import_hubconf(_repo_dir(github, source, force_reload)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Calls entry point ``model`` of the repository's hubconf.py with ``*args`` and
    ``**kwargs`` and returns what it returns (typically a model).

    ``source='local'``: ``repo_or_dir`` is a directory holding hubconf.py; the names its
    ``dependencies`` list must be importable (RuntimeError "Missing dependencies: ..."
    otherwise). ``source='github'``: ``repo_or_dir`` is "owner/repo[:ref]", served only
    from the hub cache (tessera downloads no code).
    """
    repo_dir = _repo_dir(repo_or_dir, source, force_reload)
    module = _import_hubconf(repo_dir)
    sys.path.insert(0, repo_dir)  # (the entry point may import from the repository when called)
    try:
        return _entry(module, model)(*args, **kwargs)
    finally:
        sys.path.remove(repo_dir)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Saves what ``url`` names (any URL urllib opens: file:// works offline) to ``dst``,
    writing a temporary file in the same directory first so a failed download leaves no
    partial ``dst``. With ``hash_prefix``, the SHA-256 of the content must start with it
    (RuntimeError otherwise). ``progress`` shows a progress bar on stderr (tqdm's)."""
    response = urlopen(Request(url, headers={"User-Agent": "tessera.hub"}))
    lengths = response.info().get_all("Content-Length")
    size = int(lengths[0]) if lengths else None
    dst = os.path.expanduser(dst)
    tmp = tempfile.NamedTemporaryFile(delete=False, dir=os.path.dirname(dst))
    try:
        digest = hashlib.sha256() if hash_prefix is not None else None
        with response, tqdm(total=size, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024) as bar:
            while True:
                chunk = response.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                tmp.write(chunk)
                if digest is not None:
                    digest.update(chunk)
                bar.update(len(chunk))
        tmp.close()
        if digest is not None:
            got = digest.hexdigest()
            if got[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{got}")')
        shutil.move(tmp.name, dst)
    finally:
        tmp.close()
        if os.path.exists(tmp.name):
            os.remove(tmp.name)


def _single_file_zip(path):
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None):
    """tessera.load of the file at ``url``, downloaded once into ``model_dir`` (default
    ``<hub_dir>/checkpoints``) and read from there afterwards. ``file_name`` overrides the
    name taken from the URL; ``check_hash`` checks the content's SHA-256 against the
    ``name-<hash>.ext`` part of it. A zip holding one file (the pre-1.6 format) is
    unpacked first."""
    import tessera
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead")
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    try:
        os.makedirs(model_dir)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _single_file_zip(cached):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                      "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile "
                      "format.")
        with zipfile.ZipFile(cached) as z:
            member = z.infolist()[0]
            z.extractall(model_dir)
        cached = os.path.join(model_dir, member.filename)
    return tessera.load(cached, map_location=map_location)
