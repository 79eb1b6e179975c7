//go:build !amd64 || purego

package tensor

// hasSIMD is false where there are no vector elementwise kernels.
var hasSIMD = false

// sigmoidBlocks has no vector implementation here: it writes nothing.
func sigmoidBlocks(d, x []float32) int { return 0 }

// tanhBlocks has no vector implementation here: it writes nothing.
func tanhBlocks(d, x []float32) int { return 0 }
