package autodiff_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// These tests compare derivatives with values worked out by hand or from
// textbook identities, in both dtypes.

var dtypes = []struct {
	dt  tensor.DType
	tol float64 // relative tolerance for hand-computed values
}{
	{tensor.Float32, 1e-4},
	{tensor.Float64, 1e-10},
}

func vals(dt tensor.DType, v []float64, shape ...int) *tensor.Tensor {
	return tensor.FromValues(dt, v, shape...)
}

// assertClose compares element by element with a relative tolerance
// floored at an absolute one near zero.
func assertClose(t *testing.T, want []float64, got *tensor.Tensor, tol float64, msg string) {
	t.Helper()
	g := got.Values()
	require.Len(t, g, len(want), msg)
	for i := range want {
		assert.InDelta(t, want[i], g[i], tol*math.Max(1, math.Abs(want[i])), "%s: element %d", msg, i)
	}
}

func TestCubeFirstAndSecondDerivative(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.Scalar(d.dt, 2))
			y := graph.Mul(graph.Mul(x, x), x) // x³
			val, grads := autodiff.ValueAndGrad(y, x)
			assert.InDelta(t, 8, val, 8*d.tol)
			assertClose(t, []float64{12}, grads[0].Value(), d.tol, "3x² at 2")
			d2 := autodiff.Grad(grads[0], x)[0]
			assertClose(t, []float64{12}, d2.Value(), d.tol, "6x at 2 by grad of grad")
			d3 := autodiff.Grad(d2, x)[0]
			assertClose(t, []float64{6}, d3.Value(), d.tol, "third derivative")
			assertClose(t, []float64{12}, autodiff.Hessian(y, x), d.tol, "6x at 2 by Hessian")
		})
	}
}

func TestGradLogAbsDetIsInverseTranspose(t *testing.T) {
	// A = [[4, 1], [2, 3]]: det 10, A⁻¹ = [[3, −1], [−2, 4]]/10, so
	// ∇ log|det A| = A⁻ᵀ = [[3, −2], [−1, 4]]/10.
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Var(vals(d.dt, []float64{4, 1, 2, 3}, 2, 2))
			y := graph.LogAbsDet(a)
			assert.InDelta(t, math.Log(10), y.Item(), d.tol)
			assertClose(t, []float64{0.3, -0.2, -0.1, 0.4}, autodiff.Grad(y, a)[0].Value(), d.tol, "A⁻ᵀ")
			// ∂²/∂A_ij∂A_kl log|det A| = −(A⁻¹)_jk (A⁻¹)_li.
			inv := [2][2]float64{{0.3, -0.1}, {-0.2, 0.4}}
			var want []float64
			for i := 0; i < 2; i++ {
				for j := 0; j < 2; j++ {
					for k := 0; k < 2; k++ {
						for l := 0; l < 2; l++ {
							want = append(want, -inv[j][k]*inv[l][i])
						}
					}
				}
			}
			h := autodiff.Hessian(y, a)
			assert.Equal(t, []int{2, 2, 2, 2}, h.Shape())
			assertClose(t, want, h, d.tol, "Hessian of log|det A|")
		})
	}
}

// logLikelihood is Σ y log σ(z) + (1−y) log(1−σ(z)) with z = Xw, written
// stably: log σ(z) = −softplus(−z), log(1−σ(z)) = −softplus(z).
func logLikelihood(x, w, labels *graph.Node) *graph.Node {
	z := graph.Reshape(graph.MatMul(x, graph.Reshape(w, -1, 1)), -1)
	one := graph.Sub(graph.AddScalar(graph.MulScalar(labels, 0), 1), labels)
	pos := graph.Mul(labels, graph.Softplus(graph.Neg(z)))
	neg := graph.Mul(one, graph.Softplus(z))
	return graph.Neg(graph.Sum(graph.Add(pos, neg), nil, false))
}

func TestLogisticHessian(t *testing.T) {
	xv := []float64{1, 0.5, 1, -1, 1, 2} // 3 rows (bias, feature)
	wv := []float64{0.2, -0.4}
	yv := []float64{1, 0, 1}
	// H = −Xᵀ diag(p(1−p)) X with p = σ(Xw), worked out row by row.
	want := make([]float64, 4)
	for i := 0; i < 3; i++ {
		z := xv[2*i]*wv[0] + xv[2*i+1]*wv[1]
		p := 1 / (1 + math.Exp(-z))
		s := p * (1 - p)
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				want[2*a+b] -= s * xv[2*i+a] * xv[2*i+b]
			}
		}
	}
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Const(vals(d.dt, xv, 3, 2))
			w := g.Var(vals(d.dt, wv, 2))
			y := logLikelihood(x, w, g.Const(vals(d.dt, yv, 3)))
			h := autodiff.Hessian(y, w)
			assert.Equal(t, []int{2, 2}, h.Shape())
			assertClose(t, want, h, d.tol, "−Xᵀ diag(p(1−p)) X")
		})
	}
}

func TestLeastSquaresGradient(t *testing.T) {
	av := []float64{1, 2, 0, -1, 3, 1} // 3×2
	xv := []float64{0.5, -2}
	bv := []float64{1, 0, 2}
	// r = Ax − b, gradient Aᵀr.
	r := make([]float64, 3)
	for i := range r {
		r[i] = av[2*i]*xv[0] + av[2*i+1]*xv[1] - bv[i]
	}
	want := []float64{
		av[0]*r[0] + av[2]*r[1] + av[4]*r[2],
		av[1]*r[0] + av[3]*r[1] + av[5]*r[2],
	}
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Const(vals(d.dt, av, 3, 2))
			x := g.Var(vals(d.dt, xv, 2, 1))
			b := g.Const(vals(d.dt, bv, 3, 1))
			res := graph.Sub(graph.MatMul(a, x), b)
			y := graph.MulScalar(graph.Sum(graph.Mul(res, res), nil, false), 0.5)
			assertClose(t, want, autodiff.Grad(y, x)[0].Value(), d.tol, "Aᵀ(Ax − b)")
		})
	}
}

func TestLongChainDoesNotOverflowStack(t *testing.T) {
	const n = 100000
	const c = 1 + 1.0/(1<<20) // exact in float32 and float64
	want := math.Pow(c, n)
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.Scalar(d.dt, 1))
			y := x
			for i := 0; i < n; i++ {
				y = graph.MulScalar(y, c)
			}
			tol := 1e-9
			if d.dt == tensor.Float32 {
				tol = 1e-3 // n roundings of a float32 product
			}
			assertClose(t, []float64{want}, autodiff.Grad(y, x)[0].Value(), tol, "c^n")
			assertClose(t, []float64{want}, autodiff.JVP([]*graph.Node{y}, []*graph.Node{x},
				[]*graph.Node{g.Const(tensor.Scalar(d.dt, 1))})[0].Value(), tol, "c^n forward")
		})
	}
}

func TestDiamondAccumulates(t *testing.T) {
	// a = x², y = Σ a² + a + eˣ: dy/dx = (2a + 1)·2x + eˣ, with x reached
	// along three paths and a along two.
	xv := []float64{0.5, -1, 2}
	want := make([]float64, len(xv))
	for i, x := range xv {
		a := x * x
		want[i] = (2*a+1)*2*x + math.Exp(x)
	}
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(vals(d.dt, xv, 3))
			a := graph.Mul(x, x)
			y := graph.Sum(graph.Add(graph.Add(graph.Mul(a, a), a), graph.Exp(x)), nil, false)
			assertClose(t, want, autodiff.Grad(y, x)[0].Value(), d.tol, "diamond")
		})
	}
}

func TestUnusedInputGetsZeros(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(vals(d.dt, []float64{1, 2}, 2))
			unused := g.Var(tensor.Ones(d.dt, 2, 3))
			y := graph.Sum(graph.Exp(x), nil, false)
			later := g.Var(tensor.Ones(d.dt, 4)) // created after y
			grads := autodiff.Grad(y, x, unused, later)
			assertClose(t, []float64{math.E, math.Exp(2)}, grads[0].Value(), d.tol, "used")
			assert.Equal(t, []int{2, 3}, grads[1].Shape())
			assert.Equal(t, d.dt, grads[1].DType())
			assertClose(t, make([]float64, 6), grads[1].Value(), 0, "unused")
			assertClose(t, make([]float64, 4), grads[2].Value(), 0, "created after y")
			jv := autodiff.JVP([]*graph.Node{y}, []*graph.Node{unused}, []*graph.Node{g.Const(tensor.Ones(d.dt, 2, 3))})
			assertClose(t, []float64{0}, jv[0].Value(), 0, "JVP through no path")
		})
	}
}

func TestGradWithRespectToIntermediate(t *testing.T) {
	// y = (2x)²: dy/d(2x) = 2·(2x), and dy/dx = 8x includes the path
	// through the intermediate.
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.Scalar(d.dt, 3))
			m := graph.MulScalar(x, 2)
			y := graph.Mul(m, m)
			grads := autodiff.Grad(y, m, x)
			assertClose(t, []float64{12}, grads[0].Value(), d.tol, "dy/dm")
			assertClose(t, []float64{24}, grads[1].Value(), d.tol, "dy/dx")
			// Forward mode agrees: with y = m²·x, m = 2x, at x = 3:
			// dy/dm = 2mx = 36 and dy/dx = m² + 2mx·2 = 108, so
			// perturbing x by 1 and m by 1 moves y by 144.
			y2 := graph.Mul(y, x)
			one := g.Const(tensor.Scalar(d.dt, 1))
			jv := autodiff.JVP([]*graph.Node{y2}, []*graph.Node{x, m}, []*graph.Node{one, one})
			assertClose(t, []float64{144}, jv[0].Value(), d.tol, "JVP with an intermediate x")
			grads = autodiff.Grad(y2, x, m)
			assertClose(t, []float64{108}, grads[0].Value(), d.tol, "dy/dx with an intermediate x")
			assertClose(t, []float64{36}, grads[1].Value(), d.tol, "dy/dm with an intermediate x")
			c := g.Const(tensor.Scalar(d.dt, 5))
			z := graph.Mul(c, x)
			assertClose(t, []float64{0}, autodiff.Grad(z, c)[0].Value(), 0, "a Const gets no gradient")
			jv = autodiff.JVP([]*graph.Node{z}, []*graph.Node{c}, []*graph.Node{one})
			assertClose(t, []float64{0}, jv[0].Value(), 0, "nor a tangent")
		})
	}
}

// panicError runs f and returns the *tensor.Error it panics with.
func panicError(t *testing.T, f func()) *tensor.Error {
	t.Helper()
	var err error
	func() {
		defer tensor.Recover(&err)
		f()
	}()
	require.Error(t, err)
	var te *tensor.Error
	require.ErrorAs(t, err, &te)
	return te
}

func TestMisuseIsAClearError(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g1, g2 := graph.New(), graph.New()
			x1 := g1.Var(tensor.Ones(d.dt, 2))
			x2 := g2.Var(tensor.Ones(d.dt, 2))
			y := graph.Sum(graph.Exp(x1), nil, false)

			e := panicError(t, func() { autodiff.Grad(y, x2) })
			assert.Equal(t, "Grad", e.Op)
			assert.Contains(t, e.Msg, "another graph")
			assert.Contains(t, e.Caller, "closedform_test.go")

			e = panicError(t, func() { autodiff.Grad(y, nil) })
			assert.Contains(t, e.Msg, "nil")

			e = panicError(t, func() { autodiff.Grad(graph.Exp(x1), x1) })
			assert.Contains(t, e.Msg, "[2]")
			assert.Contains(t, e.Msg, "size 1")

			e = panicError(t, func() { autodiff.VJP(y, g1.Const(tensor.Ones(d.dt, 3)), x1) })
			assert.Equal(t, "VJP", e.Op)
			assert.Contains(t, e.Msg, "[3]")

			e = panicError(t, func() {
				autodiff.JVP([]*graph.Node{y}, []*graph.Node{x1}, []*graph.Node{g1.Const(tensor.Ones(d.dt, 5))})
			})
			assert.Equal(t, "JVP", e.Op)
			assert.Contains(t, e.Msg, "[5]")
		})
	}
}

// vectorFunction is f(x) = eˣ·Σx, whose Jacobian is
// J_ij = eˣⁱ(δ_ij Σx + 1).
func vectorFunction(x *graph.Node) *graph.Node {
	return graph.Mul(graph.Exp(x), graph.Sum(x, nil, false))
}

func TestJacobianReverseEqualsForward(t *testing.T) {
	xv := []float64{0.1, -0.3, 0.7}
	s := xv[0] + xv[1] + xv[2]
	want := make([]float64, 9)
	for i := range xv {
		for j := range xv {
			want[3*i+j] = math.Exp(xv[i])
			if i == j {
				want[3*i+j] *= s + 1
			}
		}
	}
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(vals(d.dt, xv, 3))
			y := vectorFunction(x)
			rev := autodiff.Jacobian(y, x)
			fwd := autodiff.JacobianFwd(y, x)
			assert.Equal(t, []int{3, 3}, rev.Shape())
			assert.Equal(t, []int{3, 3}, fwd.Shape())
			assertClose(t, want, rev, d.tol, "reverse")
			assertClose(t, want, fwd, d.tol, "forward")
		})
	}
}

func TestHVPEqualsHessianTimesVector(t *testing.T) {
	// y = S·Q with S = Σx, Q = Σx²: H_ij = 2x_i + 2x_j + 2S δ_ij.
	xv := []float64{1, -2, 0.5}
	vv := []float64{0.3, 1, -1}
	s := xv[0] + xv[1] + xv[2]
	h := make([]float64, 9)
	hv := make([]float64, 3)
	for i := range xv {
		for j := range xv {
			h[3*i+j] = 2*xv[i] + 2*xv[j]
			if i == j {
				h[3*i+j] += 2 * s
			}
			hv[i] += h[3*i+j] * vv[j]
		}
	}
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(vals(d.dt, xv, 3))
			y := graph.Mul(graph.Sum(x, nil, false), graph.Sum(graph.Mul(x, x), nil, false))
			assertClose(t, h, autodiff.Hessian(y, x), d.tol, "Hessian")
			got := autodiff.HVP(y, []*graph.Node{x}, []*graph.Node{g.Const(vals(d.dt, vv, 3))})
			assertClose(t, hv, got[0].Value(), d.tol, "HVP")
		})
	}
}

func TestStopGradientBlocksPath(t *testing.T) {
	// y = x·stop(x): dy/dx = stop(x) = x, not 2x.
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.Scalar(d.dt, 3))
			y := graph.Mul(x, graph.StopGradient(x))
			assertClose(t, []float64{3}, autodiff.Grad(y, x)[0].Value(), d.tol, "stop gradient")
		})
	}
}

func TestResetRecyclesAndRebuilds(t *testing.T) {
	// The same step built after Reset gives the same gradient (2x + 1).
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			xt := vals(d.dt, []float64{1, 2, 3}, 3)
			for step := 0; step < 3; step++ {
				g.Reset()
				x := g.Var(xt)
				y := graph.Sum(graph.Add(graph.Mul(x, x), x), nil, false)
				assert.Equal(t, 0, x.ID())
				assertClose(t, []float64{3, 5, 7}, autodiff.Grad(y, x)[0].Value(), d.tol, "after Reset")
			}
		})
	}
}

// countOp is the identity with counters, to see which rules a sweep calls.
type countOp struct{ vjps, jvps int }

func (o *countOp) Name() string { return "count" }

func (o *countOp) Arity() int { return 1 }

func (o *countOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor { return in[0] }

func (o *countOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	o.vjps++
	return []*graph.Node{ct}
}

func (o *countOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	o.jvps++
	return t[0]
}

func TestSweepsVisitOnlyNodesBetweenXsAndY(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(vals(d.dt, []float64{1, 2}, 2))
			c := g.Const(vals(d.dt, []float64{3, 4}, 2))
			onConst, onX, unused, after := &countOp{}, &countOp{}, &countOp{}, &countOp{}
			a := graph.Apply(onConst, c) // y depends on it, but it does not depend on x
			b := graph.Apply(onX, x)
			graph.Apply(unused, x) // depends on x, but y does not depend on it
			y := graph.Sum(graph.Mul(a, b), nil, false)
			graph.Apply(after, y) // made after y
			assertClose(t, []float64{3, 4}, autodiff.Grad(y, x)[0].Value(), d.tol, "gradient")
			one := g.Const(tensor.Ones(d.dt, 2))
			assertClose(t, []float64{7}, autodiff.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{one})[0].Value(), d.tol, "JVP")
			assert.Equal(t, 1, onX.vjps)
			assert.Equal(t, 1, onX.jvps)
			assert.Zero(t, onConst.vjps+onConst.jvps, "no path from x")
			assert.Zero(t, unused.vjps+unused.jvps, "no path to y")
			assert.Zero(t, after.vjps+after.jvps, "after y")
		})
	}
}
