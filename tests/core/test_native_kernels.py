"""The engine's AVX2 kernels against upstream's scalar ones, on the same inputs (core/native/e5.c).

The whole-engine tests (test_native_engine.py) compare vectors after 12 layers, where float
rounding already moves them a little; here the building blocks are compared one by one: the
vectorized activation quantizer must give upstream's int8 values, scales and sums exactly, and
the AVX2 and VNNI matmuls on packed weights upstream's products to float rounding. A small C program that
includes e5.c is compiled with the flags setup.py uses.
"""

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from core.native import REQUIRED_FLAGS, cpu_flags

ENGINE = Path(__file__).resolve().parents[2] / "core" / "native" / "e5.c"
CC = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
AVX2 = platform.machine() == "x86_64" and REQUIRED_FLAGS.issubset(cpu_flags())
FLAGS = ["-O3", "-funroll-loops", "-ffast-math", "-fopenmp", "-mavx2", "-mfma"]  # as setup.py

HARNESS = r"""
#include "ENGINE"
static float frand(void) { return rand() / (float)RAND_MAX - 0.5f; }
int main(void) {
    int L = 21, nin = 384, nout = 1536, nb = nin / QK;
    srand(7);
    float *X = malloc(sizeof(float) * L * nin);
    for (int i = 0; i < L * nin; i++) X[i] = frand() * (i % 97 == 0 ? 300.f : 3.f);
    for (int j = 0; j < QK; j++) X[j] = 0.f;               /* a block of zeros */
    int8_t *q1 = malloc(L * nin), *q2 = malloc(L * nin);
    float *d1 = malloc(sizeof(float) * L * nb), *d2 = malloc(sizeof(float) * L * nb);
    int32_t *s1 = malloc(sizeof(int32_t) * L * nb), *s2 = malloc(sizeof(int32_t) * L * nb);
    quantize_acts(X, L, nin, q1, d1, s1);
    quantize_acts_256(X, L, nin, q2, d2, s2);
    int same = !memcmp(q1, q2, L * nin) && !memcmp(d1, d2, sizeof(float) * L * nb)
               && !memcmp(s1, s2, sizeof(int32_t) * L * nb);
    block_q4_0 *W = malloc(sizeof(block_q4_0) * nout * nb);
    for (int i = 0; i < nout * nb; i++) {
        _Float16 h = (_Float16)(frand() * 0.02f);
        memcpy(&W[i].d, &h, 2);
        for (int j = 0; j < 16; j++) W[i].qs[j] = (uint8_t)(rand() & 0xFF);
    }
    float *bias = malloc(sizeof(float) * nout);
    for (int o = 0; o < nout; o++) bias[o] = frand();
    float *Y1 = malloc(sizeof(float) * L * nout), *Y2 = malloc(sizeof(float) * L * nout);
    float *Y3 = malloc(sizeof(float) * L * nout);
    packed_t P, V;
    if (pack_rows(&P, W, nout, nin, AR)) return 2;
    matmul_q4q8(W, bias, q1, d1, s1, Y1, L, nout, nin);
    matmul_avx2(&P, bias, q1, d1, s1, Y2, L);
    int vnni = E5_VNNI && cpu_has_vnni();   /* L = 21: tiles of 8 and 4 tokens, and one alone */
#if E5_VNNI
    if (vnni) {
        if (pack_rows(&V, W, nout, nin, VR)) return 2;
        matmul_vnni(&V, bias, q1, d1, s1, Y3, L);
    }
#endif
    double worst = 0, worst_vnni = 0, scale = 0;
    for (int i = 0; i < L * nout; i++) {
        double e = fabs((double)Y1[i] - Y2[i]);
        if (e > worst) worst = e;
        if (vnni && fabs((double)Y1[i] - Y3[i]) > worst_vnni) worst_vnni = fabs((double)Y1[i] - Y3[i]);
        if (fabs(Y1[i]) > scale) scale = fabs(Y1[i]);
    }
    printf("%d %g %g %d %g\n", same, worst, scale, vnni, worst_vnni);
    return 0;
}
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[bool, float, float, bool, float]:
    if CC is None or not AVX2:
        pytest.skip("no C compiler or no AVX2 here: the AVX2 kernels are not built")
    folder = tmp_path_factory.mktemp("kernels")
    (folder / "harness.c").write_text(HARNESS.replace("ENGINE", str(ENGINE)))
    subprocess.run(
        [CC, *FLAGS, "-o", str(folder / "harness"), str(folder / "harness.c"), "-lm"],
        check=True,
        capture_output=True,
    )
    done = subprocess.run([str(folder / "harness")], check=True, capture_output=True, text=True)
    same, worst, scale, vnni, worst_vnni = done.stdout.split()
    return same == "1", float(worst), float(scale), vnni == "1", float(worst_vnni)


def test_the_vectorized_quantizer_gives_upstreams_int8_values_exactly(measured):
    same = measured[0]

    assert same


def test_the_avx2_matmul_on_packed_weights_gives_upstreams_products(measured):
    _, worst, scale, _, _ = measured

    assert scale > 1.0  # the products are not all zero
    assert worst <= 1e-4 * scale


def test_the_vnni_matmul_on_its_packed_weights_gives_upstreams_products(measured):
    _, _, scale, vnni, worst = measured
    if not vnni:
        pytest.skip("this CPU has no AVX-512 VNNI: the VNNI kernel cannot run here")

    assert scale > 1.0
    assert worst <= 1e-4 * scale
