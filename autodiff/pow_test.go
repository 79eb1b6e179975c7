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

// closeWithSpecials compares got with want elementwise: infinities must match
// exactly, finite values to a relative tolerance suited to dt.
func closeWithSpecials(t *testing.T, dt tensor.DType, want, got []float64, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	tol := 1e-12
	if dt == tensor.Float32 {
		tol = 1e-6
	}
	for i := range want {
		switch {
		case math.IsNaN(want[i]):
			assert.True(t, math.IsNaN(got[i]), "%s[%d]: got %v, want NaN", msg, i, got[i])
		case math.IsInf(want[i], 0):
			assert.Equal(t, want[i], got[i], "%s[%d]", msg, i)
		default:
			assert.InDelta(t, want[i], got[i], tol*math.Max(1, math.Abs(want[i])), "%s[%d]", msg, i)
		}
	}
}

// Partials of aᵇ at a zero base follow PyTorch and JAX: ∂/∂a = 0 where
// b = 0, ∂/∂b = 0 where a = 0 and b ≥ 0; elsewhere the textbook formulas
// b·aᵇ⁻¹ and aᵇ·log a (infinite at a = 0 for b < 1).
func TestPowGradAtZeroBase(t *testing.T) {
	ln2 := math.Ln2
	cases := []struct {
		a, b, da, db float64
	}{
		{0, 2, 0, 0},
		{0, 0, 0, 0},
		{0, 1, 1, 0},
		{0, 3, 0, 0},
		{0, 0.5, math.Inf(1), 0},
		{0, -1, math.Inf(-1), math.Inf(-1)},
		{2, 0, 0, ln2},
		{2, 3, 12, 8 * ln2},
		{4, 0.5, 0.25, 2 * 2 * ln2},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			var as, bs, das, dbs, jv []float64
			for _, c := range cases {
				as, bs, das, dbs = append(as, c.a), append(bs, c.b), append(das, c.da), append(dbs, c.db)
				jv = append(jv, c.da+2*c.db) // tangents ȧ = 1, ḃ = 2
			}
			n := len(cases)
			g := graph.New()
			a := g.Var(tensor.FromValues(dt, as, n))
			b := g.Var(tensor.FromValues(dt, bs, n))
			y := graph.Pow(a, b)
			gr := autodiff.Grad(graph.Sum(y, nil, false), a, b)
			closeWithSpecials(t, dt, das, gr[0].Value().Values(), "d/da")
			closeWithSpecials(t, dt, dbs, gr[1].Value().Values(), "d/db")

			ta := g.Const(tensor.Full(dt, 1, n))
			tb := g.Const(tensor.Full(dt, 2, n))
			fwd := autodiff.JVP([]*graph.Node{y}, []*graph.Node{a, b}, []*graph.Node{ta, tb})[0]
			closeWithSpecials(t, dt, jv, fwd.Value().Values(), "jvp")
		})
	}
}

// Second derivatives at a zero base: for f(a, b) = aᵇ at (0, 2),
// ∂²f/∂a² = b(b−1)aᵇ⁻² = 2, ∂²f/∂a∂b = aᵇ⁻¹(1 + b log a) → 0 and
// ∂²f/∂b² = aᵇ log² a → 0 (limits as a → 0⁺). At (0, 0) f is constant in
// a, and the masked partials make every second derivative 0 there. At
// (2, 0), where nothing is masked, the mixed derivative is 1/a = 0.5 from
// both sides and ∂²f/∂b² = log² 2.
func TestPowHessianAtZeroBase(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			a, b float64
			want []float64
		}{
			{0, 2, []float64{2, 0, 0, 0}},
			{0, 3, []float64{0, 0, 0, 0}},
			{0, 0, []float64{0, 0, 0, 0}},
			{2, 0, []float64{0, 0.5, 0.5, math.Ln2 * math.Ln2}},
		} {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, []float64{c.a, c.b}, 2))
			f := graph.Sum(graph.Pow(graph.Slice(x, 0, 0, 1, 1), graph.Slice(x, 0, 1, 2, 1)), nil, false)
			h := autodiff.Hessian(f, x)
			closeWithSpecials(t, dt, c.want, h.Values(), dt.String()+" hessian")
		}
	}
}
