# Gradus: the commands a developer needs. `make test` is what CI runs.
GO ?= go

.PHONY: test bench demo lint race fuzz

# vet, then every package's tests (fuzz targets run on their seed corpus).
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Kernel and training-step benchmarks with allocation counts.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./tensor/... ./autodiff/...

# The main demo on the embedded data.
demo:
	$(GO) run ./examples/vae -demo

# gofmt must have nothing to say, and vet must pass.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# The race detector over the packages that run goroutines.
race:
	$(GO) test -race -count=1 ./tensor/... ./graph ./autodiff
