package gemm

import (
	"sync"
	"unsafe"
)

// kernelFunc computes one full mr×nr tile of C = alpha·Ã·B̃ + beta·C from packed
// micro-panels a (k steps of mr values) and b (k steps of nr values). C must not
// be read when beta == 0.
type kernelFunc[T float] func(k int, a, b, c []T, ldc int, alpha, beta T)

// params describes a micro-kernel and the cache blocking used with it.
type params[T float] struct {
	mr, nr     int // register tile
	mc, kc, nc int // cache blocks (mc multiple of mr, nc multiple of nr)
	kern       kernelFunc[T]
}

// workspace holds the packing buffers of one goroutine.
type workspace[T float] struct {
	a, b []T
	tile [maxTile]T
}

// maxTile is the largest mr·nr of any kernel.
const maxTile = 6 * 16

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
}

// run computes rows [i0,i1) × columns [j0,j1) of C using ws.
func (jb *job[T]) run(ws *workspace[T], i0, i1, j0, j1 int) {
	p := jb.p
	mr, nr := p.mr, p.nr
	k := jb.k
	m := i1 - i0
	n := j1 - j0
	kcMax := min(p.kc, k)
	mcMax := min(p.mc, roundUp(m, mr))
	ncMax := min(p.nc, roundUp(n, nr))
	ws.a = grow(ws.a, mcMax*kcMax)
	ws.b = grow(ws.b, ncMax*kcMax)
	c, ldc := jb.c, jb.ldc
	tile := ws.tile[:mr*nr]
	for jc := j0; jc < j1; jc += p.nc {
		nb := min(p.nc, j1-jc)
		for pc := 0; pc < k; pc += p.kc {
			kb := min(p.kc, k-pc)
			beta := jb.beta
			if pc > 0 {
				beta = 1
			}
			packB(ws.b, jb.b, jb.ldb, jb.transB, pc, kb, jc, nb, nr)
			for ic := i0; ic < i1; ic += p.mc {
				mb := min(p.mc, i1-ic)
				packA(ws.a, jb.a, jb.lda, jb.transA, ic, mb, pc, kb, mr)
				for jr := 0; jr < nb; jr += nr {
					bp := ws.b[jr*kb : (jr+nr)*kb]
					nn := min(nr, nb-jr)
					for ir := 0; ir < mb; ir += mr {
						ap := ws.a[ir*kb : (ir+mr)*kb]
						mm := min(mr, mb-ir)
						off := (ic+ir)*ldc + jc + jr
						if mm == mr && nn == nr {
							p.kern(kb, ap, bp, c[off:off+(mr-1)*ldc+nr], ldc, jb.alpha, beta)
							continue
						}
						p.kern(kb, ap, bp, tile, nr, jb.alpha, 0)
						mergeTile(c[off:], ldc, tile, nr, mm, nn, beta)
					}
				}
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
	// The assembly kernels use 64-byte B rows: nr=16 float32 or nr=8 float64.
	fast := nr*es == 64 && hasAsm
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		d := dst[jr*kb : (jr+nr)*kb]
		if !trans {
			// op(B)[p][j] = b[p*ldb+j]: each depth step is a contiguous run.
			base := p0*ldb + j0 + jr
			if cols == nr && fast {
				_ = b[base+(kb-1)*ldb+nr-1]
				packCopy64(kb, unsafe.Pointer(&b[base]), ldb*es, unsafe.Pointer(&d[0]))
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
			if es == 4 {
				packBT16S(n4, unsafe.Pointer(&b[base]), ldb*4, unsafe.Pointer(&d[0]))
			} else {
				packBT8D(n4, unsafe.Pointer(&b[base]), ldb*8, unsafe.Pointer(&d[0]))
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

// execute runs the job over an m×n result, splitting it over up to threads
// goroutines by a fixed partition of the larger dimension. jb is passed by
// value so that the single-goroutine path does not allocate.
func execute[T float](jb job[T], pool *sync.Pool, m, n, threads int) {
	if threads > 1 && float64(m)*float64(n)*float64(jb.k) < parallelMinWork {
		threads = 1
	}
	splitN := n >= m
	unit := jb.p.mr
	if splitN {
		unit = jb.p.nr
	}
	tiles := (max(m, n) + unit - 1) / unit
	threads = min(threads, tiles)
	if threads <= 1 {
		ws := pool.Get().(*workspace[T])
		jb.run(ws, 0, m, 0, n)
		pool.Put(ws)
		return
	}
	pj := new(job[T])
	*pj = jb
	executeParallel(pj, pool, m, n, threads, tiles, unit, splitN)
}

// executeParallel runs chunk 0 on the calling goroutine and chunks
// 1..threads-1 on new goroutines. Chunk t covers tiles
// [tiles·t/threads, tiles·(t+1)/threads) of the split dimension.
func executeParallel[T float](jb *job[T], pool *sync.Pool, m, n, threads, tiles, unit int, splitN bool) {
	work := func(t int) {
		lo := tiles * t / threads * unit
		hi := tiles * (t + 1) / threads * unit
		ws := pool.Get().(*workspace[T])
		if splitN {
			jb.run(ws, 0, m, lo, min(hi, n))
		} else {
			jb.run(ws, lo, min(hi, m), 0, n)
		}
		pool.Put(ws)
	}
	var wg sync.WaitGroup
	wg.Add(threads - 1)
	for t := 1; t < threads; t++ {
		go func() {
			defer wg.Done()
			work(t)
		}()
	}
	work(0)
	wg.Wait()
}
