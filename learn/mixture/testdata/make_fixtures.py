# Writes scikit-learn's Gaussian mixture fits of iris that mixture's tests
# compare against (Debian's python3-sklearn: /usr/bin/python3 make_fixtures.py).
import json
import numpy as np
from sklearn.mixture import GaussianMixture

X = np.loadtxt("../../data/files/sklearn/iris.csv", delimiter=",", skiprows=1)[:, :4]
out = {}
for cov in ("full", "diag", "spherical", "tied"):
    gm = GaussianMixture(3, covariance_type=cov, n_init=10, tol=1e-10, max_iter=2000, random_state=0).fit(X)
    out[cov] = {"loglik": float(gm.score(X)), "weights": gm.weights_.tolist(), "means": gm.means_.tolist(),
                "bic": float(gm.bic(X)), "aic": float(gm.aic(X))}
json.dump(out, open("iris_gmm.json", "w"), indent=1)
