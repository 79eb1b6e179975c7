//go:build cuda

package cli

// Built with -tags cuda, every example links the CUDA bindings, so that
// -device cuda can bind the GPU; without the tag the programs stay
// statically linked and -device cuda says how to rebuild.
import _ "github.com/gradus-ml/gradus/tensor/cuda"

const cudaLinked = true
