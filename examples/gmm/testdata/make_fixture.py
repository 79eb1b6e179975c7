# scikit-learn's EM on iris from the means of rows 0, 50, 100 with identity
# covariances and equal weights (what `gmm -init rows:0,50,100` does), and
# k-means on digits from the first 10 rows (`kmeans -init first`).
# Run with /usr/bin/python3 from this directory.
import json
import numpy as np
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture

X = np.loadtxt("../../../data/files/sklearn/iris.csv", delimiter=",", skiprows=1)[:, :4]
rows = [0, 50, 100]
gm = GaussianMixture(3, covariance_type="full", means_init=X[rows], weights_init=np.ones(3) / 3,
                     precisions_init=np.stack([np.eye(4)] * 3), tol=1e-3, max_iter=100).fit(X)
# Converged tightly for the values; n_iter_ at the default tol counts the
# E-step at the initial parameters as iteration 1.
tight = GaussianMixture(3, covariance_type="full", means_init=X[rows], weights_init=np.ones(3) / 3,
                        precisions_init=np.stack([np.eye(4)] * 3), tol=1e-12, max_iter=5000).fit(X)
json.dump({"mean_log_likelihood": float(tight.score(X)), "iterations": int(gm.n_iter_),
           "weights": tight.weights_.tolist()}, open("iris_rows.json", "w"), indent=1)

D = np.loadtxt("../../../data/files/sklearn/digits.csv", delimiter=",", skiprows=1)[:, :-1]
km = KMeans(10, init=D[:10], n_init=1, algorithm="lloyd").fit(D)
json.dump({"inertia": float(km.inertia_), "iterations": int(km.n_iter_),
           "sizes": np.bincount(km.labels_, minlength=10).tolist()},
          open("../../kmeans/testdata/digits_first.json", "w"), indent=1)
