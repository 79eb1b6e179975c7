#!/usr/bin/python3
"""NumPy/SciPy peer of Gradus's gp_lml_grad workload.

Log marginal likelihood of an exact GP (RBF kernel + Gaussian noise, d = 3,
float64) and its hand-written analytic gradient with respect to
θ = (log ℓ, log σf², log σn²):

    K = σf² exp(−D/(2ℓ²)) + σn² I,   α = K⁻¹y
    log p(y) = −½ yᵀα − Σ log diag L − (n/2) log 2π
    ∂ log p / ∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ)
    ∂K/∂log ℓ = K_f ∘ D/ℓ²,  ∂K/∂log σf² = K_f,  ∂K/∂log σn² = σn² I

with K_f = σf² exp(−D/(2ℓ²)) and D the squared distances (computed once: they
do not depend on θ). Output lines match the Go suite:
`gp_lml_grad_n<N> ms_per_eval <value> ms`, the median of --reps repetitions.
Run with the OpenBLAS overrides unset for this command only:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 \
        examples/bench/peers/gp_numpy.py [--threads 2] [--sizes 500,1000,2000]
"""
import sys

import timing


def main():
    args = timing.arguments(__doc__, "500,1000,2000", steps_help="evaluations per repetition (0: 4000/n)").parse_args()
    timing.blas_threads(args.threads)

    import math

    import numpy as np
    from scipy.linalg import cho_factor, cho_solve


    def setup(n):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((n, 3))
        y = np.sin(x.sum(1)) + 0.1 * rng.standard_normal(n)
        sq = (x * x).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
        eye = np.eye(n)
        theta = np.array([0.0, 0.0, math.log(0.01)])
        half = 0.5 * n * math.log(2 * math.pi)

        def step():
            ell2 = math.exp(2 * theta[0])
            sf2, sn2 = math.exp(theta[1]), math.exp(theta[2])
            kf = sf2 * np.exp(d2 * (-0.5 / ell2))
            k = kf + sn2 * eye
            c = cho_factor(k, lower=True, check_finite=False)
            alpha = cho_solve(c, y, check_finite=False)
            logdet = 2.0 * np.log(np.diag(c[0])).sum()
            lml = -0.5 * y @ alpha - 0.5 * logdet - half
            w = np.outer(alpha, alpha) - cho_solve(c, eye, check_finite=False)  # ααᵀ − K⁻¹
            grad = 0.5 * np.array([
                np.sum(w * kf * d2) / ell2,  # tr(W ∂K) = Σ W∘∂K for symmetric W
                np.sum(w * kf),
                sn2 * np.trace(w),
            ])
            if not np.isfinite(lml + grad.sum()):
                raise RuntimeError("gp: not finite")

        return step

    for n in timing.sizes(args.sizes):
        step = setup(n)
        sec = timing.run_timed(step, args.steps or max(1, 4000 // n), args.reps)
        print(f"gp_lml_grad_n{n} ms_per_eval {sec * 1e3:.6g} ms", flush=True)


if __name__ == "__main__":
    sys.exit(main())
