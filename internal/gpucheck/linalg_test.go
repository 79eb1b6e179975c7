//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// spdBatch returns a batch of symmetric positive definite matrices
// A·Aᵀ/n + I, condition numbers around 10.
func spdBatch(dt tensor.DType, seed uint64, batch, n int) *tensor.Tensor {
	a := randn(dt, seed, batch, n, n)
	s := tensor.MulScalar(tensor.MatMulT(a, a, false, true), 1/float64(n))
	return tensor.AddDiag(s, tensor.Full(dt, 1, n))
}

// TestLinalgOnDevice runs the factorisations and solves on the device
// against the CPU: batches, broadcast batch axes, a transposed triangular
// operand, one and several right-hand sides. The matrices are well
// conditioned, so the backward-stable CPU and GPU algorithms agree to a
// few hundred roundings.
func TestLinalgOnDevice(t *testing.T) {
	d := device(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1024 * eps(dt)
		name := func(s string) string { return fmt.Sprintf("%s %v", s, dt) }
		const n = 6
		a := spdBatch(dt, 1, 2, n)
		l, err := tensor.Cholesky(a)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := tensor.Cholesky(a.To(d))
		if err != nil {
			t.Fatal(err)
		}
		near(t, name("Cholesky"), lg, l, tol)
		near(t, name("LogDetChol"), tensor.LogDetChol(lg), tensor.LogDetChol(l), tol)

		l1 := tensor.Reshape(l, 2, 1, n, n) // broadcast against b's batch of 3
		b := randn(dt, 2, 3, n, 4)
		near(t, name("CholeskySolve broadcast"), tensor.CholeskySolve(l1.To(d), b.To(d)), tensor.CholeskySolve(l1, b), tol)
		lt := tensor.Transpose(l) // an upper triangle, as a view
		near(t, name("TriSolve upper of a view"), tensor.TriSolve(lt.To(d), tensor.Slice(b.To(d), 0, 0, 2, 1), false, true),
			tensor.TriSolve(lt, tensor.Slice(b, 0, 0, 2, 1), false, true), tol)
		v := randn(dt, 3, n)
		near(t, name("TriSolve vector"), tensor.TriSolve(l.To(d), v.To(d), true, false), tensor.TriSolve(l, v, true, false), tol)
		sq := randn(dt, 4, 2, n, n)
		near(t, name("TriMatMulLower"), tensor.TriMatMulLower(l.To(d), sq.To(d), true), tensor.TriMatMulLower(l, sq, true), tol)
		near(t, name("TriMatMul"), tensor.TriMatMul(l.To(d), tensor.Slice(b, 0, 0, 2, 1).To(d), false), tensor.TriMatMul(l, tensor.Slice(b, 0, 0, 2, 1), false), tol)
		near(t, name("CholeskyGrad"), tensor.CholeskyGrad(l.To(d), sq.To(d)), tensor.CholeskyGrad(l, sq), tol)

		g := tensor.Add(randn(dt, 5, 3, n, n), tensor.MulScalar(tensor.Eye(dt, n), 3))
		for _, rhs := range []*tensor.Tensor{randn(dt, 6, n), randn(dt, 7, 3, n, 2), randn(dt, 8, 2, 3, n, 5)} {
			want, err := tensor.Solve(g, rhs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tensor.Solve(g.To(d), rhs.To(d))
			if err != nil {
				t.Fatal(err)
			}
			near(t, name(fmt.Sprintf("Solve %v", rhs.Shape())), got, want, tol)
		}
		inv, _ := tensor.Inverse(g)
		invg, err := tensor.Inverse(g.To(d))
		if err != nil {
			t.Fatal(err)
		}
		near(t, name("Inverse"), invg, inv, tol)
		det, _ := tensor.Det(g)
		detg, err := tensor.Det(g.To(d))
		if err != nil {
			t.Fatal(err)
		}
		near(t, name("Det"), detg, det, tol*float64(n))
		sg, la, _ := tensor.SlogDet(g)
		sgg, lag, err := tensor.SlogDet(g.To(d))
		if err != nil {
			t.Fatal(err)
		}
		near(t, name("SlogDet sign"), sgg, sg, 0)
		near(t, name("SlogDet log"), lag, la, tol)
	}
}

// TestLinalgErrorsOnDevice: a matrix that is not positive definite, an
// exactly singular one and one with a NaN give the CPU's errors on the
// device, naming the same matrix of the batch (and pivot, for Cholesky).
func TestLinalgErrorsOnDevice(t *testing.T) {
	d := device(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		const n = 5
		a := spdBatch(dt, 9, 3, n).Contiguous()
		vals := a.Values()
		vals[2*n*n+3*n+3] = -40 // matrix 2, pivot 3
		bad := tensor.FromValues(dt, vals, 3, n, n)
		_, cpuErr := tensor.Cholesky(bad)
		_, gpuErr := tensor.Cholesky(bad.To(d))
		var c, g *tensor.NotPositiveDefiniteError
		if !errors.As(cpuErr, &c) || !errors.As(gpuErr, &g) {
			t.Fatalf("Cholesky %v: errors %v on the CPU and %v on the device", dt, cpuErr, gpuErr)
		}
		// The value is what cuSOLVER leaves on the diagonal (LAPACK's potrf
		// leaves the failing pivot there): logged, not checked.
		if g.Batch != c.Batch || g.Pivot != c.Pivot || g.Op != c.Op {
			t.Errorf("Cholesky %v: %v on the device, %v on the CPU", dt, gpuErr, cpuErr)
		}
		t.Logf("Cholesky %v: %v on the device, %v on the CPU", dt, gpuErr, cpuErr)

		sing := tensor.Add(randn(dt, 10, 2, n, n), tensor.Eye(dt, n)).Contiguous().Values()
		copy(sing[n*n+4*n:n*n+5*n], sing[n*n+1*n:n*n+2*n]) // matrix 1: rows 1 and 4 equal
		s := tensor.FromValues(dt, sing, 2, n, n).To(d)
		_, cpuErr = tensor.Solve(s.To(tensor.CPU), randn(dt, 11, n))
		if _, err := tensor.Solve(s, randn(dt, 11, n).To(d)); !errors.Is(err, tensor.ErrSingular) || cpuErr == nil || err.Error() != cpuErr.Error() {
			t.Errorf("Solve %v of a singular matrix: %v, want the CPU's %v", dt, err, cpuErr)
		}
		if _, err := tensor.Inverse(s); !errors.Is(err, tensor.ErrSingular) {
			t.Errorf("Inverse %v of a singular matrix: %v, want ErrSingular", dt, err)
		}
		sign, logAbs, err := tensor.SlogDet(s)
		if err != nil || sign.Values()[1] != 0 || !math.IsInf(logAbs.Values()[1], -1) || sign.Values()[0] == 0 {
			t.Errorf("SlogDet %v of a singular matrix: %v, %v, %v; want sign 0 and -Inf for matrix 1", dt, sign, logAbs, err)
		}
		det, err := tensor.Det(s)
		if err != nil || det.Values()[1] != 0 {
			t.Errorf("Det %v of a singular matrix: %v, %v; want 0", dt, det, err)
		}

		sing[3] = math.NaN()
		nan := tensor.FromValues(dt, sing, 2, n, n).To(d)
		if _, err := tensor.Det(nan); !errors.Is(err, tensor.ErrNotFinite) || !containsMatrix(err, 0) {
			t.Errorf("Det %v with a NaN: %v, want ErrNotFinite for matrix 0", dt, err)
		}
		if _, err := tensor.Solve(nan, randn(dt, 12, n).To(d)); !errors.Is(err, tensor.ErrNotFinite) {
			t.Errorf("Solve %v with a NaN: %v, want ErrNotFinite", dt, err)
		}
	}
}

func containsMatrix(err error, i int) bool {
	return err != nil && strings.Contains(err.Error(), fmt.Sprintf("matrix %d:", i))
}

// signedCols negates each column of x's matrices whose entry of largest
// magnitude is negative (eigenvectors are determined up to sign).
func signedCols(x *tensor.Tensor) *tensor.Tensor {
	v := x.Contiguous().Values()
	sh := x.Shape()
	r, c := sh[len(sh)-2], sh[len(sh)-1]
	for off := 0; off < len(v); off += r * c {
		for j := range c {
			big := 0
			for i := range r {
				if math.Abs(v[off+i*c+j]) > math.Abs(v[off+big*c+j]) {
					big = i
				}
			}
			if v[off+big*c+j] < 0 {
				for i := range r {
					v[off+i*c+j] = -v[off+i*c+j]
				}
			}
		}
	}
	return tensor.FromValues(x.DType(), v, sh...)
}

// TestDecompositionsOnDevice runs Eigh, QR and SVD on the device against
// the CPU, batched, on tall, square and wide matrices (QR and SVD in the
// CPU's sign conventions, eigenvectors up to sign), and a NaN's error.
func TestDecompositionsOnDevice(t *testing.T) {
	d := device(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1024 * eps(dt)
		name := func(s string, sh []int) string { return fmt.Sprintf("%s %v %v", s, dt, sh) }
		g := randn(dt, 20, 2, 5, 5)
		sym := tensor.Add(g, tensor.Transpose(g))
		w, v, err := tensor.Eigh(sym)
		if err != nil {
			t.Fatal(err)
		}
		wg, vg, err := tensor.Eigh(sym.To(d))
		if err != nil {
			t.Fatal(err)
		}
		near(t, name("Eigh values", sym.Shape()), wg, w, tol)
		near(t, name("Eigh vectors", sym.Shape()), signedCols(vg.To(tensor.CPU)), signedCols(v), tol)
		for _, sh := range [][]int{{2, 7, 4}, {3, 3}, {2, 3, 6}} {
			a := randn(dt, 21, sh...)
			q, r, err := tensor.QR(a)
			if err != nil {
				t.Fatal(err)
			}
			qg, rg, err := tensor.QR(a.To(d))
			if err != nil {
				t.Fatal(err)
			}
			near(t, name("QR Q", sh), qg, q, tol)
			near(t, name("QR R", sh), rg, r, tol)
			u, s, v, err := tensor.SVD(a)
			if err != nil {
				t.Fatal(err)
			}
			ug, sg, vg, err := tensor.SVD(a.To(d))
			if err != nil {
				t.Fatal(err)
			}
			near(t, name("SVD S", sh), sg, s, tol)
			near(t, name("SVD U", sh), ug, u, tol)
			near(t, name("SVD V", sh), vg, v, tol)
		}
		bad := randn(dt, 22, 2, 4, 4).Contiguous().Values()
		bad[16+4*2+1] = math.NaN() // matrix 1, below the diagonal
		nan := tensor.FromValues(dt, bad, 2, 4, 4).To(d)
		if _, _, err := tensor.Eigh(nan); !errors.Is(err, tensor.ErrNotFinite) || !containsMatrix(err, 1) {
			t.Errorf("Eigh %v with a NaN: %v, want ErrNotFinite for matrix 1", dt, err)
		}
		if _, _, err := tensor.QR(nan); !errors.Is(err, tensor.ErrNotFinite) || !containsMatrix(err, 1) {
			t.Errorf("QR %v with a NaN: %v, want ErrNotFinite for matrix 1", dt, err)
		}
		if _, _, _, err := tensor.SVD(nan); !errors.Is(err, tensor.ErrNotFinite) || !containsMatrix(err, 1) {
			t.Errorf("SVD %v with a NaN: %v, want ErrNotFinite for matrix 1", dt, err)
		}
	}
}
