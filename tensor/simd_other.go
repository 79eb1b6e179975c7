//go:build !amd64 || purego

package tensor

// hasSIMD is false where there are no vector elementwise kernels.
var hasSIMD = false

// hasFMA is false where there is no fused symmetric product kernel.
var hasFMA = false

// sigmoidBlocks has no vector implementation here: it writes nothing.
func sigmoidBlocks(d, x []float32) int { return 0 }

// tanhBlocks has no vector implementation here: it writes nothing.
func tanhBlocks(d, x []float32) int { return 0 }

// arithBlocks has no vector implementation here: it writes nothing.
func arithBlocks[T Float](op byte, d, x, y []T) int { return 0 }

// reluBlocks has no vector implementation here: it writes nothing.
func reluBlocks[T Float](d, x []T) int { return 0 }

// reluGradBlocks has no vector implementation here: it writes nothing.
func reluGradBlocks[T Float](d, v, y []T) int { return 0 }

// sigmoidGradBlocks has no vector implementation here: it writes nothing.
func sigmoidGradBlocks(d, v, x []float32) int { return 0 }

// softplusBlocks has no vector implementation here: it writes nothing.
func softplusBlocks(d, x []float32) int { return 0 }

// expBlocks64 has no vector implementation here: it writes nothing.
func expBlocks64(d, x []float64) int { return 0 }

// rotBlocks has no vector implementation here: it rotates nothing.
func rotBlocks[T Float](zi, zj []T, c, s T) int { return 0 }

// symvCols has no vector implementation here: it does no rows.
func symvCols[T Float](a []T, lda int, x, y []T, alpha *[4]T, dots *[4]T) int { return 0 }

// dotCols has no vector implementation here: it does nothing.
func dotCols[T Float](a []T, lda int, x []T, dots *[4]T) int { return 0 }

// axpyCols has no vector implementation here: it does nothing.
func axpyCols[T Float](a []T, lda int, y []T, alpha *[4]T) int { return 0 }

// geluBlocks has no vector implementation here: it writes nothing.
func geluBlocks(d, x []float32) int { return 0 }

// geluGradBlocks has no vector implementation here: it writes nothing.
func geluGradBlocks(d, v, x []float32) int { return 0 }

// expShiftBlocks has no vector implementation here: it writes nothing.
func expShiftBlocks(d, x []float32, m float32) int { return 0 }

// expShiftSumBlocks has no vector implementation here: it writes nothing.
func expShiftSumBlocks(d, x []float32, m float32, acc *[8]float32) int { return 0 }

// maxBlocks has no vector implementation here: it reads nothing.
func maxBlocks(x []float32, acc *[8]float32) int { return 0 }

// sum8Blocks has no vector implementation here: it adds nothing.
func sum8Blocks[T Float](x []T, p *[8]T) int { return 0 }

// sqDev8Blocks has no vector implementation here: it adds nothing.
func sqDev8Blocks[T Float](x []T, m T, p *[8]T) int { return 0 }

// dot8Blocks has no vector implementation here: it adds nothing.
func dot8Blocks[T Float](x, y []T, p *[8]T) int { return 0 }

// scaleBlocks has no vector implementation here: it writes nothing.
func scaleBlocks[T Float](d, x []T, s T) int { return 0 }

// affineBlocks has no vector implementation here: it writes nothing.
func affineBlocks[T Float](d, x []T, s, b T) int { return 0 }

// leakyBlocks has no vector implementation here: it writes nothing.
func leakyBlocks[T Float](d, v, x []T, slope T) int { return 0 }

// finiteBlocks has no vector implementation here: it checks nothing.
func finiteBlocks[T Float](xs []T) int { return 0 }

// tanhGradBlocks has no vector implementation here: it writes nothing.
func tanhGradBlocks(d, v, y []float32) int { return 0 }
