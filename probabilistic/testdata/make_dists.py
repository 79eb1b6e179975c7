"""SciPy and PyTorch values for the distributions of dists_test.go: log
densities, CDFs, means, variances, entropies, and KL divergences by
numerical integration (scipy.integrate.quad or a direct sum), so the Go
closed forms are checked against an independent computation. Run from the
repository root with /usr/bin/python3 (SciPy, PyTorch 1.13)."""
import json

import numpy as np
import torch
from scipy import integrate, stats

torch.set_default_dtype(torch.float64)
out = {}


def scalar(name, d, xs, params, cdf=True, moments=True):
    rows = []
    for x in xs:
        r = {"params": params, "x": x, "logpdf": float(d.logpdf(x))}
        if cdf:
            r["logcdf"], r["logsf"] = float(d.logcdf(x)), float(d.logsf(x))
        rows.append(r)
    extra = {"entropy": float(d.entropy())}
    if moments:
        extra["mean"], extra["var"] = float(d.mean()), float(d.var())
    out.setdefault("scalar", {}).setdefault(name, []).append({"rows": rows, **extra})


scalar("half_normal", stats.halfnorm(scale=1.7), [0.2, 1.0, 3.9], [1.7])
scalar("half_normal", stats.halfnorm(scale=0.4), [0.05, 0.9], [0.4])
scalar("half_cauchy", stats.halfcauchy(scale=2.5), [0.1, 2.0, 40.0], [2.5], cdf=False, moments=False)
scalar("log_normal", stats.lognorm(s=0.6, scale=np.exp(0.3)), [0.4, 1.3, 5.0], [0.3, 0.6])
scalar("log_normal", stats.lognorm(s=1.4, scale=np.exp(-1.0)), [0.01, 2.0], [-1.0, 1.4])
scalar("exponential", stats.expon(scale=1 / 2.5), [0.01, 0.4, 3.0], [2.5])
scalar("inverse_gamma", stats.invgamma(3.5, scale=2.0), [0.3, 1.0, 4.2], [3.5, 2.0], cdf=False)
scalar("cauchy", stats.cauchy(loc=-0.5, scale=1.3), [-0.5, 2.0, -30.0], [-0.5, 1.3], cdf=False, moments=False)
scalar("laplace", stats.laplace(loc=0.4, scale=0.8), [-2.0, 0.1, 0.4, 1.5, 9.0], [0.4, 0.8])
scalar("normal", stats.norm(loc=1.0, scale=2.0), [-6.0, 0.5, 1.0, 4.0, 9.0], [1.0, 2.0])
scalar("uniform", stats.uniform(loc=-1.0, scale=3.0), [-0.5, 1.0, 1.7], [-1.0, 2.0])

# Multinomial: SciPy's pmf, mean and the diagonal of its covariance.
mult = []
for n, logits, x in [(7, [0.2, -1.0, 1.1], [2, 1, 4]), (4, [0.0, 0.0, 0.0, 2.0], [0, 0, 1, 3])]:
    p = np.exp(logits) / np.exp(logits).sum()
    d = stats.multinomial(n, p)
    mult.append({"n": n, "logits": logits, "x": x, "logpmf": float(d.logpmf(x)),
                 "mean": list(n * p), "var": list(np.diag(d.cov()))})
out["multinomial"] = mult

# Geometric: failures before the first success, SciPy's geom shifted by −1.
geo = []
for p, ks in [(0.3, [0, 1, 7]), (0.85, [0, 3])]:
    d = stats.geom(p, loc=-1)
    geo.append({"p": p, "k": ks, "logpmf": [float(d.logpmf(k)) for k in ks],
                "mean": float(d.mean()), "var": float(d.var()), "entropy": float(d.entropy())})
out["geometric"] = geo

# Relaxed distributions: PyTorch's log_prob.
rb = []
for t, l, ys in [(0.5, 0.3, [0.1, 0.5, 0.97]), (2.0, -1.2, [0.2, 0.8])]:
    d = torch.distributions.RelaxedBernoulli(torch.tensor(t), logits=torch.tensor(l))
    rb.append({"temperature": t, "logits": l, "y": ys, "logpdf": [d.log_prob(torch.tensor(y)).item() for y in ys]})
out["relaxed_bernoulli"] = rb
rc = []
for t, l, y in [(0.7, [0.1, -0.4, 1.2], [0.2, 0.1, 0.7]), (1.5, [1.0, 0.0, 0.5, -2.0], [0.4, 0.3, 0.25, 0.05])]:
    d = torch.distributions.RelaxedOneHotCategorical(torch.tensor(t), logits=torch.tensor(l))
    rc.append({"temperature": t, "logits": l, "y": y, "logpdf": d.log_prob(torch.tensor(y)).item()})
out["relaxed_one_hot"] = rc

# Low-rank MVN: SciPy's multivariate normal with the full covariance.
rng = np.random.default_rng(3)
loc, w, dg = rng.normal(size=4), rng.normal(size=(4, 2)), rng.uniform(0.5, 2.0, size=4)
cov = w @ w.T + np.diag(dg)
xs = rng.normal(size=(3, 4))
mvn = stats.multivariate_normal(loc, cov)
out["low_rank"] = {"loc": list(loc), "w": list(w.ravel()), "diag": list(dg), "x": list(xs.ravel()),
                   "logpdf": list(mvn.logpdf(xs)), "entropy": float(mvn.entropy()), "var": list(np.diag(cov))}

# Gaussian random walk from 0: the sum of the steps' normal log densities.
x = [0.3, -0.2, 0.9, 1.4]
out["random_walk"] = {"scale": 0.7, "x": x, "logpdf": float(stats.norm(0, 0.7).logpdf(np.diff([0.0] + x)).sum())}

# Zero-inflated Poisson: the mixture's pmf and moments by direct sums.
zi = []
for lam, pi in [(2.3, 0.25), (0.4, 0.6)]:
    ks = np.arange(0, 200)
    pmf = (1 - pi) * stats.poisson(lam).pmf(ks)
    pmf[0] += pi
    m = (ks * pmf).sum()
    zi.append({"rate": lam, "gate": pi, "k": [0, 1, 4], "logpmf": [float(np.log(pmf[k])) for k in [0, 1, 4]],
               "mean": float(m), "var": float(((ks - m) ** 2 * pmf).sum())})
out["zero_inflated_poisson"] = zi

# Censored normal (Tobit) log-likelihood: log Φ at the lower bound, log(1 − Φ)
# at the upper one, the log density between.
d = stats.norm(0.5, 1.5)
lo, hi = -1.0, 2.0
cen = []
for x in [-3.0, -1.0, 0.2, 1.9, 2.0, 5.0]:
    v = d.logcdf(lo) if x <= lo else d.logsf(hi) if x >= hi else d.logpdf(x)
    cen.append({"x": x, "logp": float(v)})
out["censored_normal"] = {"loc": 0.5, "scale": 1.5, "low": lo, "high": hi, "rows": cen}


def kl_pieces(p, q, a, b, cuts):
    """quad over pieces split at the kinks (Laplace) and heavy tails."""
    edges = [a] + sorted(cuts) + [b]
    def f(x):
        lp = p.logpdf(x)
        return 0.0 if np.isneginf(lp) else np.exp(lp) * (lp - q.logpdf(x))
    return float(sum(integrate.quad(f, lo, hi, limit=500, epsabs=1e-14, epsrel=1e-13)[0] for lo, hi in zip(edges, edges[1:])))


kl = {}
kl["exponential"] = {"p": [1.3], "q": [0.4], "kl": kl_pieces(stats.expon(scale=1 / 1.3), stats.expon(scale=1 / 0.4), 0, np.inf, [1, 5, 20])}
kl["log_normal"] = {"p": [0.2, 0.5], "q": [-0.3, 0.9],
                    "kl": kl_pieces(stats.lognorm(0.5, scale=np.exp(0.2)), stats.lognorm(0.9, scale=np.exp(-0.3)), 0, np.inf, [0.5, 1, 2, 5, 20])}
kl["half_normal"] = {"p": [0.8], "q": [2.1], "kl": kl_pieces(stats.halfnorm(scale=0.8), stats.halfnorm(scale=2.1), 0, np.inf, [1, 3, 8])}
kl["inverse_gamma"] = {"p": [3.0, 1.5], "q": [2.2, 0.7],
                       "kl": kl_pieces(stats.invgamma(3.0, scale=1.5), stats.invgamma(2.2, scale=0.7), 0, np.inf, [0.2, 0.5, 1, 3, 10, 100])}
kl["laplace"] = {"p": [0.3, 0.9], "q": [-0.5, 1.6],
                 "kl": kl_pieces(stats.laplace(0.3, 0.9), stats.laplace(-0.5, 1.6), -np.inf, np.inf, [-0.5, 0.3, -10, 10])}
kl["cauchy"] = {"p": [0.2, 0.7], "q": [1.0, 1.9],
                "kl": kl_pieces(stats.cauchy(0.2, 0.7), stats.cauchy(1.0, 1.9), -np.inf, np.inf, [-100, -10, 0, 1, 10, 100])}
pp, pq = 0.35, 0.6
ks = np.arange(0, 2000)
lp, lq = stats.geom(pp, loc=-1).logpmf(ks), stats.geom(pq, loc=-1).logpmf(ks)
kl["geometric"] = {"p": [pp], "q": [pq], "kl": float((np.exp(lp) * (lp - lq)).sum())}
out["kl"] = kl

with open("probabilistic/testdata/dists.json", "w") as f:
    json.dump(out, f, indent=1)
