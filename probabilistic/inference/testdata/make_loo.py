"""WAIC and PSIS-LOO computed in NumPy, the fixture of loo_test.go.

An independent implementation written from the papers: Vehtari, Gelman and
Gabry (2017), "Practical Bayesian model evaluation using leave-one-out
cross-validation and WAIC", §2-3; Vehtari, Simpson, Gelman, Yao and Gabry
(2024), "Pareto smoothed importance sampling", §3 (tail length
M = ceil(min(S/5, 3 sqrt(S))), expected order statistics of the fitted
generalized Pareto, truncation at the largest raw weight); and Zhang and
Stephens (2009), "A new and efficient estimation method for the
generalized Pareto distribution" (profile-likelihood weighted estimate with
m = 30 + floor(sqrt(n)) grid points), with the prior shrinking k towards
1/2 of Vehtari et al. ArviZ is not installed here. Run from the repository
root with /usr/bin/python3.

The data: 20 standard normal observations and an outlier at 6, a normal
model with unknown mean and variance under the flat prior, and S = 1000
exact posterior draws (Gelman et al. 2013, "Bayesian Data Analysis",
§3.2). The Go test recomputes the log-likelihood matrix from the draws.
"""
import json

import numpy as np

rng = np.random.default_rng(2017)
y = np.concatenate([rng.normal(size=20), [6.0]])
n, S = len(y), 1000
s2 = y.var(ddof=1)
sigma = np.sqrt((n - 1) * s2 / rng.chisquare(n - 1, size=S))
mu = rng.normal(y.mean(), sigma / np.sqrt(n))
ll = -0.5 * np.log(2 * np.pi) - np.log(sigma)[:, None] - 0.5 * ((y[None, :] - mu[:, None]) / sigma[:, None]) ** 2


def logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


# WAIC: lppd minus the posterior variance of the log-likelihood.
lppd = logsumexp(ll, axis=0) - np.log(S)
p_waic = ll.var(axis=0, ddof=1)
waic_i = lppd - p_waic


def gp_fit(x):
    """Zhang and Stephens (2009): x sorted exceedances > 0."""
    n = len(x)
    m = 30 + int(np.sqrt(n))
    j = np.arange(1, m + 1)
    q1 = x[int(n / 4 + 0.5) - 1]
    theta = 1 / x[-1] + (1 - np.sqrt(m / (j - 0.5))) / 3 / q1
    kk = np.log1p(-np.outer(theta, x)).mean(axis=1)
    prof = n * (np.log(-theta / kk) - kk - 1)
    w = np.exp(prof - logsumexp(prof))
    th = (w * theta).sum()
    k = np.log1p(-th * x).mean()
    sig = -k / th
    return (n * k + 5) / (n + 10), sig


def psis(lr):
    S = len(lr)
    lw = lr - lr.max()
    M = int(np.ceil(min(0.2 * S, 3 * np.sqrt(S))))
    order = np.argsort(lw, kind="stable")
    tail = order[-M:]
    cutoff = lw[order[-M - 1]]
    k, sig = gp_fit(np.exp(lw[tail]) - np.exp(cutoff))
    p = (np.arange(M) + 0.5) / M
    lw[tail] = np.log(sig * np.expm1(-k * np.log1p(-p)) / k + np.exp(cutoff))
    return np.minimum(lw, 0) + lr.max(), k


loo_i, ks = np.empty(n), np.empty(n)
for i in range(n):
    lw, ks[i] = psis(-ll[:, i])
    loo_i[i] = logsumexp(lw + ll[:, i]) - logsumexp(lw)

out = {
    "y": list(y), "mu": list(mu), "sigma": list(sigma),
    "waic": {"elpd": waic_i.sum(), "p": p_waic.sum(), "se": np.sqrt(n * waic_i.var(ddof=1)), "pointwise": list(waic_i)},
    "loo": {"elpd": loo_i.sum(), "p": (lppd - loo_i).sum(), "se": np.sqrt(n * loo_i.var(ddof=1)),
            "pointwise": list(loo_i), "k": list(ks)},
}
with open("probabilistic/inference/testdata/loo.json", "w") as f:
    json.dump(out, f, indent=1, default=float)
print(out["waic"]["elpd"], out["loo"]["elpd"], ks[-3:])
