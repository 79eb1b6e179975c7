"""PyTorch 1.13's LKJCholesky log density: the fixture of lkj_test.go. Run
from the repository root with /usr/bin/python3 (Debian's python3-torch)."""
import json
import torch

torch.manual_seed(0)
out = []
for d, eta in [(2, 1.0), (3, 1.5), (4, 0.7)]:
    dist = torch.distributions.LKJCholesky(d, torch.tensor(eta, dtype=torch.float64))
    L = dist.sample()
    out.append({"d": d, "eta": eta, "L": L.flatten().tolist(), "log_prob": dist.log_prob(L).item()})
with open("probabilistic/testdata/lkj.json", "w") as f:
    json.dump(out, f, indent=1)
