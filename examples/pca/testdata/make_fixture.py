# scikit-learn's PCA (top 10, divisor n − 1) of the digits and its kernel
# PCA (RBF, gamma = 1e-3, first 500 rows): what `pca -json` prints.
# Run with /usr/bin/python3 from this directory.
import json
import numpy as np
from sklearn.decomposition import PCA, KernelPCA

D = np.loadtxt("../../../data/files/sklearn/digits.csv", delimiter=",", skiprows=1)[:, :-1]
p = PCA(10, svd_solver="full").fit(D)  # "auto" would be randomised here
k = KernelPCA(10, kernel="rbf", gamma=1e-3).fit(D[:500])
json.dump({"eigenvalues": p.explained_variance_.tolist(),
           "explained_variance_ratio": p.explained_variance_ratio_.tolist(),
           "kpca_eigenvalues": k.eigenvalues_.tolist()}, open("digits.json", "w"), indent=1)
