# Writes the reference values that rdp_test.go and epsilon_test.go compare
# against. rdp.json: the Rényi divergence of the sampled Gaussian mechanism computed
# straight from its definition by numerical integration in 40-digit
# arithmetic (mpmath), not from the series that accountant.go sums.
#
# For sampling rate q and noise multiplier sigma, with mu0 = N(0, sigma^2),
# mu1 = N(1, sigma^2) and mu = (1-q) mu0 + q mu1 (Mironov, Talwar and Zhang
# 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism"),
#
#   D_a(P || Q) = log( integral P(z)^a Q(z)^(1-a) dz ) / (a - 1),
#
# and the RDP of one step at order a is the larger of D_a(mu || mu0) and
# D_a(mu0 || mu). Both are integrated here; the script checks that the first
# is the larger (the paper's Theorem 4) and records it.
#
# epsilon.json: (epsilon, delta) guarantees of whole runs, from those
# integrated divergences at every order of the accountant's default grid,
# composed over the steps and converted with both conversions, each
# written out here from its paper (Mironov 2017, Proposition 3; Balle et
# al. 2020, Theorem 21).
#
# Regenerate (Debian's python3-mpmath; about 10 minutes for rdp.json and 2
# per run in epsilon.json):
#   cd optim/privacy/testdata && /usr/bin/python3 gen.py rdp epsilon
import json
import math
import os
import sys

import mpmath as mp

mp.mp.dps = 40
HERE = os.path.dirname(os.path.abspath(__file__))


def log_divergence_integral(q, sigma, a, reverse):
    """log of the integral of P^a Q^(1-a), (P, Q) = (mu, mu0) or (mu0, mu)."""
    q, sigma, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(a)

    def log_mu0(z):
        return -z * z / (2 * sigma**2) - mp.log(sigma * mp.sqrt(2 * mp.pi))

    def log_mu(z):
        # mu / mu0 = 1 - q + q exp((2z - 1) / (2 sigma^2))
        return log_mu0(z) + mp.log(1 - q + q * mp.exp((2 * z - 1) / (2 * sigma**2)))

    if reverse:
        def log_f(z):
            return a * log_mu0(z) + (1 - a) * log_mu(z)
    else:
        def log_f(z):
            return a * log_mu(z) + (1 - a) * log_mu0(z)

    # The integrand's mass lies between -a and a+1 (its peak solves
    # z = a * weight(z) with a weight in [0, 1], or the mirror image), so
    # split there, factor out the largest value on a grid and integrate the
    # pieces with tanh-sinh quadrature.
    lo, hi = -abs(a) - 12 * sigma, abs(a) + 1 + 12 * sigma
    pts = [lo + (hi - lo) * k / 64 for k in range(65)]
    ref = max(log_f(z) for z in pts)
    val = mp.quad(lambda z: mp.exp(log_f(z) - ref), [-mp.inf] + pts + [mp.inf])
    return ref + mp.log(val)


def rdp(q, sigma, a):
    fwd = log_divergence_integral(q, sigma, a, False) / (a - 1)
    rev = log_divergence_integral(q, sigma, a, True) / (a - 1)
    assert fwd >= rev - mp.mpf(10) ** -25, (q, sigma, a, fwd, rev)
    return float(fwd)


def default_orders():
    return [1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5] + list(range(5, 65)) + [128, 256]


def epsilon(orders, rdps, delta):
    classic = min(r + math.log(1 / delta) / (a - 1) for a, r in zip(orders, rdps))
    balle = min(r + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1)
                for a, r in zip(orders, rdps))
    return max(classic, 0), max(balle, 0)


def write_rdp():
    cases = []
    for q in [1e-3, 256 / 60000, 0.01, 0.05, 0.2, 0.6]:
        for sigma in [0.7, 1.1, 2.5, 8.0]:
            for a in [1.25, 1.5, 2, 2.5, 3, 4.5, 8, 10.7, 16, 32, 63.5, 128, 256]:
                cases.append({"q": q, "sigma": sigma, "order": a, "rdp": rdp(q, sigma, a)})
    with open(os.path.join(HERE, "rdp.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")


# The runs: TensorFlow Privacy's MNIST tutorial with sigma = 1.1 (batches
# of 256 of 60,000, 60 epochs of 234 steps), and examples/dpsgd's defaults.
RUNS = [
    {"name": "TF Privacy MNIST, sigma 1.1", "q": 256 / 60000, "sigma": 1.1, "steps": 60 * 234, "delta": 1e-5},
    # 5 epochs of 16 Poisson batches of expected size 512 of 8,000 digits,
    # at the sigma privacy.NoiseMultiplier finds for epsilon 3.5.
    {"name": "examples/dpsgd defaults", "q": 512 / 8000, "sigma": 1.1610717773, "steps": 80, "delta": 1e-5},
]


def write_epsilon():
    out = []
    orders = default_orders()
    for run in RUNS:
        rdps = [run["steps"] * rdp(run["q"], run["sigma"], a) for a in orders]
        classic, balle = epsilon(orders, rdps, run["delta"])
        out.append(dict(run, epsilon_mironov2017=classic, epsilon_balle2020=balle))
    with open(os.path.join(HERE, "epsilon.json"), "w") as f:
        json.dump({"runs": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    for what in sys.argv[1:]:
        {"rdp": write_rdp, "epsilon": write_epsilon}[what]()
