# Writes the reference values pca's tests compare against, computed with
# NumPy and scikit-learn (Debian's python3-sklearn):
#   /usr/bin/python3 make_fixtures.py
import json
import numpy as np
from sklearn.decomposition import PCA, KernelPCA

X = np.loadtxt("../../data/files/sklearn/iris.csv", delimiter=",", skiprows=1)[:, :4]
out = {}

p = PCA(n_components=3).fit(X)
comps = p.components_.copy()
for r in comps:  # the documented convention: largest |entry| positive
    if r[np.argmax(np.abs(r))] < 0:
        r *= -1
out["pca"] = {
    "components": comps.tolist(),
    "explained_variance": p.explained_variance_.tolist(),
    "explained_variance_ratio": p.explained_variance_ratio_.tolist(),
    "mean": p.mean_.tolist(),
}

# PPCA maximum likelihood (Tipping & Bishop 1999, eqs. 7-8), q = 2, with
# the ML covariance (divisor n), and its log-likelihood.
n, d = X.shape
q = 2
mu = X.mean(0)
S = (X - mu).T @ (X - mu) / n
lam, U = np.linalg.eigh(S)
lam, U = lam[::-1], U[:, ::-1]
s2 = lam[q:].mean()
W = U[:, :q] * np.sqrt(lam[:q] - s2)
C = W @ W.T + s2 * np.eye(d)
sign, logdet = np.linalg.slogdet(C)
ll = -n / 2 * (d * np.log(2 * np.pi) + logdet + np.trace(np.linalg.solve(C, S)))
out["ppca_q2"] = {"sigma2": s2, "wwt": (W @ W.T).tolist(), "loglik": ll}

kp = KernelPCA(n_components=2, kernel="rbf", gamma=0.5).fit(X)
out["kpca_rbf"] = {
    "eigenvalues": kp.eigenvalues_.tolist(),
    "train": kp.transform(X[:5]).tolist(),
    "new": kp.transform(np.array([[5.0, 3.0, 4.0, 1.0], [7.0, 3.2, 6.0, 2.0]])).tolist(),
}
json.dump(out, open("iris.json", "w"), indent=1)
