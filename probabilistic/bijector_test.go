package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// bijectorCases lists each bijector with an unconstrained test point x
// (event rank 0 for elementwise ones, rank 1 otherwise) and how many of
// Forward's output entries the Jacobian is taken over (the first K − 1 of
// the simplex, the lower triangle of a Cholesky factor).
var bijectorCases = []struct {
	name string
	b    Bijector
	x    []float64
	// rows picks the square part of the Jacobian from Forward's flattened
	// output, nil for all of it.
	rows []int
}{
	{"Exp", Exp{}, []float64{-1.5, 0, 0.7}, nil},
	{"Softplus", Softplus{}, []float64{-3, 0.2, 4}, nil},
	{"Sigmoid", Sigmoid{}, []float64{-2, 0.1, 1.5}, nil},
	{"ScaledSigmoid", ScaledSigmoid{Alpha: 0.05}, []float64{-2, 0.1, 3.5}, nil},
	{"StickBreaking K=4", StickBreaking{}, []float64{0.3, -1, 0.8}, []int{0, 1, 2}},
	{"StickBreaking K=2", StickBreaking{}, []float64{1.2}, []int{0}},
	{"CholeskyFactor exp", NewCholeskyFactor(3, false), []float64{0.1, -0.4, 0.3, 0.5, 1.1, -0.2}, []int{0, 3, 4, 6, 7, 8}},
	{"CholeskyFactor softplus", NewCholeskyFactor(2, true), []float64{-0.7, 0.4, 1.3}, []int{0, 2, 3}},
}

// TestBijectorRoundTrip checks Inverse(Forward(x)) = x and that Forward
// lands in the constrained set.
func TestBijectorRoundTrip(t *testing.T) {
	for _, tc := range bijectorCases {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				x := c(g, dt, tc.x, len(tc.x))
				y := tc.b.Forward(x)
				requireValues(t, tc.x, tc.b.Inverse(y), 50*numtest.Pick(dt, 2e-5, 1e-10))
				yv := y.Value().Values()
				switch b := tc.b.(type) {
				case StickBreaking:
					require.Equal(t, []int{len(tc.x) + 1}, y.Shape())
					sum := 0.0
					for _, v := range yv {
						require.Greater(t, v, 0.0)
						sum += v
					}
					require.InDelta(t, 1, sum, 10*numtest.Pick(dt, 2e-5, 1e-10))
				case CholeskyFactor:
					require.Equal(t, []int{b.N, b.N}, y.Shape())
					for i := 0; i < b.N; i++ {
						require.Greater(t, yv[i*b.N+i], 0.0)
						for j := i + 1; j < b.N; j++ {
							require.Equal(t, 0.0, yv[i*b.N+j])
						}
					}
				case ScaledSigmoid:
					for _, v := range yv {
						require.True(t, v > -b.Alpha/(1-2*b.Alpha) && v < (1-b.Alpha)/(1-2*b.Alpha))
					}
				case Sigmoid:
					for _, v := range yv {
						require.True(t, v > 0 && v < 1)
					}
				default:
					for _, v := range yv {
						require.Greater(t, v, 0.0)
					}
				}
			})
		}
	}
}

// TestBijectorCentre checks the log(K − k) offset: x = 0 maps to the centre
// of the simplex.
func TestBijectorCentre(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		y := StickBreaking{}.Forward(c(g, dt, []float64{0, 0, 0, 0}, 4))
		requireValues(t, []float64{0.2, 0.2, 0.2, 0.2, 0.2}, y, 10*numtest.Pick(dt, 2e-5, 1e-10))
	}
}

// TestBijectorLogDetJacobian compares LogDetJacobian with log |det J| of
// the Jacobian of Forward computed by autodiff.
func TestBijectorLogDetJacobian(t *testing.T) {
	for _, tc := range bijectorCases {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New()
			x := v(g, tensor.Float64, tc.x, len(tc.x))
			y := tc.b.Forward(x)
			flat := graph.Reshape(y, y.Size())
			if tc.rows != nil {
				flat = graph.IndexSelect(flat, 0, tc.rows)
			}
			jac := autodiff.Jacobian(flat, x) // (m, m)
			require.Equal(t, []int{len(tc.x), len(tc.x)}, jac.Shape())
			_, logAbs, err := tensor.SlogDet(jac)
			require.NoError(t, err)
			ldj := graph.Sum(tc.b.LogDetJacobian(x), nil, false)
			require.InDelta(t, logAbs.Item(), ldj.Item(), 1e-10)
		})
	}
}

// TestBijectorBatch checks that event-rank-1 bijectors act row by row.
func TestBijectorBatch(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := c(g, dt, []float64{0.3, -1, 0, 0, 2, 0.5}, 3, 2)
		sb := StickBreaking{}
		y := sb.Forward(x)
		require.Equal(t, []int{3, 3}, y.Shape())
		require.Equal(t, []int{3}, sb.LogDetJacobian(x).Shape())
		requireValues(t, []float64{1. / 3, 1. / 3, 1. / 3}, graph.Slice(y, 0, 1, 2, 1), 10*numtest.Pick(dt, 2e-5, 1e-10))
		row := sb.Forward(c(g, dt, []float64{2, 0.5}, 2))
		requireValues(t, row.Value().Values(), graph.Slice(y, 0, 2, 3, 1), 10*numtest.Pick(dt, 2e-5, 1e-10))
		cf := NewCholeskyFactor(2, false)
		// Rows of length 2 don't fit 2×2 factors, which need 3 entries.
		requirePanicsWith(t, func() { cf.Forward(c(g, dt, []float64{1, 2}, 2)) }, "CholeskyFactor", "(2,)")
		// A batch of 2×2 factors from rows of length 3.
		xb := c(g, dt, []float64{0, 1, 0, math.Log(2), -1, math.Log(3)}, 2, 3)
		l := cf.Forward(xb)
		require.Equal(t, []int{2, 2, 2}, l.Shape())
		requireValues(t, []float64{1, 0, 1, 1, 2, 0, -1, 3}, l, 10*numtest.Pick(dt, 2e-5, 1e-10))
	}
}

// TestGradCheckBijectors checks the derivatives of Forward, Inverse and
// LogDetJacobian to second order.
func TestGradCheckBijectors(t *testing.T) {
	var cases []gradCase
	for _, tc := range bijectorCases {
		b := tc.b
		x := tensor.FromFloat64s(append([]float64{}, tc.x...), len(tc.x))
		cases = append(cases,
			gradCase{tc.name + " Forward", []*tensor.Tensor{x}, func(xs []*graph.Node) *graph.Node { return b.Forward(xs[0]) }},
			gradCase{tc.name + " LogDetJacobian", []*tensor.Tensor{x}, func(xs []*graph.Node) *graph.Node { return b.LogDetJacobian(xs[0]) }},
		)
		g := graph.New()
		y := b.Forward(g.Const(x)).Value().Clone()
		cases = append(cases, gradCase{tc.name + " Inverse", []*tensor.Tensor{y}, func(xs []*graph.Node) *graph.Node { return b.Inverse(xs[0]) }})
	}
	runGradChecks(t, cases)
}

// TestScaledSigmoidPixel checks RealNVP's logit transform on one
// dequantised pixel, byte 128 with noise u = ½: y = 128.5/256, so
// p = α + (1 − 2α)·y = 0.05 + 0.9·0.501953125 = ½ + 0.0017578125 and
// log |dy/dx| = log(p(1 − p)) − log(1 − 2α) = log((¼ − 0.0017578125²)/0.9).
func TestScaledSigmoidPixel(t *testing.T) {
	b := ScaledSigmoid{Alpha: 0.05}
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := b.Inverse(c(g, dt, []float64{128.5 / 256}, 1))
		requireValues(t, []float64{math.Log(0.5017578125 / 0.4982421875)}, x, numtest.Pick(dt, 1e-5, 1e-12))
		want := math.Log((0.25 - 0.0017578125*0.0017578125) / 0.9)
		requireValues(t, []float64{want}, b.LogDetJacobian(x), numtest.Pick(dt, 1e-5, 1e-12))
	}
	g := graph.New()
	requirePanicsWith(t, func() { ScaledSigmoid{Alpha: 0.5}.Forward(c(g, tensor.Float64, []float64{0}, 1)) }, "ScaledSigmoid.Forward", "alpha 0.5")
}
