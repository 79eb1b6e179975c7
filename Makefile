# Gradus: the commands a developer needs. `make test` is what CI runs.
GO ?= go

.PHONY: test test-mpi test-arm64 test-v3 test-onnx bench demo lint race fuzz asm soak onnx-proto onnx-zoo test-onnx-import cuda-syntax cuda-fake cuda-build gpu-check

# The layering check, vet, then every package's tests (fuzz targets run on
# their seed corpus).
test:
	$(GO) run ./internal/layercheck .
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Kernel and training-step benchmarks with allocation counts.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./tensor/... ./autodiff/...

# The main demo on the embedded data.
demo:
	$(GO) run ./examples/vae -demo

# gofmt must have nothing to say, the layering check (imports point down,
# files under 700 lines, doc comments on exported names) and vet must pass.
lint:
	$(GO) run ./internal/layercheck .
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Regenerate tensor/simd_amd64.s with avo (tensor/internal/asmgen, a module
# of its own, so avo is fetched here and never by the library) and check
# that every kernel assembles to the recorded machine code.
asm:
	$(GO) generate ./tensor
	cd tensor/internal/asmgen && $(GO) vet . && $(GO) test -count=1 .

# Regenerate nn/onnx/internal/pb from ONNX's schema: the onnx.proto that
# Debian's python3-onnx installs (apt-get install protobuf-compiler
# python3-onnx), compiled by protoc with protoc-gen-go at go.mod's version.
ONNX_PROTO ?= /usr/lib/python3/dist-packages/onnx/onnx.proto
onnx-proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go
	@d=$$(mktemp -d) && cp $(ONNX_PROTO) $$d/onnx.proto && \
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I $$d --go_out=nn/onnx/internal/pb \
		--go_opt=paths=source_relative \
		--go_opt=Monnx.proto=github.com/gradus-ml/gradus/nn/onnx/internal/pb $$d/onnx.proto && \
	rm -r $$d

# The ONNX export check: TestExportFamilies writes one model of every nn
# module family with its inputs and Gradus's outputs, and
# nn/onnx/testdata/export_check.py runs onnx.checker (full check) and
# strict shape inference on each file and executes it with a NumPy
# evaluator of the ONNX operators, comparing the outputs. Debian's
# python3-onnx (ONNX 1.12, with NumPy) is installed with apt-get when
# missing; PYTHON is the interpreter it installs into.
PYTHON ?= /usr/bin/python3
test-onnx:
	@$(PYTHON) -c 'import onnx, numpy' 2>/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-onnx python3-numpy; }
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
		GRADUS_ONNX_EXPORT_DIR=$$d $(GO) test -count=1 -run '^(TestExportFamilies|TestExportProgram)$$' ./nn/onnx && \
		$(PYTHON) nn/onnx/testdata/export_check.py $$d

# The ONNX import checks that need Python with PyTorch (apt-get install
# python3-torch python3-onnx): onnx-zoo re-exports nn/onnx's fixtures with PyTorch;
# test-onnx-import fine-tunes the imported MNIST CNN in Go and loads its
# safetensors back into the PyTorch model with strict names, and loads every zoo
# model's weights, mapped back by onnx.TorchStateDict, into its PyTorch module
# (strict names) and compares the outputs.
onnx-zoo:
	$(PYTHON) nn/onnx/testdata/zoo.py
test-onnx-import:
	@$(PYTHON) -c 'import torch, onnx, numpy' 2>/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-onnx python3-numpy; }
	@d=$$(mktemp -d) && mkdir $$d/zoo && \
	GRADUS_ONNX_FINETUNED=$$d/digits.safetensors GRADUS_ONNX_TORCH_DIR=$$d/zoo \
		$(GO) test -count=1 -run 'TestZoo|TestFineTune|TestTorchStateDict' ./nn/onnx && \
	$(PYTHON) nn/onnx/testdata/torch_load.py $$d/digits.safetensors && \
	$(PYTHON) nn/onnx/testdata/torch_load.py --zoo $$d/zoo && rm -r $$d

# Every fuzz target of the repository (each func FuzzX in a _test.go file),
# one after another, for FUZZTIME each; FUZZFLAGS passes more flags (e.g.
# -parallel 1). Their seed corpora also run in make test. docs/robustness.md
# lists the targets and what their corpora hold.
FUZZTIME ?= 30s
FUZZFLAGS ?=
fuzz:
	@grep -rn --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*(' . | \
		sed -E 's|^\./(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort | \
		while read dir target; do \
			echo "== $$target (./$$dir, $(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./$$dir || exit 1; \
		done

# The soak benchmark: the MNIST MLP trained with a prefetching loader for
# SOAK, reporting whether resident memory, goroutines, the live heap and
# the step time stay flat (docs/robustness.md). Without GRADUS_SOAK it skips.
SOAK ?= 30m
soak:
	GRADUS_SOAK=$(SOAK) $(GO) test -run '^$$' -bench '^BenchmarkSoak$$' -benchtime 1x -timeout 0 ./train

# The race detector over the packages that run goroutines.
race:
	$(GO) test -race -count=1 ./tensor/... ./graph ./autodiff ./nn ./optim ./probabilistic/inference ./probabilistic/ppl ./distributed ./data ./train ./learn/svm ./probabilistic/gp

# The distributed package's tests on two MPI ranks (Open MPI is installed
# with apt-get when it is missing; CI runs as root, hence the OMPI_ALLOW_*).
MPI_TEST := $(shell mktemp -u /tmp/gradus-distributed.XXXXXX)
test-mpi:
	@command -v mpirun >/dev/null 2>&1 && pkg-config --exists ompi-c || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev pkg-config; }
	$(GO) vet -tags mpi ./distributed
	$(GO) test -c -tags mpi -o $(MPI_TEST) ./distributed
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
		mpirun -np 2 --oversubscribe $(MPI_TEST) -test.count=1
	@echo "a failing rank must end the job with an error, not hang (timeout exits 124):"
	@OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GRADUS_FAIL_RANK=1 timeout 120 \
		mpirun -np 2 --oversubscribe -x GRADUS_FAIL_RANK $(MPI_TEST) -test.run RankFailure >/dev/null 2>&1; \
		rc=$$?; if [ $$rc -eq 0 ] || [ $$rc -eq 124 ]; then echo "FAIL: exit $$rc"; exit 1; fi; echo "ok: mpirun exited $$rc"
	rm -f $(MPI_TEST)

# The tensor packages' tests built for arm64 (the NEON GEMM kernels) and run
# under qemu-user (installed with apt-get when missing). tensor binds CUDA
# with purego, which links the binaries dynamically against the C library,
# so qemu needs the arm64 one (Debian's libc6-arm64-cross) as its prefix.
test-arm64:
	@command -v qemu-aarch64-static >/dev/null 2>&1 && [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static libc6-arm64-cross; }
	GOARCH=arm64 $(GO) vet ./tensor/...
	QEMU_LD_PREFIX=/usr/aarch64-linux-gnu GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static ./tensor/...

# The tensor package built for x86-64-v3, where the compiler fuses a
# product into the addition that follows (FMA): the scalar code must still
# round as the vector kernels do, bit for bit. Skipped on a CPU without
# the v3 features.
test-v3:
	@if grep -qw avx2 /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then \
		GOAMD64=v3 $(GO) test -count=1 ./tensor/...; \
	else echo "test-v3: this CPU lacks x86-64-v3; skipped"; fi

# The CUDA device (tensor/internal/cuda; docs/gpu.md). No target needs a GPU
# except the bundle gpu-check builds, which runs on a GPU machine.
CUDA_DIR := tensor/internal/cuda
CUDA_CLANG = clang -x cuda --cuda-device-only -nocudainc -nocudalib -fsyntax-only \
	--cuda-gpu-arch=sm_80 -Wall -Wextra -Werror -include $(CUDA_DIR)/kernels/syntax.h

# clang (installed with apt-get when missing) syntax-checks the kernels as
# NVRTC compiles them, kernels/common.cu first and the others in name
# order, with kernels/syntax.h declaring what NVRTC has built in; then a
# copy with an undeclared function must be rejected.
cuda-syntax:
	@command -v clang >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang; }
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	cat $(CUDA_DIR)/kernels/common.cu $$(ls $(CUDA_DIR)/kernels/*.cu | grep -v '/common\.cu$$' | LC_ALL=C sort) >$$d/all.cu && \
	$(CUDA_CLANG) $$d/all.cu && echo "cuda-syntax: the kernels pass" && \
	sed 's/math_exp(x)/math_expo(x)/' $$d/all.cu >$$d/broken.cu && grep -q math_expo $$d/broken.cu && \
	if $(CUDA_CLANG) $$d/broken.cu 2>/dev/null; then echo "cuda-syntax: a broken copy passed"; exit 1; fi && \
	echo "cuda-syntax: a broken copy is rejected"

# The CUDA package's tests against a fake device on the CPU
# (testdata/fakedevice.cc: the driver, NVRTC, cuBLAS, cuSOLVER and cuDNN, the kernels
# compiled for the host), so bindings, kernel logic and the GPU tests'
# own code are checked without a GPU. Needs a C++ compiler.
cuda-fake:
	@command -v c++ >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++; }
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	c++ -std=c++17 -shared -fPIC -O2 -o $$d/libcuda.so.1 $(CUDA_DIR)/testdata/fakedevice.cc && \
	ln -s libcuda.so.1 $$d/libnvrtc.so.13 && ln -s libcuda.so.1 $$d/libcublas.so.13 && \
	ln -s libcuda.so.1 $$d/libcusolver.so.12 && ln -s libcuda.so.1 $$d/libcudnn.so.9 && \
	GRADUS_CUDA_PATH=$$d GRADUS_CUDA_REQUIRE=1 GRADUS_CUDNN_REQUIRE=1 GRADUS_CUDA_GEMM_N=64 XDG_CACHE_HOME=$$d/cache \
		CGO_ENABLED=0 $(GO) test -count=1 ./$(CUDA_DIR) && \
	GRADUS_CUDA_PATH=$$d GRADUS_CUDA_REQUIRE=1 GRADUS_CUDNN_REQUIRE=1 GRADUS_CUDA_FAKE=1 XDG_CACHE_HOME=$$d/cache \
		CGO_ENABLED=0 $(GO) test -count=1 -short ./internal/gpucheck && \
	GRADUS_CUDA_PATH=$$d GRADUS_CUDA_REQUIRE=1 XDG_CACHE_HOME=$$d/cache \
		CGO_ENABLED=0 $(GO) test -count=1 -run AllOpsOnGPU ./autodiff

# The CUDA device builds without cgo for linux/amd64 and linux/arm64.
cuda-build:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build ./tensor/...
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build ./tensor/...
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) vet ./$(CUDA_DIR)

# The bundle a GPU machine without Go runs: the CUDA package's test binary
# for amd64 and arm64 (CGO_ENABLED=0), its testdata, internal/gpucheck's
# test binary (tensor ops and training steps on the device; amd64),
# out/gpu/run.sh and
# the PyTorch peer of examples/bench (run there with --device cuda).
gpu-check:
	rm -rf out/gpu && mkdir -p out/gpu
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) test -c -ldflags='-s -w' -o out/gpu/cuda.test.amd64 ./$(CUDA_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) test -c -ldflags='-s -w' -o out/gpu/cuda.test.arm64 ./$(CUDA_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) test -c -ldflags='-s -w' -o out/gpu/gpucheck.test.amd64 ./internal/gpucheck
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) test -c -ldflags='-s -w' -o out/gpu/autodiff.test.amd64 ./autodiff
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -tags cuda -ldflags='-s -w' -o out/gpu/vae.amd64 ./examples/vae
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -tags cuda -ldflags='-s -w' -o out/gpu/bench.amd64 ./examples/bench
	cp -r $(CUDA_DIR)/testdata out/gpu/testdata
	gzip -9 out/gpu/*.amd64 out/gpu/*.arm64 # under the 64 MiB a device call carries; run.sh unpacks them
	cp $(CUDA_DIR)/gpu-check.sh out/gpu/run.sh
	mkdir -p out/gpu/peers && cp examples/bench/peers/torch_bench.py examples/bench/peers/timing.py out/gpu/peers/
	@echo "On the GPU machine, from the folder holding out/ (logs go to \$$OUT, else out/gpu/log):"
	@echo "  bash out/gpu/run.sh"
