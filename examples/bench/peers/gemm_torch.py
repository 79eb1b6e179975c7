#!/usr/bin/python3
"""PyTorch (CPU) GEMM peer benchmark at 2 threads.

Run with a passive OpenMP wait policy so idle worker threads do not spin and
steal cycles from anything else on the machine:
    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 examples/bench/peers/gemm_torch.py

Prints lines `gemm_<f32|f64>_n<N> gflops <value> GFLOP/s` (median of repeats
after warm-up) for square n in 128, 256, 1024 (or the sizes given as
arguments).

Setup (Debian, as root): apt-get install -y python3-numpy python3-torch
libopenblas0-pthread. Without libopenblas0-pthread both NumPy and the Debian
PyTorch build (BLAS_INFO=generic) fall back to the reference BLAS and run at
~6 GFLOP/s.
"""
import sys
import time

import torch

SIZES = [int(s) for s in sys.argv[1:]] or [128, 256, 1024]


def bench(n, dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g, dtype=dtype)
    b = torch.randn(n, n, generator=g, dtype=dtype)
    c = torch.empty(n, n, dtype=dtype)
    flops = 2.0 * n * n * n
    t0 = time.perf_counter()
    torch.matmul(a, b, out=c)
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(0.02 / one))
    for _ in range(3 * inner):  # warm-up
        torch.matmul(a, b, out=c)
    res = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(inner):
            torch.matmul(a, b, out=c)
        res.append(flops * inner / (time.perf_counter() - t0) / 1e9)
    res.sort()
    return res[len(res) // 2]


def main():
    torch.set_num_threads(2)
    for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n in SIZES:
            print(f"gemm_{name}_n{n} gflops {bench(n, dtype):.1f} GFLOP/s", flush=True)


if __name__ == "__main__":
    main()
