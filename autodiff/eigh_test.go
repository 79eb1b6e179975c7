package autodiff_test

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradients of functions of the eigenvalues are well defined even where
// eigenvalues repeat, and Eigh's VJP must not turn the 1/(w_j − w_i) of the
// repeated pair into NaN. Expected values come from trace identities:
// Σw = tr A has gradient I, Σw² = tr A² has gradient 2A, and the largest
// eigenvalue, when simple with eigenvector e, has gradient e·eᵀ.
func TestEighGradRepeatedEigenvalues(t *testing.T) {
	// I + 3·r·rᵀ with the unit vector r = (0.6, 0.8, 0) has eigenvalue 4
	// (eigenvector r) and eigenvalue 1 twice, on an eigenspace that is not
	// axis-aligned.
	r := []float64{0.6, 0.8, 0}
	rot := make([]float64, 9)
	rrT := make([]float64, 9)
	for i := range 3 {
		for j := range 3 {
			rrT[3*i+j] = r[i] * r[j]
			rot[3*i+j] = 3 * r[i] * r[j]
			if i == j {
				rot[3*i+j]++
			}
		}
	}
	eye3 := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	twice := func(a []float64) []float64 {
		out := make([]float64, len(a))
		for i, v := range a {
			out[i] = 2 * v
		}
		return out
	}
	cases := []struct {
		name string
		a    []float64
		f    func(w *graph.Node) *graph.Node
		want []float64
	}{
		{"sum at I", eye3, func(w *graph.Node) *graph.Node { return graph.Sum(w, nil, false) }, eye3},
		{"sum of squares at I", eye3, func(w *graph.Node) *graph.Node { return graph.Sum(graph.Square(w), nil, false) }, twice(eye3)},
		{"max at diag(2, 2, 5)", []float64{2, 0, 0, 0, 2, 0, 0, 0, 5},
			func(w *graph.Node) *graph.Node { return graph.Max(w, nil, false) }, []float64{0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"sum at I + 3rrᵀ", rot, func(w *graph.Node) *graph.Node { return graph.Sum(w, nil, false) }, eye3},
		{"sum of squares at I + 3rrᵀ", rot, func(w *graph.Node) *graph.Node { return graph.Sum(graph.Square(w), nil, false) }, twice(rot)},
		{"max at I + 3rrᵀ", rot, func(w *graph.Node) *graph.Node { return graph.Max(w, nil, false) }, rrT},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				a := g.Var(tensor.FromValues(dt, c.a, 3, 3))
				w, _ := graph.Eigh(a)
				got := autodiff.Grad(c.f(w), a)[0].Value().Values()
				for i := range c.want {
					if math.IsNaN(got[i]) || math.Abs(got[i]-c.want[i]) > tol {
						t.Errorf("grad[%d] = %v, want %v (all: %v)", i, got[i], c.want[i], got)
					}
				}
			})
		}
	}
}

// A batch mixing a degenerate and a distinct spectrum: the tie mask is per
// matrix, so the second matrix's gradient is unaffected by the first's.
func TestEighGradBatchedTies(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		g := graph.New()
		a := g.Var(tensor.FromValues(dt, []float64{3, 0, 0, 3, 1, 0, 0, 2}, 2, 2, 2))
		w, _ := graph.Eigh(a)
		// Largest eigenvalue of each: at 3I (tied) Max splits evenly
		// between the tied entries, so its gradient is ½(e₀e₀ᵀ + e₁e₁ᵀ)
		// = ½I; at diag(1, 2) it is e₁e₁ᵀ.
		got := autodiff.Grad(graph.Sum(graph.Max(w, []int{-1}, false), nil, false), a)[0].Value().Values()
		want := []float64{0.5, 0, 0, 0.5, 0, 0, 0, 1}
		for i := range want {
			if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-5 {
				t.Errorf("%v grad[%d] = %v, want %v (all: %v)", dt, i, got[i], want[i], got)
			}
		}
	}
}

// A = 1·q1q1ᵀ + 2·q2q2ᵀ + 4·q3q3ᵀ with q1 = (0.6, 0.8, 0),
// q2 = (−0.8, 0.6, 0), q3 = (0, 0, 1).
var (
	reviewEighA = []float64{
		1.64, -0.48, 0,
		-0.48, 1.36, 0,
		0, 0, 4,
	}
	reviewEighQ = [3][3]float64{{0.6, 0.8, 0}, {-0.8, 0.6, 0}, {0, 0, 1}}
)

func outer3(q [3]float64) []float64 {
	out := make([]float64, 9)
	for i := range 3 {
		for j := range 3 {
			out[i*3+j] = q[i] * q[j]
		}
	}
	return out
}

func TestEigenvalueGradientIsOuterProduct(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-10
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Var(tensor.FromValues(dt, reviewEighA, 3, 3))
			w, _ := graph.Eigh(a)
			assertClose(t, []float64{1, 2, 4}, w.Value(), tol, "eigenvalues")
			for k := range 3 {
				lk := graph.Sum(graph.Slice(w, -1, k, k+1, 1), nil, false)
				grad := autodiff.Grad(lk, a)[0]
				assertClose(t, outer3(reviewEighQ[k]), grad.Value(), tol, "∂λ/∂A = vvᵀ")
			}
			// Forward mode along a symmetric direction E: λ̇_k = q_kᵀ·E·q_k.
			e := g.Const(tensor.FromValues(dt, []float64{1, 2, 0, 2, 0, 1, 0, 1, 3}, 3, 3))
			wdot := autodiff.JVP([]*graph.Node{w}, []*graph.Node{a}, []*graph.Node{e})[0]
			assertClose(t, []float64{2.28, -1.28, 3}, wdot.Value(), tol, "λ̇ = vᵀ·E·v")
		})
	}
}
