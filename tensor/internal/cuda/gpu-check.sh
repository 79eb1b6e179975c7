#!/usr/bin/env bash
# The GPU check of tensor/internal/cuda: `make gpu-check` copies this
# script to out/gpu/run.sh beside the test binaries it builds. Run it on
# a machine with an NVIDIA GPU and driver (no Go needed):
#
#   bash out/gpu/run.sh
#
# It writes into $OUT (default out/gpu/log): env.txt (nvidia-smi, where
# the CUDA libraries are), cuda-test.log (every test, verbose, failing
# rather than skipping when no driver is found), cuda-fake.log (the fake
# driver's tests, in a process of their own), gpucheck.log and
# gpucheck-bench.log (internal/gpucheck: tensor ops and training steps on
# the device, and their benchmarks), cuda-bench.log (the GEMM
# benchmarks), torch-gemm.log (PyTorch's cuBLAS GEMMs at n = 4096 for
# reference), torch-bench.log (PyTorch eager on the GPU over
# examples/bench's training workloads) and cache/ (the PTX NVRTC produced). It exits with the
# tests' status. docs/gpu.md records what each run showed.
#
# The checks run in order of importance (correctness, then speed) within
# a budget of GPU_CHECK_BUDGET seconds (default 400): each step's timeout
# is cut to what is left, and the steps that no longer fit are listed in
# skipped.txt instead of run, so a short lease still returns the tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/*.amd64.gz "$here"/*.arm64.gz; do # make gpu-check compresses the binaries
	[ -e "$f" ] && gzip -dc "$f" >"${f%.gz}" && chmod +x "${f%.gz}"
done
out=${OUT:-$here/log}
mkdir -p "$out"
case $(uname -m) in
x86_64) bin=$here/cuda.test.amd64 ;;
aarch64) bin=$here/cuda.test.arm64 ;;
*) echo "run.sh: no test binary for $(uname -m)"; exit 2 ;;
esac

{
	date -u
	uname -a
	nvidia-smi
	echo "== ldconfig"
	ldconfig -p 2>/dev/null | grep -E 'libcuda\.|libcublas|libnvrtc|libcusolver|libcusparse|libnvJitLink|libcudnn'
	echo "== CUDA folders"
	ls -d /usr/local/cuda* 2>/dev/null
	python3 -c 'import site; print(site.getsitepackages())' 2>/dev/null
	ls -d /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null
	ls /usr/local/lib/python3*/dist-packages/nvidia/*/lib/libcusolver* /usr/lib/python3*/site-packages/nvidia/*/lib/libcusolver* 2>/dev/null
	ls /usr/local/lib/python3*/dist-packages/nvidia/*/lib/libcudnn* /usr/lib/python3*/site-packages/nvidia/*/lib/libcudnn* 2>/dev/null
} >"$out/env.txt" 2>&1

# step N CMD... runs CMD under a timeout of N seconds or what is left of
# the budget, and skips it (status 125, noted in skipped.txt) when under
# 15 seconds are left.
budget=${GPU_CHECK_BUDGET:-400}
step() {
	local want=$1 left=$((budget - SECONDS))
	shift
	if [ "$left" -lt 15 ]; then
		echo "run.sh: skipped at ${SECONDS}s of ${budget}s: $*" | tee -a "$out/skipped.txt"
		return 125
	fi
	timeout "$((want < left ? want : left))" "$@"
}
amd64() { [ -x "$here/$1.amd64" ] && [ "$(uname -m)" = x86_64 ]; }

cd "$here" # the tests read testdata/ from here
export GRADUS_CUDA_REQUIRE=1 XDG_CACHE_HOME=$out/cache
# 1. Correctness: the package's tests, package tensor's operations and
# the training steps on the device (internal/gpucheck), every registered
# op and its VJP against the CPU.
step 200 "$bin" -test.v -test.count=1 -test.timeout 190s -test.skip Fake 2>&1 | tee "$out/cuda-test.log"
status=${PIPESTATUS[0]}
if amd64 gpucheck.test; then
	step 240 "$here/gpucheck.test.amd64" -test.v -test.count=1 -test.timeout 230s 2>&1 | tee "$out/gpucheck.log"
	[ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if amd64 autodiff.test; then
	step 120 "$here/autodiff.test.amd64" -test.v -test.count=1 -test.run AllOpsOnGPU 2>&1 | tee "$out/allops.log"
	[ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
# 2. Speed: examples/bench's training workloads on the device
# (bench-cuda.log), the convolutions again without cuDNN, and PyTorch
# eager on the same GPU over the same workloads (torch-bench.log).
if amd64 bench; then
	step 120 "$here/bench.amd64" -device cuda -only mlp_train,cnn_train,lstm_train,gru_train,vae_train,transformer_block,dcgan_train \
		-reps 5 -out /tmp/bench-cuda 2>&1 | tee "$out/bench-cuda.log"
	GRADUS_CUDNN=off step 60 "$here/bench.amd64" -device cuda -only cnn_train,dcgan_train \
		-reps 5 -out /tmp/bench-cuda 2>&1 | tee "$out/bench-cuda-nocudnn.log"
fi
if [ -f "$here/peers/torch_bench.py" ]; then
	PYTHONUNBUFFERED=1 step 120 python3 "$here/peers/torch_bench.py" --device cuda --reps 5 \
		--only gemm,mlp,cnn,lstm,gru,vae,transformer,dcgan 2>&1 | tee "$out/torch-bench.log"
fi
# 3. examples/vae on the device and on this machine's CPU, from one seed:
# the −ELBO per epoch of both, in vae-cuda.json and vae-cpu.json.
if amd64 vae; then
	for d in cuda cpu; do
		step 120 "$here/vae.amd64" -device $d -epochs 3 -json -quiet -out "/tmp/vae-$d" >"$out/vae-$d.json" 2>&1
	done
	cat "$out/vae-cuda.json" "$out/vae-cpu.json"
fi
# 4. The kernels' and products' benchmarks, PyTorch's cuBLAS GEMMs at
# n = 4096 for reference, and the fake driver's tests (which CI runs too).
if amd64 gpucheck.test; then
	step 90 "$here/gpucheck.test.amd64" -test.run '^$' -test.bench . -test.benchtime 100x -test.count 3 2>&1 | tee "$out/gpucheck-bench.log"
fi
step 60 "$bin" -test.run '^$' -test.bench . -test.benchtime 20x 2>&1 | tee "$out/cuda-bench.log"

step 60 python3 - >"$out/torch-gemm.log" 2>&1 <<'PY'
import time, torch
print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))
n = 4096
# "bf16" multiplies bfloat16 tensors: PyTorch's float32 products have no
# bfloat16 mode on CUDA, so the bfloat16 peak is the reference for
# Gradus's float32 products with bfloat16 inputs (tensor.MatMulBF16).
for name, dtype, tf32, reps in [("sgemm", torch.float32, False, 20), ("sgemm TF32", torch.float32, True, 20), ("bf16 gemm", torch.bfloat16, False, 20), ("dgemm", torch.float64, False, 5)]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(3):
        c = a @ b
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        c = a @ b
    torch.cuda.synchronize()
    print(f"torch {name} n={n}: {2 * n**3 * reps / (time.perf_counter() - t) / 1e12:.1f} TFLOP/s")
print("cuBLAS loaded:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "cublas" in l}))
PY
cat "$out/torch-gemm.log"
step 60 "$bin" -test.v -test.count=1 -test.run Fake >"$out/cuda-fake.log" 2>&1
r=$?
if [ "$r" != 0 ] && [ "$r" != 125 ] && [ "$status" = 0 ]; then
	status=1
fi
echo "run.sh: tests exited $status after ${SECONDS}s; logs in $out"
exit "$status"
