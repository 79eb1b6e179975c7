# Writes the scikit-learn reference values that the tests of learn/linear,
# learn/naivebayes, learn/discriminant, learn/neighbors and learn/preprocess
# compare against, computed on the data sets embedded in package data.
# Regenerate (scikit-learn 1.2, SciPy ≥ 1.6, Debian's python3-sklearn):
#   cd learn/internal/skfixtures && /usr/bin/python3 gen.py
import json
import os
import warnings

import numpy as np
from sklearn.discriminant_analysis import (LinearDiscriminantAnalysis,
                                           QuadraticDiscriminantAnalysis)
from sklearn.linear_model import (ElasticNet, Lasso, LinearRegression,
                                  QuantileRegressor, Ridge, enet_path)
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "../../../data/files/sklearn")


def load(name):
    a = np.loadtxt(os.path.join(DATA, name), delimiter=",", skiprows=1)
    return a[:, :-1], a[:, -1]


def write(pkg, obj):
    path = os.path.join(HERE, "..", "..", pkg, "testdata", "sklearn.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def L(a):
    return np.asarray(a).tolist()


iris_x, iris_y = load("iris.csv")
iris_y = iris_y.astype(int)
diab_x, diab_y = load("diabetes.csv")
bc_x, bc_y = load("breast_cancer.csv")
bc_y = bc_y.astype(int)
dig_x, dig_y = load("digits.csv")
dig_y = dig_y.astype(int)

# ---- linear -------------------------------------------------------------
lin = {}
m = LinearRegression().fit(diab_x, diab_y)
lin["ols"] = {"coef": L(m.coef_), "intercept": m.intercept_, "pred": L(m.predict(diab_x[:5]))}
m = Ridge(alpha=1.0).fit(diab_x, diab_y)
lin["ridge"] = {"coef": L(m.coef_), "intercept": m.intercept_, "pred": L(m.predict(diab_x[:5]))}
m = Ridge(alpha=0.5, fit_intercept=False).fit(diab_x, diab_y)
lin["ridge_nointercept"] = {"coef": L(m.coef_), "intercept": m.intercept_}
m = Lasso(alpha=0.1).fit(diab_x, diab_y)
lin["lasso"] = {"coef": L(m.coef_), "intercept": m.intercept_, "n_iter": int(m.n_iter_),
                "dual_gap": float(m.dual_gap_), "pred": L(m.predict(diab_x[:5]))}
m = ElasticNet(alpha=0.01, l1_ratio=0.7).fit(diab_x, diab_y)
lin["enet"] = {"coef": L(m.coef_), "intercept": m.intercept_, "n_iter": int(m.n_iter_)}
xc = diab_x - diab_x.mean(0)
yc = diab_y - diab_y.mean()
for key, rho in (("lasso_path", 1.0), ("enet_path", 0.5)):
    alphas, coefs, gaps = enet_path(xc, yc, l1_ratio=rho, eps=1e-2, n_alphas=8)
    lin[key] = {"alphas": L(alphas), "coefs": L(coefs.T),
                "intercepts": L(diab_y.mean() - diab_x.mean(0) @ coefs)}
qx, qy = diab_x[:120, :4], diab_y[:120]
m = QuantileRegressor(quantile=0.3, alpha=0.002, solver="highs").fit(qx, qy)
r = qy - qx @ m.coef_ - m.intercept_
obj = np.mean(np.maximum(0.3 * r, (0.3 - 1) * r)) + 0.002 * np.abs(m.coef_).sum()
lin["quantile"] = {"quantile": 0.3, "alpha": 0.002, "coef": L(m.coef_), "intercept": m.intercept_, "objective": obj}
m = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(qx, qy)
r = qy - qx @ m.coef_ - m.intercept_
lin["median"] = {"coef": L(m.coef_), "intercept": m.intercept_, "objective": np.mean(np.abs(r)) / 2}
write("linear", lin)

# ---- naive Bayes --------------------------------------------------------
nb = {}
rows = [0, 50, 70, 77, 83, 106, 119, 133, 134]
m = GaussianNB().fit(iris_x, iris_y)
nb["gaussian"] = {"theta": L(m.theta_), "var": L(m.var_), "prior": L(m.class_prior_),
                  "rows": rows, "proba": L(m.predict_proba(iris_x[rows])),
                  "jll": L(m.predict_joint_log_proba(iris_x[rows])), "pred": L(m.predict(iris_x))}
m = GaussianNB(priors=[0.2, 0.3, 0.5], var_smoothing=1e-2).fit(iris_x, iris_y)
nb["gaussian_priors"] = {"var": L(m.var_), "proba": L(m.predict_proba(iris_x[rows])), "pred": L(m.predict(iris_x))}
dx, dy = dig_x[:400], dig_y[:400]
m = BernoulliNB(alpha=1.0, binarize=4.0).fit(dx, dy)
nb["bernoulli"] = {"binarize": 4.0, "feature_log_prob": L(m.feature_log_prob_), "class_log_prior": L(m.class_log_prior_),
                   "proba": L(m.predict_proba(dig_x[400:405])), "pred": L(m.predict(dig_x[400:600]))}
m = MultinomialNB(alpha=0.5).fit(dx, dy)
nb["multinomial"] = {"alpha": 0.5, "feature_log_prob": L(m.feature_log_prob_), "class_log_prior": L(m.class_log_prior_),
                     "jll": L(m.predict_joint_log_proba(dig_x[400:405])),
                     "proba": L(m.predict_proba(dig_x[400:405])), "pred": L(m.predict(dig_x[400:600]))}
write("naivebayes", nb)

# ---- discriminant -------------------------------------------------------
da = {}


def flip_cols(z, ref):
    # sign of each component fixed by its first row, as the Go test does
    return z * np.sign(ref[0])


m = LinearDiscriminantAnalysis(solver="svd").fit(iris_x, iris_y)
z = m.transform(iris_x[:6])
da["lda"] = {"coef": L(m.coef_), "intercept": L(m.intercept_), "rows": rows,
             "proba": L(m.predict_proba(iris_x[rows])), "pred": L(m.predict(iris_x)),
             "transform": L(flip_cols(z, z)), "explained_variance_ratio": L(m.explained_variance_ratio_),
             "decision": L(m.decision_function(iris_x[rows]))}
m = LinearDiscriminantAnalysis(solver="svd", priors=[0.5, 0.25, 0.25]).fit(iris_x, iris_y)
da["lda_priors"] = {"intercept": L(m.intercept_), "proba": L(m.predict_proba(iris_x[rows]))}
bx = bc_x[:, :10]
m = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.3).fit(bx, bc_y)
da["lda_lsqr"] = {"decision": L(m.decision_function(bx[:8])), "proba": L(m.predict_proba(bx[:8])),
                  "pred": L(m.predict(bx))}
m = LinearDiscriminantAnalysis(solver="svd").fit(bx, bc_y)
z = m.transform(bx[:4])
da["lda_binary"] = {"decision": L(m.decision_function(bx[:8])), "transform": L(flip_cols(z, z))}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = QuadraticDiscriminantAnalysis().fit(iris_x, iris_y)
da["qda"] = {"proba": L(m.predict_proba(iris_x[rows])), "decision": L(m._decision_function(iris_x[rows])),
             "pred": L(m.predict(iris_x))}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = QuadraticDiscriminantAnalysis(reg_param=0.5).fit(dig_x[:1000], dig_y[:1000])
da["qda_digits"] = {"reg_param": 0.5, "decision": L(m._decision_function(dig_x[1000:1005])),
                    "pred": L(m.predict(dig_x[1000:1100]))}
write("discriminant", da)

# ---- neighbours ---------------------------------------------------------
nn = {}


def assert_no_ties(xtr, xte, k):
    d = np.sort(((xte[:, None, :] - xtr[None, :, :]) ** 2).sum(-1), axis=1)
    gap = d[:, k] - d[:, k - 1]
    assert np.all(gap > 1e-9 * (1 + d[:, k])), "distance ties at the k-th neighbour"


ctr, cte, ytr = bc_x[:400, :4], bc_x[400:, :4], bc_y[:400]
assert_no_ties(ctr, cte, 5)
for w in ("uniform", "distance"):
    m = KNeighborsClassifier(n_neighbors=5, weights=w).fit(ctr, ytr)
    nn["clf_" + w] = {"pred": L(m.predict(cte)), "proba": L(m.predict_proba(cte))}
rtr, rte = diab_x[:350], diab_x[350:]
assert_no_ties(rtr, rte, 7)
for w in ("uniform", "distance"):
    m = KNeighborsRegressor(n_neighbors=7, weights=w).fit(rtr, diab_y[:350])
    nn["reg_" + w] = {"pred": L(m.predict(rte))}
write("neighbors", nn)

# ---- preprocessing ------------------------------------------------------
pp = {}
x3 = iris_x[:4, :3]
for key, kw in (("poly3", dict(degree=3)), ("poly2_interaction", dict(degree=2, interaction_only=True, include_bias=False))):
    m = PolynomialFeatures(**kw).fit(x3)
    pp[key] = {"powers": L(m.powers_), "transform": L(m.transform(x3))}
xs = np.column_stack([iris_x, np.full(150, 3.7), diab_x[:150, 0]])
m = StandardScaler().fit(xs)
pp["scaler"] = {"mean": L(m.mean_), "var": L(m.var_), "scale": L(m.scale_), "transform": L(m.transform(xs[:3]))}
m = StandardScaler(with_mean=False).fit(xs)
pp["scaler_nomean"] = {"transform": L(m.transform(xs[:3]))}
write("preprocess", pp)
