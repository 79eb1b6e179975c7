"""SciPy's log densities, means, variances and entropies for the Student t
and the count distributions, the fixture of counts_test.go. Run from the
repository root with /usr/bin/python3 (Debian's python3-scipy)."""
import json
from scipy import stats

out = {"student_t": [], "poisson": [], "binomial": [], "negative_binomial": []}
for nu, mu, s, x in [(3.5, 0.4, 1.5, 1.7), (1.2, -1.0, 0.3, 2.0), (30.0, 0.0, 2.0, -3.1)]:
    d = stats.t(nu, loc=mu, scale=s)
    row = {"df": nu, "loc": mu, "scale": s, "x": x, "logpdf": d.logpdf(x), "entropy": d.entropy(), "mean": d.mean()}
    if nu > 2:  # JSON has no infinity; the test checks +Inf for 1 < ν ≤ 2 itself
        row["var"] = d.var()
    out["student_t"].append(row)
for lam, k in [(0.7, 0), (0.7, 3), (25.0, 31)]:
    out["poisson"].append({"rate": lam, "k": k, "logpmf": stats.poisson(lam).logpmf(k)})
for n, p, k in [(10, 0.3, 4), (7, 0.0, 0), (20, 0.95, 20)]:
    out["binomial"].append({"n": n, "p": p, "k": k, "logpmf": stats.binom(n, p).logpmf(k)})
# PyTorch's NegativeBinomial(r, p) counts successes (probability p) before r
# failures: SciPy's nbinom(r, 1 − p).
for r, p, k in [(3.0, 0.4, 5), (0.5, 0.9, 0), (12.5, 0.2, 7)]:
    d = stats.nbinom(r, 1 - p)
    out["negative_binomial"].append({"r": r, "p": p, "k": k, "logpmf": d.logpmf(k), "mean": d.mean(), "var": d.var()})
with open("probabilistic/testdata/counts.json", "w") as f:
    json.dump(out, f, indent=1, default=float)
