"""Builds tessera's compiled part with CMake for pip (pyproject.toml names this backend).

The extension and its three libraries come from `cmake --install --component python` of
a build directory: TESSERA_BUILD_DIR when set (an already configured build, e.g.
build/release: nothing is rebuilt that is up to date), else build/wheel, configured here
as a Release build without tests, benchmarks or CUDA. They are copied into the wheel's
tessera/ directory, where they find each other through $ORIGIN.
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_dir = pathlib.Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build" / "wheel").resolve()
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF", "-DTESSERA_BENCH=OFF",
                                   "-DTESSERA_CUDA=OFF", f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "_C"])
        staging = build_dir / "wheel-staging"
        shutil.rmtree(staging, ignore_errors=True)
        subprocess.check_call(["cmake", "--install", str(build_dir), "--component", "python",
                               "--prefix", str(staging)])
        package_dir = pathlib.Path(self.build_lib) / "tessera"
        for lib in (staging / "tessera").iterdir():
            shutil.copy2(lib, package_dir / lib.name)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)
