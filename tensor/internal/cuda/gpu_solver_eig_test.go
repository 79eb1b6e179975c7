//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// solverSignedColumns returns x (r×c) with each column negated where its entry
// of largest magnitude is negative, and the signs used: vectors are
// determined up to sign, so both sides are compared in this form.
func solverSignedColumns(x *tensor.Tensor) (*tensor.Tensor, []float64) {
	r, c := x.Shape()[0], x.Shape()[1]
	v := x.Contiguous().Values()
	signs := make([]float64, c)
	for j := range c {
		big := 0
		for i := range r {
			if solverAbs(v[i*c+j]) > solverAbs(v[big*c+j]) {
				big = i
			}
		}
		signs[j] = 1
		if v[big*c+j] < 0 {
			signs[j] = -1
		}
		for i := range r {
			v[i*c+j] *= signs[j]
		}
	}
	return tensor.FromValues(x.DType(), v, r, c), signs
}

// solverNormal returns seeded standard normal values: matrices of full rank
// with distinct eigen- and singular values (sample's are of rank 2).
func solverNormal(ty tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	return tensor.NewRNG(seed).Normal(ty, 0, 1, shape...)
}

func solverAbs(x float64) float64 { return max(x, -x) }

// solverScaleRows multiplies row i of x by s[i].
func solverScaleRows(x *tensor.Tensor, s []float64) *tensor.Tensor {
	return tensor.Mul(x, tensor.Reshape(tensor.FromValues(x.DType(), s, len(s)), len(s), 1))
}

// TestSyevd diagonalises a symmetric matrix, read through its row-major
// lower triangle (the upper one holds garbage), against tensor.Eigh:
// the eigenvalues, and the eigenvectors up to sign.
func TestSyevd(t *testing.T) {
	d, s, _ := solver(t)
	const n = 7
	for _, ty := range dtypes {
		g := solverNormal(ty, 1, n, n)
		a := tensor.Add(g, tensor.Transpose(g)) // symmetric, indefinite, distinct eigenvalues
		w, v, err := tensor.Eigh(a)
		if err != nil {
			t.Fatal(err)
		}
		garbage := tensor.Add(tensor.TriMask(a, 1, 1, 0), tensor.TriMask(tensor.Full(ty, 9, n, n), 0, 0, 1))
		ab, wb, info := upload(t, d, garbage), solverAlloc(t, d, n*ty.Size()), solverAlloc(t, d, 4)
		if err := s.Syevd(dt(ty), n, ab, wb, info); err != nil {
			t.Fatal(err)
		}
		if got := solverInfo(t, d, info, 1)[0]; got != 0 {
			t.Fatalf("Syevd %v: info %d", ty, got)
		}
		compare(t, fmt.Sprintf("Syevd %v values", ty), download(t, d, wb, ty, n), w, tolSolve[ty])
		// a holds the eigenvectors as its column-major columns: the rows.
		got, _ := solverSignedColumns(tensor.Transpose(download(t, d, ab, ty, n, n)))
		want, _ := solverSignedColumns(v)
		compare(t, fmt.Sprintf("Syevd %v vectors", ty), got, want, tolSolve[ty])
		for _, x := range []*cuda.Buffer{ab, wb, info} {
			d.Release(x)
		}
	}
}

// TestSolverQR factors tall, square and wide matrices against tensor.QR
// (whose R has a non-negative diagonal: the device's is brought to it).
func TestSolverQR(t *testing.T) {
	d, s, _ := solver(t)
	for _, ty := range dtypes {
		for _, mn := range [][2]int{{7, 4}, {5, 5}, {3, 6}} {
			m, n := mn[0], mn[1]
			k := min(m, n)
			a := solverNormal(ty, 2, m, n)
			q, r, err := tensor.QR(a)
			if err != nil {
				t.Fatal(err)
			}
			ab, rb := upload(t, d, tensor.Transpose(a)), solverAlloc(t, d, k*n*ty.Size()) // column-major
			tau, info := solverAlloc(t, d, k*ty.Size()), solverAlloc(t, d, 4)
			if err := s.QR(dt(ty), m, n, ab, rb, tau, info); err != nil {
				t.Fatal(err)
			}
			if got := solverInfo(t, d, info, 1)[0]; got != 0 {
				t.Fatalf("QR %v: info %d", ty, got)
			}
			gr := tensor.Transpose(download(t, d, rb, ty, n, k))                                        // k×n
			gq := tensor.Transpose(tensor.Slice(download(t, d, ab, ty, n, m), 0, 0, k, 1)).Contiguous() // m×k
			signs := make([]float64, k)
			for i := range k {
				signs[i] = 1
				if gr.At(i, i) < 0 {
					signs[i] = -1
				}
			}
			what := fmt.Sprintf("QR %v %d×%d", ty, m, n)
			compare(t, what+" R", solverScaleRows(gr, signs), r, tolSolve[ty])
			compare(t, what+" Q", tensor.Transpose(solverScaleRows(tensor.Transpose(gq), signs)), q, tolSolve[ty])
			for _, x := range []*cuda.Buffer{ab, rb, tau, info} {
				d.Release(x)
			}
		}
	}
}

// TestGesvd decomposes tall and square matrices against tensor.SVD: the
// singular values, and the vectors in SVD's sign convention (the entry
// of largest magnitude of each vᵢ positive).
func TestGesvd(t *testing.T) {
	d, s, _ := solver(t)
	for _, ty := range dtypes {
		for _, mn := range [][2]int{{8, 5}, {4, 4}} {
			m, n := mn[0], mn[1]
			a := solverNormal(ty, 3, m, n)
			u, sv, v, err := tensor.SVD(a)
			if err != nil {
				t.Fatal(err)
			}
			ab, sb, ub, vb := upload(t, d, tensor.Transpose(a)), solverAlloc(t, d, n*ty.Size()), solverAlloc(t, d, m*n*ty.Size()), solverAlloc(t, d, n*n*ty.Size())
			info := solverAlloc(t, d, 4)
			if err := s.Gesvd(dt(ty), m, n, ab, sb, ub, vb, info); err != nil {
				t.Fatal(err)
			}
			if got := solverInfo(t, d, info, 1)[0]; got != 0 {
				t.Fatalf("Gesvd %v: info %d", ty, got)
			}
			what := fmt.Sprintf("Gesvd %v %d×%d", ty, m, n)
			compare(t, what+" values", download(t, d, sb, ty, n), sv, tolSolve[ty])
			gv, signs := solverSignedColumns(download(t, d, vb, ty, n, n)) // Vᵀ column-major is V row-major
			gu := tensor.Transpose(solverScaleRows(download(t, d, ub, ty, n, m), signs))
			compare(t, what+" V", gv, v, tolSolve[ty])
			compare(t, what+" U", gu, u, tolSolve[ty])
			for _, x := range []*cuda.Buffer{ab, sb, ub, vb, info} {
				d.Release(x)
			}
		}
	}
}
