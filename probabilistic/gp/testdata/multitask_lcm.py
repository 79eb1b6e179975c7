"""Writes multitask_lcm.json: the log marginal likelihood and the predictive
mean and variance of a two-term linear model of coregionalisation in the
Hadamard form (observations with task indices), computed with NumPy from
the formulas of Bonilla, Chai and Williams (2008) by dense linear algebra.
Run from this folder: python3 multitask_lcm.py (NumPy needed).
"""
import json
import numpy as np

rng = np.random.default_rng(29)
T, R, N, M = 3, 2, 14, 5
x = rng.uniform(-2, 2, size=(N, 2))
tasks = rng.integers(0, T, size=N)
tasks[:T] = np.arange(T)
y = np.sin(x[:, 0] + tasks) + 0.3 * x[:, 1] + 0.1 * rng.standard_normal(N)
xs = rng.uniform(-2, 2, size=(M, 2))
ts = rng.integers(0, T, size=M)

terms = [
    dict(ls=0.8, W=rng.standard_normal((T, R)) * 0.7, kappa=rng.uniform(0.1, 0.5, T)),
    dict(ls=2.5, W=rng.standard_normal((T, R)) * 0.5, kappa=rng.uniform(0.1, 0.5, T)),
]
noise = np.array([0.05, 0.1, 0.2])
mean = np.array([0.3, -0.2, 0.1])


def rbf(a, b, ls):
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d2 / ls ** 2)


def cov(a, ta, b, tb):
    k = 0
    for t in terms:
        B = t["W"] @ t["W"].T + np.diag(t["kappa"])
        k = k + B[np.ix_(ta, tb)] * rbf(a, b, t["ls"])
    return k


K = cov(x, tasks, x, tasks) + np.diag(noise[tasks])
r = y - mean[tasks]
L = np.linalg.cholesky(K)
alpha = np.linalg.solve(K, r)
lml = -0.5 * r @ alpha - np.log(np.diag(L)).sum() - 0.5 * N * np.log(2 * np.pi)
Ks = cov(x, tasks, xs, ts)
pm = Ks.T @ alpha + mean[ts]
pv = np.diag(cov(xs, ts, xs, ts)) - np.einsum("ij,ij->j", Ks, np.linalg.solve(K, Ks))

out = dict(
    x=x.ravel().tolist(), y=y.tolist(), tasks=tasks.tolist(), xs=xs.ravel().tolist(), ts=ts.tolist(),
    ls=[t["ls"] for t in terms], W=[t["W"].ravel().tolist() for t in terms],
    kappa=[t["kappa"].tolist() for t in terms], noise=noise.tolist(), mean=mean.tolist(),
    lml=lml, pred_mean=pm.tolist(), pred_var=pv.tolist(),
)
with open("multitask_lcm.json", "w") as f:
    json.dump(out, f, indent=1)
