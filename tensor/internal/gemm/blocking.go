package gemm

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/gradus-ml/gradus/internal/cpuinfo"
)

// The cache blocking follows Goto and van de Geijn (2008), "Anatomy of
// high-performance matrix multiplication", and Low et al. (2016),
// "Analytical modeling is enough for high-performance BLIS", with the
// sizes read from the machine (cpuinfo) rather than from a model table:
//
//   - kc: the kc×nr micro-panel of B that every A micro-panel of a block
//     meets takes a sixteenth of L2. It streams from L2 rather than
//     sitting in L1 (the Zen 5's L1 holds 48 KiB; its L2 feeds the
//     kernel fast enough), and the deeper it is the less often C's tiles
//     are loaded and stored: on that machine kc 512 ran 5-12 % faster than
//     the L1-sized 256-320 at n = 512-1024 on two cores, for both kernel
//     widths and both precisions;
//   - mc: the packed mc×kc block of A stays in L2 while every B
//     micro-panel passes, and takes a quarter of it;
//   - nc: the packed kc×nc block of B takes a quarter of this core's share
//     of L3, and at most 16 KiB of each of its rows.
//
// On the Zen 5 development machine (48 KiB L1d, 1 MiB L2) this gives kc
// 512 and mc 126 (f32) or 60 (f64) for both kernel widths
// (tensor/internal/gemm/RESULTS.md has the sweeps); a core with 256 KiB of
// L2 gets kc 128-256.
const (
	kcStep   = 64       // kc is a multiple of this: whole cache lines of A and B
	kcMin    = 64       // below this the kernel's loop overhead shows
	kcMax    = 512      // deeper panels gained nothing where measured
	mcMax    = 480      // more rows per block only delays the first tile
	ncBytes  = 16 << 10 // at most this many bytes of each packed B row
	l3Guess  = 2 << 20  // a core's share of L3 when its size or sharing is unknown
	ncMinPan = 8        // nc is at least this many micro-panels
)

// fitCaches sets p's mc, kc and nc for caches c.
func (p *params[T]) fitCaches(c cpuinfo.Caches) {
	var zero T
	es := int(unsafe.Sizeof(zero))
	kc := c.L2 / 16 / (p.nr * es) / kcStep * kcStep
	p.kc = min(max(kc, kcMin), kcMax)
	mc := c.L2 / 4 / (p.kc * es) / p.mr * p.mr
	p.mc = min(max(mc, p.mr), mcMax/p.mr*p.mr)
	share := l3Guess
	if c.L3 > 0 && c.L3Sharing > 0 {
		share = c.L3 / c.L3Sharing
	}
	nc := share * runtime.GOMAXPROCS(0) / 4 / (p.kc * es) / p.nr * p.nr
	p.nc = min(max(nc, ncMinPan*p.nr), ncBytes/es/p.nr*p.nr)
}

func init() {
	c := cpuinfo.Detect()
	for _, p := range []*params[float32]{portableParamsS, asmParamsS, wideParamsS} {
		p.fitCaches(c)
	}
	for _, p := range []*params[float64]{portableParamsD, asmParamsD, wideParamsD} {
		p.fitCaches(c)
	}
}

// Blocking describes the cache blocking the next wide call will use (one
// with more columns than the narrow kernel's tile), with the
// caches it was chosen from, for benchmark reports, e.g. "f32 mc 126 kc
// 512 nc 800, f64 mc 60 kc 512 nc 400; L1d 48 KiB, L2 1 MiB (cpuid
// 0x80000005/6)".
func Blocking() string {
	s := pick(math.MaxInt, portableParamsS, asmParamsS, wideParamsS)
	d := pick(math.MaxInt, portableParamsD, asmParamsD, wideParamsD)
	return fmt.Sprintf("f32 mc %d kc %d nc %d, f64 mc %d kc %d nc %d; %s",
		s.mc, s.kc, s.nc, d.mc, d.kc, d.nc, cpuinfo.Detect())
}
