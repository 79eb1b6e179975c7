#!/usr/bin/python3
"""Loads the fine-tuned MNIST CNN that TestFineTune wrote as safetensors
into the PyTorch model of zoo.py with strict names, and checks that PyTorch
computes the held-out loss the Go test reported (its metadata).

    GRADUS_ONNX_FINETUNED=/tmp/digits.safetensors go test -run TestFineTune ./nn/onnx
    /usr/bin/python3 nn/onnx/testdata/torch_load.py /tmp/digits.safetensors

With --zoo DIR it loads instead DIR/NAME.safetensors, which TestTorchStateDict
writes from every zoo model through onnx.TorchStateDict
(GRADUS_ONNX_TORCH_DIR=DIR), into a fresh PyTorch module of zoo.py with
strict=True, and checks that the module then computes the fixture's output
(NAME.npz) to 1e-5. BatchNorm's num_batches_tracked, which ONNX does not
carry, is the only key taken from the fresh module.

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


ZOO = {"mlp": zoo.MLP, "cnn": zoo.CNN, "lstm": zoo.LSTMModel, "gru": zoo.GRUModel,
       "encoder13": zoo.Encoder, "encoder17": zoo.Encoder, "decoder": zoo.Decoder,
       "ops": zoo.Ops, "ops2": zoo.Ops2, "digits": zoo.Digits}


def load_zoo(d):
    worst = 0.0
    for name, cls in ZOO.items():
        tensors, _ = load(os.path.join(d, name + ".safetensors"))
        model = cls().eval()
        for k, v in model.state_dict().items():
            if k.endswith("num_batches_tracked") and k not in tensors:
                tensors[k] = v
        model.load_state_dict(tensors, strict=True)
        fx = np.load(os.path.join(zoo.HERE, name + ".npz"))
        ins = []
        for i in range(len(fx.files)):
            if "in%d" % i not in fx:
                break
            a = fx["in%d" % i]
            ins.append(torch.from_numpy(a.astype(np.bool_) if a.dtype == np.uint8 else a))
        with torch.no_grad():
            out = model(*ins)
        d_out = float(np.max(np.abs(out.numpy() - fx["out"])))
        worst = max(worst, d_out)
        print("strict load of %s.safetensors: %d tensors; output differs from the fixture's by %.2g" % (name, len(tensors), d_out))
        if d_out > 1e-5:
            sys.exit("%s: output differs by %g" % (name, d_out))
    print("onnx.TorchStateDict: %d zoo models load into PyTorch with strict=True (worst output difference %.2g)" % (len(ZOO), worst))


def main():
    if sys.argv[1] == "--zoo":
        load_zoo(sys.argv[2])
        return
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
