package ppl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// The engines (NUTS, SVI, Laplace, importance sampling) on models with
// enumerated sites, against quadrature, and their errors.

var (
	twoY = []float64{-2.3, -1.6, -2.9, -1.2, 1.8, 2.6, 2.2, 3.1, 1.5, 2.4}
	twoW = []float64{0.4, 0.6}
)

// twoPrior is the prior sd of the locations: tight enough that the
// label-swapped configuration is no local mode for NUTS to settle in.
const twoPrior = 0.6

// twoMixture is a 2-component mixture with unit noise and known weights:
// locs ~ N((−2, 2), 0.6²) (the priors tell the components apart) and each
// assignment enumerated inside the data plate.
func twoMixture(c *Ctx) {
	locs := Sample(c, "locs", probabilistic.NewNormal(c.Const(tensor.FromValues(tensor.Float64, []float64{-2, 2}, 2)), c.Scalar(twoPrior)))
	Plate(c, "data", len(twoY), PlateOptions{}, func([]int) {
		z := Enumerated(c, "z", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, twoW, 2))))
		Observe(c, "y", probabilistic.NewNormal(Index(locs, z), c.Scalar(1)), tensor.FromValues(tensor.Float64, twoY, len(twoY)))
	})
}

// twoMixtureLogDensity is the log joint of the locations (a, b) with the
// assignments summed out by hand.
func twoMixtureLogDensity(a, b float64) float64 {
	s := logN(a, -2, twoPrior) + logN(b, 2, twoPrior)
	for _, y := range twoY {
		s += math.Log(twoW[0]*math.Exp(logN(y, a, 1)) + twoW[1]*math.Exp(logN(y, b, 1)))
	}
	return s
}

// twoMixtureExact returns the posterior means and variances of the two
// locations by quadrature of the exact density (assignments summed out
// by hand) on a 481 × 481 grid over [−6, 6]².
func twoMixtureExact() (mean, variance [2]float64) {
	return gridMoments(twoMixtureLogDensity, 481, -6, 6)
}

// gridMoments returns the means and variances of the two coordinates of
// the density exp(logDensity(a, b)) by quadrature on an n × n grid over
// [lo, hi]², normalised by its largest value so that none overflows.
func gridMoments(logDensity func(a, b float64) float64, n int, lo, hi float64) (mean, variance [2]float64) {
	h := (hi - lo) / float64(n-1)
	var z, m1, m2 [2]float64
	logs := make([]float64, 0, n*n)
	for i := range n {
		for j := range n {
			logs = append(logs, logDensity(lo+float64(i)*h, lo+float64(j)*h))
		}
	}
	top := math.Inf(-1)
	for _, s := range logs {
		top = math.Max(top, s)
	}
	for i := range n {
		for j := range n {
			p := math.Exp(logs[i*n+j] - top)
			v := [2]float64{lo + float64(i)*h, lo + float64(j)*h}
			for k := range 2 {
				z[k] += p
				m1[k] += p * v[k]
				m2[k] += p * v[k] * v[k]
			}
		}
	}
	for k := range 2 {
		mean[k] = m1[k] / z[k]
		variance[k] = m2[k]/z[k] - mean[k]*mean[k]
	}
	return mean, variance
}

// column returns column k of a (draws, 2) tensor.
func column(t *tensor.Tensor, k int) []float64 {
	v := t.Values()
	out := make([]float64, 0, len(v)/2)
	for i := k; i < len(v); i += 2 {
		out = append(out, v[i])
	}
	return out
}

// TestNUTSEnumeratedMixture: NUTS on the locations alone, the assignments
// summed out in its potential, recovers the posterior means and
// variances of the quadrature within 4 Monte Carlo standard errors.
func TestNUTSEnumeratedMixture(t *testing.T) {
	mean, variance := twoMixtureExact()
	p, err := NUTS(context.Background(), twoMixture, inference.NUTSOptions{Chains: 2, Warmup: 200, Draws: 400, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Samples()["z"]; ok {
		t.Error("the posterior reports the enumerated site z as a draw")
	}
	ess := p.ESS("locs").Values()
	for k := range 2 {
		within(t, fmt.Sprintf("locs[%d]", k), column(p.Samples()["locs"], k), ess[k], mean[k], variance[k])
	}
	t.Logf("exact means %.4f, variances %.4f; NUTS means %v", mean, variance, p.Mean("locs").Values())
	// The assignments' posterior, averaged over the draws: each row sums
	// to 1, and the points far from the other component go to their own.
	pz, err := InferDiscrete(twoMixture, p.Samples())
	if err != nil {
		t.Fatal(err)
	}
	z := pz["z"]
	if !slices.Equal(z.Shape(), []int{800, len(twoY), 2}) {
		t.Fatalf("InferDiscrete: shape %v", z.Shape())
	}
	v := z.Values()
	avg := make([]float64, len(twoY))
	for d := range 800 {
		for i := range twoY {
			if s := v[(d*len(twoY)+i)*2] + v[(d*len(twoY)+i)*2+1]; math.Abs(s-1) > 1e-12 {
				t.Fatalf("draw %d, point %d: probabilities sum to %v", d, i, s)
			}
			avg[i] += v[(d*len(twoY)+i)*2+1] / 800
		}
	}
	for i, y := range twoY {
		if (y < 0) != (avg[i] < 0.05) || (y > 0) != (avg[i] > 0.95) {
			t.Errorf("point %d (y = %g): p(z = 1 | data) = %.4f", i, y, avg[i])
		}
	}
}

// TestEnumerationMisuse: a continuous or unbounded site cannot be
// enumerated, a guide may not sample an enumerated site, and an
// enumerated site may not be used outside its plate; the engines return
// these as errors before any work.
func TestEnumerationMisuse(t *testing.T) {
	run := func(m Model) { Run(graph.New(), Enum(m, 1)) }
	cont, at := func(c *Ctx) { Enumerated(c, "x", normal(c, 0, 1)) }, numtest.Here()
	numtest.Misuse(t, "ppl.Enumerated", at, func() { run(cont) }, `site "x"`, "not discrete")
	pois, at := func(c *Ctx) { Enumerated(c, "k", probabilistic.NewPoisson(c.Scalar(2))) }, numtest.Here()
	numtest.Misuse(t, "ppl.Enumerated", at, func() { run(pois) }, `site "k"`, "unbounded support")
	ctx := context.Background()
	var te *tensor.Error
	withLoc := func(m Model) Model {
		return func(c *Ctx) { Sample(c, "mu", normal(c, 0, 1)); m(c) }
	}
	if _, err := NUTS(ctx, withLoc(pois), inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); !errors.As(err, &te) || !strings.Contains(err.Error(), "unbounded support") {
		t.Errorf("NUTS with an enumerated Poisson site: %v", err)
	}
	if _, err := FitSVI(ctx, withLoc(cont), AutoNormal(withLoc(cont), AutoGuideOptions{}), SVIOptions{Steps: 1}); !errors.As(err, &te) || !strings.Contains(err.Error(), "not discrete") {
		t.Errorf("FitSVI with an enumerated normal site: %v", err)
	}
	guide := func(c *Ctx) {
		loc := Param(c, "q_loc", tensor.Zeros(tensor.Float64, 2), nil)
		Sample(c, "locs", probabilistic.NewNormal(loc, c.Scalar(1)))
		Plate(c, "data", len(twoY), PlateOptions{}, func([]int) {
			Sample(c, "z", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, twoW, 2))))
		})
	}
	if _, err := FitSVI(ctx, twoMixture, guide, SVIOptions{Steps: 1}); err == nil || !strings.Contains(err.Error(), `samples "z", which the model sums out`) {
		t.Errorf("FitSVI with a guide that samples the enumerated z: %v", err)
	}
	outside := func(c *Ctx) {
		var z *graph.Node
		Plate(c, "data", 3, PlateOptions{}, func([]int) {
			z = Enumerated(c, "z", probabilistic.NewBernoulliProbs(c.Scalar(0.5)))
		})
		Observe(c, "y", probabilistic.NewNormal(Index(c.Const(vec(-1, 1)), z), c.Scalar(1)), vec(0.5, 0.5, 0.5))
	}
	if _, err := NUTS(ctx, withLoc(outside), inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); !errors.As(err, &te) || !strings.Contains(err.Error(), "use it only inside its own plates") {
		t.Errorf("NUTS with an enumerated site used outside its plate: %v", err)
	}
	stray := func(c *Ctx) {
		g := Enumerated(c, "g", probabilistic.NewBernoulliProbs(c.Scalar(0.5)))
		Plate(c, "data", 3, PlateOptions{Dim: -2}, func([]int) {
			Observe(c, "y", probabilistic.NewNormal(Index(c.Const(vec(-1, 1)), g), c.Scalar(1)), tensor.Zeros(tensor.Float64, 3, 4))
		})
	}
	if _, err := NUTS(ctx, withLoc(stray), inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); !errors.As(err, &te) || !strings.Contains(err.Error(), `site "y" has log-probability shape (2, 3, 4)`) {
		t.Errorf("NUTS with a batch axis outside the plates of a site that uses an enumerated one: %v", err)
	}
	if _, err := LogLikelihood(twoMixture, Samples{"locs": tensor.FromValues(tensor.Float64, []float64{-2, 2}, 1, 2)}); err == nil || !strings.Contains(err.Error(), "Enumerated") {
		t.Errorf("LogLikelihood of an enumerated model: %v", err)
	}
	numtest.Misuse(t, "ppl.Enum", numtest.Here(), func() { Enum(toy, -1) }, "maxPlateNesting -1")
	g := graph.New()
	numtest.Misuse(t, "ppl.Index", numtest.Here(), func() { Index(g.Const(vec(1, 2)), g.Const(vec(0, 2))) }, "index 2 at flat position 1")
	// A step that uses a state older than the loop's history shares its
	// dimension: caught where the state's distribution meets it.
	enumAt, at := func(c *Ctx, name string, d probabilistic.Distribution) *graph.Node { return Enumerated(c, name, d) }, numtest.Here()
	second := func(c *Ctx) {
		tr := c.Const(tensor.FromValues(tensor.Float64, []float64{0.9, 0.1, 0.2, 0.8}, 2, 2))
		var zs []*graph.Node
		Markov(c, 3, 1, func(s int) {
			d := probabilistic.NewCategoricalProbs(c.Const(vec(0.5, 0.5)))
			if s >= 2 {
				d = probabilistic.NewCategoricalProbs(Index(tr, zs[s-2]))
			}
			zs = append(zs, enumAt(c, fmt.Sprintf("z%d", s), d))
		})
	}
	numtest.Misuse(t, "ppl.Enum", at, func() { run(second) }, `site "z2"`, "own dimension")
	nested, at := func(c *Ctx) { Markov(c, 2, 1, func(int) { Markov(c, 2, 1, func(int) {}) }) }, numtest.Here()
	numtest.Misuse(t, "ppl.Markov", at, func() { run(nested) }, "inside another")
	numtest.Misuse(t, "ppl.Factor", numtest.Here(), func() { run(func(c *Ctx) { Factor(c, "f", nil) }) }, "nil log-factor")
}

// TestSVIEnumeratedMixture: SVI with AutoNormal over the locations only
// (the assignments summed out in the ELBO) puts the guide's means and
// standard deviations near the quadrature's posterior ones.
func TestSVIEnumeratedMixture(t *testing.T) {
	mean, variance := twoMixtureExact()
	guide := AutoNormal(twoMixture, AutoGuideOptions{})
	fit, err := FitSVI(context.Background(), twoMixture, guide, SVIOptions{Steps: 1500, Particles: 2, Objective: MeanFieldELBO, Seed: 3,
		Schedule: optim.ExponentialLR(0.05, math.Pow(0.01, 1.0/1500))})
	if err != nil {
		t.Fatal(err)
	}
	loc := fit.Params.Value("locs_auto_loc").Values()
	sd := fit.Params.Value("locs_auto_scale").Values()
	for k := range 2 {
		if math.Abs(loc[k]-mean[k]) > 0.05 || math.Abs(sd[k]/math.Sqrt(variance[k])-1) > 0.1 {
			t.Errorf("locs[%d]: guide N(%.4f, %.4f²), posterior mean %.4f, sd %.4f (asked: mean to 0.05, sd to 10 %%)", k, loc[k], sd[k], mean[k], math.Sqrt(variance[k]))
		}
	}
	t.Logf("guide means %.4f sds %.4f; exact means %.4f sds %.4f %.4f", loc, sd, mean, math.Sqrt(variance[0]), math.Sqrt(variance[1]))
}

// TestLaplaceEnumeratedMixture: FitLaplace on the enumerated mixture
// finds the mode (the hand-summed density's gradient vanishes there, by
// central differences) and its covariance is the inverse of that
// density's negative Hessian (by central differences, to 1e-5).
func TestLaplaceEnumeratedMixture(t *testing.T) {
	l, err := FitLaplace(context.Background(), twoMixture, LaplaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := l.Mean[0], l.Mean[1]
	const h = 1e-4
	f := twoMixtureLogDensity
	ga := (f(a+h, b) - f(a-h, b)) / (2 * h)
	gb := (f(a, b+h) - f(a, b-h)) / (2 * h)
	if math.Abs(ga) > 1e-6 || math.Abs(gb) > 1e-6 {
		t.Errorf("mode (%.6f, %.6f): gradient of the exact density (%.2g, %.2g)", a, b, ga, gb)
	}
	haa := (f(a+h, b) - 2*f(a, b) + f(a-h, b)) / (h * h)
	hbb := (f(a, b+h) - 2*f(a, b) + f(a, b-h)) / (h * h)
	hab := (f(a+h, b+h) - f(a+h, b-h) - f(a-h, b+h) + f(a-h, b-h)) / (4 * h * h)
	det := haa*hbb - hab*hab
	want := []float64{-hbb / det, hab / det, hab / det, -haa / det}
	for i, w := range want {
		if math.Abs(l.Cov[i]-w) > 1e-5 {
			t.Errorf("covariance %v, inverse negative Hessian %v", l.Cov, want)
			break
		}
	}
}

// TestImportanceEnumeratedMixture: importance sampling from the Laplace
// approximation, with the assignments summed out of the weights,
// estimates the log evidence of the quadrature within 4 standard errors
// (delta method: sd of the weights / (mean · √n)), and reports no draws
// of the enumerated site.
func TestImportanceEnumeratedMixture(t *testing.T) {
	const n, lo, hi = 481, -6.0, 6.0
	h := (hi - lo) / (n - 1)
	var terms []float64
	for i := range n {
		for j := range n {
			terms = append(terms, twoMixtureLogDensity(lo+float64(i)*h, lo+float64(j)*h)+2*math.Log(h))
		}
	}
	want := logSumExp(terms)
	l, err := FitLaplace(context.Background(), twoMixture, LaplaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		proposal Model
		draws    int
	}{{"Laplace", l.Guide(), 1000}} {
		w, err := Importance(context.Background(), twoMixture, tc.proposal, ImportanceOptions{Draws: tc.draws, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		// The relative standard error of the mean weight.
		m, m2 := 0.0, 0.0
		for _, lw := range w.LogW {
			e := math.Exp(lw - want)
			m += e / float64(len(w.LogW))
			m2 += e * e / float64(len(w.LogW))
		}
		se := math.Sqrt((m2-m*m)/float64(len(w.LogW))) / m
		if math.Abs(w.LogEvidence-want) > 4*se || se > 0.1 {
			t.Errorf("%s proposal: log evidence %.5f, quadrature %.5f (4 se %.3g), ESS %.0f", tc.name, w.LogEvidence, want, 4*se, w.ESS)
		}
		if _, ok := w.Samples["z"]; ok || w.Samples["locs"] == nil {
			t.Errorf("%s proposal: samples %v", tc.name, w.Samples)
		}
		t.Logf("%s: log evidence %.5f, quadrature %.5f, se %.2g, ESS %.0f", tc.name, w.LogEvidence, want, se, w.ESS)
	}
}

var (
	chainY     = []float64{-1.4, -1.8, -0.9, 1.2, 1.7, 1.1, -1.3, 1.6}
	chainInit  = []float64{0.5, 0.5}
	chainTrans = []float64{0.8, 0.2, 0.3, 0.7}
)

// chainModel is a 2-state HMM with unknown state means, locs ~
// N((−1.5, 1.5), 0.6²), unit noise and known transitions; the states are
// enumerated in a Markov loop.
func chainModel(c *Ctx) {
	locs := Sample(c, "locs", probabilistic.NewNormal(c.Const(tensor.FromValues(tensor.Float64, []float64{-1.5, 1.5}, 2)), c.Scalar(0.6)))
	tr := c.Const(tensor.FromValues(tensor.Float64, chainTrans, 2, 2))
	var z *graph.Node
	Markov(c, len(chainY), 1, func(s int) {
		d := probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, chainInit, 2)))
		if s > 0 {
			d = probabilistic.NewCategoricalProbs(Index(tr, z))
		}
		z = Enumerated(c, fmt.Sprintf("z%d", s), d)
		Observe(c, fmt.Sprintf("y%d", s), probabilistic.NewNormal(Index(locs, z), c.Scalar(1)), tensor.FromValues(tensor.Float64, []float64{chainY[s]}))
	})
}

// chainLogDensity is chainModel's log joint of the means (a, b), the
// states summed out by the forward recursion written by hand.
func chainLogDensity(a, b float64) float64 {
	mu := []float64{a, b}
	alpha := []float64{chainInit[0] * math.Exp(logN(chainY[0], a, 1)), chainInit[1] * math.Exp(logN(chainY[0], b, 1))}
	for _, y := range chainY[1:] {
		next := make([]float64, 2)
		for j := range 2 {
			next[j] = (alpha[0]*chainTrans[j] + alpha[1]*chainTrans[2+j]) * math.Exp(logN(y, mu[j], 1))
		}
		alpha = next
	}
	return logN(a, -1.5, 0.6) + logN(b, 1.5, 0.6) + math.Log(alpha[0]+alpha[1])
}

// TestNUTSEnumeratedHMM: NUTS on the state means of an HMM whose 8 states
// are enumerated recovers the quadrature's posterior means and variances
// within 4 Monte Carlo standard errors.
func TestNUTSEnumeratedHMM(t *testing.T) {
	exactMean, exactVar := gridMoments(chainLogDensity, 241, -5, 5)
	p, err := NUTS(context.Background(), chainModel, inference.NUTSOptions{Chains: 2, Warmup: 150, Draws: 250, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ess := p.ESS("locs").Values()
	for k := range 2 {
		within(t, fmt.Sprintf("locs[%d]", k), column(p.Samples()["locs"], k), ess[k], exactMean[k], exactVar[k])
	}
	t.Logf("exact means %.4f %.4f; NUTS %.4f", exactMean[0], exactMean[1], p.Mean("locs").Values())
}
