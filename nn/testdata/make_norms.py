# Writes PyTorch's GroupNorm, InstanceNorm2d and Conv1d outputs, and an
# RMSNorm computed by its formula with NumPy (torch 1.13 predates
# nn.RMSNorm), in float64, for nn's tests: /usr/bin/python3 make_norms.py
import json
import numpy as np
import torch

rng = np.random.default_rng(3)
out = {}
x = rng.normal(0, 2, (2, 6, 3, 4))
gn = torch.nn.GroupNorm(3, 6, dtype=torch.float64)
w, b = rng.normal(1, 0.2, 6), rng.normal(0, 0.2, 6)
with torch.no_grad():
    gn.weight.copy_(torch.tensor(w)); gn.bias.copy_(torch.tensor(b))
    out["group"] = {"x": x.ravel().tolist(), "w": w.tolist(), "b": b.tolist(), "y": gn(torch.tensor(x)).numpy().ravel().tolist()}
    inorm = torch.nn.InstanceNorm2d(6, affine=True, dtype=torch.float64)
    inorm.weight.copy_(torch.tensor(w)); inorm.bias.copy_(torch.tensor(b))
    out["instance"] = {"y": inorm(torch.tensor(x)).numpy().ravel().tolist()}
    c = torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, dtype=torch.float64)
    cw, cb = rng.normal(0, 0.4, tuple(c.weight.shape)), rng.normal(0, 0.1, 6)
    c.weight.copy_(torch.tensor(cw)); c.bias.copy_(torch.tensor(cb))
    xc = rng.normal(0, 1, (2, 4, 9))
    out["conv1d"] = {"x": xc.ravel().tolist(), "w": cw.ravel().tolist(), "b": cb.tolist(), "y": c(torch.tensor(xc)).numpy().ravel().tolist(), "shape": list(c(torch.tensor(xc)).shape)}
xr = rng.normal(0, 1, (3, 5))
rw = rng.normal(1, 0.1, 5)
out["rms"] = {"x": xr.ravel().tolist(), "w": rw.tolist(), "y": (xr / np.sqrt((xr ** 2).mean(-1, keepdims=True) + 1e-6) * rw).ravel().tolist()}
json.dump(out, open("norms.json", "w"))
