package tensor

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// The factorisations and solves on a GPU: cuBLAS's trsm and trmm and
// cuSOLVER's potrf, getrf and getrs, one matrix of a batch at a time
// (devices.Backend's linear algebra); CholeskyGrad is composed of them.
// Data-dependent failures (not positive definite, singular, NaN) come
// back as the CPU's errors, read from the device's info words with one
// wait per call. Where cuSOLVER is missing, the factorisations panic with
// a *Error naming the op and the library, as an op without a kernel does.

// memAt is the device memory of t's storage from element off on (off
// counts from the start of the storage, as matrixOffsets's do).
func memAt(t *Tensor, off int) devices.Mem {
	return t.dev.be.Slice(t.dev.h.mem, devDType(t.dtype), off)
}

// infoWords holds n int32 words on the device for LAPACK's info and
// pivots; free gives them back.
type infoWords struct {
	be  devices.Backend
	mem devices.Mem
}

func newInfoWords(op string, be devices.Backend, n int) infoWords {
	m, err := be.Alloc(devices.F32, max(n, 1)) // 4-byte words
	gpuCheck(op, err)
	return infoWords{be, m}
}

func (w infoWords) at(i int) devices.Mem { return w.be.Slice(w.mem, devices.F32, i) }

func (w infoWords) read(op string, n int) []int32 {
	out := make([]int32, n)
	gpuCheck(op, w.be.DownloadInt32(out, w.mem))
	return out
}

func (w infoWords) free() { w.be.Free(w.mem) }

// gpuKeepLower sets the entries above the diagonals of t's n×n matrices
// to zero (exactly, whatever they held) and scales the diagonals by diag.
func gpuKeepLower(t *Tensor, n int, diag float64) {
	defer alive(t)
	cond := New(t.dtype, n, n)
	for i := range n {
		for j := 0; j <= i; j++ {
			cond.setFlat(i*n+j, 1)
		}
	}
	cd, zero := cond.To(t.Device()), NewOn(t.Device(), t.dtype)
	defer cd.release()
	defer zero.release()
	gpuWhere(t, expandTrusted(cd, t.shape), t, expandTrusted(zero, t.shape))
	if diag != 1 {
		dv := diagView(t)
		gpuParam("MulScalar", dv, dv, diag, 0)
	}
}

// gpuCholesky is cholesky on a GPU: src copied into the contiguous dst
// (unless it is dst), factored in place, the upper triangles zeroed.
func gpuCholesky(op string, dst, src *Tensor, n int) (*Tensor, error) {
	defer alive(dst, src)
	st := sameDevice(op, dst, src)
	if !(src.IsContiguous() && sharesStorage(dst, src) && dst.offset == src.offset) {
		gpuCopy(op, dst, src)
	}
	nb := dst.Size() / (n * n)
	info := newInfoWords(op, st.be, nb)
	defer info.free()
	for bi := range nb {
		gpuCheck(op, st.be.Potrf(devDType(dst.dtype), n, memAt(dst, dst.offset+bi*n*n), info.at(bi)))
	}
	gpuKeepLower(dst, n, 1)
	for bi, v := range info.read(op, nb) {
		if v > 0 {
			p := int(v) - 1
			// cuSOLVER, as LAPACK's potrf, leaves the failing pivot on
			// the diagonal.
			val := dst.deviceElement(op, dst.offset+bi*n*n+p*n+p)
			return nil, &NotPositiveDefiniteError{Op: op, Pivot: p, Value: val, Batch: bi}
		}
	}
	return dst, nil
}

// gpuTriSolve is triSolveBatch on a GPU: x holds the right-hand sides
// (contiguous, (batch..., n, k)) and gets the solutions.
func gpuTriSolve(op string, x, a *Tensor, n, k int, batch []int, steps []triStep) {
	defer alive(x, a)
	st := sameDevice(op, x, a)
	ac, done := contiguousOperand(op, a)
	defer done()
	for bi, off := range matrixOffsets(ac, batch) {
		for _, s := range steps {
			gpuCheck(op, st.be.Trsm(devDType(x.dtype), s.lower, s.trans, n, k, memAt(ac, off), memAt(x, x.offset+bi*n*k)))
		}
	}
}

// gpuTriMatMul is triMatMulBatch on a GPU.
func gpuTriMatMul(op string, out, l, b *Tensor, n, k int, batch []int, trans, lowerOut bool) {
	defer alive(out, l, b)
	st := sameDevice(op, out, l, b)
	lc, ldone := contiguousOperand(op, l)
	defer ldone()
	bc, bdone := contiguousOperand(op, b)
	defer bdone()
	loffs, boffs := matrixOffsets(lc, batch), matrixOffsets(bc, batch)
	for bi := range loffs {
		gpuCheck(op, st.be.Trmm(devDType(out.dtype), true, trans, n, k, memAt(lc, loffs[bi]), memAt(bc, boffs[bi]), memAt(out, out.offset+bi*n*k)))
	}
	if lowerOut {
		gpuKeepLower(out, n, 1)
	}
}

// gpuCholeskyGrad is choleskyGradBatch on a GPU, by the symbolic formula
// Ā = ½(S + Sᵀ) with S = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, Φ taking the lower triangle
// with its diagonal halved (Murray 2016, "Differentiation of the Cholesky
// decomposition", eq. 10): two triangular products and solves, where the
// CPU runs the blocked sweep backwards. x holds L̄ broadcast to the batch
// and gets Ā.
func gpuCholeskyGrad(op string, x, l *Tensor, n int) {
	defer alive(x, l)
	sameDevice(op, x, l)
	gpuKeepLower(x, n, 1) // only L̄'s lower triangle counts
	p := TriMatMul(l, x, true)
	defer p.release()
	gpuKeepLower(p, n, 0.5)
	y := TriSolve(l, p, true, true) // L⁻ᵀ·Φ
	defer y.release()
	s := TriSolve(l, Transpose(y), true, true) // L⁻ᵀ·(L⁻ᵀ·Φ)ᵀ = Sᵀ
	defer s.release()
	AddTo(x, s, Transpose(s))
	MulScalarTo(x, x, 0.5)
}

// gpuLU holds the LU factors P·A = L·U of each matrix A of a batch on a
// GPU: lu contiguous (batch..., n, n), holding each matrix's factors
// transposed (cuSOLVER's column-major storage), and n pivots per matrix.
type gpuLU struct {
	lu   *Tensor
	piv  infoWords
	zero []int // the first zero pivot of each matrix (0-based), or -1
}

func (f *gpuLU) free() {
	f.lu.release()
	f.piv.free()
}

// gpuFactorLU copies and factors every matrix of a (..., n, n), n > 0.
// It returns an error wrapping ErrNotFinite when an entry is NaN or
// infinite, as factorLU does.
func gpuFactorLU(op string, a *Tensor, n int) (*gpuLU, error) {
	defer alive(a)
	st := sameDevice(op, a)
	nb := a.Size() / (n * n)
	lu := newUninitOn(op, a.Device(), a.dtype, a.shape...)
	gpuCopy(op, lu, Transpose(a)) // column-major, for getrf
	dt := devDType(a.dtype)
	bad, err := st.be.NonFinite(dt, nb*n*n, lu.mem())
	gpuCheck(op, err)
	for bi := 0; bad && bi < nb; bi++ { // name the first matrix with one
		if b, err := st.be.NonFinite(dt, n*n, memAt(lu, bi*n*n)); err != nil || b {
			gpuCheck(op, err)
			lu.release()
			return nil, fmt.Errorf("tensor.%s: matrix %d: %w", op, bi, ErrNotFinite)
		}
	}
	f := &gpuLU{lu: lu, piv: newInfoWords(op, st.be, nb*n+nb), zero: make([]int, nb)}
	for bi := range nb {
		gpuCheck(op, st.be.Getrf(dt, n, memAt(lu, bi*n*n), f.piv.at(bi*n), f.piv.at(nb*n+bi)))
	}
	words := f.piv.read(op, nb*n+nb)
	for bi := range nb {
		f.zero[bi] = int(words[nb*n+bi]) - 1
	}
	return f, nil
}

// gpuSolve is solve on a GPU: x holds B broadcast to the batch.
func gpuSolve(op string, x, a *Tensor, n, k int, batch []int) (*Tensor, error) {
	defer alive(x, a)
	st := sameDevice(op, x, a)
	if n == 0 {
		return x, nil
	}
	f, err := gpuFactorLU(op, a, n)
	if err != nil {
		return nil, err
	}
	defer f.free()
	for bi, z := range f.zero {
		if z >= 0 {
			return nil, fmt.Errorf("tensor.%s: matrix %d: %w: pivot %d is zero", op, bi, ErrSingular, z)
		}
	}
	if x.Size() == 0 {
		return x, nil
	}
	// getrs takes the right-hand sides column-major: the rows of Bᵀ.
	rhs := x
	if k > 1 {
		rhs = newUninitOn(op, x.Device(), x.dtype, append(cloneInts(batch), k, n)...)
		defer rhs.release()
		gpuCopy(op, rhs, Transpose(x))
	}
	info := newInfoWords(op, st.be, 1)
	defer info.free()
	for bi, off := range matrixOffsets(f.lu, batch) {
		m := off / (n * n)
		gpuCheck(op, st.be.Getrs(devDType(x.dtype), n, k, memAt(f.lu, off), f.piv.at(m*n), memAt(rhs, rhs.offset+bi*n*k), info.at(0)))
	}
	if k > 1 {
		gpuCopy(op, x, Transpose(rhs))
	}
	return x, nil
}

// gpuDet is Det (slog false) or SlogDet on a GPU: the diagonals of the
// factors and the pivots come to the host, the results go back.
func gpuDet(op string, a *Tensor, slog bool) (det, sign, logAbs *Tensor, err error) {
	defer alive(a)
	n := checkSquare(op, a)
	batch := a.shape[:len(a.shape)-2]
	nb := shapeSize(batch)
	d, s, l := New(a.dtype, batch...), New(a.dtype, batch...), New(a.dtype, batch...)
	if n > 0 && nb > 0 {
		f, err := gpuFactorLU(op, a, n)
		if err != nil {
			return nil, nil, nil, err
		}
		defer f.free()
		diag := diagView(f.lu).To(CPU).Values()
		piv := f.piv.read(op, nb*n)
		for bi := range nb {
			dv, sv, lv := 1.0, 1.0, 0.0
			for i := range n {
				u := diag[bi*n+i]
				dv *= u
				if u < 0 {
					sv = -sv
				}
				if int(piv[bi*n+i]) != i+1 {
					dv, sv = -dv, -sv
				}
				lv += math.Log(math.Abs(u))
			}
			if f.zero[bi] >= 0 {
				sv, lv = 0, math.Inf(-1)
			}
			d.setFlat(bi, dv)
			s.setFlat(bi, sv)
			l.setFlat(bi, lv)
		}
	} else {
		for bi := range nb {
			d.setFlat(bi, 1)
			s.setFlat(bi, 1)
		}
	}
	if slog {
		return nil, s.To(a.Device()), l.To(a.Device()), nil
	}
	return d.To(a.Device()), nil, nil, nil
}

// gpuLogDetChol is LogDetChol on a GPU: 2·Σ log Lᵢᵢ from the elementwise
// and row-sum kernels (the sum in the kernel's order, not the CPU's).
func gpuLogDetChol(l *Tensor) *Tensor {
	d := Diagonal(l)
	defer d.release()
	lg := Log(d)
	defer lg.release()
	s := Sum(lg, []int{len(lg.shape) - 1}, false)
	defer s.release()
	return MulScalar(s, 2)
}
