package tensor

import "testing"

// TestWorkPoolRoundTrip checks that a pooled buffer comes back with the
// length asked for and its capacity's power of two, in both dtypes, and
// that a warm Get and Put allocate nothing (the pool's boxes are reused).
func TestWorkPoolRoundTrip(t *testing.T) {
	for _, n := range []int{workMin, 3000, 4096} {
		s := workGet[float64](n)
		if len(s) != n || cap(s)&(cap(s)-1) != 0 || cap(s) < n {
			t.Fatalf("workGet(%d): len %d cap %d", n, len(s), cap(s))
		}
		workPut(s)
		f := workGet[float32](n)
		if len(f) != n || cap(f) < n {
			t.Fatalf("workGet[float32](%d): len %d cap %d", n, len(f), cap(f))
		}
		workPut(f)
	}
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	allocs := testing.AllocsPerRun(100, func() {
		a, b := workGet[float64](3000), workGet[float32](700)
		workPut(a)
		workPut(b)
	})
	if allocs != 0 {
		t.Errorf("a warm workGet and workPut allocated %.1f times", allocs)
	}
}
