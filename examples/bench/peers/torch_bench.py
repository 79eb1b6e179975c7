#!/usr/bin/python3
"""PyTorch (CPU) peer of Gradus's benchmark suite (go run ./examples/bench).

Same workloads, shapes, step counts and output format as the Go suite:
one line per result, `workload metric value unit`, the median of --reps
repetitions after a warm-up. Run with Debian's python3-torch and a passive
OpenMP wait policy so idle worker threads do not spin:

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 examples/bench/peers/torch_bench.py \
        [--threads 2] [--reps 5] [--steps N] [--only mlp_train,gp_lml_grad] \
        [--sizes 500,1000,2000] [--device cuda]

With --device cuda every tensor and parameter is made on the GPU
(torch.set_default_device) and each repetition ends with
torch.cuda.synchronize(), so the times are of finished work. cuDNN's
TF32 convolutions, on by default in PyTorch, are turned off, so that
both sides compute float32 products in float32 (Gradus's TF32 is the
opt-in tensor.SetMatMulPrecision); --tf32 turns them back on.
"""
import math
import sys

import timing

# The flags are read before torch is imported: Debian's torch calls the
# system BLAS (OpenBLAS, pthread build), which sizes its own thread pool from
# the environment, not from torch.set_num_threads, so without this a
# "1 thread" run would still multiply matrices on every core.
_parser = timing.arguments(__doc__, "500,1000,2000", steps_help="steps per repetition (0: each workload's default)")
_parser.add_argument("--only", default="", help="comma-separated workload name prefixes")
_parser.add_argument("--device", default="cpu", help="cpu, or cuda for PyTorch eager on the GPU (PyTorch 2)")
_parser.add_argument("--tf32", action="store_true", help="with --device cuda, leave cuDNN's TF32 convolutions on (PyTorch's default)")
ARGS = _parser.parse_args()
timing.blas_threads(ARGS.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

if ARGS.device != "cpu":
    torch.set_default_device(ARGS.device)
    torch.backends.cudnn.allow_tf32 = ARGS.tf32


def generator():
    """A generator seeded with 1 on the device the tensors are made on."""
    return torch.Generator(device=ARGS.device).manual_seed(1)



def trainer(model, loss_fn):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        opt.step()

    return step


def gemm(n, dtype):
    g = generator()
    a = torch.randn(n, n, generator=g, dtype=dtype)
    b = torch.randn(n, n, generator=g, dtype=dtype)
    c = torch.empty(n, n, dtype=dtype)
    return lambda: torch.matmul(a, b, out=c)


def mlp():
    m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    x = torch.randn(128, 784)
    y = torch.randint(0, 10, (128,))
    return trainer(m, lambda: F.cross_entropy(m(x), y))


def cnn():
    m = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    x = torch.randn(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))
    return trainer(m, lambda: F.cross_entropy(m(x), y))


def lstm():
    m = nn.LSTM(32, 128, 1)
    x = torch.randn(50, 32, 32)
    target = torch.randn(1, 32, 128)

    def loss():
        _, (h, _) = m(x)
        return F.mse_loss(h, target)

    return trainer(m, loss)


def lstm_bi():
    m = nn.LSTM(32, 128, 2, bidirectional=True)
    x = torch.randn(50, 32, 32)
    target = torch.randn(4, 32, 128)

    def loss():
        _, (h, _) = m(x)
        return F.mse_loss(h, target)

    return trainer(m, loss)


def gru():
    m = nn.GRU(32, 128, 1)
    x = torch.randn(50, 32, 32)
    target = torch.randn(1, 32, 128)

    def loss():
        _, h = m(x)
        return F.mse_loss(h, target)

    return trainer(m, loss)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(784, 400)
        self.mu = nn.Linear(400, 20)
        self.lv = nn.Linear(400, 20)
        self.dec1 = nn.Linear(20, 400)
        self.dec2 = nn.Linear(400, 784)

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.lv(h)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.dec2(F.relu(self.dec1(z))), mu, logvar


def vae():
    m = VAE()
    x = torch.bernoulli(torch.full((128, 784), 0.5))

    def loss():
        logits, mu, logvar = m(x)
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
        kl = 0.5 * torch.sum(mu * mu + logvar.exp() - logvar - 1)
        return rec + kl

    return trainer(m, loss)


def dcgan():
    """One DCGAN step (as examples/bench's dcgan_train): D on real and detached fakes, then G."""
    nz, ngf, ndf, b = 100, 64, 64, 64
    G = nn.Sequential(
        nn.ConvTranspose2d(nz, 2 * ngf, 7, 1, 0, bias=False), nn.BatchNorm2d(2 * ngf), nn.ReLU(),
        nn.ConvTranspose2d(2 * ngf, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(),
        nn.ConvTranspose2d(ngf, 1, 4, 2, 1), nn.Tanh())
    D = nn.Sequential(
        nn.Conv2d(1, ndf, 4, 2, 1), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf, 2 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * ndf), nn.LeakyReLU(0.2),
        nn.Conv2d(2 * ndf, 1, 7, 1, 0), nn.Flatten())
    optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.rand(b, 1, 28, 28) * 2 - 1
    ones, zeros = torch.ones(b, 1), torch.zeros(b, 1)

    def step():
        fake = G(torch.randn(b, nz, 1, 1))
        optD.zero_grad(set_to_none=True)
        lossD = (F.binary_cross_entropy_with_logits(D(real), ones)
                 + F.binary_cross_entropy_with_logits(D(fake.detach()), zeros))
        lossD.backward()
        optD.step()
        optG.zero_grad(set_to_none=True)
        F.binary_cross_entropy_with_logits(D(fake), ones).backward()
        optG.step()

    return step


def gp(n):
    """LML of an RBF + noise GP and its gradient w.r.t. the 3 log-hyperparameters."""
    g = generator()
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = (torch.sin(x.sum(1)) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)).unsqueeze(1)
    d2 = torch.cdist(x, x).square()  # independent of the hyperparameters: computed once
    eye = torch.eye(n, dtype=torch.float64)
    half = 0.5 * n * math.log(2 * math.pi)
    theta = torch.tensor([0.0, 0.0, math.log(0.01)], dtype=torch.float64, requires_grad=True)

    def step():
        theta.grad = None
        log_l, log_sf2, log_sn2 = theta[0], theta[1], theta[2]
        k = torch.exp(log_sf2) * torch.exp(d2 * (-0.5 * torch.exp(-2 * log_l))) + torch.exp(log_sn2) * eye
        chol = torch.linalg.cholesky(k)
        v = torch.linalg.solve_triangular(chol, y, upper=False)  # yᵀK⁻¹y = ‖L⁻¹y‖², as Gradus
        lml = -0.5 * v.square().sum() - torch.log(torch.diagonal(chol)).sum() - half
        lml.backward()
        if math.isnan(float(theta.grad.sum())):
            raise RuntimeError("gp: NaN")

    return step


def transformer():
    """Pre-norm encoder block (width 256, 4 heads, ff 1024, GELU, no mask), batch 32 x 128:
    forward, sum(out * r), backward to every parameter; no optimiser step (as Gradus's)."""
    layer = torch.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, activation="gelu",
                                             batch_first=True, norm_first=True)
    layer.train()  # the training path, as in a training step (p = 0: no dropout)
    x = torch.randn(32, 128, 256)
    r = torch.randn(32, 128, 256)

    def step():
        layer.zero_grad(set_to_none=True)
        (layer(x) * r).sum().backward()

    return step


def _perexample_setup():
    """The MLP of Gradus's perexample workloads (examples/bench/perexample.go):
    784-128-10, ReLU, float32, summed cross-entropy against one-hot labels,
    batch 128; parameters in Gradus's (out, in) layout, biases zero."""
    g = generator()
    ps = (torch.randn(128, 784, generator=g) * 0.05, torch.zeros(128),
          torch.randn(10, 128, generator=g) * 0.1, torch.zeros(10))
    x = torch.randn(PEREXAMPLE_BATCH, 784, generator=g)
    y = F.one_hot(torch.randint(0, 10, (PEREXAMPLE_BATCH,), generator=g), 10).to(torch.float32)
    return ps, x, y


def _perexample_loss(ps, x, y):
    """Cross-entropy of one example (784,) with one-hot y (10,), or the sum over a batch."""
    w1, b1, w2, b2 = ps
    logp = F.log_softmax(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), dim=-1)
    return -(y * logp).sum()


def perexample_batch_grad():
    """One gradient of the batch's summed loss (the reference)."""
    ps, x, y = _perexample_setup()
    ps = [p.requires_grad_() for p in ps]
    return lambda: torch.autograd.grad(_perexample_loss(ps, x, y), ps)


def perexample_loop():
    """One autograd.grad per example."""
    ps, x, y = _perexample_setup()
    ps = [p.requires_grad_() for p in ps]

    def step():
        for k in range(PEREXAMPLE_BATCH):
            torch.autograd.grad(_perexample_loss(ps, x[k], y[k]), ps)

    return step


def perexample_vmap():
    """Per-example gradients as functorch's vmap(grad(loss)) (torch.func in PyTorch 2);
    None, with the reason in PEREXAMPLE_UNAVAILABLE, when functorch does not import."""
    global PEREXAMPLE_UNAVAILABLE
    try:
        from functorch import grad, vmap
    except Exception as e:  # Debian's 1.13 may ship without functorch's C extension
        PEREXAMPLE_UNAVAILABLE = f"functorch does not import ({type(e).__name__}: {e})"
        return None
    ps, x, y = _perexample_setup()
    per_example = vmap(grad(_perexample_loss), in_dims=(None, 0, 0))
    return lambda: per_example(ps, x, y)


PEREXAMPLE_BATCH = 128
PEREXAMPLE_UNAVAILABLE = ""


def overhead():
    x0 = torch.ones(1, 1, requires_grad=True)

    def step():
        x0.grad = None
        y = x0
        for i in range(1000):
            y = y * 1.0001 if i % 2 == 0 else y + 0.0001
        y.sum().backward()

    return step


def main():
    args = ARGS
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    def ratio(metric, items):
        return lambda s: (metric, items / s, "1/s")

    # name, default steps (0 = calibrate), factory, report(sec) -> (metric, value, unit)
    ws = []
    for dt, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n in (1024, 256):
            ws.append((f"gemm_{tag}_n{n}", 0, (lambda n=n, dt=dt: gemm(n, dt)),
                       (lambda s, n=n: ("gflops", 2.0 * n ** 3 / s / 1e9, "GFLOP/s"))))
    ws += [
        ("mlp_train", 20, mlp, ratio("samples_per_s", 128)),
        ("cnn_train", 10, cnn, ratio("samples_per_s", 64)),
        ("lstm_train", 5, lstm, ratio("sequences_per_s", 32)),
        ("gru_train", 5, gru, ratio("sequences_per_s", 32)),
        ("lstm_bi_train", 5, lstm_bi, ratio("sequences_per_s", 32)),
    ]
    for n in timing.sizes(args.sizes):
        ws.append((f"gp_lml_grad_n{n}", max(1, 4000 // n), (lambda n=n: gp(n)),
                   (lambda s: ("ms_per_eval", s * 1e3, "ms"))))
    ws += [
        ("op_overhead", 20, overhead, lambda s: ("ns_per_op", s * 1e9 / 1000, "ns")),
        ("vae_train", 20, vae, ratio("samples_per_s", 128)),
        ("transformer_block", 3, transformer, ratio("sequences_per_s", 32)),
        ("dcgan_train", 5, dcgan, ratio("samples_per_s", 64)),
    ]

    # The per-example workloads report ms per batch of 128; perexample (vmap of
    # grad) also reports its time as a ratio to the other two of the same run,
    # as Gradus's does.
    ref = {}

    def per_batch(name):
        def report(s):
            ref[name] = s
            return ("ms_per_batch", s * 1e3, "ms")
        return report

    def per_example_report(s):
        rs = [("ms_per_batch", s * 1e3, "ms")]
        if "batch" in ref:
            rs.append(("ratio_to_batch_grad", s / ref["batch"], "x"))
        if "loop" in ref:
            rs.append(("speedup_over_loop", ref["loop"] / s, "x"))
        return rs

    ws += [
        ("perexample_batch_grad", 10, perexample_batch_grad, per_batch("batch")),
        ("perexample_loop", 2, perexample_loop, per_batch("loop")),
        ("perexample", 10, perexample_vmap, per_example_report),
    ]
    prefixes = [p.strip() for p in args.only.split(",") if p.strip()]
    for name, steps, factory, report in ws:
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        step = factory()
        if step is None:  # the workload's API is missing from this PyTorch
            print(f"# {name}: unavailable in torch {torch.__version__}: {PEREXAMPLE_UNAVAILABLE}", flush=True)
            continue
        sync = torch.cuda.synchronize if args.device.startswith("cuda") else None
        sec = timing.run_timed(step, args.steps or steps, args.reps, sync=sync)
        rs = report(sec)
        for metric, value, unit in rs if isinstance(rs, list) else [rs]:
            print(f"{name} {metric} {value:.6g} {unit}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
