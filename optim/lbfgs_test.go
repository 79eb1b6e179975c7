package optim

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// rosenbrock is the chained Rosenbrock function
// Σ 100(x_{i+1} − x_i²)² + (1 − x_i)², minimum 0 at (1, …, 1), evaluated in
// float64 whatever x's dtype.
func rosenbrock(x, grad []*tensor.Tensor) (float64, error) {
	v := x[0].Values()
	g := make([]float64, len(v))
	var f float64
	for i := 0; i+1 < len(v); i++ {
		a, b := v[i+1]-v[i]*v[i], 1-v[i]
		f += 100*a*a + b*b
		g[i] += -400*v[i]*a - 2*b
		g[i+1] += 200 * a
	}
	tensor.CopyInto(grad[0], tensor.FromValues(x[0].DType(), g, len(g)))
	return f, nil
}

func TestMinimizeRosenbrock(t *testing.T) {
	cases := []struct {
		name    string
		start   []float64
		maxIter int
		acc     map[tensor.DType]float64 // distance to (1, …, 1) required
	}{
		{"2-D", []float64{-1.2, 1}, 100, map[tensor.DType]float64{tensor.Float64: 1e-6, tensor.Float32: 1e-3}},
		{"10-D", []float64{-1.2, 1, -1.2, 1, -1.2, 1, -1.2, 1, -1.2, 1}, 500, map[tensor.DType]float64{tensor.Float64: 1e-5, tensor.Float32: 1e-2}},
		{"10-D from 0", make([]float64, 10), 500, map[tensor.DType]float64{tensor.Float64: 1e-5, tensor.Float32: 1e-2}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				x := tensor.FromValues(dt, c.start, len(c.start))
				calls := 0
				cfg := LBFGSOptions{MaxIter: c.maxIter, Callback: func(iter int, f, gnorm float64) {
					calls++
					require.Equal(t, calls, iter)
				}}
				if dt == tensor.Float32 {
					// Rounding x to float32 (6e-8 near 1) moves the gradient by
					// about 1000·6e-8, so it cannot get much below 1e-4.
					cfg.GradTol = 1e-4
				}
				res, err := Minimize(rosenbrock, []*tensor.Tensor{x}, cfg)
				require.NoError(t, err)
				t.Logf("%+v x=%v", res, x.Values())
				if dt == tensor.Float64 {
					require.True(t, res.Converged, res.Reason)
				}
				require.Less(t, res.Iterations, c.maxIter)
				require.Equal(t, res.Iterations, calls)
				require.Greater(t, res.Evaluations, res.Iterations)
				for i, v := range x.Values() {
					require.InDelta(t, 1, v, c.acc[dt], "x[%d]", i)
				}
				// The result's F is the objective at the returned x.
				f, _ := rosenbrock([]*tensor.Tensor{x}, []*tensor.Tensor{tensor.ZerosLike(x)})
				require.Equal(t, f, res.F)
			})
		}
	}
}

// quadratic returns ½xᵀAx − bᵀx and its gradient Ax − b, computed with
// tensor ops in x's dtype, for A = MᵀM + I (symmetric positive definite).
func quadratic(dt tensor.DType, n int) (f Objective, a64, b64 *tensor.Tensor) {
	rng := tensor.NewRNG(7)
	m := rng.Normal(tensor.Float64, 0, 1, n, n)
	a64 = tensor.Add(tensor.MatMulT(m, m, true, false), tensor.Eye(tensor.Float64, n))
	b64 = rng.Normal(tensor.Float64, 0, 1, n)
	a, b := a64.Cast(dt), b64.Cast(dt)
	return func(x, grad []*tensor.Tensor) (float64, error) {
		ax := tensor.MatMul(a, x[0])
		tensor.SubTo(grad[0], ax, b)
		return 0.5*tensor.Dot(x[0], ax).Item() - tensor.Dot(b, x[0]).Item(), nil
	}, a64, b64
}

func TestMinimizeQuadratic(t *testing.T) {
	const n = 6
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			f, a, b := quadratic(dt, n)
			want, err := tensor.Solve(a, tensor.Reshape(b, n, 1)) // A⁻¹b
			require.NoError(t, err)
			x := tensor.Zeros(dt, n)
			// FuncTol's default 1e-9 stops at a relative accuracy of about
			// √1e-9 in x; switch it off to test the gradient criterion.
			// f in float64 resolves changes of about 2e-16·|f| (|f| ≈ 1.7
			// here), so the line search can improve f only while ½gᵀA⁻¹g is
			// larger: down to |g| ≈ 2e-8, depending on how f's terms round.
			// GradTol sits above that floor.
			cfg := LBFGSOptions{FuncTol: -1, GradTol: 1e-7}
			acc := 1e-7 // |x − x*| ≤ |g|/λmin(A) and λmin ≥ 1
			if dt == tensor.Float32 {
				// f in float32 resolves changes of about 1e-7·|f|, so the line
				// search stalls once ½gᵀA⁻¹g is that small: |g| ≈ 5e-4, and
				// |x − x*| ≤ |g|/λmin(A) ≤ 5e-4 since λmin ≥ 1.
				cfg.GradTol, acc = 1e-4, 1e-3
			}
			res, err := Minimize(f, []*tensor.Tensor{x}, cfg)
			require.NoError(t, err)
			t.Logf("%+v", res)
			if dt == tensor.Float64 {
				require.True(t, res.Converged, res.Reason)
			}
			require.InDeltaSlice(t, want.Values(), x.Values(), acc)
			// f at the minimum is −½bᵀA⁻¹b.
			require.InDelta(t, -0.5*tensor.Dot(b, tensor.Reshape(want, n)).Item(), res.F, acc)
		})
	}
}

// x split over tensors of both dtypes behaves like one vector.
func TestMinimizeMixedDTypes(t *testing.T) {
	x := []*tensor.Tensor{tensor.FromValues(tensor.Float32, []float64{-1.2}, 1), tensor.FromValues(tensor.Float64, []float64{1}, 1, 1)}
	res, err := Minimize(func(x, grad []*tensor.Tensor) (float64, error) {
		v := []*tensor.Tensor{tensor.FromValues(tensor.Float64, []float64{x[0].At(0), x[1].At(0, 0)}, 2)}
		g := []*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}
		f, _ := rosenbrock(v, g)
		grad[0].SetAt(g[0].At(0), 0)
		grad[1].SetAt(g[0].At(1), 0, 0)
		return f, nil
	}, x, LBFGSOptions{GradTol: 1e-3})
	require.NoError(t, err)
	require.InDelta(t, 1, x[0].At(0), 1e-3, "%+v", res)
	require.InDelta(t, 1, x[1].At(0, 0), 1e-3)
}

func TestMinimizeBounds(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// (x−2)² + (y+1)² on [−1, 1] × [0, 3]: the minimum is the corner (1, 0).
			x := tensor.FromValues(dt, []float64{-0.5, 2}, 2)
			res, err := Minimize(func(x, grad []*tensor.Tensor) (float64, error) {
				v := x[0].Values()
				tensor.CopyInto(grad[0], tensor.FromValues(dt, []float64{2 * (v[0] - 2), 2 * (v[1] + 1)}, 2))
				return (v[0]-2)*(v[0]-2) + (v[1]+1)*(v[1]+1), nil
			}, []*tensor.Tensor{x}, LBFGSOptions{
				Lower: []*tensor.Tensor{tensor.FromValues(dt, []float64{-1, 0}, 2)},
				Upper: []*tensor.Tensor{tensor.FromValues(dt, []float64{1, 3}, 2)},
			})
			require.NoError(t, err)
			require.True(t, res.Converged, res.Reason)
			require.Equal(t, []float64{1, 0}, x.Values())
			require.InDelta(t, 1+1, res.F, 1e-12) // (1−2)² + (0+1)²

			// Rosenbrock with x₀ ≤ 0.5: the gradient pushes x₀ up against the
			// bound (∂f/∂x₀ = −1 at (0.5, 0.25)), and y = x₀² = 0.25 minimises the rest.
			r := tensor.FromValues(dt, []float64{-1.2, 1}, 2)
			res, err = Minimize(rosenbrock, []*tensor.Tensor{r}, LBFGSOptions{
				Upper:   []*tensor.Tensor{tensor.FromValues(dt, []float64{0.5, math.Inf(1)}, 2)},
				MaxIter: 200, GradTol: 1e-4,
			})
			require.NoError(t, err)
			require.True(t, res.Converged, res.Reason)
			require.InDeltaSlice(t, []float64{0.5, 0.25}, r.Values(), 1e-4)
			require.InDelta(t, 0.25, res.F, 1e-6) // (1 − 0.5)²
		})
	}
}

// √(1 + x²) has its minimum at 0; here it fails (outside its "domain") for
// x < −0.5. From x = 1.4 the first step reaches 0.586 and the secant
// scaling γ = sᵀy/yᵀy ≈ 2.6 then proposes 0.586 − 2.6·0.505 ≈ −0.74, a
// failed point the line search must back away from.
func TestMinimizeSurvivesFailuresInLineSearch(t *testing.T) {
	for _, dt := range numtest.DTypes {
		for _, how := range []string{"error", "NaN", "Inf gradient"} {
			t.Run(fmt.Sprintf("%s/%v", how, dt), func(t *testing.T) {
				failures := 0
				f := func(x, grad []*tensor.Tensor) (float64, error) {
					v := x[0].Item()
					if v < -0.5 {
						failures++
						switch how {
						case "error":
							return 0, errors.New("outside the domain")
						case "NaN":
							return math.NaN(), nil
						default:
							grad[0].Fill(math.Inf(1))
							return 1, nil
						}
					}
					r := math.Sqrt(1 + v*v)
					grad[0].Fill(v / r)
					return r, nil
				}
				x := tensor.FromValues(dt, []float64{1.4}, 1)
				res, err := Minimize(f, []*tensor.Tensor{x}, LBFGSOptions{GradTol: 1e-6})
				require.NoError(t, err)
				require.Positive(t, failures, "the test must exercise a failing evaluation")
				require.True(t, res.Converged, res.Reason)
				require.InDelta(t, 0, x.Item(), 1e-6)
				require.InDelta(t, 1, res.F, 1e-12)
			})
		}
	}
}

func TestMinimizeNeverLeavesXAtFailedPoint(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// Only the start can be evaluated: every line search fails.
			x := tensor.FromValues(dt, []float64{0.75, -0.5}, 2)
			res, err := Minimize(func(x, grad []*tensor.Tensor) (float64, error) {
				if x[0].At(0) != 0.75 || x[0].At(1) != -0.5 {
					return 0, errors.New("nowhere else")
				}
				grad[0].Fill(1)
				return 3, nil
			}, []*tensor.Tensor{x}, LBFGSOptions{})
			require.NoError(t, err)
			require.False(t, res.Converged)
			require.Contains(t, res.Reason, "line search")
			require.Contains(t, res.Reason, "nowhere else")
			require.Equal(t, []float64{0.75, -0.5}, x.Values())
			require.Equal(t, 3.0, res.F)
			require.Equal(t, 1+25, res.Evaluations) // the start and one full line search
		})
	}
}

func TestMinimizeStartFailures(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		f    Objective
		is   error
	}{
		{"error", func(x, g []*tensor.Tensor) (float64, error) { return 0, boom }, boom},
		{"NaN value", func(x, g []*tensor.Tensor) (float64, error) { return math.NaN(), nil }, ErrNonFinite},
		{"Inf value", func(x, g []*tensor.Tensor) (float64, error) { return math.Inf(1), nil }, ErrNonFinite},
		{"NaN gradient", func(x, g []*tensor.Tensor) (float64, error) { g[0].SetAt(math.NaN(), 1); return 1, nil }, ErrNonFinite},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				// The start lies outside the bounds, so Minimize clamps it
				// before the first evaluation; the failure must undo that.
				x := tensor.FromValues(dt, []float64{5, -5}, 2)
				_, err := Minimize(c.f, []*tensor.Tensor{x}, LBFGSOptions{
					Lower: []*tensor.Tensor{tensor.Full(dt, -1, 2)},
					Upper: []*tensor.Tensor{tensor.Full(dt, 1, 2)},
				})
				require.ErrorIs(t, err, c.is)
				require.Equal(t, []float64{5, -5}, x.Values())
			})
		}
	}
}

func TestMinimizeMisuse(t *testing.T) {
	ok := func(x, g []*tensor.Tensor) (float64, error) { return 0, nil }
	x := []*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}
	cases := []struct {
		name string
		x    []*tensor.Tensor
		cfg  LBFGSOptions
		msg  string
	}{
		{"no x", nil, LBFGSOptions{}, "no parameters"},
		{"non-contiguous", []*tensor.Tensor{tensor.Transpose(tensor.Zeros(tensor.Float32, 2, 3))}, LBFGSOptions{}, "not contiguous"},
		{"bound shape", x, LBFGSOptions{Lower: []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3)}}, "Lower[0] has shape (3,), x[0] has shape (2,)"},
		{"crossed bounds", x, LBFGSOptions{Lower: []*tensor.Tensor{tensor.Ones(tensor.Float64, 2)}, Upper: []*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}}, "lower bound 1 is not <= upper bound 0"},
		{"wolfe constants", x, LBFGSOptions{C1: 0.5, C2: 0.1}, "0 < C1 < C2 < 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Minimize(ok, c.x, c.cfg)
			var te *tensor.Error
			require.ErrorAs(t, err, &te)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestMinimizeMaxIter(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := tensor.FromValues(dt, []float64{-1.2, 1}, 2)
			res, err := Minimize(rosenbrock, []*tensor.Tensor{x}, LBFGSOptions{MaxIter: 3})
			require.NoError(t, err)
			require.False(t, res.Converged)
			require.Equal(t, "maximum iterations reached", res.Reason)
			require.Equal(t, 3, res.Iterations)
			// x is the last accepted point: its value is res.F, below f(−1.2, 1) = 24.2.
			f, _ := rosenbrock([]*tensor.Tensor{x}, []*tensor.Tensor{tensor.ZerosLike(x)})
			require.Equal(t, f, res.F)
			require.Less(t, res.F, 24.2)
		})
	}
}
