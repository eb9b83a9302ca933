"""Builds and installs the graphgc Python package:

    pip install .                                  # into the active venv
    /usr/bin/python3 -m build --wheel --no-isolation   # dist/graphgc-*.whl

The extension module (_graphgc.so) is built by the project's Bazel build
(./bazelw build //python:graphgc, the same configuration as the tests, so
Bazel's disk cache makes a rebuild after the tests nearly free) and copied
next to the pure-Python files of python/src/graphgc.

There is deliberately no pyproject.toml: with one, pip builds in an isolated
environment whose setuptools it must download, which fails offline; without
one, Debian's pip and python3-build use the setuptools already installed
(python3-setuptools, python3-wheel). NumPy comes from Debian's python3-numpy:
make the venv with --system-site-packages.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithBazel(build_py):
    """build_py, plus the extension module Bazel builds."""

    def run(self):
        bazelw = os.path.join(ROOT, "bazelw")
        subprocess.check_call([bazelw, "build", "//python:graphgc"], cwd=ROOT)
        bazel_bin = subprocess.check_output(
            [bazelw, "info", "bazel-bin"], cwd=ROOT,
            stderr=subprocess.DEVNULL, text=True).strip()
        super().run()
        dest = os.path.join(self.build_lib, "graphgc")
        os.makedirs(dest, exist_ok=True)
        module = os.path.join(bazel_bin, "python", "graphgc", "_graphgc.so")
        target = os.path.join(dest, "_graphgc.so")
        shutil.copyfile(module, target)  # Bazel's output is read-only
        os.chmod(target, 0o755)


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter, not a pure-Python one."""

    def has_ext_modules(self):
        return True


setup(
    name="graphgc",
    version="0.1.0",
    description=("A graph runtime whose mark-and-sweep collector keeps one "
                 "global graph bounded, with Keras's API"),
    packages=["graphgc"],
    package_dir={"graphgc": "python/src/graphgc"},
    python_requires=">=3.11",
    cmdclass={"build_py": BuildPyWithBazel},
    distclass=BinaryDistribution,
    zip_safe=False,
)
