#!/usr/bin/python3
"""Exports the ONNX import zoo with PyTorch and writes the expected values.

Run from the repository root with Debian's python3-torch and python3-onnx:

    /usr/bin/python3 nn/onnx/testdata/zoo.py

For each model NAME it writes NAME.onnx and NAME.npz holding the inputs
(in0, in1, ...), the first output (out), a fixed random weighting r of that
output, and the gradients of sum(out * r) with respect to every float input
(grad_in0, ...) and every parameter (grad_param.<state-dict name>).

Models are exported with training=PRESERVE in eval mode, which keeps
BatchNormalization and LSTM weights under PyTorch's state-dict names
(TrainingMode.EVAL folds them into renamed constants).
"""
import copy
import gzip
import json
import os
import struct
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.sigmoid(self.fc2(h)) * torch.tanh(h)
        return torch.log_softmax(self.fc3(h), dim=-1)


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(h)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.block = Residual(8)
        self.pool = nn.MaxPool2d(2)
        self.down = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.avg = nn.AvgPool2d(2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        h = self.pool(self.block(h))
        h = self.avg(torch.relu(self.down(h)))
        h = torch.flatten(nn.functional.adaptive_avg_pool2d(h, 1), 1)
        return self.fc(h)


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, num_layers=2, batch_first=True)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


class GRUModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 6, bidirectional=True)
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        y, h = self.gru(x)
        return self.fc(y) + self.fc(torch.cat([h[0], h[1]], -1))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x, pad):
        i = torch.arange(x.shape[1])
        causal = i.unsqueeze(0) > i.unsqueeze(1)  # True above the diagonal: masked
        return self.layer(x, src_mask=causal, src_key_padding_mask=pad)


class Decoder(nn.Module):
    """The decoder of a convolutional VAE: z → 1×16×16 Bernoulli means."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 32)
        self.fc2 = nn.Linear(32, 8 * 4 * 4)
        self.up1 = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1)

    def forward(self, z):
        h = torch.relu(self.fc2(torch.relu(self.fc1(z))))
        h = h.view(-1, 8, 4, 4)
        h = nn.functional.leaky_relu(self.up1(h), 0.1)
        return torch.sigmoid(self.up2(h))


class Ops(nn.Module):
    """Operators the other models do not use: 1-D convolutions, asymmetric
    padding, average pooling that excludes padding, more activations,
    split, reductions, tile, a bidirectional batch-first LSTM with its
    final states, clamp, and integer shape arithmetic."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=2, dilation=2)
        self.up = nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1)
        self.prelu = nn.PReLU(2)
        self.lstm = nn.LSTM(2, 3, bidirectional=True, batch_first=True)

    def forward(self, x):
        F = nn.functional
        h = self.conv(x)
        h = F.avg_pool1d(F.pad(h, (1, 2)), 3, stride=1, padding=1, count_include_pad=False)
        h = F.max_pool1d(h, 2, stride=1)
        h = F.hardswish(h) + F.hardsigmoid(h) * F.elu(h) - F.softplus(h).clamp(0.1, 2) + F.silu(h)
        h = self.prelu(self.up(h))
        a, b = h.split([1, 1], dim=1)
        h = torch.cat([a * b, torch.sigmoid(a).exp(), (b.abs() + 1).sqrt().log()], 1)[:, 1:]
        y, (hn, cn) = self.lstm(h.transpose(1, 2))
        r = torch.stack([y.sum(1), y.amax(1), y.amin(1), y.logsumexp(1), y.norm(dim=1), y[:, :4].prod(1), y.mean(1)], 1)
        r = r.repeat(1, 2, 1) + torch.cat([hn.sum(0), cn.mean(0)], -1).unsqueeze(1)
        return torch.softmax(r.reshape(r.shape[0], -1), -1) - torch.tanh(r.flatten(1)).pow(3)


class Ops2(nn.Module):
    """More operators: an even kernel after asymmetric padding, global max
    pooling, comparisons and logic feeding
    Where, sin, cos, sign, maximum and minimum, a batch-first GRU, an LSTM
    whose initial states are a graph input, and L1 and L2 norms."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 4)
        self.gru = nn.GRU(3, 4, batch_first=True)
        self.lstm = nn.LSTM(4, 2)

    def forward(self, x, h0):
        F = nn.functional
        h = self.conv(F.pad(x, (1, 2, 1, 2)))
        g = F.adaptive_max_pool2d(h, 1).flatten(1)
        m = torch.where(((h <= 0.1) & ~(h >= 0.5)) ^ (h < -0.5), torch.sin(h), torch.cos(h) * torch.sign(h))
        m = torch.maximum(m, -h) - torch.minimum(h.neg(), 0.5 * h)
        y, hn = self.gru(m.flatten(2).transpose(1, 2))
        z, (hz, cz) = self.lstm(y.transpose(0, 1), (h0, 0.5 * h0))
        parts = [z.norm(p=1, dim=0), z.norm(p=2, dim=0), hz.sum(0) * cz.sum(0), hn[0], g]
        return torch.cat([t.flatten() for t in parts]) * 2


class Digits(nn.Module):
    """A small MNIST CNN: conv 5×5 stride 2, ReLU, max-pool, linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 5, stride=2)
        self.fc = nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        h = nn.functional.max_pool2d(torch.relu(self.conv(x.view(-1, 1, 28, 28))), 2)
        return self.fc(torch.flatten(h, 1))


def export64(name, model, inputs, opset):
    """Exports a float64 copy of model as NAME64.onnx (no fixtures: the Go
    tests check its derivatives against finite differences)."""
    model = copy.deepcopy(model).double().eval()
    inputs = tuple(t.double() if t.is_floating_point() else t for t in inputs)
    path = os.path.join(HERE, name + "64.onnx")
    names = ["in%d" % i for i in range(len(inputs))]
    torch.onnx.export(model, inputs, path, opset_version=opset, input_names=names, output_names=["out"],
                      training=torch.onnx.TrainingMode.PRESERVE)
    onnx.checker.check_model(onnx.load(path))


def export(name, model, inputs, opset, names=None, external=False, perturb=True):
    model.eval()
    if perturb:  # no two parameters equal (the exporter would merge them), no zero biases
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.1 * torch.randn(p.shape))
    names = names or ["in%d" % i for i in range(len(inputs))]
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                      input_names=names, output_names=["out"],
                      training=torch.onnx.TrainingMode.PRESERVE,
                      dynamic_axes={names[0]: {0: "batch"}})
    m = onnx.load(path)
    onnx.checker.check_model(m)
    if external:
        os.remove(path)
        if os.path.exists(os.path.join(HERE, name + ".weights")):  # onnx appends to it
            os.remove(os.path.join(HERE, name + ".weights"))
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".weights", size_threshold=0)
    ins = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    out = model(*ins)
    r = torch.randn(out.shape, generator=torch.Generator().manual_seed(7))
    model.zero_grad()
    (out * r).sum().backward()
    arrays = {"out": out.detach().numpy(), "r": r.numpy()}
    for i, t in enumerate(ins):
        arrays["in%d" % i] = t.detach().numpy()
        if t.grad is not None:
            arrays["grad_in%d" % i] = t.grad.numpy()
    if any(isinstance(mod, nn.BatchNorm2d) for mod in model.modules()):
        # One step in training mode: batch statistics, running ones updated.
        trained = copy.deepcopy(model).train()
        with torch.no_grad():
            arrays["train_out"] = trained(*inputs).numpy()
        for k, b in trained.named_buffers():
            if "running" in k:
                arrays["train_buffer." + k] = b.numpy()
    params = dict(model.named_parameters())
    for k, p in params.items():
        arrays["grad_param." + k] = p.grad.numpy()
    sources = {}
    for t in m.graph.initializer:
        v = onnx.numpy_helper.to_array(t) if t.data_location == 0 else None
        sources[t.name] = t.name if t.name in params else source(model, v)
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(sources, f, indent=1, sort_keys=True)
    for k, a in arrays.items():
        if a.dtype == np.bool_:
            arrays[k] = a.astype(np.uint8)
    np.savez_compressed(os.path.join(HERE, name + ".npz"), **arrays)
    ops = sorted({n.op_type for n in m.graph.node})
    print(name, "opset", opset, " ".join(ops))


def source(model, v):
    """Names the PyTorch parameters an initializer the exporter renamed was
    made of: "T:name" for a transposed weight, "R:name" for a reshaped one, "LSTM:prefix:layer:W|R|B" and
    "GRU:..." for the gate-reordered weights of a recurrent layer, or ""."""
    for k, p in model.named_parameters():
        if v is not None and p.dim() == 2 and v.shape == p.T.shape and np.array_equal(v, p.detach().numpy().T):
            return "T:" + k
        if v is not None and v.size == p.numel() and np.array_equal(v.ravel(), p.detach().numpy().ravel()):
            return "R:" + k
    for prefix, mod in model.named_modules():
        if not isinstance(mod, (nn.LSTM, nn.GRU)):
            continue
        kind = "LSTM" if isinstance(mod, nn.LSTM) else "GRU"
        order = [0, 3, 1, 2] if kind == "LSTM" else [1, 0, 2]
        sfx = ["", "_reverse"][: 2 if mod.bidirectional else 1]

        def reorder(t):
            return torch.cat([t.chunk(len(order))[i] for i in order]).detach().numpy()

        for layer in range(mod.num_layers):
            get = lambda n, s: reorder(getattr(mod, "%s_l%d%s" % (n, layer, s)))
            cands = {"W": np.stack([get("weight_ih", s) for s in sfx]),
                     "R": np.stack([get("weight_hh", s) for s in sfx]),
                     "B": np.stack([np.concatenate([get("bias_ih", s), get("bias_hh", s)]) for s in sfx])}
            for w, c in cands.items():
                if v is not None and v.shape == c.shape and np.array_equal(v, c):
                    return "%s:%s:%d:%s" % (kind, prefix, layer, w)
    return ""


def read_idx(path):
    with gzip.open(path) as f:
        b = f.read()
    magic, n = struct.unpack(">II", b[:8])
    if magic == 2051:
        return np.frombuffer(b[16:], np.uint8).reshape(n, 784).astype(np.float32) / 255
    return np.frombuffer(b[8:], np.uint8).astype(np.int64)


def digits():
    """Trains Digits briefly on the first 2,000 embedded training digits."""
    d = os.path.join(HERE, "..", "..", "..", "data", "files", "mnist10k")
    x = torch.from_numpy(read_idx(os.path.join(d, "train-images-idx3-ubyte.gz"))[:2000])
    y = torch.from_numpy(read_idx(os.path.join(d, "train-labels-idx1-ubyte.gz"))[:2000])
    torch.manual_seed(1)
    model = Digits()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for i in range(0, 2000, 50):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 50]), y[i:i + 50]).backward()
        opt.step()
    export("digits", model, [x[:4].clone()], 13, names=["pixels"], perturb=False)


def main():
    torch.manual_seed(0)
    export("mlp", MLP(), [torch.randn(4, 6)], 13, external=True)
    cnn = CNN()
    for bn in [cnn.bn, cnn.block.bn1, cnn.block.bn2]:  # non-trivial running statistics
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 8, 8)
    export("cnn", cnn, [x], 14)
    export64("cnn", cnn, [x], 14)
    export("lstm", LSTMModel(), [torch.randn(2, 7, 5)], 15)
    gru = GRUModel()
    x = torch.randn(7, 2, 5)
    export("gru", gru, [x], 16, names=["in0"])
    export64("gru", gru, [x], 16)
    x = torch.randn(2, 5, 16)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    enc = Encoder()
    export("encoder13", enc, [x, pad], 13)
    export("encoder17", enc, [x, pad], 17)
    export64("encoder", enc, [x, pad], 17)
    export("decoder", Decoder(), [torch.randn(3, 4)], 17)
    ops = Ops()
    x = torch.randn(2, 3, 8)
    export("ops", ops, [x], 15)
    export64("ops", ops, [x], 15)
    export("ops2", Ops2(), [torch.randn(2, 2, 5, 5), torch.randn(1, 2, 2)], 17)
    digits()


if __name__ == "__main__":
    main()
