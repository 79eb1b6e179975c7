//go:build race

package tensor

// raceEnabled is true under -race, where sync.Pool deliberately drops
// items, so allocation counts are meaningless.
const raceEnabled = true
