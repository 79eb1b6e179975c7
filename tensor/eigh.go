package tensor

import (
	"fmt"
	"runtime"
	"sort"
	"unsafe"
)

// eighMaxIter bounds the implicit QL sweeps spent on one eigenvalue; the
// iteration converges cubically, so a handful is normal and running out
// means the input was not a finite symmetric matrix.
const eighMaxIter = 60

// eighSplitWork is roughly the n³ summed over a chunk of a batch below which
// spreading the chunk over goroutines costs more than it saves.
const eighSplitWork = 1 << 14

// Eigh returns the eigendecomposition A = V·diag(w)·Vᵀ of each symmetric
// matrix of a (..., n, n): w (..., n) holds the eigenvalues in ascending
// order and the columns of v (..., n, n) the corresponding orthonormal
// eigenvectors. Only the lower triangle of a is read, so a non-symmetric a
// is treated as the symmetric matrix with the same lower triangle.
//
// Each matrix is reduced to tridiagonal form by Householder reflections.
// Below order 64 the tridiagonal matrix is diagonalised by the implicit QL
// method with Wilkinson shifts; from 64 on the reduction is blocked (as
// LAPACK's sytrd, its trailing updates in GEMM), the tridiagonal problem is
// solved by divide and conquer (as stedc) and the reflectors are applied to
// its eigenvectors in blocks through GEMM. Eigh returns an error wrapping
// ErrNotFinite when the lower
// triangle holds a NaN or infinity, and an error if the iteration does not
// converge. It panics with a *Error when a is not square.
func Eigh(a *Tensor) (w, v *Tensor, err error) {
	n := checkSquare("Eigh", a)
	if a.dev != nil {
		return gpuEigh(a, n)
	}
	batch := a.shape[:len(a.shape)-2]
	w = New(a.dtype, append(cloneInts(batch), n)...)
	v = New(a.dtype, a.shape...)
	offs := matrixOffsets(a, batch)
	if a.dtype == Float32 {
		err = eighBatch[float32](a, offs, n, w, v)
	} else {
		err = eighBatch[float64](a, offs, n, w, v)
	}
	if err != nil {
		return nil, nil, err
	}
	return w, v, nil
}

func eighBatch[T Float](a *Tensor, offs []int, n int, w, v *Tensor) error {
	A, W, V := storage[T](a), storage[T](w), storage[T](v)
	sr, sc := a.strides[len(a.strides)-2], a.strides[len(a.strides)-1]
	big := maxFinite[T]()
	errs := make([]error, len(offs))
	// Matrices are independent: a batch of small ones is spread over the
	// cores, each chunk with its own scratch space.
	linalgParallel(len(offs), max(1, eighSplitWork/(n*n*n+16)), func(b0, b1 int) {
		z, zt := workGet[T](n*n), workGet[T](n*n)
		defer workPut(z)
		defer workPut(zt)
		e := make([]T, n)
		sub, tau := make([]T, n), make([]T, n)
		perm := make([]int, n)
		sorted := make([]T, n)
		var vecs []T // row p is the eigenvector of d[p]
		for bi := b0; bi < b1; bi++ {
			off := offs[bi]
			clear(z)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					x := A[off+i*sr+j*sc]
					if !(x >= -big && x <= big) {
						errs[bi] = fmt.Errorf("tensor.Eigh: matrix %d: %w", bi, ErrNotFinite)
						return
					}
					z[i*n+j] = x
				}
			}
			d := W[bi*n : (bi+1)*n]
			// The eigenvectors' output is fresh memory, whose first
			// touch costs a page fault per 4 KiB (17 ms of a 140 ms
			// n = 1000 call on the Zen 5 VM, inside the transposing copy
			// at the end): touch it on another goroutine while the
			// reduction and divide and conquer run, mostly on one core.
			faulted := prefault(V[bi*n*n : (bi+1)*n*n])
			if n >= eighBlockedMin {
				// Blocked reduction: most of its work in GEMM. It reads
				// the lower triangle column-major, the upper one of z.
				mirrorLower(z, n, n, 1, 1)
				sytrdLower(n, z, d, sub, tau)
				// Divide and conquer on T into zt, whose columns then become
				// A's eigenvectors by V = Q·Z, the reflectors applied in blocks.
				if !stedc(n, d, sub, zt) {
					errs[bi] = fmt.Errorf("tensor.Eigh: matrix %d: QL iteration did not converge", bi)
					return
				}
				ormtrLower(n, z, tau, zt)
				vecs = zt
			} else {
				tred2(n, z, d, e)
				// The QL rotations combine pairs of eigenvectors; keeping them
				// as rows makes each rotation touch two contiguous rows.
				for i := 0; i < n; i++ {
					for k := 0; k < n; k++ {
						zt[i*n+k] = z[k*n+i]
					}
				}
				if !tqli(n, d, e, zt) {
					errs[bi] = fmt.Errorf("tensor.Eigh: matrix %d: QL iteration did not converge", bi)
					return
				}
				vecs = zt
			}
			for i := range perm {
				perm[i] = i
			}
			sort.SliceStable(perm, func(x, y int) bool { return d[perm[x]] < d[perm[y]] })
			vb := V[bi*n*n : (bi+1)*n*n]
			<-faulted
			for j, p := range perm {
				sorted[j] = d[p]
			}
			permTranspose(n, vb, vecs, perm)
			copy(d, sorted)
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// tred2 reduces the symmetric n×n matrix held in the lower triangle of a to
// tridiagonal form Qᵀ·A·Q = T by Householder reflections, the last row
// first. On return a holds Q, d the diagonal of T and e[1:] its
// subdiagonal (e[0] = 0). The loops are arranged so that every inner loop
// runs along a row.
func tred2[T Float](n int, a, d, e []T) {
	for i := n - 1; i > 0; i-- {
		l := i - 1
		var h T
		ri := a[i*n : i*n+i] // row i left of the diagonal
		if l > 0 {
			var scale T
			for _, x := range ri {
				scale += absT(x)
			}
			if scale == 0 {
				e[i] = ri[l]
			} else {
				for k := range ri {
					ri[k] /= scale
					h += ri[k] * ri[k]
				}
				f := ri[l]
				g := sqrtT(h)
				if f >= 0 {
					g = -g
				}
				e[i] = scale * g
				h -= f * g
				ri[l] = f - g
				// p = A·u/h over the leading i×i block, u = ri; e[:i] is
				// free until its final value is set, so it holds p.
				p := e[:i]
				clear(p)
				for j := 0; j <= l; j++ {
					a[j*n+i] = ri[j] / h // keep u/h for accumulating Q
					rj := a[j*n : j*n+j]
					p[j] += dotContig(rj, ri[:j]) + a[j*n+j]*ri[j]
					axpy(ri[j], rj, p[:j])
				}
				var fp T
				for j := 0; j <= l; j++ {
					p[j] /= h
					fp += p[j] * ri[j]
				}
				hh := fp / (h + h)
				// A −= u·qᵀ + q·uᵀ with q = p − hh·u, lower triangle only.
				for j := 0; j <= l; j++ {
					fj := ri[j]
					gj := p[j] - hh*fj
					p[j] = gj
					rj := a[j*n : j*n+j+1]
					for k := range rj {
						rj[k] -= fj*p[k] + gj*ri[k]
					}
				}
			}
		} else {
			e[i] = ri[l]
		}
		d[i] = h
	}
	if n == 0 {
		return
	}
	d[0], e[0] = 0, 0
	g := make([]T, n)
	for i := 0; i < n; i++ {
		if d[i] != 0 {
			// Apply reflection i to the accumulated Q in the leading block:
			// Q −= (Q·u/h)·uᵀ column by column, computed row-wise.
			ri := a[i*n : i*n+i]
			gg := g[:i]
			clear(gg)
			for k := 0; k < i; k++ {
				axpy(ri[k], a[k*n:k*n+i], gg)
			}
			for k := 0; k < i; k++ {
				axpy(-a[k*n+i], gg, a[k*n:k*n+i])
			}
		}
		d[i] = a[i*n+i]
		a[i*n+i] = 1
		for j := 0; j < i; j++ {
			a[j*n+i], a[i*n+j] = 0, 0
		}
	}
}

// tqli diagonalises the symmetric tridiagonal matrix with diagonal d and
// subdiagonal e[1:] by the implicit QL method with shifts, overwriting d
// with the (unsorted) eigenvalues. Each rotation is also applied to rows i
// and i+1 of zt, so if zt holds Qᵀ from tred2 its row j ends as the
// eigenvector of d[j]. It reports false if an eigenvalue fails to converge.
func tqli[T Float](n int, d, e, zt []T) bool {
	if n == 0 {
		return true
	}
	for i := 1; i < n; i++ {
		e[i-1] = e[i]
	}
	e[n-1] = 0
	eps := epsT[T]()
	cs, ss := make([]T, n), make([]T, n)
	// The rotations only act on zt, never on d and e, so whole sweeps are
	// queued and applied together (rotSweeps).
	var q rotQueue[T]
	defer q.flush(n, zt)
	for l := 0; l < n; l++ {
		for iter := 0; ; iter++ {
			m := l
			for ; m < n-1; m++ {
				dd := absT(d[m]) + absT(d[m+1])
				if absT(e[m]) <= eps*dd {
					break
				}
			}
			if m == l {
				break
			}
			if iter == eighMaxIter {
				return false
			}
			// Wilkinson-style shift from the leading 2×2 block.
			g := (d[l+1] - d[l]) / (2 * e[l])
			r := hypotT(g, 1)
			if g < 0 {
				r = -r
			}
			g = d[m] - d[l] + e[l]/(g+r)
			s, c, p := T(1), T(1), T(0)
			deflated := false
			last := m // lowest index of a rotation recorded in this sweep
			for i := m - 1; i >= l; i-- {
				f := s * e[i]
				b := c * e[i]
				r = hypotT(f, g)
				e[i+1] = r
				if r == 0 { // underflow: the matrix splits here
					d[i+1] -= p
					e[m] = 0
					deflated = true
					break
				}
				s = f / r
				c = g / r
				g = d[i+1] - p
				r = (d[i]-g)*s + 2*c*b
				p = s * r
				d[i+1] = g + p
				g = c*r - b
				cs[i], ss[i], last = c, s, i
			}
			q.add(n, zt, cs, ss, last, m)
			if deflated {
				continue
			}
			d[l] -= p
			e[l] = g
			e[m] = 0
		}
	}
	return true
}

// rotQueue holds QL sweeps whose rotations are still to be applied to zt.
// Applied one sweep at a time, each sweep streams the rows it touches
// through the cache; applied rotSweeps at a time to one block of
// rotBlockCols columns, the block stays in L2 while every queued rotation
// passes over it. Every column still sees the same rotations in the same
// order, so the result is bit for bit that of applying each sweep at once.
type rotQueue[T Float] struct {
	c, s   []T   // the rotations of the queued sweeps, concatenated
	lo, hi []int // sweep k rotates rows i, i+1 for i from hi[k]−1 down to lo[k]
}

const (
	rotSweeps    = 32
	rotBlockCols = 64
)

// add queues the sweep whose rotations (cs[i], ss[i]) act on rows i and
// i+1 for i from m−1 down to last, flushing a full queue first.
func (q *rotQueue[T]) add(n int, zt, cs, ss []T, last, m int) {
	if last >= m {
		return
	}
	if len(q.lo) == rotSweeps {
		q.flush(n, zt)
	}
	q.lo, q.hi = append(q.lo, last), append(q.hi, m)
	q.c, q.s = append(q.c, cs[last:m]...), append(q.s, ss[last:m]...)
}

// flush applies the queued sweeps, in order, to the n×n zt: columns are
// independent, so blocks of them are spread over goroutines.
func (q *rotQueue[T]) flush(n int, zt []T) {
	if len(q.lo) == 0 {
		return
	}
	work := len(q.c)
	linalgParallel(n, max(rotBlockCols, eighSplitWork/max(1, work)), func(k0, k1 int) {
		for b0 := k0; b0 < k1; b0 += rotBlockCols {
			b1 := min(b0+rotBlockCols, k1)
			base := 0
			for k, lo := range q.lo {
				hi := q.hi[k]
				for i := hi - 1; i >= lo; i-- {
					c, s := q.c[base+i-lo], q.s[base+i-lo]
					zi := zt[i*n+b0 : i*n+b1]
					zj := zt[(i+1)*n+b0 : (i+1)*n+b1]
					zj = zj[:len(zi)]
					for x := rotBlocks(zi, zj, c, s); x < len(zi); x++ {
						f := zj[x]
						zj[x] = T(s*zi[x]) + T(c*f) // rounded products, as the vector kernel
						zi[x] = T(c*zi[x]) - T(s*f)
					}
				}
				base += hi - lo
			}
		}
	})
	q.c, q.s, q.lo, q.hi = q.c[:0], q.s[:0], q.lo[:0], q.hi[:0]
}

// epsT returns the machine epsilon of T.
func epsT[T Float]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(1.0 / (1 << 23))
	}
	return T(1.0 / (1 << 52))
}

// prefaultMin is the size in bytes from which prefault touches a slice
// on another goroutine; below it the goroutine costs more than the
// faults.
const prefaultMin = 1 << 20

// prefault writes a zero into every 4 KiB page of x, which must be
// zero already (fresh from New), on another goroutine when x is large
// and more than one P runs Go code, so that the first touches' page
// faults overlap the caller's work. The returned channel is closed when
// it is done.
func prefault[T Float](x []T) <-chan struct{} {
	done := make(chan struct{})
	var z T
	es := int(unsafe.Sizeof(z))
	if len(x)*es < prefaultMin || runtime.GOMAXPROCS(0) < 2 {
		close(done)
		return done
	}
	go func() {
		for i := 0; i < len(x); i += 4096 / es {
			x[i] = 0
		}
		close(done)
	}()
	return done
}

// transposeTile is the side of the square tiles in which the transposing
// copies below move their entries, so that the rows a tile writes across
// stay in L1 instead of each write missing the cache.
const transposeTile = 32

// permTranspose sets dst[k·n+j] = src[perm[j]·n+k] for the n×n row-major
// dst and src: column j of dst is row perm[j] of src.
func permTranspose[T Float](n int, dst, src []T, perm []int) {
	for j0 := 0; j0 < n; j0 += transposeTile {
		j1 := min(j0+transposeTile, n)
		for k0 := 0; k0 < n; k0 += transposeTile {
			k1 := min(k0+transposeTile, n)
			for j := j0; j < j1; j++ {
				row := src[perm[j]*n+k0 : perm[j]*n+k1]
				for k, x := range row {
					dst[(k0+k)*n+j] = x
				}
			}
		}
	}
}
