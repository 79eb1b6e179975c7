"""Loads gradus_cnn.safetensors (written by Gradus: go test ./nn/checkpoint
-run GradusCNN -update) into torch 1.13's equivalent Sequential by the same
names and checks its eval output against gradus_cnn.json. torch 1.13 has no
safetensors package, so the file is parsed by hand. Run with
/usr/bin/python3 from this directory; it prints the largest difference and
exits non-zero above 1e-5.
"""
import json
import struct
import sys

import numpy as np
import torch

NP = {"F32": "<f4", "F64": "<f8", "I64": "<i8"}

with open("gradus_cnn.safetensors", "rb") as f:
    raw = f.read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
body = raw[8 + n:]
sd = {}
for name, e in header.items():
    if name == "__metadata__":
        continue
    lo, hi = e["data_offsets"]
    a = np.frombuffer(body[lo:hi], dtype=NP[e["dtype"]]).reshape(e["shape"])
    sd[name] = torch.from_numpy(a.copy())

cnn = torch.nn.Sequential(
    torch.nn.Conv2d(2, 4, 3, padding=1),
    torch.nn.BatchNorm2d(4),
    torch.nn.ReLU(),
    torch.nn.MaxPool2d(2),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 3 * 3, 3),
)
cnn.load_state_dict(sd, strict=True)
cnn.eval()
with open("gradus_cnn.json") as f:
    fx = json.load(f)
x = torch.tensor(fx["x"], dtype=torch.float32).reshape(fx["x_shape"])
with torch.no_grad():
    y = cnn(x)
want = np.array(fx["y"]).reshape(fx["y_shape"])
err = float(np.abs(y.numpy() - want).max())
print("num_batches_tracked", int(cnn[1].num_batches_tracked), "max |torch - gradus|", err)
sys.exit(0 if err <= 1e-5 else 1)
