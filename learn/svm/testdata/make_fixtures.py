# Writes scikit-learn's (LIBSVM's) solutions that svm's tests compare
# against (Debian's python3-sklearn: /usr/bin/python3 make_fixtures.py).
import json
import numpy as np
from sklearn.svm import SVC, SVR, LinearSVC, NuSVC, NuSVR

D = np.loadtxt("../../data/files/sklearn/iris.csv", delimiter=",", skiprows=1)
X, y = D[:, :4], D[:, 4].astype(int)
out = {}
m = (y == 1) | (y == 2)
b = SVC(kernel="rbf", gamma=0.5, C=1.0, tol=1e-10).fit(X[m], y[m])
out["binary"] = {
    "decision": b.decision_function(X[m]).tolist(),  # > 0 favours class 2
    "intercept": float(b.intercept_[0]),
    "n_support": int(b.n_support_.sum()),
}
w = SVC(kernel="rbf", gamma=0.5, C=1.0, tol=1e-10, class_weight={1: 3.0}).fit(X[m], y[m])
out["binary_weighted"] = {"decision": w.decision_function(X[m]).tolist()}
mc = SVC(kernel="rbf", gamma=0.5, C=10.0, tol=1e-10, decision_function_shape="ovo").fit(X, y)
out["ovo"] = {"decision": mc.decision_function(X).tolist(), "predict": mc.predict(X).tolist()}
r = SVR(kernel="rbf", gamma=0.5, C=1.0, epsilon=0.1, tol=1e-10).fit(X[:, 2:3], X[:, 3])
out["svr"] = {"predict": r.predict(X[:, 2:3]).tolist(), "intercept": float(r.intercept_[0]), "n_support": int(len(r.support_))}
# ν-SVC and ν-SVR (LIBSVM's Solver_NU): dual coefficients, intercept,
# support indices (into the rows given) and decision values.
nb = NuSVC(kernel="rbf", gamma=0.5, nu=0.3, tol=1e-10).fit(X[m], y[m])
out["nu_binary"] = {
    "decision": nb.decision_function(X[m]).tolist(),  # > 0 favours class 2
    "intercept": float(nb.intercept_[0]),
    "support": nb.support_.tolist(),
    "dual_coef": nb.dual_coef_[0].tolist(),
}
no = NuSVC(kernel="rbf", gamma=0.5, nu=0.2, tol=1e-10, decision_function_shape="ovo").fit(X, y)
out["nu_ovo"] = {"decision": no.decision_function(X).tolist(), "predict": no.predict(X).tolist()}
# Petal width on the other three measurements, over the rows whose inputs
# are distinct (equal inputs could share their coefficient in many ways).
rows = np.sort(np.unique(X[:, :3], axis=0, return_index=True)[1])
nr = NuSVR(kernel="rbf", gamma=2.0, C=2.0, nu=0.4, tol=1e-10).fit(X[rows, :3], X[rows, 3])
out["nu_svr"] = {
    "rows": rows.tolist(),
    "predict": nr.predict(X[rows, :3]).tolist(),
    "intercept": float(nr.intercept_[0]),
    "support": nr.support_.tolist(),
    "dual_coef": nr.dual_coef_[0].tolist(),
}
# Crammer–Singer multiclass (liblinear, linear, no intercept) on iris.
# liblinear warns that it did not reach tol 1e-10, but its weights move by
# less than 1e-10 between 10⁶ and 5·10⁶ iterations.
cs = LinearSVC(multi_class="crammer_singer", C=1.0, fit_intercept=False, tol=1e-10, max_iter=1000000).fit(X, y)
out["crammer_singer"] = {"coef": cs.coef_.tolist(), "decision": cs.decision_function(X).tolist(), "predict": cs.predict(X).tolist()}
json.dump(out, open("iris_svm.json", "w"))
