package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSqDist checks both kernels against float64 sums of squared
// differences, for several dimensions, offsets and floors.
func TestSqDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, d := range []int{1, 2, 3, 7} {
		for _, nc := range []int{1, 5, 70} {
			pts := make([]float32, nc*d)
			blk := make([]float32, d*Block)
			for i := range pts {
				pts[i] = float32(rng.NormFloat64() * 2)
			}
			for i := range blk {
				blk[i] = float32(rng.NormFloat64() * 2)
			}
			for _, p := range []struct{ off, scale, lo float32 }{{0, 1, 0}, {0.3, -0.5, -5}} {
				ldd := Block + 3
				want := make([]float64, nc*Block)
				for j := 0; j < nc; j++ {
					for i := 0; i < Block; i++ {
						s := 0.0
						for q := 0; q < d; q++ {
							e := float64(pts[j*d+q]) - float64(blk[q*Block+i])
							s += e * e
						}
						want[j*Block+i] = math.Max(float64(p.off)+float64(p.scale)*s, float64(p.lo))
					}
				}
				kernels := map[string]func(dst []float32){
					"go":     func(dst []float32) { sqDistGo(dst, ldd, pts, nc, blk, d, p.off, p.scale, p.lo) },
					"SqDist": func(dst []float32) { SqDist(dst, ldd, pts, nc, blk, d, p.off, p.scale, p.lo) },
				}
				for name, k := range kernels {
					dst := make([]float32, (nc-1)*ldd+Block+1)
					dst[len(dst)-1] = 42 // past the last row: untouched
					k(dst)
					for j := 0; j < nc; j++ {
						for i := 0; i < Block; i++ {
							w := want[j*Block+i]
							require.InDelta(t, w, float64(dst[j*ldd+i]), 1e-5*(1+math.Abs(w)), "%s d=%d nc=%d j=%d i=%d", name, d, nc, j, i)
						}
					}
					assert.Equal(t, float32(42), dst[len(dst)-1], name)
				}
			}
		}
	}
}

// levels returns the kernel levels this CPU runs (0, Go, always).
func levels() func(func(int) bool) {
	return func(yield func(int) bool) {
		for lv := 0; lv <= level; lv++ {
			if !yield(lv) {
				return
			}
		}
	}
}

// atLevel runs f with the kernels of level lv.
func atLevel(lv int, f func()) {
	was := level
	level = lv
	defer func() { level = was }()
	f()
}

// TestSqDistAgrees: the vector kernel and the Go loop sum in the same
// order, up to the vector kernel's fused multiply-add.
func TestSqDistAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nc, d = 33, 3
	pts, blk := make([]float32, nc*d), make([]float32, d*Block)
	for i := range pts {
		pts[i] = rng.Float32()
	}
	for i := range blk {
		blk[i] = rng.Float32()
	}
	a, b := make([]float32, nc*Block), make([]float32, nc*Block)
	SqDist(a, Block, pts, nc, blk, d, 0, 1, 0)
	sqDistGo(b, Block, pts, nc, blk, d, 0, 1, 0)
	for i := range a {
		assert.InDelta(t, b[i], a[i], 4e-7*(1+float64(b[i])), "entry %d", i)
	}
}

// TestExpSqDist checks the fused exponential against float64's exp of the
// float64 exponent, to 5e-7 relative (float32 rounding of the distances
// and of the result, and the polynomial's 2e-7), down to the floor.
func TestExpSqDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, d := range []int{1, 3, 5} {
		const nc = 40
		pts, blk := make([]float32, nc*d), make([]float32, d*Block)
		for i := range pts {
			pts[i] = float32(rng.NormFloat64() * 3)
		}
		for i := range blk {
			blk[i] = float32(rng.NormFloat64() * 3)
		}
		const off, scale, lo = 0.4, -0.5, -60
		for lv := range levels() {
			name := fmt.Sprint("level ", lv)
			dst := make([]float32, nc*Block)
			atLevel(lv, func() { ExpSqDist(dst, Block, pts, nc, blk, d, off, scale, lo) })
			floored := 0
			for j := 0; j < nc; j++ {
				for i := 0; i < Block; i++ {
					s := 0.0
					for q := 0; q < d; q++ {
						e := float64(pts[j*d+q]) - float64(blk[q*Block+i])
						s += e * e
					}
					x := off + scale*s
					if x < lo {
						x, floored = lo, floored+1
					}
					// The exponent carries float32 rounding: an ulp of |x| and of
					// each of the d terms of the squared distance: |x|·(d+1)·1.2e-7.
					tol := 5e-7 + math.Abs(x)*float64(d+1)*1.2e-7
					require.InDelta(t, 1, float64(dst[j*Block+i])/math.Exp(x), tol, "%s d=%d j=%d i=%d x=%g", name, d, j, i, x)
				}
			}
			if d == 5 {
				assert.Positive(t, floored, "the test reaches the floor")
			}
		}
	}
	assert.PanicsWithValue(t, "tile.ExpSqDist: the floor lo must be at least ExpFloor", func() {
		ExpSqDist(make([]float32, Block), Block, make([]float32, 1), 1, make([]float32, Block), 1, 0, -0.5, -100)
	})
}

func TestSqDistPanics(t *testing.T) {
	assert.PanicsWithValue(t, "tile.SqDist: operands too short for their sizes", func() {
		SqDist(make([]float32, 10), Block, make([]float32, 3), 1, make([]float32, 3*Block), 3, 0, 1, 0)
	})
	assert.NotPanics(t, func() { SqDist(nil, Block, nil, 0, nil, 3, 0, 1, 0) })
}

func BenchmarkExpSqDist(b *testing.B) {
	const nc, d = 2048, 3
	pts, blk, dst := make([]float32, nc*d), make([]float32, d*Block), make([]float32, nc*Block)
	for i := range pts {
		pts[i] = float32(i%7) * 0.1
	}
	for b.Loop() {
		ExpSqDist(dst, Block, pts, nc, blk, d, 0, -0.5, -87)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nc*Block), "ns/entry")
}

func BenchmarkSqDist(b *testing.B) {
	const nc, d = 2048, 3
	pts, blk, dst := make([]float32, nc*d), make([]float32, d*Block), make([]float32, nc*Block)
	for b.Loop() {
		SqDist(dst, Block, pts, nc, blk, d, 0, -0.5, -87)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nc*Block), "ns/entry")
}
