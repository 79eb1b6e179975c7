# Writes the scikit-learn reference values that cluster's tests compare
# against (run with Debian's python3-sklearn: /usr/bin/python3 make_fixtures.py).
import json
import numpy as np
from sklearn.cluster import KMeans

X = np.loadtxt("../../data/files/sklearn/iris.csv", delimiter=",", skiprows=1)[:, :4]
out = {}
for k in (2, 3, 5):
    km = KMeans(n_clusters=k, n_init=50, random_state=0).fit(X)
    out[f"iris_k{k}"] = {"inertia": km.inertia_, "centers": km.cluster_centers_.tolist()}
json.dump(out, open("iris_kmeans.json", "w"), indent=1)
