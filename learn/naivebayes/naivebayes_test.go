package naivebayes_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/learn/internal/sktest"
	"github.com/gradus-ml/gradus/learn/naivebayes"
	"github.com/gradus-ml/gradus/tensor"
)

// fixture holds scikit-learn's values, written by
// learn/internal/skfixtures/gen.py.
type fixture struct {
	Gaussian struct {
		Theta [][]float64 `json:"theta"`
		Var   [][]float64 `json:"var"`
		Prior []float64   `json:"prior"`
		Rows  []int       `json:"rows"`
		Proba [][]float64 `json:"proba"`
		JLL   [][]float64 `json:"jll"`
		Pred  []int       `json:"pred"`
	} `json:"gaussian"`
	GaussianPriors struct {
		Var   [][]float64 `json:"var"`
		Proba [][]float64 `json:"proba"`
		Pred  []int       `json:"pred"`
	} `json:"gaussian_priors"`
	Bernoulli   discrete `json:"bernoulli"`
	Multinomial discrete `json:"multinomial"`
}

type discrete struct {
	FeatureLogProb [][]float64 `json:"feature_log_prob"`
	ClassLogPrior  []float64   `json:"class_log_prior"`
	JLL            [][]float64 `json:"jll"`
	Proba          [][]float64 `json:"proba"`
	Pred           []int       `json:"pred"`
}

func TestGaussianMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := sktest.Classes(t, "sklearn/iris.csv")
	g, err := naivebayes.FitGaussian(x, y, naivebayes.GaussianOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var th, vr []float64
	for c := range g.Theta {
		th = append(th, g.Theta[c]...)
		vr = append(vr, g.Var[c]...)
	}
	near(t, "theta", th, f.Gaussian.Theta, 1e-12)
	near(t, "var", vr, f.Gaussian.Var, 1e-12)
	near(t, "prior", g.Priors, [][]float64{f.Gaussian.Prior}, 1e-15)
	sub := sktest.Rows(x, f.Gaussian.Rows)
	near(t, "proba", g.PredictProba(sub).Values(), f.Gaussian.Proba, 1e-9)
	near(t, "jll", g.JointLogLikelihood(sub).Values(), f.Gaussian.JLL, 1e-9)
	sktest.EqualLabels(t, "predict", g.Predict(x), f.Gaussian.Pred)
	// log p(x) is the log-sum-exp of the joint log-likelihoods.
	lp, jll := g.LogProb(sub).Values(), f.Gaussian.JLL
	for i, r := range jll {
		want := math.Log(math.Exp(r[0]) + math.Exp(r[1]) + math.Exp(r[2]))
		if math.Abs(lp[i]-want) > 1e-9 {
			t.Fatalf("LogProb[%d] = %v, want %v", i, lp[i], want)
		}
	}

	gp, err := naivebayes.FitGaussian(x, y, naivebayes.GaussianOptions{VarSmoothing: 1e-2, Priors: []float64{0.2, 0.3, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	vr = nil
	for c := range gp.Var {
		vr = append(vr, gp.Var[c]...)
	}
	near(t, "var with smoothing", vr, f.GaussianPriors.Var, 1e-12)
	near(t, "proba with priors", gp.PredictProba(sub).Values(), f.GaussianPriors.Proba, 1e-9)
	sktest.EqualLabels(t, "predict with priors", gp.Predict(x), f.GaussianPriors.Pred)

	p32 := g.PredictProba(sub.Cast(tensor.Float32))
	if p32.DType() != tensor.Float32 {
		t.Fatalf("PredictProba of float32 rows is %v", p32.DType())
	}
	near(t, "float32 proba", p32.Values(), f.Gaussian.Proba, 1e-5)
}

func TestDiscreteMatchSklearn(t *testing.T) {
	f := load(t)
	x, y := sktest.Classes(t, "sklearn/digits.csv")
	train, labels := tensor.Slice(x, 0, 0, 400, 1), y[:400]
	probe, test := tensor.Slice(x, 0, 400, 405, 1), tensor.Slice(x, 0, 400, 600, 1)
	b, err := naivebayes.FitBernoulli(train, labels, naivebayes.BernoulliOptions{Threshold: 4})
	if err != nil {
		t.Fatal(err)
	}
	var flp []float64
	for _, r := range b.FeatureLogProb {
		flp = append(flp, r...)
	}
	near(t, "bernoulli feature log prob", flp, f.Bernoulli.FeatureLogProb, 1e-12)
	near(t, "bernoulli class log prior", b.ClassLogPrior, [][]float64{f.Bernoulli.ClassLogPrior}, 1e-12)
	near(t, "bernoulli proba", b.PredictProba(probe).Values(), f.Bernoulli.Proba, 1e-9)
	sktest.EqualLabels(t, "bernoulli predict", b.Predict(test), f.Bernoulli.Pred)

	m, err := naivebayes.FitMultinomial(train, labels, naivebayes.MultinomialOptions{Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	flp = nil
	for _, r := range m.FeatureLogProb {
		flp = append(flp, r...)
	}
	near(t, "multinomial feature log prob", flp, f.Multinomial.FeatureLogProb, 1e-12)
	near(t, "multinomial jll", m.JointLogLikelihood(probe).Values(), f.Multinomial.JLL, 1e-10)
	near(t, "multinomial proba", m.PredictProba(probe).Values(), f.Multinomial.Proba, 1e-9)
	sktest.EqualLabels(t, "multinomial predict", m.Predict(test), f.Multinomial.Pred)
}

func TestBadInput(t *testing.T) {
	x, y := sktest.Classes(t, "sklearn/iris.csv")
	nan := x.Clone()
	nan.SetAt(math.Inf(1), 7, 1)
	one := make([]int, len(y))
	gap := append([]int(nil), y...)
	for i := range gap {
		if gap[i] == 1 {
			gap[i] = 2
		}
	}
	neg := tensor.MulScalar(x, -1)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"infinity", sktest.Err(naivebayes.FitGaussian(nan, y, naivebayes.GaussianOptions{})), "naivebayes.FitGaussian: x[7, 1] is +Inf"},
		{"one class", sktest.Err(naivebayes.FitGaussian(x, one, naivebayes.GaussianOptions{})), "naivebayes.FitGaussian: the labels hold one class"},
		{"empty class", sktest.Err(naivebayes.FitBernoulli(x, gap, naivebayes.BernoulliOptions{})), "naivebayes.FitBernoulli: class 1 has no rows"},
		{"negative alpha", sktest.Err(naivebayes.FitMultinomial(x, y, naivebayes.MultinomialOptions{Alpha: -1})), "naivebayes.FitMultinomial: alpha -1 must be positive"},
		{"negative counts", sktest.Err(naivebayes.FitMultinomial(neg, y, naivebayes.MultinomialOptions{})), "naivebayes.FitMultinomial: x[0, 0] is -5.1: counts must be non-negative"},
		{"zero columns", sktest.Err(naivebayes.FitGaussian(tensor.Zeros(tensor.Float64, 150, 0), y, naivebayes.GaussianOptions{})), "naivebayes.FitGaussian: x has zero columns"},
		{"priors", sktest.Err(naivebayes.FitGaussian(x, y, naivebayes.GaussianOptions{Priors: []float64{0.5, 0.5}})), "naivebayes.FitGaussian: 2 priors for 3 classes"},
		{"label count", sktest.Err(naivebayes.FitGaussian(x, y[:10], naivebayes.GaussianOptions{})), "naivebayes.FitGaussian: 10 labels for 150 rows"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
	g, _ := naivebayes.FitGaussian(x, y, naivebayes.GaussianOptions{})
	defer func() {
		e, ok := recover().(*tensor.Error)
		if !ok || !strings.Contains(e.Error(), "naivebayes.Gaussian.Predict") {
			t.Fatalf("Predict on 3 columns: panic %v, want a *tensor.Error naming the call", e)
		}
	}()
	g.Predict(tensor.Zeros(tensor.Float64, 2, 3))
}

// near compares got with the rows of want (see sktest.Near).
func near(t *testing.T, what string, got []float64, want [][]float64, tol float64) {
	t.Helper()
	sktest.Near(t, what, got, sktest.Flat(want), tol)
}

func load(t *testing.T) (f fixture) {
	sktest.Load(t, &f)
	return f
}
