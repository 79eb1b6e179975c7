#!/usr/bin/python3
"""NumPy (OpenBLAS) GEMM peer benchmark at 2 threads.

Run (unset the OpenBLAS tuning overrides for this command only):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 examples/bench/peers/gemm_numpy.py

Prints lines `gemm_<f32|f64>_n<N> gflops <value> GFLOP/s` (median of repeats
after warm-up) for square n in 128, 256, 1024 (or the sizes given as
arguments).

Setup (Debian, as root): apt-get install -y python3-numpy python3-torch
libopenblas0-pthread. Without libopenblas0-pthread both NumPy and the Debian
PyTorch build (BLAS_INFO=generic) fall back to the reference BLAS and run at
~6 GFLOP/s.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "2"
os.environ.setdefault("OMP_NUM_THREADS", "2")

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SIZES = [int(s) for s in sys.argv[1:]] or [128, 256, 1024]


def bench(n, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype=dtype)
    flops = 2.0 * n * n * n
    # Inner loop long enough (~20 ms) for a stable timing.
    t0 = time.perf_counter()
    np.matmul(a, b, out=c)
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(0.02 / one))
    for _ in range(3 * inner):  # warm-up
        np.matmul(a, b, out=c)
    res = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(inner):
            np.matmul(a, b, out=c)
        res.append(flops * inner / (time.perf_counter() - t0) / 1e9)
    res.sort()
    return res[len(res) // 2]


def main():
    for dtype, name in ((np.float32, "f32"), (np.float64, "f64")):
        for n in SIZES:
            print(f"gemm_{name}_n{n} gflops {bench(n, dtype):.1f} GFLOP/s", flush=True)


if __name__ == "__main__":
    main()
