// Package gpucheck holds the checks of Gradus on a CUDA device that span
// packages: tensor operations against the CPU, and training steps built
// from graph, nn, losses and optim run on the GPU against the same steps
// on the CPU. It has no code of its own, only tests and benchmarks. They
// skip where no device is found, unless GRADUS_CUDA_REQUIRE=1 (set by
// `make cuda-fake`, which runs them on a fake device whose kernels are
// compiled for the host, and by the GPU machine's run.sh).
package gpucheck
