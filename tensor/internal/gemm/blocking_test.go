package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/cpuinfo"
)

// TestFitCaches checks the blocking rules against values worked out by
// hand for two machines.
func TestFitCaches(t *testing.T) {
	zen5 := cpuinfo.Caches{L1D: 48 << 10, L2: 1 << 20}
	small := cpuinfo.Caches{L1D: 32 << 10, L2: 256 << 10, L3: 8 << 20, L3Sharing: 4}
	for _, tc := range []struct {
		name       string
		c          cpuinfo.Caches
		mr, nr, es int
		mc, kc     int
	}{
		// 1 MiB / 16 / (32·4) = 512; 262144 / (512·4) = 128 → 126.
		{"zen5 f32 6x32", zen5, 6, 32, 4, 126, 512},
		// 1 MiB / 16 / (16·8) = 512; 262144 / (512·8) = 64 → 60.
		{"zen5 f64 6x16", zen5, 6, 16, 8, 60, 512},
		// 256 KiB / 16 / (16·4) = 256; 65536 / (256·4) = 64 → 60.
		{"small f32 6x16", small, 6, 16, 4, 60, 256},
		// 256 KiB / 16 / (8·8) = 256; 65536 / (256·8) = 32 → 30.
		{"small f64 6x8", small, 6, 8, 8, 30, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mc, kc, nc int
			if tc.es == 4 {
				p := params[float32]{mr: tc.mr, nr: tc.nr}
				p.fitCaches(tc.c)
				mc, kc, nc = p.mc, p.kc, p.nc
			} else {
				p := params[float64]{mr: tc.mr, nr: tc.nr}
				p.fitCaches(tc.c)
				mc, kc, nc = p.mc, p.kc, p.nc
			}
			assert.Equal(t, tc.mc, mc, "mc")
			assert.Equal(t, tc.kc, kc, "kc")
			assert.Zero(t, nc%tc.nr, "nc is whole micro-panels")
			assert.LessOrEqual(t, nc*tc.es, ncBytes)
			assert.GreaterOrEqual(t, nc, ncMinPan*tc.nr)
		})
	}
}

// TestFitCachesBounds: absurd caches still give usable blocks.
func TestFitCachesBounds(t *testing.T) {
	p := params[float64]{mr: 6, nr: 16}
	p.fitCaches(cpuinfo.Caches{L1D: 1 << 10, L2: 1 << 10, L3: 1 << 10, L3Sharing: 1})
	assert.Equal(t, kcMin, p.kc)
	assert.Equal(t, 6, p.mc)
	assert.Equal(t, ncMinPan*16, p.nc)
	p.fitCaches(cpuinfo.Caches{L1D: 1 << 30, L2: 1 << 34, L3: 1 << 34, L3Sharing: 1})
	assert.Equal(t, kcMax, p.kc)
	assert.Equal(t, mcMax/6*6, p.mc)
	assert.Equal(t, ncBytes/8, p.nc)
}

// TestGemmAnyBlocking runs products under the blockings of the extreme
// caches above, so that whatever a machine reports gives right answers.
func TestGemmAnyBlocking(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []cpuinfo.Caches{{L1D: 1 << 10, L2: 1 << 10}, {L1D: 1 << 30, L2: 1 << 34}, {L1D: 48 << 10, L2: 1 << 20}} {
		ps, pd := pick(math.MaxInt, portableParamsS, asmParamsS, wideParamsS), pick(math.MaxInt, portableParamsD, asmParamsD, wideParamsD)
		oldS, oldD := *ps, *pd
		ps.fitCaches(c)
		pd.fitCaches(c)
		for _, s := range []shape{{70, 130, 300}, {13, 300, 70}, {100, 20, 600}} {
			name := fmt.Sprintf("%s/%dx%dx%d", c, s.m, s.n, s.k)
			assert.True(t, checkCase[float32](t, rng, false, true, s, 1, 0.5, false), name)
			assert.True(t, checkCase[float64](t, rng, true, false, s, -2.5, 0, false), name)
		}
		*ps, *pd = oldS, oldD
	}
}
