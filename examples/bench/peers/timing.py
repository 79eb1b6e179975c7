"""The timing protocol the workload peers share (torch_bench.py,
gp_numpy.py, linalg_numpy.py), the same as Gradus's bench: a few calls of
warm-up, then the median over repetitions of the mean time per call.

Importing it loads no numerical library, so callers can set thread
environment variables before they import theirs.
"""
import statistics
import time


def run_timed(step, steps, reps):
    """Warm up, then time reps repetitions of steps calls; median s/step.

    steps = 0 calibrates the count to about 0.1 s per repetition from the
    warm-up calls.
    """
    warm = max(1, min(3, steps or 3))
    t0 = time.perf_counter()
    for _ in range(warm):
        step()
    if not steps:  # calibrate to about 0.1 s per repetition
        per = (time.perf_counter() - t0) / warm
        steps = max(1, int(0.1 / max(per, 1e-9)))
    secs = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        secs.append((time.perf_counter() - t) / steps)
    return statistics.median(secs)
