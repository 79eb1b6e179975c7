"""SciPy's Wishart, inverse-Wishart and multivariate t: the fixture of
wishart_test.go. Run from the repository root with /usr/bin/python3."""
import json
import numpy as np
from scipy import stats

L = np.array([[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.5, 0.2, 0.6]])
S = L @ L.T
X = np.array([[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.1]])
nu = 7.5
w, iw = stats.wishart(df=nu, scale=S), stats.invwishart(df=nu, scale=S)
x = np.array([0.4, -1.0, 2.2])
mu = np.array([0.1, 0.2, -0.3])
t = stats.multivariate_t(loc=mu, shape=S, df=4.5)
out = {"L": L.ravel().tolist(), "X": X.ravel().tolist(), "df": nu,
       "wishart_logpdf": float(w.logpdf(X)), "wishart_entropy": float(w.entropy()),
       "wishart_mean": w.mean().ravel().tolist(), "wishart_var": w.var().ravel().tolist(),
       "invwishart_logpdf": float(iw.logpdf(X)), "invwishart_mean": iw.mean().ravel().tolist(),
       "invwishart_var": iw.var().ravel().tolist(),
       "t_df": 4.5, "t_loc": mu.tolist(), "t_x": x.tolist(), "t_logpdf": float(t.logpdf(x))}
with open("probabilistic/testdata/wishart.json", "w") as f:
    json.dump(out, f, indent=1)
