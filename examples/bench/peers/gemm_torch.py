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
import torch

from gemm_timing import median_gflops, report


def bench(n, dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g, dtype=dtype)
    b = torch.randn(n, n, generator=g, dtype=dtype)
    c = torch.empty(n, n, dtype=dtype)
    return median_gflops(lambda: torch.matmul(a, b, out=c), n)


def main():
    torch.set_num_threads(2)
    report(bench, ((torch.float32, "f32"), (torch.float64, "f64")))


if __name__ == "__main__":
    main()
