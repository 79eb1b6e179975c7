#!/usr/bin/python3
"""NumPy (OpenBLAS) GEMM peer benchmark at 2 threads.

Run (unset the OpenBLAS tuning overrides for this command only):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 examples/bench/peers/gemm_numpy.py

Prints lines `gemm_<f32|f64>_n<N> gflops <value> GFLOP/s` (median of repeats
after warm-up) for square n in 128, 256, 1024 (or the sizes given as
arguments).

Setup: see timing.py.
"""
from timing import blas_threads, median_gflops, report_gemm

blas_threads(2)

import numpy as np  # noqa: E402


def bench(n, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype=dtype)
    return median_gflops(lambda: np.matmul(a, b, out=c), n)


def main():
    report_gemm(bench, ((np.float32, "f32"), (np.float64, "f64")))


if __name__ == "__main__":
    main()
