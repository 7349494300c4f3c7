"""Build facts under torch.version's names: the version, and what this build was made
with (no CUDA, no ROCm)."""
from . import _C

__version__ = _C._version
git_version = "Unknown"
cuda = None
hip = None
debug = False  # the extension does not report its build type yet; the packaged builds are release
