package graph_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func TestLinalgValues(t *testing.T) {
	r2 := math.Sqrt2
	cases := []struct {
		name   string
		inputs [][]float64
		shapes [][]int
		f      func(xs []*graph.Node) *graph.Node
		want   []float64
		shape  []int
	}{
		// [[4,2],[2,3]] = L Lᵀ with L = [[2,0],[1,√2]]: 2² = 4, 2·1 = 2, 1 + 2 = 3.
		{"cholesky", [][]float64{{4, 2, 2, 3}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.Cholesky(xs[0]) },
			[]float64{2, 0, 1, r2}, []int{2, 2}},
		// Two stacked matrices: diag(9, 16) has factor diag(3, 4).
		{"cholesky batch", [][]float64{{4, 2, 2, 3, 9, 0, 0, 16}}, [][]int{{2, 2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.Cholesky(xs[0]) },
			[]float64{2, 0, 1, r2, 3, 0, 0, 4}, []int{2, 2, 2}},
		// [[2,1],[1,3]]⁻¹ = [[3,-1],[-1,2]]/5, times (3, 5) is (4, 7)/5.
		{"solve vector", [][]float64{{2, 1, 1, 3}, {3, 5}}, [][]int{{2, 2}, {2}},
			func(xs []*graph.Node) *graph.Node { return graph.Solve(xs[0], xs[1]) },
			[]float64{0.8, 1.4}, []int{2}},
		// Second column: (1, 0) gives the first column of the inverse.
		{"solve matrix", [][]float64{{2, 1, 1, 3}, {3, 1, 5, 0}}, [][]int{{2, 2}, {2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.Solve(xs[0], xs[1]) },
			[]float64{0.8, 0.6, 1.4, -0.2}, []int{2, 2}},
		// [[1,2],[3,4]]⁻¹ = [[4,-2],[-3,1]]/(−2).
		{"inverse", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.Inverse(xs[0]) },
			[]float64{-2, 1, 1.5, -0.5}, []int{2, 2}},
		// det [[1,2],[3,4]] = 4 − 6 = −2.
		{"det", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.Det(xs[0]) },
			[]float64{-2}, []int{}},
		{"log_abs_det", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.LogAbsDet(xs[0]) },
			[]float64{math.Ln2}, []int{}},
		// Batched: det diag(2, 3) = 6, det [[0,1],[1,0]] = −1.
		{"log_abs_det batch", [][]float64{{2, 0, 0, 3, 0, 1, 1, 0}}, [][]int{{2, 2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.LogAbsDet(xs[0]) },
			[]float64{math.Log(6), 0}, []int{2}},
		// L = [[2,0],[1,1]]: 2x₁ = 2, x₁ + x₂ = 3.
		{"trisolve lower", [][]float64{{2, 99, 1, 1}, {2, 3}}, [][]int{{2, 2}, {2}},
			func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], true, false) },
			[]float64{1, 2}, []int{2}},
		// Lᵀ = [[2,1],[0,1]]: x₂ = 3, 2x₁ + 3 = 2.
		{"trisolve lower trans", [][]float64{{2, 99, 1, 1}, {2, 3}}, [][]int{{2, 2}, {2}},
			func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], true, true) },
			[]float64{-0.5, 3}, []int{2}},
		// U = [[2,1],[0,1]] (the 99 below the diagonal is ignored).
		{"trisolve upper", [][]float64{{2, 1, 99, 1}, {2, 3}}, [][]int{{2, 2}, {2, 1}},
			func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], false, false) },
			[]float64{-0.5, 3}, []int{2, 1}},
		// A = [[4,2],[2,3]] = L Lᵀ, A⁻¹ = [[3,-2],[-2,4]]/8, A⁻¹(1,1) = (1,2)/8.
		{"cholesky_solve", [][]float64{{2, 0, 1, r2}, {1, 1}}, [][]int{{2, 2}, {2}},
			func(xs []*graph.Node) *graph.Node { return graph.CholeskySolve(xs[0], xs[1]) },
			[]float64{0.125, 0.25}, []int{2}},
		// log det [[4,2],[2,3]] = log 8 = 2(log 2 + log √2).
		{"logdet_chol", [][]float64{{2, 0, 1, r2}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.LogDetChol(xs[0]) },
			[]float64{math.Log(8)}, []int{}},
		{"tril", [][]float64{{1, 2, 3, 4, 5, 6}}, [][]int{{2, 3}},
			func(xs []*graph.Node) *graph.Node { return graph.Tril(xs[0]) },
			[]float64{1, 0, 0, 4, 5, 0}, []int{2, 3}},
		{"triu", [][]float64{{1, 2, 3, 4, 5, 6}}, [][]int{{2, 3}},
			func(xs []*graph.Node) *graph.Node { return graph.Triu(xs[0]) },
			[]float64{1, 2, 3, 0, 5, 6}, []int{2, 3}},
		{"phi_lower", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { return graph.PhiLower(xs[0]) },
			[]float64{0.5, 0, 3, 2}, []int{2, 2}},
		// [[2,1],[1,2]] has eigenvalues 1 and 3.
		{"eigh values", [][]float64{{2, 1, 1, 2}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { w, _ := graph.Eigh(xs[0]); return w },
			[]float64{1, 3}, []int{2}},
		// Eigenvectors (1,−1)/√2 and (1,1)/√2 up to sign: squares are ½.
		{"eigh vectors squared", [][]float64{{2, 1, 1, 2}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node { _, v := graph.Eigh(xs[0]); return graph.Mul(v, v) },
			[]float64{0.5, 0.5, 0.5, 0.5}, []int{2, 2}},
		// v₁₀·v₁₁ of (1,1)/√2 is ½ whatever the sign; of (1,−1)/√2, −½.
		{"eigh vectors product", [][]float64{{2, 1, 1, 2}}, [][]int{{2, 2}},
			func(xs []*graph.Node) *graph.Node {
				_, v := graph.Eigh(xs[0])
				return graph.Sum(graph.Mul(graph.Slice(v, 0, 0, 1, 1), graph.Slice(v, 0, 1, 2, 1)), []int{0}, false)
			},
			[]float64{-0.5, 0.5}, []int{2}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				var xs []*graph.Node
				for i, s := range c.shapes {
					xs = append(xs, g.Var(tensor.FromValues(dt, c.inputs[i], s...)))
				}
				y := c.f(xs)
				assert.Equal(t, dt, y.DType())
				assert.Equal(t, c.shape, y.Shape())
				numtest.Close(t, c.want, y.Value(), numtest.Tol(dt))
			})
		}
	}
}

// spd5 returns a fixed 5×5 symmetric positive definite matrix
// (M Mᵀ + 5 I for a fixed M) and a fixed symmetric direction E.
func spd5() (a, e []float64) {
	m := []float64{
		0.3, -1.2, 0.5, 0.9, -0.4,
		1.1, 0.2, -0.7, 0.4, 0.8,
		-0.6, 0.5, 1.3, -0.2, 0.1,
		0.7, -0.9, 0.3, 1.0, -1.1,
		0.2, 0.6, -0.8, -0.5, 1.4,
	}
	a = make([]float64, 25)
	e = make([]float64, 25)
	for i := range 5 {
		for j := range 5 {
			for k := range 5 {
				a[i*5+j] += m[i*5+k] * m[j*5+k]
			}
			if i == j {
				a[i*5+j] += 5
			}
			e[i*5+j] = math.Sin(float64(i+1)*0.7+float64(j+1)*0.3) + math.Sin(float64(j+1)*0.7+float64(i+1)*0.3)
		}
	}
	return a, e
}

// TestCholeskyJVPFiniteDifferences compares the Cholesky JVP with the
// central difference (chol(A + hE) − chol(A − hE))/2h worked out in float64.
func TestCholeskyJVPFiniteDifferences(t *testing.T) {
	a, e := spd5()
	const h = 1e-5
	plus, minus := make([]float64, 25), make([]float64, 25)
	for i := range a {
		plus[i], minus[i] = a[i]+h*e[i], a[i]-h*e[i]
	}
	lp, err := tensor.Cholesky(tensor.FromValues(tensor.Float64, plus, 5, 5))
	require.NoError(t, err)
	lm, err := tensor.Cholesky(tensor.FromValues(tensor.Float64, minus, 5, 5))
	require.NoError(t, err)
	want := make([]float64, 25)
	pv, mv := lp.Values(), lm.Values()
	for i := range want {
		want[i] = (pv[i] - mv[i]) / (2 * h)
	}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, a, 5, 5))
			l := graph.Cholesky(x)
			dl := autodiff.JVP([]*graph.Node{l}, []*graph.Node{x}, []*graph.Node{g.Const(tensor.FromValues(dt, e, 5, 5))})[0]
			tol := 1e-8
			if dt == tensor.Float32 {
				tol = 1e-4
			}
			numtest.Close(t, want, dl.Value(), tol)
			// The tangent of a lower factor is lower triangular.
			for i := range 5 {
				for j := i + 1; j < 5; j++ {
					assert.Zero(t, dl.Value().At(i, j))
				}
			}
		})
	}
}

// TestLinalgGradients checks gradients against closed forms: ∇ log|det A| =
// A⁻ᵀ, ∇ det A = det(A) A⁻ᵀ, ∂wₖ/∂A = vₖvₖᵀ for a distinct eigenvalue.
func TestLinalgGradients(t *testing.T) {
	cases := []struct {
		name string
		a    []float64
		f    func(a *graph.Node) *graph.Node
		want []float64
	}{
		// [[1,2],[3,4]]⁻ᵀ = [[-2,1.5],[1,-0.5]].
		{"log_abs_det", []float64{1, 2, 3, 4}, graph.LogAbsDet, []float64{-2, 1.5, 1, -0.5}},
		// det = −2: −2·A⁻ᵀ = [[4,-3],[-2,1]], the cofactor matrix.
		{"det", []float64{1, 2, 3, 4}, graph.Det, []float64{4, -3, -2, 1}},
		// w = 3 has v = (1,1)/√2.
		{"eigh top", []float64{2, 1, 1, 2}, func(a *graph.Node) *graph.Node {
			w, _ := graph.Eigh(a)
			return graph.Sum(graph.Slice(w, 0, 1, 2, 1), nil, false)
		}, []float64{0.5, 0.5, 0.5, 0.5}},
		// w = 1 has v = (1,−1)/√2.
		{"eigh bottom", []float64{2, 1, 1, 2}, func(a *graph.Node) *graph.Node {
			w, _ := graph.Eigh(a)
			return graph.Sum(graph.Slice(w, 0, 0, 1, 1), nil, false)
		}, []float64{0.5, -0.5, -0.5, 0.5}},
		// Σw = tr A, so the gradient is the identity.
		{"eigh trace", []float64{3, -1, -1, 5}, func(a *graph.Node) *graph.Node {
			w, _ := graph.Eigh(a)
			return graph.Sum(w, nil, false)
		}, []float64{1, 0, 0, 1}},
		// x = L⁻¹(2, 3) for L = [[2,0],[1,1]] is (1, 2); the cotangent of L
		// for Σx is −tril(L⁻ᵀ1 · xᵀ) = −tril((0, 1)·(1, 2)ᵀ), the minus
		// sign carried by the one-column B̄.
		{"trisolve one column", []float64{2, 99, 1, 1}, func(a *graph.Node) *graph.Node {
			b := a.Graph().Const(tensor.FromValues(a.DType(), []float64{2, 3}, 2))
			return graph.Sum(graph.TriSolve(a, b, true, false), nil, false)
		}, []float64{0, 0, -1, -2}},
		// x = L⁻ᵀ(2, 3) = (−0.5, 3), B̄ = L⁻¹1 = (0.5, 0.5): −tril(x·B̄ᵀ).
		{"trisolve one column trans", []float64{2, 99, 1, 1}, func(a *graph.Node) *graph.Node {
			b := a.Graph().Const(tensor.FromValues(a.DType(), []float64{2, 3}, 2))
			return graph.Sum(graph.TriSolve(a, b, true, true), nil, false)
		}, []float64{0.25, 0, -1.5, -1.5}},
		// log det [[4,2],[2,3]] through the factor: ∇ = A⁻¹ = [[3,-2],[-2,4]]/8.
		{"logdet via cholesky", []float64{4, 2, 2, 3}, func(a *graph.Node) *graph.Node {
			return graph.LogDetChol(graph.Cholesky(a))
		}, []float64{0.375, -0.25, -0.25, 0.5}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				a := g.Var(tensor.FromValues(dt, c.a, 2, 2))
				grad := autodiff.Grad(c.f(a), a)[0]
				numtest.Close(t, c.want, grad.Value(), 10*numtest.Tol(dt))
			})
		}
	}
}

// TestTriSolveGradCheck checks TriSolve's rules with fewer right-hand
// sides than the order (the minus sign of Ā goes on B̄) and more (on Ā).
func TestTriSolveGradCheck(t *testing.T) {
	rng := tensor.NewRNG(9)
	l := tensor.Add(tensor.TriMask(rng.Normal(tensor.Float64, 0, 0.3, 3, 3), 1, 1, 0), tensor.Eye(tensor.Float64, 3))
	for _, k := range []int{1, 5} {
		for _, trans := range []bool{false, true} {
			_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], true, trans) },
				[]*tensor.Tensor{l, rng.Normal(tensor.Float64, 0, 1, 3, k)},
				autodiff.GradCheckOptions{Name: fmt.Sprintf("trisolve k=%d trans=%v", k, trans), Order: 2})
			require.NoError(t, err)
		}
	}
}

// TestLogDetHessian checks a second derivative against its closed form:
// the Hessian of log|det A| applied to E is −(A⁻¹ E A⁻¹)ᵀ. For A =
// [[1,2],[3,4]] (A⁻¹ = [[-2,1],[1.5,-0.5]]) and E = e₀e₀ᵀ, A⁻¹ E A⁻¹ is the
// outer product of A⁻¹'s first column and first row, [[4,-2],[-3,1.5]].
func TestLogDetHessian(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4}, 2, 2))
			e := g.Const(tensor.FromValues(dt, []float64{1, 0, 0, 0}, 2, 2))
			hv := autodiff.HVP(graph.LogAbsDet(a), []*graph.Node{a}, []*graph.Node{e})[0]
			numtest.Close(t, []float64{-4, 3, 2, -1.5}, hv.Value(), 10*numtest.Tol(dt))
		})
	}
}

func TestLinalgMisuse(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		rect := g.Var(tensor.New(dt, 2, 3))
		sq := g.Var(tensor.Eye(dt, 3))
		other := tensor.Float64
		if dt == tensor.Float64 {
			other = tensor.Float32
		}
		mixed := g.Var(tensor.New(other, 3, 2))
		cases := []struct {
			name string
			f    func()
			want []string
		}{
			{"cholesky rect", func() { graph.Cholesky(rect) }, []string{"cholesky", "(2, 3)", dt.String()}},
			{"eigh rect", func() { graph.Eigh(rect) }, []string{"eigh", "(2, 3)"}},
			{"det rect", func() { graph.Det(rect) }, []string{"det", "(2, 3)"}},
			{"solve rhs rows", func() { graph.Solve(sq, rect) }, []string{"solve", "(3, 3)", "(2, 3)"}},
			{"trisolve dtypes", func() { graph.TriSolve(sq, mixed, true, false) }, []string{"trisolve", "mixed dtypes", other.String()}},
			{"tril vector", func() { graph.Tril(g.Var(tensor.New(dt, 3))) }, []string{"Tril", "(3,)"}},
		}
		for _, c := range cases {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				var err error
				func() {
					defer tensor.Recover(&err)
					c.f()
				}()
				var te *tensor.Error
				require.ErrorAs(t, err, &te)
				for _, w := range c.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
	}
}

// TestCholeskyNotPositiveDefinite checks that a data failure surfaces as a
// *graph.DataError that tensor.Recover converts and errors.As unwraps.
func TestCholeskyNotPositiveDefinite(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			// The second pivot is 1 − 2²/1 = −3.
			a := g.Var(tensor.FromValues(dt, []float64{1, 2, 2, 1}, 2, 2))
			var err error
			func() {
				defer tensor.Recover(&err)
				graph.Cholesky(a)
				t.Error("Cholesky of an indefinite matrix did not panic")
			}()
			require.Error(t, err)
			var npd *tensor.NotPositiveDefiniteError
			require.ErrorAs(t, err, &npd)
			assert.Equal(t, 1, npd.Pivot)
			assert.True(t, errors.Is(err, tensor.ErrNotPositiveDefinite))
			var te *tensor.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "cholesky", te.Op)
			var de *graph.DataError
			require.ErrorAs(t, err, &de)
			assert.Contains(t, err.Error(), "linalg_test.go")
		})
	}
}

func TestSolveSingular(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Var(tensor.FromValues(dt, []float64{1, 2, 2, 4}, 2, 2))
			b := g.Var(tensor.FromValues(dt, []float64{1, 1}, 2))
			for _, f := range []func(){func() { graph.Solve(a, b) }, func() { graph.Inverse(a) }} {
				var err error
				func() {
					defer tensor.Recover(&err)
					f()
				}()
				assert.ErrorIs(t, err, tensor.ErrSingular)
			}
			// The determinant itself is defined (and 0) at a singular matrix.
			assert.InDelta(t, 0, graph.Det(a).Item(), 1e-6)
		})
	}
}
