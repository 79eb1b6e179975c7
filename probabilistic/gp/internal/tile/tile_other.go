//go:build !amd64

package tile

// level is 0 outside amd64: SqDist and ExpSqDist run in Go.
var level = 0

// sqDistAsm has no vector kernel outside amd64.
func sqDistAsm([]float32, int, []float32, int, []float32, int, float32, float32, float32, bool) bool {
	return false
}
