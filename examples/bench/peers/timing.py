"""What the peer benchmarks share: their command line, their BLAS thread
count and the timing protocols, the same as Gradus's bench.

- run_timed (torch_bench.py, gp_numpy.py, linalg_numpy.py): a few calls of
  warm-up, then the median over repetitions of the mean time per call.
- median_gflops and report_gemm (gemm_numpy.py, gemm_torch.py): one call
  timed, an inner loop of about 20 ms, three inner loops of warm-up, then
  the median of 15 timed inner loops.

Importing it loads no numerical library, so callers can set thread
environment variables (blas_threads) before they import theirs.

Setup of the peers (Debian, as root): apt-get install -y python3-numpy
python3-torch python3-scipy libopenblas0-pthread. Without
libopenblas0-pthread both NumPy and the Debian PyTorch build
(BLAS_INFO=generic) fall back to the reference BLAS and run at ~6 GFLOP/s.
"""
import argparse
import os
import statistics
import sys
import time


def arguments(doc, sizes, steps_help=None):
    """The parser of a peer's flags: --threads, --reps, --sizes (default
    sizes) and, with steps_help, --steps (0: the script's own count)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default=sizes, help="comma-separated sizes")
    if steps_help:
        ap.add_argument("--steps", type=int, default=0, help=steps_help)
    return ap


def sizes(arg):
    """The sizes of a comma-separated --sizes."""
    return [int(s) for s in arg.split(",") if s.strip()]


def blas_threads(n):
    """Sizes OpenBLAS's (and OpenMP's) thread pool; it must run before the
    numerical library is imported, which reads the environment once."""
    os.environ["OPENBLAS_NUM_THREADS"] = str(n)
    os.environ["OMP_NUM_THREADS"] = str(n)


def run_timed(step, steps, reps, sync=None):
    """Warm up, then time reps repetitions of steps calls; median s/step.

    steps = 0 calibrates the count to about 0.1 s per repetition from the
    warm-up calls. sync, when given, is called before each clock reading
    (torch.cuda.synchronize on a GPU, whose calls return before the work
    is done).
    """
    sync = sync or (lambda: None)
    warm = max(1, min(3, steps or 3))
    t0 = time.perf_counter()
    for _ in range(warm):
        step()
    sync()
    if not steps:  # calibrate to about 0.1 s per repetition
        per = (time.perf_counter() - t0) / warm
        steps = max(1, int(0.1 / max(per, 1e-9)))
    secs = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        secs.append((time.perf_counter() - t) / steps)
    return statistics.median(secs)


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


def report_gemm(bench, dtypes):
    """Prints `gemm_<dtype>_n<N> gflops <value> GFLOP/s` for each dtype and
    each square size given as arguments (default 128, 256, 1024)."""
    for dtype, name in dtypes:
        for n in [int(s) for s in sys.argv[1:]] or [128, 256, 1024]:
            print(f"gemm_{name}_n{n} gflops {bench(n, dtype):.1f} GFLOP/s", flush=True)
