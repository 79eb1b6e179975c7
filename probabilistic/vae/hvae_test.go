package vae

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// set overwrites a float64 parameter with v (row-major).
func set(p *nn.Param, v ...float64) {
	d := p.Value.Float64s()
	if len(v) == 1 {
		for i := range d {
			d[i] = v[0]
		}
		return
	}
	if len(v) != len(d) {
		panic("set: wrong length")
	}
	copy(d, v)
}

// linearHVAE returns an HVAE without hidden layers and with a Gaussian
// decoder, whose prior variance does not depend on z₂: then z₂, z₁ and x
// are jointly Gaussian, x = B·z₁ + b + noise, z₁ = A·z₂ + a + noise.
func linearHVAE(seed uint64, d, l1, l2 int) *HVAE {
	m := NewHVAE(tensor.NewRNG(seed), HVAEOptions{Input: d, Latent1: l1, Latent2: l2, Likelihood: Gaussian, DType: tensor.Float64})
	set(m.Prior.Head.ScaleLayer.Weight, 0)
	set(m.Prior.Head.ScaleLayer.Bias, -0.4)
	// Decoder noise variances e^{-1}, e^{-0.5}, …: log p(x) depends on them.
	lv := make([]float64, d)
	for i := range lv {
		lv[i] = -1 + 0.5*float64(i%3)
	}
	set(m.Decoder.LogVar, lv...)
	return m
}

// lin reads a Linear layer as (W, c): x ↦ W·x + c.
func lin(l *nn.Linear) (*mat.Dense, []float64) {
	return mat.NewDense(l.Out, l.In, l.Weight.Value.Clone().Float64s()), l.Bias.Value.Clone().Float64s()
}

func apply(w *mat.Dense, c, x []float64) []float64 {
	var y mat.VecDense
	y.MulVec(w, mat.NewVecDense(len(x), x))
	out := make([]float64, len(c))
	for i := range out {
		out[i] = y.AtVec(i) + c[i]
	}
	return out
}

// logNormal is log N(x; mean, cov) by a Cholesky factorisation.
func logNormal(t *testing.T, x, mean []float64, cov mat.Matrix) float64 {
	n := len(x)
	var ch mat.Cholesky
	require.True(t, ch.Factorize(mat.NewSymDense(n, mat.DenseCopyOf(cov).RawMatrix().Data)))
	r := make([]float64, n)
	for i := range r {
		r[i] = x[i] - mean[i]
	}
	var s mat.VecDense
	require.NoError(t, ch.SolveVecTo(&s, mat.NewVecDense(n, r)))
	return -0.5 * (mat.Dot(mat.NewVecDense(n, r), &s) + ch.LogDet() + float64(n)*math.Log(2*math.Pi))
}

// exactLogMarginal is log p(x) of a linear HVAE: x ~ N(B·a + b, B(AAᵀ + Dₚ)Bᵀ + D₀).
func exactLogMarginal(t *testing.T, m *HVAE, x []float64) float64 {
	A, a := lin(m.Prior.Head.MeanLayer)
	B, b := lin(m.Decoder.Out)
	lvp := m.Prior.Head.ScaleLayer.Bias.Value.Float64s()
	lv0 := m.Decoder.LogVar.Value.Float64s()
	var z1cov, xcov mat.Dense
	z1cov.Mul(A, A.T())
	for i, v := range lvp {
		z1cov.Set(i, i, z1cov.At(i, i)+math.Exp(v))
	}
	xcov.Product(B, &z1cov, B.T())
	for i, v := range lv0 {
		xcov.Set(i, i, xcov.At(i, i)+math.Exp(v))
	}
	return logNormal(t, x, apply(B, b, a), &xcov)
}

// closedFormELBO is E_q[log p(x, z₁, z₂) − log q(z₁, z₂|x)] of a linear
// HVAE, worked out independently of the graph code: q(z₂, z₁|x) is the
// Gaussian of z = m + M·ε with
//
//	z₂ = m₂ + s₂·ε₂,  z₁ = (1 − w)·(A·z₂ + a) + w·μ̂ + s₁·ε₁,
//	w = σₚ²/(σₚ² + σ̂²),  s₁² = σ̂²σₚ²/(σ̂² + σₚ²),
//
// so with S = M·Mᵀ the expectation of each Gaussian log-density
// −½(rᵀD⁻¹r + log det 2πD), r = P·z − c, is that at the mean minus
// ½·tr(D⁻¹·P·S·Pᵀ), and the entropy of q is Σ log s + (L/2)(1 + log 2π).
func closedFormELBO(t *testing.T, m *HVAE, x []float64) float64 {
	l1, l2, d := m.Latent1, m.Latent2, m.Input
	W1, c1 := lin(m.Up1.Head.MeanLayer)
	V1, e1 := lin(m.Up1.Head.ScaleLayer)
	W2, c2 := lin(m.Up2.Head.MeanLayer)
	V2, e2 := lin(m.Up2.Head.ScaleLayer)
	A, a := lin(m.Prior.Head.MeanLayer)
	B, b := lin(m.Decoder.Out)
	lvp := m.Prior.Head.ScaleLayer.Bias.Value.Float64s()
	lv0 := m.Decoder.LogVar.Value.Float64s()
	muHat, lvHat := apply(W1, c1, x), apply(V1, e1, x)
	m2, lv2 := apply(W2, c2, x), apply(V2, e2, x)
	L := l1 + l2
	mean := make([]float64, L) // (z₂, z₁)
	M := mat.NewDense(L, L, nil)
	am2 := apply(A, a, m2)
	entropy := float64(L) / 2 * (1 + math.Log(2*math.Pi))
	for j := range l2 {
		s := math.Exp(lv2[j] / 2)
		mean[j] = m2[j]
		M.Set(j, j, s)
		entropy += math.Log(s)
	}
	for i := range l1 {
		vh, vp := math.Exp(lvHat[i]), math.Exp(lvp[i])
		w := vp / (vp + vh)
		s1 := math.Sqrt(vh * vp / (vh + vp))
		mean[l2+i] = (1-w)*am2[i] + w*muHat[i]
		for j := range l2 {
			M.Set(l2+i, j, (1-w)*A.At(i, j)*math.Exp(lv2[j]/2))
		}
		M.Set(l2+i, l2+i, s1)
		entropy += math.Log(s1)
	}
	var S mat.Dense
	S.Mul(M, M.T())
	// expected log N(P·z − c; 0, diag exp(lv)) for z ~ N(mean, S)
	expected := func(P *mat.Dense, c, lv []float64) float64 {
		r := apply(P, c, mean)
		var PS mat.Dense
		PS.Product(P, &S, P.T())
		v := 0.0
		for i, u := range r {
			v += u*u*math.Exp(-lv[i]) + PS.At(i, i)*math.Exp(-lv[i]) + lv[i] + math.Log(2*math.Pi)
		}
		return -0.5 * v
	}
	// log p(z₂): P = [I 0], c = 0, variances 1.
	P2 := mat.NewDense(l2, L, nil)
	for j := range l2 {
		P2.Set(j, j, 1)
	}
	// log p(z₁|z₂): r = z₁ − A·z₂ − a, P = [−A I].
	P1 := mat.NewDense(l1, L, nil)
	for i := range l1 {
		for j := range l2 {
			P1.Set(i, j, -A.At(i, j))
		}
		P1.Set(i, l2+i, 1)
	}
	neg := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, u := range v {
			out[i] = -u
		}
		return out
	}
	// log p(x|z₁): r = B·z₁ + b − x, P = [0 B].
	P0 := mat.NewDense(d, L, nil)
	c0 := make([]float64, d)
	for i := range d {
		for j := range l1 {
			P0.Set(i, l2+j, B.At(i, j))
		}
		c0[i] = b[i] - x[i]
	}
	return expected(P2, make([]float64, l2), make([]float64, l2)) + expected(P1, neg(a), lvp) + expected(P0, c0, lv0) + entropy
}

// repeatRows returns x repeated n times as (n, len(x)).
func repeatRows(x []float64, n int) *tensor.Tensor {
	v := make([]float64, 0, n*len(x))
	for range n {
		v = append(v, x...)
	}
	return tensor.FromFloat64s(v, n, len(x))
}

func meanSE(v []float64) (float64, float64) {
	var m, s2 float64
	for _, u := range v {
		m += u
	}
	m /= float64(len(v))
	for _, u := range v {
		s2 += (u - m) * (u - m)
	}
	return m, math.Sqrt(s2 / float64(len(v)-1) / float64(len(v)))
}

// In the linear-Gaussian case the single-sample ELBO is an unbiased
// estimate of its closed form, which lies below the exact log p(x); the
// 20-sample importance-weighted bound lies in between.
func TestHVAELinearGaussianELBO(t *testing.T) {
	const d, l1, l2, n = 4, 2, 2, 20000
	m := linearHVAE(21, d, l1, l2)
	x := []float64{0.8, -0.3, 1.5, 0.2}
	logPx := exactLogMarginal(t, m, x)
	want := closedFormELBO(t, m, x)
	t.Logf("log p(x) %.4f, closed-form ELBO %.4f", logPx, want)
	require.Less(t, want, logPx-0.1, "a random q is far from the posterior")

	g := graph.New()
	rng := tensor.NewRNG(22)
	elbo, ll, kl1, kl2 := m.ELBO(g.Const(repeatRows(x, n)), g.Const(normal(rng, tensor.Float64, n, l1)), g.Const(normal(rng, tensor.Float64, n, l2)))
	got, se := meanSE(elbo.Value().Values())
	t.Logf("Monte Carlo ELBO %.4f ± %.4f", got, se)
	assert.InDelta(t, want, got, 4*se)
	assert.Less(t, se, 0.05)
	// The terms add up, and both KL terms are non-negative.
	lv, k1, k2, e := ll.Value().Values(), kl1.Value().Values(), kl2.Value().Values(), elbo.Value().Values()
	for i := range 10 {
		assert.InDelta(t, lv[i]-k1[i]-k2[i], e[i], 1e-12)
		assert.GreaterOrEqual(t, k1[i], 0.0)
		assert.GreaterOrEqual(t, k2[i], 0.0)
	}
	// KL(q(z₂|x) ‖ N(0, I)) depends on x only: the same in every row.
	assert.InDelta(t, k2[0], k2[n-1], 1e-12)

	g.Reset()
	iw, seIW := meanSE(m.IWAE(g.Const(repeatRows(x, 2000)), tensor.NewRNG(23), 20).Value().Values())
	t.Logf("IWAE_20 %.4f ± %.4f", iw, seIW)
	assert.Greater(t, iw, want+4*se)
	assert.Less(t, iw, logPx+4*seIW)
}

// With one-dimensional latents the ladder posterior can be the exact
// posterior p(z₂|x) p(z₁|z₂, x): setting its parameters to the Gaussian
// conditioning formulas makes the ELBO's closed form equal log p(x), the
// Monte Carlo ELBO agree with it (its analytic KL terms leave the
// reconstruction term's variance) and every importance weight
// p(x, z)/q(z|x) equal p(x), so IWAE_K is log p(x) for each noise draw.
func TestHVAEExactPosteriorIsTight(t *testing.T) {
	const d = 3
	m := linearHVAE(31, d, 1, 1)
	B, b := lin(m.Decoder.Out)
	A, a := m.Prior.Head.MeanLayer.Weight.Value.Float64s()[0], m.Prior.Head.MeanLayer.Bias.Value.Float64s()[0]
	vp := math.Exp(m.Prior.Head.ScaleLayer.Bias.Value.Float64s()[0])
	d0 := make([]float64, d)
	for i, v := range m.Decoder.LogVar.Value.Float64s() {
		d0[i] = math.Exp(v)
	}
	// p(z₁|z₂, x): the evidence of x about z₁ alone is N(μ̂, 1/λ) with
	// λ = Σ βᵢ²/d₀ᵢ and μ̂ = Σ βᵢ(xᵢ − bᵢ)/d₀ᵢ / λ.
	var lam float64
	w1 := make([]float64, d)
	var c1 float64
	for i := range d {
		beta := B.At(i, 0)
		lam += beta * beta / d0[i]
	}
	for i := range d {
		w1[i] = B.At(i, 0) / d0[i] / lam
		c1 -= B.At(i, 0) * b[i] / d0[i] / lam
	}
	set(m.Up1.Head.MeanLayer.Weight, w1...)
	set(m.Up1.Head.MeanLayer.Bias, c1)
	set(m.Up1.Head.ScaleLayer.Weight, 0)
	set(m.Up1.Head.ScaleLayer.Bias, -math.Log(lam))
	// p(z₂|x): x = γ·z₂ + (β·a + b) + η with γ = β·A, η ~ N(0, C),
	// C = vₚββᵀ + D₀; precision 1 + γᵀC⁻¹γ, mean γᵀC⁻¹(x − βa − b)/precision.
	C := mat.NewSymDense(d, nil)
	gamma := mat.NewVecDense(d, nil)
	for i := range d {
		gamma.SetVec(i, B.At(i, 0)*A)
		for j := i; j < d; j++ {
			v := vp * B.At(i, 0) * B.At(j, 0)
			if i == j {
				v += d0[i]
			}
			C.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	require.True(t, ch.Factorize(C))
	var cg mat.VecDense
	require.NoError(t, ch.SolveVecTo(&cg, gamma))
	prec := 1 + mat.Dot(gamma, &cg)
	w2 := make([]float64, d)
	var c2 float64
	for i := range d {
		w2[i] = cg.AtVec(i) / prec
		c2 -= cg.AtVec(i) * (B.At(i, 0)*a + b[i]) / prec
	}
	set(m.Up2.Head.MeanLayer.Weight, w2...)
	set(m.Up2.Head.MeanLayer.Bias, c2)
	set(m.Up2.Head.ScaleLayer.Weight, 0)
	set(m.Up2.Head.ScaleLayer.Bias, -math.Log(prec))

	xs := [][]float64{{0.5, -1, 2}, {-0.7, 0.1, 0.3}}
	for _, x := range xs {
		logPx := exactLogMarginal(t, m, x)
		assert.InDelta(t, logPx, closedFormELBO(t, m, x), 1e-9)
		g := graph.New()
		rng := tensor.NewRNG(32)
		elbo, _, _, _ := m.ELBO(g.Const(repeatRows(x, 4000)), g.Const(normal(rng, tensor.Float64, 4000, 1)), g.Const(normal(rng, tensor.Float64, 4000, 1)))
		got, se := meanSE(elbo.Value().Values())
		assert.InDelta(t, logPx, got, 4*se)
		for _, k := range []int{1, 7} {
			numtest.CloseValues(t, []float64{logPx, logPx}, m.IWAE(g.Const(repeatRows(x, 2)), rng, k).Value().Values(), 1e-9)
		}
	}
}

func TestHVAEELBOGradCheck(t *testing.T) {
	for _, lik := range []Likelihood{Bernoulli, Gaussian} {
		t.Run([]string{"bernoulli", "gaussian"}[lik], func(t *testing.T) {
			m := NewHVAE(tensor.NewRNG(41), HVAEOptions{Input: 5, Hidden: []int{4}, Latent1: 3, Hidden2: []int{3}, Latent2: 2,
				Likelihood: lik, DType: tensor.Float64})
			ps := m.Params()
			xs := tinyData(tensor.Float64, 3, 5, 42)
			eps1 := normal(tensor.NewRNG(43), tensor.Float64, 3, 3)
			eps2 := normal(tensor.NewRNG(44), tensor.Float64, 3, 2)
			var inputs []*tensor.Tensor
			for _, p := range ps {
				inputs = append(inputs, p.Value)
			}
			f := func(in []*graph.Node) *graph.Node {
				g := in[0].Graph()
				bindAll(ps, in)
				e, _, _, _ := m.ELBO(g.Const(xs), g.Const(eps1), g.Const(eps2))
				return graph.Sum(e, nil, false)
			}
			rep, err := autodiff.GradCheck(f, inputs, autodiff.GradCheckOptions{Name: "vae.HVAE.ELBO", Eps: 1e-6, Order: 1, Seed: 1})
			require.NoError(t, err)
			assert.True(t, rep.Passed, "%+v", rep)
			assert.Less(t, rep.MaxRelErr(autodiff.ModeVJP), 1e-6)
			// The IWAE bound (the bottom-up pass broadcast over the K samples)
			// with the noise fixed by reseeding.
			fk := func(in []*graph.Node) *graph.Node {
				bindAll(ps, in)
				return graph.Sum(m.IWAE(in[0].Graph().Const(xs), tensor.NewRNG(45), 3), nil, false)
			}
			rep, err = autodiff.GradCheck(fk, inputs, autodiff.GradCheckOptions{Name: "vae.HVAE.IWAE", Eps: 1e-6, Order: 1, Seed: 2})
			require.NoError(t, err)
			assert.True(t, rep.Passed, "%+v", rep)
		})
	}
}

// The training loss is −Σ ELBO (β = 1), or weighs both KL terms by β, in
// both dtypes and for both decoders; its gradients reach every parameter.
func TestHVAELossMatchesELBO(t *testing.T) {
	for _, dt := range numtest.DTypes {
		for _, lik := range []Likelihood{Bernoulli, Gaussian} {
			for _, beta := range []float64{0, 3} {
				m := NewHVAE(tensor.NewRNG(51), HVAEOptions{Input: 8, Hidden: []int{6}, Latent1: 3, Latent2: 2,
					Likelihood: lik, DType: dt, Beta: beta})
				g := graph.New()
				x := g.Const(tinyData(dt, 5, 8, 52))
				eps1, eps2 := g.Const(normal(tensor.NewRNG(53), dt, 5, 3)), g.Const(normal(tensor.NewRNG(54), dt, 5, 2))
				_, ll, kl1, kl2 := m.ELBO(x, eps1, eps2)
				sum := func(v *graph.Node) float64 { return graph.Sum(v, nil, false).Item() }
				want := -sum(ll) + max(beta, 1)*(sum(kl1)+sum(kl2))
				loss := m.Loss(x, eps1, eps2)
				assert.InDelta(t, want, loss.Item(), 1e4*numtest.Tol(dt)*math.Abs(want), "%v %v β=%g", dt, lik, beta)
				for i, gr := range nn.Gradients(loss, m.Params()) {
					assert.Greater(t, tensor.Sum(tensor.Abs(gr), nil, false).Item(), 0.0, "gradient of %s", m.Params()[i].Name)
				}
			}
		}
	}
}

func TestHVAEBadInput(t *testing.T) {
	panicsWith := func(substr string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			require.NotNil(t, r, "no panic; want %q", substr)
			err, ok := r.(*tensor.Error)
			require.True(t, ok, "panic %v is not a *tensor.Error", r)
			assert.Contains(t, err.Error(), substr)
		}()
		f()
	}
	panicsWith("vae.NewHVAE: Input = 4, Latent1 = 0", func() { NewHVAE(tensor.NewRNG(1), HVAEOptions{Input: 4, Latent2: 2}) })
	panicsWith("hidden sizes [8] and [0]", func() {
		NewHVAE(tensor.NewRNG(1), HVAEOptions{Input: 4, Hidden: []int{8}, Hidden2: []int{0}, Latent1: 2, Latent2: 2})
	})
	panicsWith("Beta = -1", func() { NewHVAE(tensor.NewRNG(1), HVAEOptions{Input: 4, Latent1: 2, Latent2: 2, Beta: -1}) })
	m := NewHVAE(tensor.NewRNG(1), HVAEOptions{Input: 4, Latent1: 3, Latent2: 2})
	g := graph.New()
	x := g.Const(tensor.Zeros(tensor.Float32, 5, 4))
	e1, e2 := g.Const(tensor.Zeros(tensor.Float32, 5, 3)), g.Const(tensor.Zeros(tensor.Float32, 5, 2))
	panicsWith("vae.HVAE.ELBO: x has shape [5 6], want (N, 4)", func() { m.ELBO(g.Const(tensor.Zeros(tensor.Float32, 5, 6)), e1, e2) })
	panicsWith("vae.HVAE.ELBO: eps1 is [5 2] float32, want (5, 3)", func() { m.ELBO(x, e2, e2) })
	panicsWith("vae.HVAE.Loss: eps2 is [4 2] float32", func() { m.Loss(x, e1, g.Const(tensor.Zeros(tensor.Float32, 4, 2))) })
	panicsWith("eps2 is [5 2] float64", func() { m.Loss(x, e1, g.Const(tensor.Zeros(tensor.Float64, 5, 2))) })
	panicsWith("vae.HVAE.IWAE: k = 0", func() { m.IWAE(x, tensor.NewRNG(1), 0) })
	panicsWith("vae.HVAE.Generate: eps1 has shape [5 2], want (5, 3)", func() { m.Generate(e2, e2) })
	// A well-formed call works.
	assert.Equal(t, []int{5}, m.IWAE(x, tensor.NewRNG(1), 2).Shape())
	assert.Equal(t, []int{5, 4}, m.Generate(e1, e2).Shape())
}
