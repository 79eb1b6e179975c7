package kernel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// kernelAt evaluates k between two single points.
func kernelAt(k Kernel, dt tensor.DType, a, b []float64) float64 {
	for _, p := range k.Hyperparams() {
		p.SetDType(dt)
	}
	g := graph.New()
	x1 := g.Const(tensor.FromValues(dt, a, 1, len(a)))
	x2 := g.Const(tensor.FromValues(dt, b, 1, len(b)))
	return k.K(x1, x2).Item()
}

// Textbook values: at r = ℓ the RBF is e^{−1/2}, Matérn ½ e^{−1},
// Matérn 3⁄2 (1+√3)e^{−√3}, Matérn 5⁄2 (1+√5+5/3)e^{−√5}.
func TestKernelTextbookValues(t *testing.T) {
	cases := []struct {
		name string
		k    func() Kernel
		a, b []float64
		want float64
	}{
		{"rbf r=ℓ", func() Kernel { return NewRBF(2) }, []float64{1}, []float64{3}, 0.606531},
		{"matern12 r=ℓ", func() Kernel { return NewMatern12(2) }, []float64{1}, []float64{3}, 0.367879},
		{"matern32 r=ℓ", func() Kernel { return NewMatern32(2) }, []float64{1}, []float64{3}, 0.483358},
		{"matern52 r=ℓ", func() Kernel { return NewMatern52(2) }, []float64{1}, []float64{3}, 0.523994},
		{"rbf r=0", func() Kernel { return NewRBF(2) }, []float64{1}, []float64{1}, 1},
		{"matern52 r=0", func() Kernel { return NewMatern52(2) }, []float64{1, 2}, []float64{1, 2}, 1},
		// ARD: ((1−0)/1)² + ((2−0)/2)² = 2 → e^{−1}.
		{"rbf ard", func() Kernel { return NewRBF(1, 2) }, []float64{0, 0}, []float64{1, 2}, math.Exp(-1)},
		// 2-D distance 5 = ℓ (3-4-5 triangle).
		{"matern12 2-d", func() Kernel { return NewMatern12(5) }, []float64{0, 0}, []float64{3, 4}, math.Exp(-1)},
		// α = 1, r = ℓ: (1 + 1/2)^{−1} = 2/3.
		{"rq", func() Kernel { return NewRationalQuadratic(1, 0.5) }, []float64{0}, []float64{0.5}, 2.0 / 3},
		// |x − x'| = p/4, ℓ = 1: exp(−2 sin²(π/4)) = e^{−1}.
		{"periodic quarter", func() Kernel { return NewPeriodic(1, 2) }, []float64{0}, []float64{0.5}, math.Exp(-1)},
		// A whole period apart: 1.
		{"periodic full", func() Kernel { return NewPeriodic(0.7, 1.5) }, []float64{0.2}, []float64{1.7}, 1},
		{"linear", func() Kernel { return NewLinear(2) }, []float64{1, 2}, []float64{3, -1}, 2 * (3 - 2)},
		{"polynomial", func() Kernel { return NewPolynomial(3, 0.5) }, []float64{1, 2}, []float64{3, -1}, 1.5 * 1.5 * 1.5},
		{"constant", func() Kernel { return NewConstant(0.7) }, []float64{1}, []float64{5}, 0.7},
		{"white cross", func() Kernel { return NewWhite(0.7) }, []float64{1}, []float64{1}, 0},
		{"scale", func() Kernel { return NewScale(NewRBF(2), 3) }, []float64{1}, []float64{3}, 3 * 0.606531},
		{"sum", func() Kernel { return NewSum(NewRBF(2), NewConstant(0.5)) }, []float64{1}, []float64{3}, 0.606531 + 0.5},
		{"product", func() Kernel { return NewProduct(NewRBF(2), NewMatern12(2)) }, []float64{1}, []float64{3}, 0.606531 * 0.367879},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				got := kernelAt(c.k(), dt, c.a, c.b)
				assert.InDelta(t, c.want, got, 2e-6+numtest.Pick(dt, 2e-5, 1e-6))
			})
		}
	}
}

// allKernels returns one instance of every kernel, including combinators,
// for inputs with d columns.
func allKernels(d int) map[string]func() Kernel {
	ard := make([]float64, d)
	for i := range ard {
		ard[i] = 0.8 + 0.3*float64(i)
	}
	return map[string]func() Kernel{
		"rbf":        func() Kernel { return NewRBF(1.3) },
		"rbf-ard":    func() Kernel { return NewRBF(ard...) },
		"matern12":   func() Kernel { return NewMatern12(1.1) },
		"matern32":   func() Kernel { return NewMatern32(ard...) },
		"matern52":   func() Kernel { return NewMatern52(0.9) },
		"rq":         func() Kernel { return NewRationalQuadratic(1.7, 1.2) },
		"periodic":   func() Kernel { return NewPeriodic(0.8, 2.5) },
		"linear":     func() Kernel { return NewLinear(0.6) },
		"polynomial": func() Kernel { return NewPolynomial(2, 0.4) },
		"white":      func() Kernel { return NewWhite(0.3) },
		"constant":   func() Kernel { return NewConstant(0.9) },
		"sum-scale-product": func() Kernel {
			return NewSum(NewScale(NewRBF(1.5), 1.2), NewProduct(NewPeriodic(1, 2), NewMatern52(2)), NewWhite(0.1))
		},
	}
}

// The diagonal of K(x, x) equals Diag(x) for every kernel.
func TestKernelDiagMatchesK(t *testing.T) {
	for name, mk := range allKernels(3) {
		for _, dt := range numtest.DTypes {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				k := mk()
				for _, p := range k.Hyperparams() {
					p.SetDType(dt)
				}
				g := graph.New()
				x := g.Const(tensor.NewRNG(3).Normal(dt, 0, 1, 5, 3))
				kx := k.K(x, x).Value()
				diag := k.Diag(x).Value()
				require.Equal(t, []int{5, 5}, kx.Shape())
				require.Equal(t, []int{5}, diag.Shape())
				for i := 0; i < 5; i++ {
					assert.InDelta(t, kx.At(i, i), diag.At(i), numtest.Pick(dt, 2e-5, 1e-6))
					for j := 0; j < 5; j++ {
						assert.InDelta(t, kx.At(i, j), kx.At(j, i), numtest.Pick(dt, 2e-5, 1e-6), "symmetry")
					}
				}
			})
		}
	}
}

// checkKernelGrad checks the derivatives of K(x1, x2) (two different
// inputs), K(x, x) (the same node) and Diag(x) with respect to the
// unconstrained hyperparameters and the inputs, in both modes and to
// second order.
func checkKernelGrad(t *testing.T, k Kernel, d int) {
	t.Helper()
	rng := tensor.NewRNG(11)
	ps := k.Hyperparams()
	x1 := rng.Normal(tensor.Float64, 0, 1, 4, d)
	x2 := rng.Normal(tensor.Float64, 0, 1, 3, d)
	var raws []*tensor.Tensor
	for _, p := range ps {
		raws = append(raws, p.Raw().Clone())
	}
	bind := func(xs []*graph.Node) {
		for i, p := range ps {
			xs[i].Graph().Bind(p.Raw(), xs[i])
		}
	}
	np := len(ps)
	opt := autodiff.GradCheckOptions{Tol: 1e-5, Tol2: 1e-4}
	forms := []struct {
		name   string
		inputs []*tensor.Tensor
		f      func(xs []*graph.Node) *graph.Node
	}{
		{"K(x1,x2)", append(append([]*tensor.Tensor{}, raws...), x1, x2), func(xs []*graph.Node) *graph.Node {
			bind(xs)
			return k.K(xs[np], xs[np+1])
		}},
		{"K(x,x)", append(append([]*tensor.Tensor{}, raws...), x1), func(xs []*graph.Node) *graph.Node {
			bind(xs)
			return k.K(xs[np], xs[np])
		}},
		{"Diag(x)", append(append([]*tensor.Tensor{}, raws...), x1), func(xs []*graph.Node) *graph.Node {
			bind(xs)
			return k.Diag(xs[np])
		}},
	}
	for _, fm := range forms {
		opt.Name = fm.name
		_, err := autodiff.GradCheck(fm.f, fm.inputs, opt)
		assert.NoError(t, err, fm.name)
	}
}

func TestKernelGradCheck(t *testing.T) {
	for name, mk := range allKernels(2) {
		t.Run(name, func(t *testing.T) { checkKernelGrad(t, mk(), 2) })
	}
}

// Names are dotted paths, unique within a combination.
func TestKernelParamNames(t *testing.T) {
	k := NewSum(NewScale(NewRBF(1), 1), NewScale(NewRBF(2), 1), Named("trend", NewMatern52(3)))
	var names []string
	for _, p := range k.Hyperparams() {
		names = append(names, p.Name())
	}
	assert.Equal(t, []string{"scale.variance", "rbf.lengthscale", "scale_2.variance", "rbf_2.lengthscale", "trend.lengthscale"}, names)
	shared := NewRBF(1)
	assert.Len(t, NewSum(shared, NewProduct(shared, NewWhite(1))).Hyperparams(), 2, "a shared kernel's parameters appear once")
}

// Get and Set round-trip through every bijector; Set refuses values
// outside the domain and leaves the parameter unchanged.
func TestParamGetSet(t *testing.T) {
	for _, bij := range []probabilistic.Bijector{probabilistic.Softplus{}, probabilistic.Exp{}} {
		for _, dt := range numtest.DTypes {
			p := NewHyperparam("x.y", 0.5, 2, 30)
			p.SetDType(dt)
			p.SetBijector(bij)
			assert.InDeltaSlice(t, []float64{0.5, 2, 30}, p.Get(), 1e-5*30)
			require.NoError(t, p.Set(1, 4, 9))
			assert.InDeltaSlice(t, []float64{1, 4, 9}, p.Get(), 1e-5*9)
			assert.Error(t, p.Set(-1, 4, 9))
			assert.Error(t, p.Set(1, math.NaN(), 9))
			assert.Error(t, p.Set(1, 2))
			assert.InDeltaSlice(t, []float64{1, 4, 9}, p.Get(), 1e-5*9)
			// The constrained node is the bijector of the raw Var.
			g := graph.New()
			assert.InDeltaSlice(t, []float64{1, 4, 9}, p.Node(g).Value().Values(), 1e-5*9)
		}
	}
	p := NewHyperparam("noise", 0.5).SetFloor(0.1)
	assert.InDelta(t, 0.5, p.Value(), 1e-12)
	assert.Error(t, p.Set(0.05), "below the floor")
	assert.Panics(t, func() { NewHyperparam("bad", -1) })
}

// The Gamma prior's log density: Gamma(2, 1) at x: log x − x.
func TestParamLogPrior(t *testing.T) {
	for _, dt := range numtest.DTypes {
		p := NewHyperparam("rbf.lengthscale", 1.5, 0.5).SetPrior(GammaPrior(2, 1))
		p.SetDType(dt)
		g := graph.New()
		want := (math.Log(1.5) - 1.5) + (math.Log(0.5) - 0.5)
		assert.InDelta(t, want, p.LogPrior(g).Item(), numtest.Pick(dt, 2e-5, 1e-6)*10)
	}
}

// Kernels reject inputs that are not matrices or do not match an ARD
// lengthscale.
func TestKernelMisuse(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.Zeros(tensor.Float64, 3, 2))
	v := g.Const(tensor.Zeros(tensor.Float64, 3))
	assert.Panics(t, func() { NewRBF(1).K(v, v) })
	assert.Panics(t, func() { NewRBF(1, 2, 3).K(x, x) })
	assert.Panics(t, func() { NewLinear(1).K(x, g.Const(tensor.Zeros(tensor.Float64, 3, 4))) })
	assert.Panics(t, func() { NewSum() })
}

// Profile evaluates the stationary kernels outside the graph: at r = ℓ it
// gives the textbook values above, and at other distances it equals K.
func TestStationaryProfile(t *testing.T) {
	for _, c := range []struct {
		k    *Stationary
		atL  float64
		name string
	}{
		{NewRBF(2), 0.606531, "rbf"},
		{NewMatern12(2), 0.367879, "matern12"},
		{NewMatern32(2), 0.483358, "matern32"},
		{NewMatern52(2), 0.523994, "matern52"},
		{NewRationalQuadratic(1, 2), 2.0 / 3, "rq"},
	} {
		f := c.k.Profile()
		assert.InDelta(t, c.atL, f(1), 1e-6, c.name)
		assert.InDelta(t, 1, f(0), 1e-15, c.name)
		for _, d := range []float64{0.3, 1.7, 4.2} {
			assert.InDelta(t, kernelAt(c.k, tensor.Float64, []float64{0}, []float64{d}), f(d*d/4), 1e-14, "%s at %g", c.name, d)
		}
	}
}
