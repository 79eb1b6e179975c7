#!/usr/bin/env python3
"""Checks the ONNX files that nn/onnx's TestExportFamilies writes.

Usage: export_check.py DIR

For every DIR/export_NAME.onnx: onnx.checker.check_model with full_check,
onnx.shape_inference.infer_shapes in strict mode, then the graph is run by
the NumPy evaluator below on the inputs the Go test wrote beside it
(export_NAME.TAG.inK.npy) and its outputs are compared with Gradus's
(export_NAME.TAG.outK.npy): tolerance 1e-5 for float32, 1e-12 for float64.
Tag "a" holds the example inputs; "b", written for models with a dynamic
batch, inputs with a larger batch.

onnxruntime and onnx.reference are not available (ONNX 1.12), so the
evaluator implements, from the ONNX operator specification, exactly the
operators that Gradus's exporter emits (opset 17). It is written apart from
the exporter, so agreement checks both against the specification. An
operator the exporter emits that is missing here fails the check.
"""

import glob
import math
import os
import re
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

DTYPES = {1: np.float32, 11: np.float64, 7: np.int64, 9: np.bool_}


def _wide(x):
    """Computes in float64; results are cast back to the input's dtype."""
    return x.astype(np.float64)


def _reduce(fn):
    def op(a, x, axes=None):
        if axes is None:
            axes = a.get("axes")
        axes = tuple(int(k) for k in axes) if axes is not None else None
        keep = bool(a.get("keepdims", 1))
        return fn(_wide(x), axes, keep).astype(x.dtype)
    return op


def _logsumexp(x, axes, keep):
    m = np.max(x, axis=axes, keepdims=True)
    y = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return y if keep else np.squeeze(y, axis=axes)


def _softmax(a, x):
    ax = a.get("axis", -1)
    e = np.exp(x - np.max(x, axis=ax, keepdims=True))
    return e / np.sum(e, axis=ax, keepdims=True)


def _log_softmax(a, x):
    ax = a.get("axis", -1)
    s = x - np.max(x, axis=ax, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=ax, keepdims=True))


def _sigmoid(a, x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _reshape(a, x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 and not a.get("allowzero", 0) else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _slice(a, x, starts, ends, axes=None, steps=None):
    if axes is None:
        axes = range(len(starts))
    if steps is None:
        steps = [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        idx[int(ax)] = slice(int(s), int(e), int(st))
    return x[tuple(idx)]


def _pad(a, x, pads, value=None):
    assert a.get("mode", b"constant") in (b"constant", "constant")
    r = x.ndim
    width = [(int(pads[i]), int(pads[i + r])) for i in range(r)]
    v = 0 if value is None else value.item()
    return np.pad(x, width, mode="constant", constant_values=v)


def _conv_geometry(a, w):
    k = list(a.get("kernel_shape", w.shape[2:]))
    s = list(a.get("strides", [1, 1]))
    d = list(a.get("dilations", [1, 1]))
    p = list(a.get("pads", [0, 0, 0, 0]))
    return k, s, d, p, int(a.get("group", 1))


def _conv(a, x, w, b=None):
    k, s, d, p, g = _conv_geometry(a, w)
    xp = np.pad(_wide(x), [(0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])])
    n, c, h, wd = xp.shape
    o = w.shape[0]
    ho = (h - (k[0] - 1) * d[0] - 1) // s[0] + 1
    wo = (wd - (k[1] - 1) * d[1] - 1) // s[1] + 1
    cg, og = c // g, o // g
    y = np.zeros((n, o, ho, wo))
    ww = _wide(w)
    for i in range(k[0]):
        for j in range(k[1]):
            patch = xp[:, :, i * d[0]: i * d[0] + s[0] * (ho - 1) + 1: s[0],
                       j * d[1]: j * d[1] + s[1] * (wo - 1) + 1: s[1]]
            for gi in range(g):
                y[:, gi * og:(gi + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch[:, gi * cg:(gi + 1) * cg], ww[gi * og:(gi + 1) * og, :, i, j])
    if b is not None:
        y += _wide(b).reshape(1, -1, 1, 1)
    return y.astype(x.dtype)


def _conv_transpose(a, x, w, b=None):
    k, s, d, p, g = _conv_geometry(a, w)
    op = list(a.get("output_padding", [0, 0]))
    n, c, h, wd = x.shape
    cg, og = c // g, w.shape[1]
    full = [s[0] * (h - 1) + (k[0] - 1) * d[0] + 1 + op[0], s[1] * (wd - 1) + (k[1] - 1) * d[1] + 1 + op[1]]
    y = np.zeros((n, og * g, full[0], full[1]))
    xx, ww = _wide(x), _wide(w)
    for i in range(k[0]):
        for j in range(k[1]):
            for gi in range(g):
                y[:, gi * og:(gi + 1) * og,
                  i * d[0]: i * d[0] + s[0] * (h - 1) + 1: s[0],
                  j * d[1]: j * d[1] + s[1] * (wd - 1) + 1: s[1]] += np.einsum(
                    "nchw,co->nohw", xx[:, gi * cg:(gi + 1) * cg], ww[gi * cg:(gi + 1) * cg, :, i, j])
    y = y[:, :, p[0]: full[0] - p[2], p[1]: full[1] - p[3]]
    if b is not None:
        y = y + _wide(b).reshape(1, -1, 1, 1)
    return y.astype(x.dtype)


def _pool(kind):
    def op(a, x):
        k, s = list(a["kernel_shape"]), list(a.get("strides", [1, 1]))
        p = list(a.get("pads", [0, 0, 0, 0]))
        fill = -np.inf if kind == "max" else 0.0
        xp = np.pad(_wide(x), [(0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])], constant_values=fill)
        ho = (xp.shape[2] - k[0]) // s[0] + 1
        wo = (xp.shape[3] - k[1]) // s[1] + 1
        views = [xp[:, :, i: i + s[0] * (ho - 1) + 1: s[0], j: j + s[1] * (wo - 1) + 1: s[1]]
                 for i in range(k[0]) for j in range(k[1])]
        if kind == "max":
            y = np.max(np.stack(views), axis=0)
        else:
            assert a.get("count_include_pad", 0) == 1, "only count_include_pad=1 is emitted"
            y = np.sum(np.stack(views), axis=0) / (k[0] * k[1])
        return y.astype(x.dtype)
    return op


def _matmul(a, x, y):
    return (_wide(x) @ _wide(y)).astype(x.dtype)


def _gemm_op(a, x, w, c=None):
    xx, ww = _wide(x), _wide(w)
    if a.get("transA", 0):
        xx = xx.T
    if a.get("transB", 0):
        ww = ww.T
    y = a.get("alpha", 1.0) * (xx @ ww)
    if c is not None:
        y = y + a.get("beta", 1.0) * _wide(c)
    return y.astype(x.dtype)


OPS = {
    "Add": lambda a, x, y: x + y,
    "Sub": lambda a, x, y: x - y,
    "Mul": lambda a, x, y: x * y,
    "Div": lambda a, x, y: x / y,
    "Pow": lambda a, x, y: np.power(x, y).astype(x.dtype),
    "Max": lambda a, *xs: np.maximum.reduce(np.broadcast_arrays(*xs)),
    "Min": lambda a, *xs: np.minimum.reduce(np.broadcast_arrays(*xs)),
    "Neg": lambda a, x: -x,
    "Exp": lambda a, x: np.exp(x),
    "Log": lambda a, x: np.log(x),
    "Sqrt": lambda a, x: np.sqrt(x),
    "Abs": lambda a, x: np.abs(x),
    "Sign": lambda a, x: np.sign(x),
    "Sin": lambda a, x: np.sin(x),
    "Cos": lambda a, x: np.cos(x),
    "Erf": lambda a, x: np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype),
    "Tanh": lambda a, x: np.tanh(x),
    "Sigmoid": _sigmoid,
    "Relu": lambda a, x: np.maximum(x, 0).astype(x.dtype),
    "Reciprocal": lambda a, x: (1 / x).astype(x.dtype),
    "Softplus": lambda a, x: np.logaddexp(0, x).astype(x.dtype),
    "LeakyRelu": lambda a, x: np.where(x >= 0, x, a.get("alpha", 0.01) * x).astype(x.dtype),
    "Elu": lambda a, x: np.where(x > 0, x, a.get("alpha", 1.0) * (np.exp(x) - 1)).astype(x.dtype),
    "Clip": lambda a, x, lo=None, hi=None: np.clip(x, lo if lo is not None else -np.inf,
                                                   hi if hi is not None else np.inf).astype(x.dtype),
    "Softmax": _softmax,
    "LogSoftmax": _log_softmax,
    "Gemm": _gemm_op,
    "MatMul": _matmul,
    "Transpose": lambda a, x: np.transpose(x, a.get("perm")),
    "Reshape": _reshape,
    "Expand": lambda a, x, shape: np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(s) for s in shape))).copy(),
    "Slice": _slice,
    "Concat": lambda a, *xs: np.concatenate(xs, axis=a["axis"]),
    "Pad": _pad,
    "Gather": lambda a, x, idx: np.take(x, idx, axis=a.get("axis", 0)),
    "ReduceSum": lambda a, x, axes=None: _reduce(lambda v, ax, k: np.sum(v, axis=ax, keepdims=k))(a, x, axes),
    "ReduceMean": _reduce(lambda v, ax, k: np.mean(v, axis=ax, keepdims=k)),
    "ReduceMax": _reduce(lambda v, ax, k: np.max(v, axis=ax, keepdims=k)),
    "ReduceMin": _reduce(lambda v, ax, k: np.min(v, axis=ax, keepdims=k)),
    "ReduceProd": _reduce(lambda v, ax, k: np.prod(v, axis=ax, keepdims=k)),
    "ReduceLogSumExp": _reduce(_logsumexp),
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "MaxPool": _pool("max"),
    "AveragePool": _pool("avg"),
    "Cast": lambda a, x: x.astype(DTYPES[a["to"]]),
    "Identity": lambda a, x: x,
    "Constant": lambda a: a["value"],
    "Shape": lambda a, x: np.array(x.shape[a.get("start", 0): a.get("end", x.ndim)], dtype=np.int64),
    "ConstantOfShape": lambda a, shape: np.full([int(s) for s in shape], a["value"].item(),
                                                dtype=a["value"].dtype),
}


def run(graph, feeds):
    """Runs graph's nodes in order on feeds (name to array)."""
    env = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    env.update(feeds)
    for node in graph.node:
        if node.op_type not in OPS:
            raise NotImplementedError(f"the evaluator has no {node.op_type} (node {node.name})")
        attrs = {}
        for at in node.attribute:
            v = helper.get_attribute_value(at)
            if isinstance(v, onnx.TensorProto):
                v = numpy_helper.to_array(v)
            attrs[at.name] = v
        args = [env[name] if name else None for name in node.input]
        env[node.output[0]] = np.asarray(OPS[node.op_type](attrs, *args))
    return [env[o.name] for o in graph.output]


def arrays(base, tag, kind):
    files = glob.glob(f"{base}.{tag}.{kind}*.npy")
    files.sort(key=lambda f: int(re.search(rf"\.{kind}(\d+)\.npy$", f).group(1)))
    return [np.load(f) for f in files]


def check(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    declared = {o.name: o.type for o in model.graph.output}
    for o in inferred.graph.output:
        assert o.type == declared[o.name], f"output {o.name}: inferred {o.type}, declared {declared[o.name]}"
    base = path[:-len(".onnx")]
    tags = [t for t in ("a", "b") if glob.glob(f"{base}.{t}.in*.npy")]
    assert "a" in tags, f"no inputs for {path}"
    worst = 0.0
    for tag in tags:
        ins, want = arrays(base, tag, "in"), arrays(base, tag, "out")
        feeds = {vi.name: x for vi, x in zip(model.graph.input, ins)}
        got = run(model.graph, feeds)
        assert len(got) == len(want), f"{len(got)} outputs, want {len(want)}"
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype, f"{tag} output {k}: dtype {g.dtype}, want {w.dtype}"
            assert g.shape == w.shape, f"{tag} output {k}: shape {g.shape}, want {w.shape}"
            tol = 1e-5 if w.dtype == np.float32 else 1e-12
            err = float(np.max(np.abs(g.astype(np.float64) - w) / (1 + np.abs(w)))) if w.size else 0.0
            assert err <= tol, f"{tag} output {k}: error {err:.3g} above {tol:g}"
            worst = max(worst, err)
    ops = sorted({n.op_type for n in model.graph.node})
    return f"{os.path.basename(path)}: ok ({', '.join(tags)}; worst error {worst:.2g}; {len(model.graph.node)} nodes: {' '.join(ops)})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_check.py DIR")
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "export_*.onnx")))
    if not paths:
        sys.exit(f"no export_*.onnx files in {sys.argv[1]}")
    failed = 0
    for p in paths:
        try:
            print(check(p))
        except Exception as e:  # report every file, then fail
            failed += 1
            print(f"{os.path.basename(p)}: FAIL: {type(e).__name__}: {e}")
    print(f"onnx export check: {len(paths) - failed} of {len(paths)} files pass (onnx {onnx.__version__})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
