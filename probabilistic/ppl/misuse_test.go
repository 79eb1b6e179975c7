package ppl

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// TestBadModelsPanicAtTheirLine: misuse inside a model panics with a
// *tensor.Error naming the model's statement.
func TestBadModelsPanicAtTheirLine(t *testing.T) {
	run := func(m Model) { Run(graph.New(), Seed(m, 1)) }
	numtest.Misuse(t, "ppl.Sample", numtest.Here(), func() { run(func(c *Ctx) { Sample(c, "a", normal(c, 0, 1)); Sample(c, "a", normal(c, 0, 1)) }) }, `site name "a" is used twice`)
	// The panic names the model's statement, not the engine's call.
	two := func(c *Ctx) *probabilistic.Normal {
		return probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, 2)), c.Scalar(1))
	}
	pairInPlate, at := func(c *Ctx) { Plate(c, "p", 3, PlateOptions{}, func([]int) { Sample(c, "z", two(c)) }) }, numtest.Here()
	numtest.Misuse(t, "ppl.Sample", at, func() { run(pairInPlate) }, `site "z" has batch shape (2,)`, `plate "p" has size 3`)
	short, at := func(c *Ctx) { Observe(c, "y", normal(c, 0, 1), vec(1, 2)) }, numtest.Here()
	shortData := func(c *Ctx) { Plate(c, "p", 3, PlateOptions{}, func([]int) { short(c) }) }
	numtest.Misuse(t, "ppl.Sample", at, func() { run(shortData) }, `site "y" has batch shape (2,)`, "size 3")
	numtest.Misuse(t, "ppl.Sample", numtest.Here(), func() { Run(graph.New(), func(c *Ctx) { Sample(c, "a", normal(c, 0, 1)) }) }, "no Seed handler")
	numtest.Misuse(t, "ppl.Plate", numtest.Here(), func() { run(func(c *Ctx) { Plate(c, "p", 3, PlateOptions{Subsample: 4}, func([]int) {}) }) }, "subsample 4")
	numtest.Misuse(t, "ppl.Plate", numtest.Here(), func() { run(func(c *Ctx) { Plate(c, "p", 3, PlateOptions{Dim: 2}, func([]int) {}) }) }, "must be negative")
	numtest.Misuse(t, "ppl.Scale", numtest.Here(), func() { Scale(toy, 0) }, "not positive")
}

// TestBadModelsFailBeforeWork: the engines return the same faults, and
// data outside a support and a guide that misses a site, as errors
// before any work.
func TestBadModelsFailBeforeWork(t *testing.T) {
	ctx := context.Background()
	dup := func(c *Ctx) { Sample(c, "a", normal(c, 0, 1)); Sample(c, "a", normal(c, 0, 1)) }
	_, err := NUTS(ctx, dup, inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10})
	var te *tensor.Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "used twice") || !strings.Contains(te.Caller, "misuse_test.go") {
		t.Errorf("NUTS on a repeated name: %v", err)
	}
	badPlate := func(c *Ctx) {
		mu := Sample(c, "mu", normal(c, 0, 1))
		Plate(c, "data", 4, PlateOptions{}, func([]int) { Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(1, 2, 3)) })
	}
	if _, err := FitSVI(ctx, badPlate, AutoNormal(badPlate, AutoGuideOptions{}), SVIOptions{Steps: 1}); !errors.As(err, &te) || !strings.Contains(err.Error(), `plate "data" has size 4`) {
		t.Errorf("FitSVI on a plate of the wrong size: %v", err)
	}
	negative := func(c *Ctx) {
		rate := Sample(c, "rate", probabilistic.NewGamma(c.Scalar(1), c.Scalar(1)))
		Observe(c, "k", probabilistic.NewPoisson(rate), vec(1, 2.5, 3))
	}
	_, err = NUTS(ctx, negative, inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10})
	var se *SupportError
	if !errors.As(err, &se) || se.Site != "k" || se.Index != 1 || se.Value != 2.5 || !strings.Contains(se.Caller, "misuse_test.go") {
		t.Errorf("NUTS on counts with 2.5 among them: %v", err)
	}
	for _, bad := range []struct {
		name string
		d    func(c *Ctx) probabilistic.Distribution
		y    *tensor.Tensor
	}{
		{"Bernoulli(0.3) at 2", func(c *Ctx) probabilistic.Distribution { return probabilistic.NewBernoulliProbs(c.Scalar(0.3)) }, vec(0, 2)},
		{"Gamma at −1", func(c *Ctx) probabilistic.Distribution { return probabilistic.NewGamma(c.Scalar(1), c.Scalar(1)) }, vec(1, -1)},
		{"Beta at 1.5", func(c *Ctx) probabilistic.Distribution { return probabilistic.NewBeta(c.Scalar(1), c.Scalar(1)) }, vec(0.5, 1.5)},
		{"Uniform(0, 2) at 3", func(c *Ctx) probabilistic.Distribution { return probabilistic.NewUniform(c.Scalar(0), c.Scalar(2)) }, vec(1, 3)},
		{"Normal at NaN", func(c *Ctx) probabilistic.Distribution { return normal(c, 0, 1) }, vec(0, nan())},
	} {
		m := func(c *Ctx) { Sample(c, "mu", normal(c, 0, 1)); Observe(c, "y", bad.d(c), bad.y) }
		if _, err := Predictive(m, nil, PredictiveOptions{Draws: 1}); !errors.As(err, &se) || se.Index != 1 {
			t.Errorf("%s: %v", bad.name, err)
		}
	}
	// A guide that misses a latent site, and one with a site the model lacks.
	two := func(c *Ctx) {
		Sample(c, "a", normal(c, 0, 1))
		Sample(c, "b", normal(c, 0, 1))
	}
	onlyA := func(c *Ctx) {
		Sample(c, "a", probabilistic.NewNormal(Param(c, "la", tensor.Scalar(tensor.Float64, 0), nil), c.Scalar(1)))
	}
	if _, err := FitSVI(ctx, two, onlyA, SVIOptions{Steps: 1}); err == nil || !strings.Contains(err.Error(), `the guide misses the latent site "b"`) {
		t.Errorf("guide without b: %v", err)
	}
	extra := func(c *Ctx) {
		onlyA(c)
		Sample(c, "b", normal(c, 0, 1))
		Sample(c, "zz", normal(c, 0, 1))
	}
	if _, err := FitSVI(ctx, two, extra, SVIOptions{Steps: 1}); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("guide with zz: %v", err)
	}
	discrete := func(c *Ctx) { Sample(c, "k", probabilistic.NewPoisson(c.Scalar(3))) }
	if _, err := NUTS(ctx, discrete, inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); err == nil || !strings.Contains(err.Error(), `latent site "k"`) {
		t.Errorf("NUTS on a discrete latent site: %v", err)
	}
	sub := func(c *Ctx) {
		mu := Sample(c, "mu", normal(c, 0, 1))
		Plate(c, "data", 4, PlateOptions{Subsample: 2}, func([]int) { Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(1, 2)) })
	}
	if _, err := NUTS(ctx, sub, inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); err == nil || !strings.Contains(err.Error(), "subsamples 2 of 4") {
		t.Errorf("NUTS on a subsampling plate: %v", err)
	}
}
