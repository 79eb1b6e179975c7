//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// Tolerances of the factorisations and solves against package tensor's:
// both are backward stable, so on the well-conditioned matrices below
// (condition numbers under 100) they agree to n·cond·ε or so; 1e-4 and
// 1e-12 relative leave a margin of about ten for float32 and float64.
var tolSolve = map[tensor.DType]tol{tensor.Float32: {1e-4, 1e-5}, tensor.Float64: {1e-12, 1e-13}}

func solver(tb testing.TB) (*cuda.Driver, *cuda.Solver, *cuda.BLAS) {
	d := device(tb)
	s, err := d.Solver()
	if err != nil {
		tb.Fatalf("loading cuSOLVER: %v", err)
	}
	b, err := d.BLAS()
	if err != nil {
		tb.Fatal(err)
	}
	return d, s, b
}

// solverTriangular returns an n×n matrix whose both triangles are well
// conditioned: a diagonal of 2..3 and off-diagonal entries in ±0.3.
func solverTriangular(ty tensor.DType, n int) *tensor.Tensor {
	a := sample(ty, n*n, -0.3, 0.3, n, n)
	return tensor.AddDiag(a, tensor.Add(tensor.Full(ty, 2.5, n), sample(ty, n, -0.5, 0.5, n)))
}

// solverSPD returns the symmetric positive definite A·Aᵀ/n + I.
func solverSPD(ty tensor.DType, n int) *tensor.Tensor {
	a := sample(ty, n*n, -1, 1, n, n)
	return tensor.AddDiag(tensor.MulScalar(tensor.MatMulT(a, a, false, true), 1/float64(n)), tensor.Full(ty, 1, n))
}

func solverInfo(tb testing.TB, d *cuda.Driver, b *cuda.Buffer, n int) []int32 {
	tb.Helper()
	out := make([]int32, n)
	if err := cuda.Download(d, out, b); err != nil {
		tb.Fatal(err)
	}
	return out
}

func solverAlloc(tb testing.TB, d *cuda.Driver, bytes int) *cuda.Buffer {
	tb.Helper()
	b, err := d.Alloc(bytes)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestTrsm solves op(A)·X = B for each triangle and transpose against
// tensor.TriSolve.
func TestTrsm(t *testing.T) {
	d, _, blas := solver(t)
	const n, k = 9, 4
	for _, ty := range dtypes {
		for _, lower := range []bool{true, false} {
			for _, trans := range []bool{false, true} {
				a, b := solverTriangular(ty, n), sample(ty, n*k, -2, 2, n, k)
				ab, xb := upload(t, d, a), upload(t, d, b)
				if err := blas.Trsm(dt(ty), lower, trans, n, k, ab, xb); err != nil {
					t.Fatal(err)
				}
				compare(t, fmt.Sprintf("Trsm %v lower=%v trans=%v", ty, lower, trans),
					download(t, d, xb, ty, n, k), tensor.TriSolve(a, b, lower, trans), tolSolve[ty])
				d.Release(ab)
				d.Release(xb)
			}
		}
	}
}

// TestTrmm multiplies by each triangle, plain and transposed, against
// tensor.TriMatMul (an upper triangle is the lower one of the transpose).
func TestTrmm(t *testing.T) {
	d, _, blas := solver(t)
	const n, k = 9, 5
	for _, ty := range dtypes {
		for _, lower := range []bool{true, false} {
			for _, trans := range []bool{false, true} {
				a, b := sample(ty, n*n, -1, 1, n, n), sample(ty, n*k, -2, 2, n, k)
				ab, bb, cb := upload(t, d, a), upload(t, d, b), solverAlloc(t, d, n*k*ty.Size())
				if err := blas.Trmm(dt(ty), lower, trans, n, k, ab, bb, cb); err != nil {
					t.Fatal(err)
				}
				want := tensor.TriMatMul(a, b, trans)
				if !lower {
					want = tensor.TriMatMul(tensor.Transpose(a).Contiguous(), b, !trans)
				}
				compare(t, fmt.Sprintf("Trmm %v lower=%v trans=%v", ty, lower, trans),
					download(t, d, cb, ty, n, k), want, tolSolve[ty])
				compare(t, "Trmm leaves B", download(t, d, bb, ty, n, k), b, exact)
				for _, x := range []*cuda.Buffer{ab, bb, cb} {
					d.Release(x)
				}
			}
		}
	}
}

// TestPotrf factors against tensor.Cholesky, checks that the upper
// triangle is left alone, and that a matrix that is not positive definite
// gets the order of the failing minor in info, as the CPU's pivot + 1.
func TestPotrf(t *testing.T) {
	d, s, _ := solver(t)
	const n = 11
	for _, ty := range dtypes {
		a := solverSPD(ty, n)
		// Entries above the diagonal must be neither read nor written.
		marked := tensor.TriMask(a, 1, 1, 0)
		marked = tensor.Add(marked, tensor.TriMask(tensor.Full(ty, 7, n, n), 0, 0, 1))
		ab, info := upload(t, d, marked), solverAlloc(t, d, 4)
		if err := s.Potrf(dt(ty), n, ab, info); err != nil {
			t.Fatal(err)
		}
		if got := solverInfo(t, d, info, 1)[0]; got != 0 {
			t.Fatalf("Potrf %v: info %d for a positive definite matrix", ty, got)
		}
		l, err := tensor.Cholesky(a)
		if err != nil {
			t.Fatal(err)
		}
		got := download(t, d, ab, ty, n, n)
		compare(t, fmt.Sprintf("Potrf %v lower", ty), tensor.TriMask(got, 1, 1, 0), l, tolSolve[ty])
		compare(t, fmt.Sprintf("Potrf %v upper untouched", ty), tensor.TriMask(got, 0, 0, 1), tensor.TriMask(marked, 0, 0, 1), exact)

		// Lower the diagonal at 6 so that its minor is indefinite.
		bad := tensor.AddDiag(a, tensor.FromValues(ty, []float64{0, 0, 0, 0, 0, 0, -50, 0, 0, 0, 0}, n))
		_, cpuErr := tensor.Cholesky(bad)
		var npd *tensor.NotPositiveDefiniteError
		if !errors.As(cpuErr, &npd) {
			t.Fatalf("the CPU factors the indefinite matrix: %v", cpuErr)
		}
		solverUpload(t, d, ab, bad)
		if err := s.Potrf(dt(ty), n, ab, info); err != nil {
			t.Fatal(err)
		}
		if got := solverInfo(t, d, info, 1)[0]; int(got) != npd.Pivot+1 {
			t.Errorf("Potrf %v of an indefinite matrix: info %d, want %d (the CPU's pivot %d + 1)", ty, got, npd.Pivot+1, npd.Pivot)
		}
		d.Release(ab)
		d.Release(info)
	}
}

// solverUpload copies x into the device buffer b.
func solverUpload(tb testing.TB, d *cuda.Driver, b *cuda.Buffer, x *tensor.Tensor) {
	tb.Helper()
	x = x.Contiguous()
	var err error
	if x.DType() == tensor.Float32 {
		err = cuda.Upload(d, b, x.Float32s())
	} else {
		err = cuda.Upload(d, b, x.Float64s())
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// TestGetrfGetrs solves A·X = B through Getrf and Getrs against
// tensor.Solve, works det A out of the factors against tensor.Det, and
// checks that an exactly singular matrix sets info.
func TestGetrfGetrs(t *testing.T) {
	d, s, _ := solver(t)
	const n, k = 8, 3
	for _, ty := range dtypes {
		a := tensor.Add(sample(ty, n*n, -1, 1, n, n), tensor.MulScalar(tensor.Eye(ty, n), 2))
		b := sample(ty, n*k, -3, 3, n, k)
		ab, piv, info := upload(t, d, tensor.Transpose(a)), solverAlloc(t, d, 4*n), solverAlloc(t, d, 4) // column-major
		if err := s.Getrf(dt(ty), n, ab, piv, info); err != nil {
			t.Fatal(err)
		}
		if got := solverInfo(t, d, info, 1)[0]; got != 0 {
			t.Fatalf("Getrf %v: info %d for a regular matrix", ty, got)
		}
		bt := upload(t, d, tensor.Transpose(b)) // the right-hand sides as rows
		if err := s.Getrs(dt(ty), n, k, ab, piv, bt, info); err != nil {
			t.Fatal(err)
		}
		want, err := tensor.Solve(a, b)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("Getrs %v", ty), tensor.Transpose(download(t, d, bt, ty, k, n)), want, tolSolve[ty])

		lu, p := download(t, d, ab, ty, n, n), solverInfo(t, d, piv, n)
		det := 1.0
		for i := range n {
			det *= lu.At(i, i)
			if int(p[i]) < 1 || int(p[i]) > n {
				t.Fatalf("Getrf %v: pivot %d is %d, outside 1..%d", ty, i, p[i], n)
			}
			if int(p[i]) != i+1 {
				det = -det
			}
		}
		wantDet, err := tensor.Det(a)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("det from Getrf %v", ty), tensor.Scalar(ty, det), wantDet, tolSolve[ty])

		// Rows 2 and 5 equal: elimination leaves a zero row, a zero pivot.
		sing := a.Contiguous().Values()
		copy(sing[5*n:6*n], sing[2*n:3*n])
		solverUpload(t, d, ab, tensor.Transpose(tensor.FromValues(ty, sing, n, n)))
		if err := s.Getrf(dt(ty), n, ab, piv, info); err != nil {
			t.Fatal(err)
		}
		if got := solverInfo(t, d, info, 1)[0]; got < 1 || got > n {
			t.Errorf("Getrf %v of a singular matrix: info %d, want a zero pivot in 1..%d", ty, got, n)
		}
		for _, x := range []*cuda.Buffer{ab, piv, info, bt} {
			d.Release(x)
		}
	}
}

// TestSolverMissing opens the device a second time through a folder that
// holds the driver and cuBLAS but no cuSOLVER: Solver says which library
// is missing and where it looked, and cuBLAS keeps working.
func TestSolverMissing(t *testing.T) {
	d := device(t)
	blas, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	_, blasPath := blas.Version()
	if !filepath.IsAbs(d.LibraryPath()) || !filepath.IsAbs(blasPath) {
		t.Skipf("the driver (%s) or cuBLAS (%s) came from the dynamic loader: no folder of ours can offer them without cuSOLVER", d.LibraryPath(), blasPath)
	}
	dir := t.TempDir()
	for _, p := range []string{d.LibraryPath(), blasPath} {
		if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	d2, err := cuda.OpenDevice(cuda.Search{Env: []string{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	_, err = d2.Solver()
	want := "libcusolver.so.12 (cuSOLVER) not found in GRADUS_CUDA_PATH=[" + dir + "] or in []"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Solver() = %v, want an error saying %q", err, want)
	}
	b2, err := d2.BLAS()
	if err != nil {
		t.Fatalf("cuBLAS without cuSOLVER: %v", err)
	}
	x, y := solverAlloc(t, d2, 4*4), solverAlloc(t, d2, 4*4)
	defer d2.Release(x)
	defer d2.Release(y)
	if err := b2.Trmm(cuda.F32, true, false, 2, 2, x, x, y); err != nil {
		t.Errorf("Trmm without cuSOLVER: %v", err)
	}
}
