package discriminant_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/learn/discriminant"
	"github.com/gradus-ml/gradus/learn/internal/sktest"
	"github.com/gradus-ml/gradus/tensor"
)

// fixture holds scikit-learn's values, written by
// learn/internal/skfixtures/gen.py.
type fixture struct {
	LDA struct {
		Coef      [][]float64 `json:"coef"`
		Intercept []float64   `json:"intercept"`
		Rows      []int       `json:"rows"`
		Proba     [][]float64 `json:"proba"`
		Pred      []int       `json:"pred"`
		Transform [][]float64 `json:"transform"`
		EVR       []float64   `json:"explained_variance_ratio"`
		Decision  [][]float64 `json:"decision"`
	} `json:"lda"`
	LDAPriors struct {
		Intercept []float64   `json:"intercept"`
		Proba     [][]float64 `json:"proba"`
	} `json:"lda_priors"`
	LSQR struct {
		Decision []float64   `json:"decision"`
		Proba    [][]float64 `json:"proba"`
		Pred     []int       `json:"pred"`
	} `json:"lda_lsqr"`
	Binary struct {
		Decision  []float64   `json:"decision"`
		Transform [][]float64 `json:"transform"`
	} `json:"lda_binary"`
	QDA struct {
		Proba    [][]float64 `json:"proba"`
		Decision [][]float64 `json:"decision"`
		Pred     []int       `json:"pred"`
	} `json:"qda"`
	QDADigits struct {
		Decision [][]float64 `json:"decision"`
		Pred     []int       `json:"pred"`
	} `json:"qda_digits"`
}

// signed flips each column of the (m, r) values so that its first row is
// non-negative, the convention of the fixture.
func signed(v []float64, r int) []float64 {
	out := append([]float64(nil), v...)
	for q := range r {
		if out[q] < 0 {
			for i := q; i < len(out); i += r {
				out[i] = -out[i]
			}
		}
	}
	return out
}

// diff returns column 1 minus column 0 of (m, 2) scores.
func diff(v []float64) []float64 {
	out := make([]float64, len(v)/2)
	for i := range out {
		out[i] = v[2*i+1] - v[2*i]
	}
	return out
}

func TestLinearSVDMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := sktest.Classes(t, "sklearn/iris.csv")
	l, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "coef", sktest.Flat(l.Coef), sktest.Flat(f.LDA.Coef), 1e-8)
	sktest.Near(t, "intercept", l.Intercept, f.LDA.Intercept, 1e-8)
	sub := sktest.Rows(x, f.LDA.Rows)
	sktest.Near(t, "decision", l.Decision(sub).Values(), sktest.Flat(f.LDA.Decision), 1e-8)
	sktest.Near(t, "proba", l.PredictProba(sub).Values(), sktest.Flat(f.LDA.Proba), 1e-8)
	sktest.EqualLabels(t, "predict", l.Predict(x), f.LDA.Pred)
	sktest.Near(t, "explained variance ratio", l.ExplainedVarianceRatio, f.LDA.EVR, 1e-8)
	z := l.Transform(tensor.Slice(x, 0, 0, 6, 1))
	if s := z.Shape(); s[0] != 6 || s[1] != 2 {
		t.Fatalf("Transform shape %v, want (6, 2)", s)
	}
	sktest.Near(t, "transform", signed(z.Values(), 2), sktest.Flat(f.LDA.Transform), 1e-8)

	lp, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{Priors: []float64{0.5, 0.25, 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "intercept with priors", lp.Intercept, f.LDAPriors.Intercept, 1e-8)
	sktest.Near(t, "proba with priors", lp.PredictProba(sub).Values(), sktest.Flat(f.LDAPriors.Proba), 1e-8)
}

func TestLinearBinaryAndLSQRMatchSklearn(t *testing.T) {
	f := load(t)
	x, y := sktest.Classes(t, "sklearn/breast_cancer.csv")
	x = tensor.Slice(x, 1, 0, 10, 1)
	first := tensor.Slice(x, 0, 0, 8, 1)
	l, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "binary decision", diff(l.Decision(first).Values()), f.Binary.Decision, 1e-7)
	sktest.Near(t, "binary transform", signed(l.Transform(tensor.Slice(x, 0, 0, 4, 1)).Values(), 1), sktest.Flat(f.Binary.Transform), 1e-7)

	s, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "lsqr decision", diff(s.Decision(first).Values()), f.LSQR.Decision, 1e-7)
	sktest.Near(t, "lsqr proba", s.PredictProba(first).Values(), sktest.Flat(f.LSQR.Proba), 1e-7)
	sktest.EqualLabels(t, "lsqr predict", s.Predict(x), f.LSQR.Pred)
}

func TestQuadraticMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := sktest.Classes(t, "sklearn/iris.csv")
	q, err := discriminant.FitQuadratic(x, y, discriminant.QuadraticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub := sktest.Rows(x, []int{0, 50, 70, 77, 83, 106, 119, 133, 134})
	sktest.Near(t, "qda decision", q.Decision(sub).Values(), sktest.Flat(f.QDA.Decision), 1e-8)
	sktest.Near(t, "qda proba", q.PredictProba(sub).Values(), sktest.Flat(f.QDA.Proba), 1e-8)
	sktest.EqualLabels(t, "qda predict", q.Predict(x), f.QDA.Pred)

	// Digits: constant pixels make every class covariance singular, so
	// they need the regularisation.
	dx, dy := sktest.Classes(t, "sklearn/digits.csv")
	qd, err := discriminant.FitQuadratic(tensor.Slice(dx, 0, 0, 1000, 1), dy[:1000], discriminant.QuadraticOptions{RegParam: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "digits decision", qd.Decision(tensor.Slice(dx, 0, 1000, 1005, 1)).Values(), sktest.Flat(f.QDADigits.Decision), 1e-8)
	sktest.EqualLabels(t, "digits predict", qd.Predict(tensor.Slice(dx, 0, 1000, 1100, 1)), f.QDADigits.Pred)
}

func TestBadInput(t *testing.T) {
	x, y := sktest.Classes(t, "sklearn/iris.csv")
	dx, dy := sktest.Classes(t, "sklearn/digits.csv")
	nan := x.Clone()
	nan.SetAt(math.NaN(), 0, 0)
	one := make([]int, 150)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"NaN", sktest.Err(discriminant.FitLinear(nan, y, discriminant.LinearOptions{})), "discriminant.FitLinear: x[0, 0] is NaN"},
		{"one class", sktest.Err(discriminant.FitQuadratic(x, one, discriminant.QuadraticOptions{})), "discriminant.FitQuadratic: the labels hold one class"},
		{"shrinkage with SVD", sktest.Err(discriminant.FitLinear(x, y, discriminant.LinearOptions{Shrinkage: 0.2})), "discriminant.FitLinear: the SVD solver does not shrink"},
		{"shrinkage range", sktest.Err(discriminant.FitLinear(x, y, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: -0.5})), "discriminant.FitLinear: shrinkage -0.5 must lie in [0, 1]"},
		{"components", sktest.Err(discriminant.FitLinear(x, y, discriminant.LinearOptions{Components: 3})), "discriminant.FitLinear: 3 components, but at most min(classes − 1, d) = 2"},
		{"reg param", sktest.Err(discriminant.FitQuadratic(x, y, discriminant.QuadraticOptions{RegParam: 2})), "discriminant.FitQuadratic: RegParam 2 must lie in [0, 1]"},
		{"singular class covariance", sktest.Err(discriminant.FitQuadratic(tensor.Slice(dx, 0, 0, 300, 1), dy[:300], discriminant.QuadraticOptions{})), "discriminant.FitQuadratic: class 0's covariance is singular"},
		{"zero columns", sktest.Err(discriminant.FitLinear(tensor.Zeros(tensor.Float64, 150, 0), y, discriminant.LinearOptions{})), "discriminant.FitLinear: x has zero columns"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
	s, _ := discriminant.FitLinear(x, y, discriminant.LinearOptions{Solver: discriminant.LSQR})
	defer func() {
		e, ok := recover().(*tensor.Error)
		if !ok || !strings.Contains(e.Error(), "LSQR solver has no projection") {
			t.Fatalf("Transform after LSQR: panic %v, want a *tensor.Error", e)
		}
	}()
	s.Transform(x)
}

func load(t *testing.T) (f fixture) {
	sktest.Load(t, &f)
	return f
}
