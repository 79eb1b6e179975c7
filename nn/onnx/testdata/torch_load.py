#!/usr/bin/python3
"""Loads the fine-tuned MNIST CNN that TestFineTune wrote as safetensors
into the PyTorch model of zoo.py with strict names, and checks that PyTorch
computes the held-out loss the Go test reported (its metadata).

    GRADUS_ONNX_FINETUNED=/tmp/digits.safetensors go test -run TestFineTune ./nn/onnx
    /usr/bin/python3 nn/onnx/testdata/torch_load.py /tmp/digits.safetensors

(make test-onnx-import runs both.) The safetensors format is read by hand:
Debian has no python3-safetensors.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

DTYPES = {"F32": np.float32, "F64": np.float64}


def load(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        a = np.frombuffer(b[8 + n + lo:8 + n + hi], DTYPES[e["dtype"]]).reshape(e["shape"])
        tensors[name] = torch.from_numpy(a.copy())
    return tensors, meta


def main():
    tensors, meta = load(sys.argv[1])
    model = zoo.Digits()
    model.load_state_dict(tensors, strict=True)
    d = os.path.join(zoo.HERE, "..", "..", "..", "data", "files", "mnist10k")
    x = torch.from_numpy(zoo.read_idx(os.path.join(d, "test-images-idx3-ubyte.gz"))[:1000])
    y = torch.from_numpy(zoo.read_idx(os.path.join(d, "test-labels-idx1-ubyte.gz"))[:1000])
    with torch.no_grad():
        logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y).item()
    acc = (logits.argmax(1) == y).float().mean().item()
    go = float(meta["heldout_loss"])
    print("strict load of %s: %d tensors; held-out loss %.6f in PyTorch, %.6f in Gradus (accuracy %.3f)"
          % (sys.argv[1], len(tensors), loss, go, acc))
    if abs(loss - go) > 1e-4:
        sys.exit("held-out losses differ by %g" % abs(loss - go))


if __name__ == "__main__":
    main()
