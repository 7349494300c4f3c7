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
