#!/usr/bin/python3
"""Run Gradus's benchmark suite and its peers alternately; print a markdown table.

    /usr/bin/python3 examples/bench/peers/compare.py [--rounds 3] [--reps 5] \
        [--sizes 500,1000,2000] [--only mlp_train,gp_lml_grad] [--out table.md] [--avx2] \
        [--interleave]

It builds ./examples/bench once (run with -json -quiet: its results are read
from the JSON object), then for each round runs, one after the other, Gradus (2 threads), PyTorch with 2 threads, PyTorch with 1 thread
(peers/torch_bench.py, OMP_WAIT_POLICY=PASSIVE) and NumPy/SciPy
(peers/gp_numpy.py, peers/linalg_numpy.py and the GEMM owner's peers/gemm_numpy.py);
the peers run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, so that
OpenBLAS picks the kernels of the CPU it runs on, and with glibc keeping
freed memory (MALLOC_MMAP_THRESHOLD_ and friends), so that their fresh
arrays do not fault their pages in again on every call. --avx2 puts every tool on
its AVX2 kernels instead (GODEBUG=cpu.avx512f=off, OPENBLAS_CORETYPE=Haswell,
ATEN_CPU_CAPABILITY=avx2): the AVX2-only CPU kinds' code paths on an
AVX-512 machine.
Alternating spreads the noise of a shared machine over every tool instead of
letting it land on one. With --interleave each round runs every tool on one
group of workloads before the next group, so that a ratio compares runs
seconds apart instead of a whole suite apart (a host whose other tenants
change its speed within minutes). Each cell is the median over rounds of each run's
median. The ratio column is Gradus's speed divided by the best peer's, so
> 1 means Gradus is faster: for throughputs (GFLOP/s, 1/s) Gradus ÷ best,
for times (ms, ns) best ÷ Gradus.
"""
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

import timing

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
LINE = re.compile(r"^(\S+) (\S+) (\S+) (\S+)$")
TOOLS = ["gradus", "torch2", "torch1", "numpy"]
HEADS = {"gradus": "Gradus", "torch2": "PyTorch (2 thr)", "torch1": "PyTorch (1 thr)", "numpy": "NumPy/SciPy"}

# Targets from the performance issue: workload → (peers compared against,
# minimum of Gradus speed ÷ best of those peers).
TARGETS = {
    "mlp_train": (("torch2", "torch1"), 1.0),
    "vae_train": (("torch2", "torch1"), 1.0),
    "transformer_block": (("torch2", "torch1"), 1.0),
    "dcgan_train": (("torch2", "torch1"), 1.0),
    "cnn_train": (("torch2", "torch1"), 0.8),
    "lstm_train": (("torch2", "torch1"), 0.8),
    "gru_train": (("torch2", "torch1"), 0.8),
    "lstm_bi_train": (("torch2", "torch1"), 0.8),
    "gp_lml_grad_n2000": (("numpy",), 1 / 1.2),  # no slower than 1.2× NumPy/SciPy
    "op_overhead": (("torch2", "torch1"), 2.0),  # ≤ 0.5× PyTorch's per-op cost
    "gemm_f32_n1024": (("torch2", "torch1", "numpy"), 0.9),
    "gemm_f64_n1024": (("torch2", "torch1", "numpy"), 0.9),
    "svd_f64_n1000": (("numpy",), 1 / 1.5),  # no slower than 1.5× LAPACK
    "qr_f64_n1000": (("numpy",), 1 / 1.5),
    "eigh_f64_n1000": (("numpy",), 1 / 1.5),
}


# The workload groups of --interleave without --only: prefixes that share
# no workload, each group timed by every tool before the next (a group's
# captured or per-example variants run with it, as their ratios need).
GROUPS = ["gemm", "mlp_train", "mlp_loader_train", "cnn_train", "lstm_train", "gru_train", "lstm_bi_train",
          "gp_lml_grad", "op_overhead", "vae_train", "transformer_block", "dcgan_train", "svd,qr,eigh",
          "perexample", "remat"]


def interleave_groups(prefixes):
    """The groups of --interleave for --only prefixes: a prefix that another
    one covers is dropped (each workload is timed once a round), and the
    prefixes one peer script serves together (NumPy's factorisations, its
    GEMMs, its GP) form one group, so that script runs once a round."""
    kept = [p for p in dict.fromkeys(prefixes)
            if not any(q != p and p.startswith(q) for q in prefixes)]
    groups, by_script = [], {}
    for p in kept:
        script = next((s for s in ("svd", "qr", "eigh") if p.startswith(s) or s.startswith(p)), None)
        script = "linalg" if script else ("gemm" if p.startswith("gemm") else ("gp" if p.startswith("gp") else None))
        if script is None:
            groups.append([p])
        elif script in by_script:
            by_script[script].append(p)
        else:
            by_script[script] = [p]
            groups.append(by_script[script])
    return groups


def round_ratios(order, units, samples):
    """Lines 'workload metric: median (min–max)' of per-round ratios to the best peer."""
    out = []
    for key in order:
        g = samples["gradus"].get(key)
        if not g or units[key] == "1":
            continue
        peers = TARGETS.get(key[0], (("torch2", "torch1", "numpy"), None))[0]
        ratios = []
        for r, gv in enumerate(g):
            pv = [samples[t][key][r] for t in peers if key in samples[t] and r < len(samples[t][key])]
            if not pv or gv <= 0:
                continue
            if higher_is_better(units[key], key[1]):
                ratios.append(gv / max(pv))
            else:
                ratios.append(min(pv) / gv)
        if ratios:
            out.append(f"- {key[0]} {key[1]}: {statistics.median(ratios):.2f} "
                       f"({min(ratios):.2f}–{max(ratios):.2f}, {len(ratios)} rounds)")
    return out


def higher_is_better(unit, metric=""):
    """Whether a larger value is better: throughputs and speedups (the
    perexample rows' ratio_to_batch_grad is a cost, speedup_over_loop a gain)."""
    return unit in ("GFLOP/s", "1/s") or metric.startswith("speedup")


def call(cmd, env=None):
    """Run cmd in the repository's root and return its standard output."""
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"  failed ({p.returncode}): {p.stderr.strip()[-2000:]}", file=sys.stderr, flush=True)
    return p.stdout


def run(cmd, env=None):
    """Run a peer and return its parsed result lines {(workload, metric): (value, unit)}."""
    out = {}
    for line in call(cmd, env).splitlines():
        if line.startswith("#"):  # a peer's note, e.g. a workload it cannot run
            print("  " + line.strip(), file=sys.stderr, flush=True)
            continue
        m = LINE.match(line.strip())
        if m:
            try:
                out[(m[1], m[2])] = (float(m[3]), m[4])
            except ValueError:
                pass
            print("  " + line.strip(), file=sys.stderr, flush=True)
    return out


def run_gradus(cmd, env=None):
    """Run Gradus's bench with -json -quiet and return its results, as run does."""
    return parse_json(call(cmd + ["-json", "-quiet"], env=env))


def parse_json(text):
    """The results of bench's -json object {(workload, metric): (value, unit)}; {} when text is not one."""
    try:
        results = json.loads(text).get("results") or []
    except (ValueError, AttributeError):
        return {}
    out = {}
    for r in results:
        out[(r["workload"], r["metric"])] = (float(r["value"]), r["unit"])
        print(f"  {r['workload']} {r['metric']} {r['value']:.6g} {r['unit']}", file=sys.stderr, flush=True)
    return out


def cpu_model():
    """The CPU's name, family/model and the vector features that pick kernels."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
    except OSError:
        return platform.processor() or "unknown"
    flags = info.get("flags", "").split()
    feats = [f for f in ("avx2", "fma", "avx512f") if f in flags]
    return (f"{info.get('model name', 'unknown')} (family {info.get('cpu family', '?')}, "
            f"model {info.get('model', '?')}; {', '.join(feats) or 'no AVX2'})")


def versions():
    go = subprocess.run(["go", "version"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    py = subprocess.run(["/usr/bin/python3", "-c", "import torch, numpy, scipy; "
                         "print(f'torch {torch.__version__}, numpy {numpy.__version__}, scipy {scipy.__version__}')"],
                        capture_output=True, text=True).stdout.strip()
    return go, py


def fmt(v):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def table(order, units, med):
    """Markdown rows for the medians (or best values) med[tool][key]."""
    lines = [
        "| Workload | Metric | Gradus | PyTorch (2 thr) | PyTorch (1 thr) | NumPy/SciPy "
        "| Ratio vs best peer (>1 = Gradus faster) | Target (ratio ≥) | Met |",
        "|---|---|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for key in order:
        name, metric = key
        unit = units[key]
        vals = {t: med[t].get(key) for t in TOOLS}
        g = vals["gradus"]

        def speed_ratio(peers):
            pv = [vals[t] for t in peers if vals[t]]
            if not g or not pv:
                return None
            return g / max(pv) if higher_is_better(unit, metric) else min(pv) / g

        ratio = speed_ratio(["torch2", "torch1", "numpy"])
        target, met = "", ""
        if name in TARGETS and metric != "allocs_per_step":
            peers, want = TARGETS[name]
            tr = speed_ratio(list(peers))
            target = f"{want:.2f} vs {'/'.join(HEADS[p] for p in peers)}"
            met = "–" if tr is None else (f"yes ({tr:.2f})" if tr >= want else f"no ({tr:.2f})")
        lines.append(f"| {name} | {metric} ({unit}) | {fmt(g)} | {fmt(vals['torch2'])} | {fmt(vals['torch1'])} "
                     f"| {fmt(vals['numpy'])} | {'–' if ratio is None else f'{ratio:.2f}'} | {target} | {met} |")
    return lines


def main():
    ap = timing.arguments(__doc__, "500,1000,2000")  # --threads: Gradus, PyTorch's first column and NumPy
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated workload prefixes")
    ap.add_argument("--out", default="", help="also write the table to this file")
    ap.add_argument("--interleave", action="store_true",
                    help="in each round, run every tool on one group of workloads (the groups of GROUPS, "
                         "or with --only each prefix, those one peer script times together in one group) "
                         "before the next: on a shared host whose load drifts, a round's ratios then "
                         "compare runs seconds apart")
    ap.add_argument("--avx2", action="store_true",
                    help="every tool on its AVX2 kernels on an AVX-512 machine: Gradus with "
                         "GODEBUG=cpu.avx512f=off, OpenBLAS with OPENBLAS_CORETYPE=Haswell, "
                         "PyTorch with ATEN_CPU_CAPABILITY=avx2 (the AVX2-only CPU kinds' code paths)")
    args = ap.parse_args()
    thr = str(args.threads)

    tmp = tempfile.mkdtemp(prefix="gradus-bench-")
    exe = os.path.join(tmp, "bench")
    subprocess.run(["go", "build", "-o", exe, "./examples/bench"], cwd=ROOT, check=True)

    # The peers get the BLAS kernels their CPU supports: a development
    # environment may pin OpenBLAS to Haswell (AVX2) even on AVX-512 machines.
    np_env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    go_env = None
    if args.avx2:
        np_env["OPENBLAS_CORETYPE"] = "Haswell"
        np_env["ATEN_CPU_CAPABILITY"] = "avx2"
        go_env = dict(os.environ, GODEBUG="cpu.avx512f=off")
    # glibc gives blocks of 128 KiB and more back to the kernel at every
    # free, so each new array of a NumPy call or PyTorch step faults its
    # pages in again, and a fault costs 1-25 µs per 4 KiB page on the KVM
    # machines here: PyTorch's MLP step spent 20 of its 24 ms faulting
    # (2026-11-29). Keeping freed memory in the heap, as the jemalloc or
    # tcmalloc of PyTorch's CPU tuning guide would, times the arithmetic.
    np_env.update(MALLOC_MMAP_THRESHOLD_=str(32 << 20), MALLOC_TRIM_THRESHOLD_=str(4 << 30),
                  MALLOC_TOP_PAD_=str(256 << 20))
    torch_env = dict(np_env, OMP_WAIT_POLICY="PASSIVE")
    prefixes = [p.strip() for p in args.only.split(",") if p.strip()]

    def wanted(name, among=prefixes):
        return not among or any(name.startswith(p) for p in among)

    def run_tools(only):
        """One run of every tool over the workloads whose names start with
        one of the prefixes in only (all when empty): {tool: results}."""
        common = ["--reps", str(args.reps), "--sizes", args.sizes] + (["--only", ",".join(only)] if only else [])
        gemm_sizes = [n for n in (1024, 256) if wanted(f"gemm_f32_n{n}", only) or wanted(f"gemm_f64_n{n}", only)]
        gp_wanted = any(wanted(f"gp_lml_grad_n{n}", only) for n in args.sizes.split(","))
        la_wanted = any(wanted(f"{op}_f64_n{n}", only) for op in ("svd", "qr", "eigh") for n in (256, 1000))
        res = {
            "gradus": run_gradus([exe, "-threads", thr, "-reps", str(args.reps), "-sizes", args.sizes,
                                  "-out", os.path.join(tmp, "out")] + (["-only", ",".join(only)] if only else []),
                                 env=go_env),
            "torch2": run(["/usr/bin/python3", os.path.join(HERE, "torch_bench.py"), "--threads", thr] + common,
                          env=torch_env),
            "torch1": run(["/usr/bin/python3", os.path.join(HERE, "torch_bench.py"), "--threads", "1"] + common,
                          env=torch_env),
            "numpy": {},
        }
        if gp_wanted:
            res["numpy"].update(run(["/usr/bin/python3", os.path.join(HERE, "gp_numpy.py"), "--threads", thr,
                                     "--reps", str(args.reps), "--sizes", args.sizes], env=np_env))
        if la_wanted:
            res["numpy"].update(run(["/usr/bin/python3", os.path.join(HERE, "linalg_numpy.py"), "--threads", thr,
                                     "--reps", str(args.reps)], env=np_env))
        if gemm_sizes:
            res["numpy"].update(run(["/usr/bin/python3", os.path.join(HERE, "gemm_numpy.py")]
                                    + [str(n) for n in gemm_sizes], env=np_env))
        res["numpy"] = {k: v for k, v in res["numpy"].items() if wanted(k[0], only)}
        return res

    # --interleave runs every tool on one group of workloads before the
    # next group, so that the ratios of a round compare runs seconds apart
    # rather than the length of a whole suite apart.
    groups = [prefixes]
    if args.interleave:
        groups = [g.split(",") for g in GROUPS]
        if prefixes:
            groups = interleave_groups(prefixes)

    samples = {t: {} for t in TOOLS}
    order = []
    units = {}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for group in groups:
            for tool, rs in run_tools(group).items():
                for key, (v, unit) in rs.items():
                    samples[tool].setdefault(key, []).append(v)
                    units[key] = unit
                    if key not in order and tool == "gradus":
                        order.append(key)
    for t in TOOLS:  # keys only a peer printed go last
        for key in samples[t]:
            if key not in order:
                order.append(key)

    go, py = versions()
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    lines = [
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}  ",
        f"CPU: {cpu_model()}, {os.cpu_count()} cores (load average at the end {' '.join(load)})  ",
        f"{go}; {py}; {args.rounds} rounds × {args.reps} repetitions  ",
    ] + (["Every tool forced onto its AVX2 kernels (--avx2).  "] if args.avx2 else []) + [
        f"Gradus and NumPy at {thr} threads. Ratio = Gradus speed ÷ best peer's speed "
        "(throughputs: Gradus/best; times: best/Gradus), so > 1 means Gradus is faster.",
        "",
        "Median over rounds (each run reports the median of its repetitions):",
        "",
    ]
    lines += table(order, units, {t: {k: statistics.median(v) for k, v in samples[t].items()} for t in TOOLS})
    if args.rounds > 1:
        lines += ["", "Best round (fastest of the rounds for each tool: less sensitive to a busy machine):", ""]
        best = {t: {k: (max(v) if higher_is_better(units[k], k[1]) else min(v))
                    for k, v in samples[t].items()} for t in TOOLS}
        lines += table(order, units, best)
        lines += ["", "Per-round ratio (Gradus ÷ the best peer of the same round, so machine load that "
                  "hits a whole round cancels): median (min–max) over rounds:", ""]
        lines += round_ratios(order, units, samples)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
