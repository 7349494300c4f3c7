"""Shared fixtures for Tessera's Python tests.

The build directory comes from TESSERA_BUILD_DIR (CTest sets it); libraries are loaded
from there with ctypes until the tessera package itself exists.
"""
import ctypes
import os
import pathlib

import pytest


def build_dir() -> pathlib.Path:
    path = os.environ.get("TESSERA_BUILD_DIR")
    if not path:
        pytest.fail("TESSERA_BUILD_DIR is not set; run the Python tests through ctest "
                    "or set it to the CMake build directory")
    return pathlib.Path(path)


@pytest.fixture(scope="session")
def c10_lib():
    """libtessera_c10.so, loaded globally as a C++ app or extension would see it."""
    return ctypes.CDLL(str(build_dir() / "c10" / "libtessera_c10.so"), mode=ctypes.RTLD_GLOBAL)


@pytest.fixture(scope="session")
def testhooks(c10_lib):
    """extern "C" entry points into c10, built from test/cpp/c10/testhooks*.cpp."""
    return ctypes.CDLL(str(build_dir() / "test" / "cpp" / "libtessera_c10_testhooks.so"))


@pytest.fixture(autouse=True)
def _seed_every_test():
    """Every test starts from the same random state, so a tolerance that random data meets only
    usually (a power iteration's convergence, a near-tie in a sort) cannot fail one CI run in many.
    Only generators that the test module already imported are seeded."""
    import random
    import sys

    random.seed(0)
    for name in ("tessera", "torch"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "manual_seed"):
            module.manual_seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)
    yield
