# Writes PyTorch's ConvTranspose2d and Upsample outputs (float64) on fixed
# weights and inputs, which nn's tests reproduce:
#   /usr/bin/python3 make_upsampling.py
import json
import numpy as np
import torch

rng = np.random.default_rng(5)
out = {}
for name, kw in {
    "plain": dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1, output_padding=1),
    "grouped": dict(in_channels=4, out_channels=6, kernel_size=(2, 3), stride=(1, 2), padding=(0, 1), dilation=(2, 1), groups=2),
}.items():
    layer = torch.nn.ConvTranspose2d(**kw, dtype=torch.float64)
    w = rng.normal(0, 0.3, tuple(layer.weight.shape))
    b = rng.normal(0, 0.1, tuple(layer.bias.shape))
    x = rng.normal(0, 1, (2, kw["in_channels"], 4, 5))
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(w))
        layer.bias.copy_(torch.tensor(b))
        y = layer(torch.tensor(x))
    out[name] = {"weight": w.ravel().tolist(), "bias": b.ravel().tolist(), "x": x.ravel().tolist(),
                 "y": y.numpy().ravel().tolist(), "shape": list(y.shape)}
x = rng.normal(0, 1, (1, 2, 3, 4))
for mode in ("nearest", "bilinear"):
    kw = {} if mode == "nearest" else {"align_corners": False}
    y = torch.nn.Upsample(scale_factor=(2, 3), mode=mode, **kw)(torch.tensor(x))
    out["upsample_" + mode] = {"x": x.ravel().tolist(), "y": y.numpy().ravel().tolist(), "shape": list(y.shape)}
json.dump(out, open("upsampling.json", "w"))
