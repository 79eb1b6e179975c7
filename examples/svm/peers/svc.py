"""scikit-learn's SVC (LIBSVM) on the standardised breast-cancer set: the
figures examples/svm's test compares with. Run from the repository root
with /usr/bin/python3 (Debian's python3-sklearn)."""
import numpy as np
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.svm import SVC, NuSVC

d = np.loadtxt("data/files/sklearn/breast_cancer.csv", delimiter=",", skiprows=1)
X, y = d[:, :30], np.where(d[:, 30] == 1, 1, -1)  # benign = +1
X = (X - X.mean(0)) / X.std(0)  # population standard deviation
for kernel in ["rbf", "linear"]:
    m = SVC(kernel=kernel, C=1.0, gamma="scale", tol=1e-6).fit(X, y)
    a = m.dual_coef_[0]
    sv = X[m.support_]
    K = rbf_kernel(sv, gamma=1 / (X.shape[1] * X.var())) if kernel == "rbf" else linear_kernel(sv)
    dual = np.abs(a).sum() - 0.5 * a @ K @ a
    print(kernel, "n_support", m.n_support_.sum(), "intercept", m.intercept_[0],
          "accuracy", (m.predict(X) == y).mean(), "dual", dual)
# ν-SVC (examples/svm -nu 0.2): support vectors, intercept, accuracy and
# LIBSVM's C = 1/r, which sklearn does not expose: it equals the largest
# |dual coefficient| when some support vector is at its bound.
n = NuSVC(kernel="rbf", nu=0.2, gamma="scale", tol=1e-6).fit(X, y)
print("nu rbf n_support", n.n_support_.sum(), "intercept", n.intercept_[0],
      "accuracy", (n.predict(X) == y).mean(), "max |coef|", np.abs(n.dual_coef_).max())
