# Writes scikit-learn's (LIBSVM's) solutions that svm's tests compare
# against (Debian's python3-sklearn: /usr/bin/python3 make_fixtures.py).
import json
import numpy as np
from sklearn.svm import SVC, SVR

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
json.dump(out, open("iris_svm.json", "w"))
