"""SciPy's Bessel functions and von Mises log densities and entropies: the
fixture of vonmises_test.go. Run from the repository root with
/usr/bin/python3 (Debian's python3-scipy)."""
import json
import numpy as np
from scipy import special, stats

xs = [0.0, 1e-3, 0.5, 2.0, 10.0, 29.9, 30.1, 100.0, 700.0]
out = {"x": xs,
       "log_i0": [float(np.log(special.i0e(x)) + abs(x)) for x in xs],
       "ratio": [float(special.i1e(x) / special.i0e(x)) for x in xs],
       "von_mises": []}
for mu, k, x in [(0.3, 0.05, 1.0), (0.3, 2.5, -2.0), (-1.0, 40.0, -0.95)]:
    d = stats.vonmises(k, loc=mu)
    out["von_mises"].append({"loc": mu, "concentration": k, "x": x, "logpdf": float(d.logpdf(x)), "entropy": float(d.entropy())})
with open("probabilistic/testdata/vonmises.json", "w") as f:
    json.dump(out, f, indent=1)
