package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// kernelFunc computes one full mr×nr tile of C = alpha·Ã·B̃ + beta·C from packed
// micro-panels a (k steps of mr values) and b (k steps of nr values). C must not
// be read when beta == 0.
type kernelFunc[T float] func(k int, a, b, c []T, ldc int, alpha, beta T)

// inPlaceKernel is kernelFunc reading A where it lies, row-major with row
// stride lda: a points at op(A)'s element (0, 0) of the tile, which is A's
// (0, 0) or, with trans, Aᵀ's. It issues the same operations as the
// packed kernel, so a tile's bits do not depend on which one ran.
type inPlaceKernel[T float] func(k int, a []T, lda int, trans bool, b, c []T, ldc int, alpha, beta T)

// params describes a micro-kernel and the cache blocking used with it.
type params[T float] struct {
	mr, nr     int // register tile
	mc, kc, nc int // cache blocks (mc multiple of mr, nc multiple of nr)
	kern       kernelFunc[T]
	kernIn     inPlaceKernel[T] // nil where there is none
}

// inPlaceMaxN is the widest column block whose products read A in place
// rather than packing it. Packing A costs about one cycle per element and
// is repaid over the block's nb/nr column panels; in the narrow products
// of attention's tiles (128×128×64, n = 64 or 128) it took as long as a
// quarter of the multiplications. Single-threaded on the Zen 3, reading
// A in place took products with n = 64-256 from 80-90 to 86-93 GFLOP/s.
// Read in place, a transposed A (op(A) = Aᵀ) takes each depth step from
// another row of A: with rows longer than inPlaceMaxRowT bytes the block
// spans too many pages (a single-thread 2048×128×256 product fell from 78
// to 64 GFLOP/s on the Zen 3 with 8 KiB rows), so it is packed.
const (
	inPlaceMaxN    = 256
	inPlaceMaxRowT = 1024
)

// useInPlace lets tests turn the in-place kernels off, to compare.
var useInPlace = true

// wsPool keeps the workspaces of finished calls for the next ones. Unlike
// a sync.Pool it keeps them across garbage collections: a sync.Pool
// dropped them at every collection, and the next call then allocated and
// faulted in megabytes of packing buffers again (a 1024³ product took 2-4
// times as long after each collection). It holds at most as many
// workspaces as calls ever ran at once.
type wsPool[T float] struct {
	mu   sync.Mutex
	free []*workspace[T]
}

func (p *wsPool[T]) get() *workspace[T] {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		ws := p.free[n-1]
		p.free = p.free[:n-1]
		return ws
	}
	return new(workspace[T])
}

func (p *wsPool[T]) put(ws *workspace[T]) {
	p.mu.Lock()
	p.free = append(p.free, ws)
	p.mu.Unlock()
}

// workspace holds the packing buffers of one goroutine.
type workspace[T float] struct {
	a, b []T
	tile [maxTile]T
}

// maxTile is the largest mr·nr of any kernel (AVX-512 float32: 6×32).
const maxTile = 6 * 32

// alignedSlice returns a zeroed slice of n elements whose first element is
// 64-byte aligned.
func alignedSlice[T float](n int) []T {
	var z T
	es := int(unsafe.Sizeof(z))
	pad := 64 / es
	s := make([]T, n+pad)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64) / es
	if off != 0 {
		off = pad - off
	}
	return s[off : off+n : off+n]
}

// grow makes sure buf has room for n elements.
func grow[T float](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return alignedSlice[T](n)
}

// job is one call's arguments.
type job[T float] struct {
	p              *params[T]
	transA, transB bool
	k              int
	alpha, beta    T
	a              []T
	lda            int
	b              []T
	ldb            int
	c              []T
	ldc            int
	bias           []T // when set (beta 0): C = op(A)·op(B) + bias in every row
	packed         []T // when set: op(B) packed whole (Packed), b unused
	npad           int // packed: the column count rounded up to nr
}

// run computes rows [i0,i1) × columns [j0,j1) of C using ws only.
func (jb *job[T]) run(ws *workspace[T], i0, i1, j0, j1 int) {
	p := jb.p
	k := jb.k
	if jb.packed != nil {
		// The same blocks in the same order as below, read from the whole
		// packed op(B): depth block pc starts at pc·npad, and column jc
		// (a multiple of nr) at jc·kb within it.
		for jc := j0; jc < j1; jc += p.nc {
			nb := min(p.nc, j1-jc)
			for pc := 0; pc < k; pc += p.kc {
				kb := min(p.kc, k-pc)
				jb.rows(ws, jb.packed[pc*jb.npad+jc*kb:], i0, i1, jc, nb, pc, kb)
			}
		}
		return
	}
	ws.b = grow(ws.b, min(p.nc, roundUp(j1-j0, p.nr))*min(p.kc, k))
	for jc := j0; jc < j1; jc += p.nc {
		nb := min(p.nc, j1-jc)
		for pc := 0; pc < k; pc += p.kc {
			kb := min(p.kc, k-pc)
			packB(ws.b, jb.b, jb.ldb, jb.transB, pc, kb, jc, nb, p.nr)
			jb.rows(ws, ws.b, i0, i1, jc, nb, pc, kb)
		}
	}
}

// rows packs (or, for blocks up to inPlaceMaxN wide, reads in place) and
// multiplies rows [i0,i1) of op(A) (depth [pc,pc+kb)) with the
// packed B block bp (columns [jc,jc+nb)), updating C.
func (jb *job[T]) rows(ws *workspace[T], bp []T, i0, i1, jc, nb, pc, kb int) {
	p := jb.p
	mr, nr := p.mr, p.nr
	c, ldc := jb.c, jb.ldc
	alpha, beta := jb.alpha, jb.beta
	if pc > 0 || jb.bias != nil {
		beta = 1
	}
	tile := ws.tile[:mr*nr]
	var z T
	inPlace := p.kernIn != nil && useInPlace && nb <= inPlaceMaxN && (!jb.transA || jb.lda*int(unsafe.Sizeof(z)) <= inPlaceMaxRowT)
	if inPlace {
		ws.a = grow(ws.a, mr*kb) // a short last panel, packed
	} else {
		ws.a = grow(ws.a, min(p.mc, roundUp(i1-i0, mr))*kb)
	}
	for ic := i0; ic < i1; ic += p.mc {
		mb := min(p.mc, i1-ic)
		full := mb / mr * mr // rows of whole panels
		switch {
		case !inPlace:
			packA(ws.a, jb.a, jb.lda, jb.transA, ic, mb, pc, kb, mr)
		case full < mb:
			packA(ws.a, jb.a, jb.lda, jb.transA, ic+full, mb-full, pc, kb, mr)
		}
		if pc == 0 && jb.bias != nil {
			// The bias rows go into this block of C just before its first
			// slab adds to them, while the block is in the cache: the
			// arithmetic of filling all of C first, without its passes
			// over memory.
			for i := ic; i < ic+mb; i++ {
				copy(c[i*ldc+jc:i*ldc+jc+nb], jb.bias[jc:jc+nb])
			}
		}
		for jr := 0; jr < nb; jr += nr {
			bpp := bp[jr*kb : (jr+nr)*kb]
			nn := min(nr, nb-jr)
			for ir := 0; ir < mb; ir += mr {
				mm := min(mr, mb-ir)
				off := (ic+ir)*ldc + jc + jr
				if inPlace && mm == mr {
					ao := (ic+ir)*jb.lda + pc
					if jb.transA {
						ao = pc*jb.lda + ic + ir
					}
					if nn == nr {
						p.kernIn(kb, jb.a[ao:], jb.lda, jb.transA, bpp, c[off:off+(mr-1)*ldc+nr], ldc, alpha, beta)
						continue
					}
					p.kernIn(kb, jb.a[ao:], jb.lda, jb.transA, bpp, tile, nr, alpha, 0)
					mergeTile(c[off:], ldc, tile, nr, mm, nn, beta)
					continue
				}
				var ap []T
				if inPlace {
					ap = ws.a[:mr*kb] // the short last panel
				} else {
					ap = ws.a[ir*kb : (ir+mr)*kb]
				}
				if mm == mr && nn == nr {
					p.kern(kb, ap, bpp, c[off:off+(mr-1)*ldc+nr], ldc, alpha, beta)
					continue
				}
				p.kern(kb, ap, bpp, tile, nr, alpha, 0)
				mergeTile(c[off:], ldc, tile, nr, mm, nn, beta)
			}
		}
	}
}

// mergeTile stores the top-left mm×nn part of tile into C, adding beta·C.
func mergeTile[T float](c []T, ldc int, tile []T, nr, mm, nn int, beta T) {
	for i := 0; i < mm; i++ {
		src := tile[i*nr : i*nr+nn]
		dst := c[i*ldc : i*ldc+nn]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for j, v := range src {
			dst[j] = v + beta*dst[j]
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// packA packs rows [i0,i0+mb) and depth [p0,p0+kb) of op(A) into mr-row
// micro-panels: dst[(ir/mr)*mr*kb + p*mr + i]. Rows past mb are zero.
func packA[T float](dst, a []T, lda int, trans bool, i0, mb, p0, kb, mr int) {
	var z T
	es := int(unsafe.Sizeof(z))
	for ir := 0; ir < mb; ir += mr {
		rows := min(mr, mb-ir)
		d := dst[ir*kb : (ir+mr)*kb]
		if trans {
			// op(A)[i][p] = a[p*lda+i]: each depth step is a contiguous run.
			base := p0*lda + i0 + ir
			if rows == 6 && mr == 6 { // assembly kernels only
				_ = a[base+(kb-1)*lda+5]
				if es == 4 {
					packCopy24(kb, unsafe.Pointer(&a[base]), lda*4, unsafe.Pointer(&d[0]))
				} else {
					packCopy48(kb, unsafe.Pointer(&a[base]), lda*8, unsafe.Pointer(&d[0]))
				}
				continue
			}
			for p := 0; p < kb; p++ {
				dd := d[p*mr : p*mr+mr]
				n := copy(dd, a[base+p*lda:base+p*lda+rows])
				clear(dd[n:])
			}
			continue
		}
		// op(A)[i][p] = a[i*lda+p]: gather mr rows.
		base := (i0+ir)*lda + p0
		p := 0
		if rows == 6 && mr == 6 { // assembly kernels only
			_ = a[base+5*lda+kb-1]
			n4 := kb / 4
			if es == 4 {
				packA6S(n4, unsafe.Pointer(&a[base]), lda*4, unsafe.Pointer(&d[0]))
			} else {
				packA6D(n4, unsafe.Pointer(&a[base]), lda*8, unsafe.Pointer(&d[0]))
			}
			p = 4 * n4
		}
		for i := 0; i < rows; i++ {
			src := a[base+i*lda : base+i*lda+kb]
			for q := p; q < kb; q++ {
				d[q*mr+i] = src[q]
			}
		}
		for i := rows; i < mr; i++ {
			for q := p; q < kb; q++ {
				d[q*mr+i] = 0
			}
		}
	}
}

// packB packs depth [p0,p0+kb) and columns [j0,j0+nb) of op(B) into nr-column
// micro-panels: dst[(jr/nr)*nr*kb + p*nr + j]. Columns past nb are zero.
func packB[T float](dst, b []T, ldb int, trans bool, p0, kb, j0, nb, nr int) {
	var z T
	es := int(unsafe.Sizeof(z))
	// The assembly kernels use 64-byte B rows (AVX2: nr=16 float32 or nr=8
	// float64) or 128-byte ones (AVX-512: nr=32 or nr=16).
	rowBytes := nr * es
	fast := (rowBytes == 64 || rowBytes == 128) && hasAsm && asmPack
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		d := dst[jr*kb : (jr+nr)*kb]
		if !trans {
			// op(B)[p][j] = b[p*ldb+j]: each depth step is a contiguous run.
			base := p0*ldb + j0 + jr
			if cols == nr && fast {
				_ = b[base+(kb-1)*ldb+nr-1]
				if rowBytes == 64 {
					packCopy64(kb, unsafe.Pointer(&b[base]), ldb*es, unsafe.Pointer(&d[0]))
				} else {
					packCopy128(kb, unsafe.Pointer(&b[base]), ldb*es, unsafe.Pointer(&d[0]))
				}
				continue
			}
			for p := 0; p < kb; p++ {
				dd := d[p*nr : p*nr+nr]
				n := copy(dd, b[base+p*ldb:base+p*ldb+cols])
				clear(dd[n:])
			}
			continue
		}
		// op(B)[p][j] = b[j*ldb+p]: gather nr rows of the stored matrix.
		base := (j0+jr)*ldb + p0
		p := 0
		if cols == nr && fast {
			_ = b[base+(nr-1)*ldb+kb-1]
			n4 := kb / 4
			src, ld, d0 := unsafe.Pointer(&b[base]), ldb*es, unsafe.Pointer(&d[0])
			switch {
			case es == 4 && nr == 16:
				packBT16S(n4, src, ld, d0)
			case es == 4:
				packBT32S(n4, src, ld, d0)
			case nr == 8:
				packBT8D(n4, src, ld, d0)
			default:
				packBT16D(n4, src, ld, d0)
			}
			p = 4 * n4
		}
		for j := 0; j < cols; j++ {
			s := b[base+j*ldb : base+j*ldb+kb]
			for q := p; q < kb; q++ {
				d[q*nr+j] = s[q]
			}
		}
		for j := cols; j < nr; j++ {
			for q := p; q < kb; q++ {
				d[q*nr+j] = 0
			}
		}
	}
}

// execute runs the job over an m×n result on up to threads goroutines. jb is
// passed by value so that the single-goroutine path does not allocate.
func execute[T float](jb job[T], pool *wsPool[T], m, n, threads int) {
	if work := float64(m) * float64(n) * float64(jb.k); threads > 1 && work >= parallelMinWork {
		if gated, probe := gateParallel(work); !gated {
			if pr := newParallel(&jb, pool, m, n, threads); pr != nil {
				helped, waited := pr.run(threads)
				recordParallel(helped && (!waited || probe))
				return
			}
		}
	}
	ws := pool.get()
	jb.run(ws, 0, m, 0, n)
	pool.put(ws)
}

// parallel is one multi-goroutine call. The work is cut into a FIXED list of
// tasks that depends only on the shapes and the thread count, never on
// timing, and every element of C is produced by the same arithmetic in the
// same order as in a single-goroutine call, so results are bit-for-bit
// reproducible. Goroutines claim tasks in list order from an atomic counter;
// a goroutine that starts late (e.g. on a loaded machine) simply claims
// fewer tasks instead of stalling the others.
//
// The larger of m and n is cut into one contiguous tile-aligned range per
// goroutine, and each task packs what it needs itself, so no goroutine ever
// waits for another (only the caller waits for the last task to finish).
// An earlier mode packed op(B) once into a buffer shared by all goroutines
// and split the rows against it; on the Zen 5 (2026-11-29, two threads,
// medians of five alternated rounds) independent tasks ran 11-18 % faster
// for square products (float32 512³ 287 → 334 GFLOP/s, 1024³ 290 → 322,
// 2048³ 283 → 333; float64 1024³ 137 → 175) and within 3 % for tall ones
// (4096×1024×256, 8192×512×512, 12544×64×576); on the Zen 4 the products
// deeper than tall had already gone to independent tasks, 10-60 % faster,
// and the others measured within the noise (6f9fc5b). So it is gone.
type parallel[T float] struct {
	jb     *job[T]
	pool   *wsPool[T]
	m, n   int
	total  int64
	next   atomic.Int64
	done   atomic.Int64
	fin    chan struct{}
	slots  atomic.Int32 // helpers that may still join
	helped atomic.Bool  // a helper ran at least one task

	// task t covers tiles [tiles·t/total, tiles·(t+1)/total) of the split
	// dimension (columns if splitN, else rows).
	splitN bool
	tiles  int
}

func newParallel[T float](jb0 *job[T], pool *wsPool[T], m, n, threads int) *parallel[T] {
	p := jb0.p
	jb := new(job[T])
	*jb = *jb0
	pr := &parallel[T]{jb: jb, pool: pool, m: m, n: n, fin: make(chan struct{})}
	pr.splitN = n >= m
	if pr.splitN {
		pr.tiles = (n + p.nr - 1) / p.nr
	} else {
		pr.tiles = (m + p.mr - 1) / p.mr
	}
	chunks := min(threads, pr.tiles)
	if chunks < 2 {
		return nil
	}
	pr.total = int64(chunks)
	return pr
}

// run executes the call on the calling goroutine plus up to threads-1
// helpers (polling helpers if the offer slot is free, else new goroutines).
// It reports whether some helper ran a task, and whether the caller had to
// wait long for the helpers after finishing its own share (as when a helper
// is descheduled in the middle of a task on a busy machine, which makes the
// call slower than running alone).
func (pr *parallel[T]) run(threads int) (helped, waited bool) {
	pr.slots.Store(int32(threads - 1))
	box, ok := publish(pr, threads-1)
	if !ok {
		for t := 1; t < threads; t++ {
			go pr.join()
		}
	}
	start := time.Now()
	pr.loop(false)
	if ok {
		withdraw(box)
	}
	// The remaining tasks are running on helpers that normally finish within
	// microseconds; poll before parking so that the caller is not left
	// waiting for the OS to reschedule it on a busy machine.
	own := time.Since(start)
	patience := own/2 + 20*time.Microsecond
	for i := 1; pr.done.Load() < pr.total; i++ {
		if i%32 == 0 {
			if time.Since(start)-own > patience {
				waited = true
				break
			}
			runtime.Gosched()
		}
	}
	<-pr.fin
	return pr.helped.Load(), waited
}

// join runs tasks as one of the at most threads-1 helpers of the call.
func (pr *parallel[T]) join() {
	if pr.slots.Add(-1) >= 0 {
		pr.loop(true)
	}
}

// loop claims and runs tasks until none are left; helper tells whether it
// runs on a helper rather than the caller.
func (pr *parallel[T]) loop(helper bool) {
	var ws *workspace[T]
	for {
		t := pr.next.Add(1) - 1
		if t >= pr.total {
			break
		}
		if ws == nil {
			ws = pr.pool.get()
		}
		if helper {
			pr.helped.Store(true)
		}
		pr.indepTask(int(t), ws)
		if pr.done.Add(1) == pr.total {
			close(pr.fin)
		}
	}
	if ws != nil {
		pr.pool.put(ws)
	}
}

func (pr *parallel[T]) indepTask(t int, ws *workspace[T]) {
	p := pr.jb.p
	tt := int(pr.total)
	if pr.splitN {
		lo := pr.tiles * t / tt * p.nr
		hi := min(pr.tiles*(t+1)/tt*p.nr, pr.n)
		pr.jb.run(ws, 0, pr.m, lo, hi)
		return
	}
	lo := pr.tiles * t / tt * p.mr
	hi := min(pr.tiles*(t+1)/tt*p.mr, pr.m)
	pr.jb.run(ws, lo, hi, 0, pr.n)
}
