"""The version for pyproject.toml's dynamic "version": the repository's VERSION file, the one
attnlab's CMakeLists.txt reads, so that the package and the program never disagree.

It is read from ../VERSION (this directory inside the source tree; pip builds it in place) or,
in an sdist made from it, from the copy PKG-INFO carries. The built package gets
attnlab/_version.py written into the build directory (never into the source tree), which
attnlab.__version__ reads; a source checkout on PYTHONPATH reads ../VERSION itself.
"""
import os
import re

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def read_version():
    path = os.path.join(os.path.dirname(HERE), "VERSION")
    if os.path.isfile(path):
        with open(path) as f:
            text = f.read().strip()
    else:  # an sdist: PKG-INFO holds the version it was made with
        with open(os.path.join(HERE, "PKG-INFO")) as f:
            text = re.search(r"^Version: (\S+)$", f.read(), re.M).group(1)
    if not re.fullmatch(r"\d+\.\d+\.\d+", text):
        raise SystemExit(f"{path}: {text[:40]!r} is not a version (MAJOR.MINOR.PATCH)")
    return text


VERSION = read_version()


class BuildPyWithVersion(build_py):
    """build_py, plus attnlab/_version.py in the build directory."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "attnlab", "_version.py")
        with open(target, "w") as f:
            f.write(f'version = "{VERSION}"  # written by setup.py from VERSION\n')


setup(version=VERSION, cmdclass={"build_py": BuildPyWithVersion})
