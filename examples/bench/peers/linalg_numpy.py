#!/usr/bin/python3
"""NumPy (LAPACK) peer of Gradus's factorisation workloads.

For each n, one random n×n float64 matrix A (uniform in [−1, 1)):

    svd_f64_n<N>   numpy.linalg.svd(A, full_matrices=False)   (gesdd: U, s, Vᵀ)
    qr_f64_n<N>    numpy.linalg.qr(A)                         (geqrf + orgqr: Q, R)
    eigh_f64_n<N>  numpy.linalg.eigh((A + Aᵀ)/2)              (syevd: w, V)

Output lines match the Go suite: `<workload> ms_per_op <value> ms`, the median
of --reps repetitions of a step count calibrated to about 0.1 s. Run with the
OpenBLAS overrides unset for this command only:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 \
        examples/bench/peers/linalg_numpy.py [--threads 2] [--sizes 256,1000]
"""
import sys

import timing


def main():
    args = timing.arguments(__doc__, "256,1000").parse_args()
    timing.blas_threads(args.threads)

    import numpy as np


    for n in timing.sizes(args.sizes):
        rng = np.random.default_rng(3)
        a = rng.uniform(-1, 1, (n, n))
        sym = (a + a.T) / 2
        ops = [
            ("svd", lambda: np.linalg.svd(a, full_matrices=False)),
            ("qr", lambda: np.linalg.qr(a)),
            ("eigh", lambda: np.linalg.eigh(sym)),
        ]
        for name, f in ops:
            sec = timing.run_timed(f, 0, args.reps)  # steps calibrated to ~0.1 s
            print(f"{name}_f64_n{n} ms_per_op {sec * 1e3:.6g} ms", flush=True)


if __name__ == "__main__":
    sys.exit(main())
