//go:build !cuda

package cli

// cudaLinked reports whether the program was built with -tags cuda.
const cudaLinked = false
