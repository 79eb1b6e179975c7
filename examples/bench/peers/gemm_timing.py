"""The timing protocol the GEMM peers share (gemm_numpy.py, gemm_torch.py),
the same as Gradus's: one call timed, an inner loop of about 20 ms, three
inner loops of warm-up, then the median of 15 timed inner loops.

Importing it loads no numerical library, so callers can set thread
environment variables before they import theirs.
"""
import sys
import time

SIZES = [int(s) for s in sys.argv[1:]] or [128, 256, 1024]


def median_gflops(matmul, n):
    """GFLOP/s of matmul(), which multiplies two n×n matrices."""
    flops = 2.0 * n * n * n
    t0 = time.perf_counter()
    matmul()
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(0.02 / one))
    for _ in range(3 * inner):  # warm-up
        matmul()
    res = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(inner):
            matmul()
        res.append(flops * inner / (time.perf_counter() - t0) / 1e9)
    res.sort()
    return res[len(res) // 2]


def report(bench, dtypes):
    """Prints one result line per (dtype, size) in the suite's format."""
    for dtype, name in dtypes:
        for n in SIZES:
            print(f"gemm_{name}_n{n} gflops {bench(n, dtype):.1f} GFLOP/s", flush=True)
