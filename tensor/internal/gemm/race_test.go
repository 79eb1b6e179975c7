//go:build race

package gemm

// raceEnabled is true under -race, where sync.Pool deliberately drops items
// (so allocation counts are meaningless) and everything runs ~10× slower.
const raceEnabled = true
