#!/usr/bin/python3
"""PyTorch (CPU) GEMM peer benchmark at 2 threads.

Run with a passive OpenMP wait policy so idle worker threads do not spin and
steal cycles from anything else on the machine:
    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 examples/bench/peers/gemm_torch.py

Prints lines `gemm_<f32|f64>_n<N> gflops <value> GFLOP/s` (median of repeats
after warm-up) for square n in 128, 256, 1024 (or the sizes given as
arguments).

Setup: see timing.py.
"""
import torch

from timing import median_gflops, report_gemm


def bench(n, dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g, dtype=dtype)
    b = torch.randn(n, n, generator=g, dtype=dtype)
    c = torch.empty(n, n, dtype=dtype)
    return median_gflops(lambda: torch.matmul(a, b, out=c), n)


def main():
    torch.set_num_threads(2)
    report_gemm(bench, ((torch.float32, "f32"), (torch.float64, "f64")))


if __name__ == "__main__":
    main()
