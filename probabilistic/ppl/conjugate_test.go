package ppl

import (
	"context"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// The conjugate models and their exact posteriors (Gelman et al. 2013,
// "Bayesian data analysis", chapters 2 and 14).

var (
	nnY     = []float64{0.8, 1.9, 1.2, -0.3, 2.4, 1.1, 0.6, 1.7}
	bernY   = []float64{1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0}
	poissY  = []float64{3, 5, 2, 4, 6, 3, 4}
	linX    = [][]float64{{1, -1.2}, {1, -0.4}, {1, 0.1}, {1, 0.7}, {1, 1.3}, {1, 2.0}, {1, -2.1}, {1, 0.9}}
	linY    = []float64{-1.1, 0.2, 0.9, 1.6, 2.4, 3.5, -2.0, 2.0}
	linPrec = 0.25 // prior precision of each weight: w ~ N(0, 2²)
	linSD   = 0.5  // known noise
)

// normalNormal: mu ~ N(0, 2), y ~ N(mu, 1). Posterior N(m, v) with
// v = 1/(1/4 + n), m = v·Σy.
func normalNormal(c *Ctx) {
	mu := Sample(c, "mu", normal(c, 0, 2))
	Plate(c, "data", len(nnY), PlateOptions{}, func([]int) {
		Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(nnY...))
	})
}

func normalNormalExact() (mean, variance float64) {
	v := 1 / (0.25 + float64(len(nnY)))
	s := 0.0
	for _, y := range nnY {
		s += y
	}
	return v * s, v
}

// betaBernoulli: p ~ Beta(2, 3), y ~ Bernoulli(p). Posterior Beta(2+k, 3+n−k).
func betaBernoulli(c *Ctx) {
	p := Sample(c, "p", probabilistic.NewBeta(c.Scalar(2), c.Scalar(3)))
	Plate(c, "data", len(bernY), PlateOptions{}, func([]int) {
		Observe(c, "y", probabilistic.NewBernoulliProbs(p), vec(bernY...))
	})
}

func betaExact() (mean, variance float64) {
	k := 0.0
	for _, y := range bernY {
		k += y
	}
	a, b := 2+k, 3+float64(len(bernY))-k
	return a / (a + b), a * b / ((a + b) * (a + b) * (a + b + 1))
}

// gammaPoisson: λ ~ Gamma(3, 1), y ~ Poisson(λ). Posterior Gamma(3+Σy, 1+n).
func gammaPoisson(c *Ctx) {
	l := Sample(c, "rate", probabilistic.NewGamma(c.Scalar(3), c.Scalar(1)))
	Plate(c, "data", len(poissY), PlateOptions{}, func([]int) {
		Observe(c, "y", probabilistic.NewPoisson(l), vec(poissY...))
	})
}

func gammaExact() (mean, variance float64) {
	a, b := 3.0, 1+float64(len(poissY))
	for _, y := range poissY {
		a += y
	}
	return a / b, a / (b * b)
}

// linReg: w ~ N(0, 4·I₂), y ~ N(Xw, 0.5²). Posterior N(m, S) with
// S = (τI + XᵀX/σ²)⁻¹, m = S·Xᵀy/σ².
func linReg(c *Ctx) {
	var xs []float64
	for _, r := range linX {
		xs = append(xs, r...)
	}
	x := c.Const(tensor.FromValues(tensor.Float64, xs, len(linX), 2))
	w := Sample(c, "w", probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, 2)), c.Scalar(1/math.Sqrt(linPrec))))
	Plate(c, "data", len(linY), PlateOptions{}, func([]int) {
		mean := graph.Sum(graph.Mul(x, w), []int{1}, false)
		Observe(c, "y", probabilistic.NewNormal(mean, c.Scalar(linSD)), vec(linY...))
	})
}

func linExact() (m [2]float64, s [2][2]float64) {
	var a [2][2]float64
	var b [2]float64
	for i, r := range linX {
		for j := range 2 {
			b[j] += r[j] * linY[i] / (linSD * linSD)
			for k := range 2 {
				a[j][k] += r[j] * r[k] / (linSD * linSD)
			}
		}
	}
	a[0][0] += linPrec
	a[1][1] += linPrec
	det := a[0][0]*a[1][1] - a[0][1]*a[1][0]
	s = [2][2]float64{{a[1][1] / det, -a[0][1] / det}, {-a[1][0] / det, a[0][0] / det}}
	m = [2]float64{s[0][0]*b[0] + s[0][1]*b[1], s[1][0]*b[0] + s[1][1]*b[1]}
	return m, s
}

// within checks a posterior mean and variance against the exact ones to 4
// Monte Carlo standard errors: sd/√ESS for the mean, √((μ₄ − σ⁴)/ESS) for
// the variance.
func within(t *testing.T, what string, draws []float64, ess, mean, variance float64) {
	t.Helper()
	n := float64(len(draws))
	m, v, m4 := 0.0, 0.0, 0.0
	for _, d := range draws {
		m += d / n
	}
	for _, d := range draws {
		v += (d - m) * (d - m) / n
		m4 += math.Pow(d-m, 4) / n
	}
	seMean, seVar := math.Sqrt(variance/ess), math.Sqrt(math.Max(m4-v*v, 0)/ess)
	if math.Abs(m-mean) > 4*seMean || math.Abs(v-variance) > 4*seVar {
		t.Errorf("%s: mean %.5g (exact %.5g, 4 se %.2g), variance %.5g (exact %.5g, 4 se %.2g), ESS %.0f",
			what, m, mean, 4*seMean, v, variance, 4*seVar, ess)
	}
}

func TestNUTSConjugate(t *testing.T) {
	opts := inference.NUTSOptions{Chains: 2, Warmup: 300, Draws: 600, Seed: 3}
	mNN, vNN := normalNormalExact()
	mB, vB := betaExact()
	mG, vG := gammaExact()
	linM, linS := linExact()
	cases := []struct {
		name  string
		model Model
		check func(t *testing.T, p *Posterior)
	}{
		{"normal–normal", normalNormal, func(t *testing.T, p *Posterior) {
			within(t, "mu", p.Samples()["mu"].Values(), p.ESS("mu").Item(), mNN, vNN)
			// The 5 % and 95 % quantiles: m ∓ 1.6449·sd, to 0.15 sd.
			for _, q := range []struct{ p, z float64 }{{0.05, -1.6449}, {0.95, 1.6449}} {
				if got, want := p.Quantile("mu", q.p).Item(), mNN+q.z*math.Sqrt(vNN); math.Abs(got-want) > 0.15*math.Sqrt(vNN) {
					t.Errorf("%g quantile of mu %.4f, exact %.4f", q.p, got, want)
				}
			}
		}},
		{"beta–Bernoulli", betaBernoulli, func(t *testing.T, p *Posterior) {
			within(t, "p", p.Samples()["p"].Values(), p.ESS("p").Item(), mB, vB)
		}},
		{"gamma–Poisson", gammaPoisson, func(t *testing.T, p *Posterior) {
			within(t, "rate", p.Samples()["rate"].Values(), p.ESS("rate").Item(), mG, vG)
		}},
		{"linear regression", linReg, func(t *testing.T, p *Posterior) {
			w := p.Samples()["w"].Values()
			ess := p.ESS("w").Values()
			for j := range 2 {
				col := make([]float64, len(w)/2)
				for i := range col {
					col[i] = w[2*i+j]
				}
				within(t, "w", col, ess[j], linM[j], linS[j][j])
			}
			if sh := p.Shape("w"); len(sh) != 1 || sh[0] != 2 {
				t.Errorf("w has shape %v, want (2)", sh)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NUTS(context.Background(), tc.model, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p.Sites {
				for _, r := range p.Rhat(s).Values() {
					if r > 1.05 {
						t.Errorf("R̂ of %s is %.3f", s, r)
					}
				}
			}
			tc.check(t, p)
		})
	}
}

// TestHMCThroughTheModel: static HMC (Steps > 0) through the same model.
func TestHMCThroughTheModel(t *testing.T) {
	p, err := NUTS(context.Background(), gammaPoisson, inference.NUTSOptions{Chains: 2, Warmup: 200, Draws: 400, Steps: 8, TargetAccept: 0.65, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	mG, vG := gammaExact()
	within(t, "rate", p.Samples()["rate"].Values(), p.ESS("rate").Item(), mG, vG)
}
