package discriminant_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/discriminant"
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

func load(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/sklearn.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func classes(t *testing.T, name string) (*tensor.Tensor, []int) {
	t.Helper()
	x, y, err := data.Classes(name, "target")
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

func flat(m [][]float64) []float64 {
	var out []float64
	for _, r := range m {
		out = append(out, r...)
	}
	return out
}

// near fails unless |got − want| ≤ tol·max(1, |want|) elementwise.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.10g, want %.10g", what, i, got[i], want[i])
		}
	}
}

func equalLabels(t *testing.T, what string, got, want []int) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d predicted %d, scikit-learn %d", what, i, got[i], want[i])
		}
	}
}

func rows(x *tensor.Tensor, idx []int) *tensor.Tensor {
	d := x.Shape()[1]
	v := x.Values()
	var out []float64
	for _, i := range idx {
		out = append(out, v[i*d:(i+1)*d]...)
	}
	return tensor.FromFloat64s(out, len(idx), d)
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
	x, y := classes(t, "sklearn/iris.csv")
	l, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "coef", flat(l.Coef), flat(f.LDA.Coef), 1e-8)
	near(t, "intercept", l.Intercept, f.LDA.Intercept, 1e-8)
	sub := rows(x, f.LDA.Rows)
	near(t, "decision", l.Decision(sub).Values(), flat(f.LDA.Decision), 1e-8)
	near(t, "proba", l.PredictProba(sub).Values(), flat(f.LDA.Proba), 1e-8)
	equalLabels(t, "predict", l.Predict(x), f.LDA.Pred)
	near(t, "explained variance ratio", l.ExplainedVarianceRatio, f.LDA.EVR, 1e-8)
	z := l.Transform(tensor.Slice(x, 0, 0, 6, 1))
	if s := z.Shape(); s[0] != 6 || s[1] != 2 {
		t.Fatalf("Transform shape %v, want (6, 2)", s)
	}
	near(t, "transform", signed(z.Values(), 2), flat(f.LDA.Transform), 1e-8)

	lp, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{Priors: []float64{0.5, 0.25, 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "intercept with priors", lp.Intercept, f.LDAPriors.Intercept, 1e-8)
	near(t, "proba with priors", lp.PredictProba(sub).Values(), flat(f.LDAPriors.Proba), 1e-8)
}

func TestLinearBinaryAndLSQRMatchSklearn(t *testing.T) {
	f := load(t)
	x, y := classes(t, "sklearn/breast_cancer.csv")
	x = tensor.Slice(x, 1, 0, 10, 1)
	first := tensor.Slice(x, 0, 0, 8, 1)
	l, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "binary decision", diff(l.Decision(first).Values()), f.Binary.Decision, 1e-7)
	near(t, "binary transform", signed(l.Transform(tensor.Slice(x, 0, 0, 4, 1)).Values(), 1), flat(f.Binary.Transform), 1e-7)

	s, err := discriminant.FitLinear(x, y, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "lsqr decision", diff(s.Decision(first).Values()), f.LSQR.Decision, 1e-7)
	near(t, "lsqr proba", s.PredictProba(first).Values(), flat(f.LSQR.Proba), 1e-7)
	equalLabels(t, "lsqr predict", s.Predict(x), f.LSQR.Pred)
}

func TestQuadraticMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := classes(t, "sklearn/iris.csv")
	q, err := discriminant.FitQuadratic(x, y, discriminant.QuadraticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub := rows(x, []int{0, 50, 70, 77, 83, 106, 119, 133, 134})
	near(t, "qda decision", q.Decision(sub).Values(), flat(f.QDA.Decision), 1e-8)
	near(t, "qda proba", q.PredictProba(sub).Values(), flat(f.QDA.Proba), 1e-8)
	equalLabels(t, "qda predict", q.Predict(x), f.QDA.Pred)

	// Digits: constant pixels make every class covariance singular, so
	// they need the regularisation.
	dx, dy := classes(t, "sklearn/digits.csv")
	qd, err := discriminant.FitQuadratic(tensor.Slice(dx, 0, 0, 1000, 1), dy[:1000], discriminant.QuadraticOptions{RegParam: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "digits decision", qd.Decision(tensor.Slice(dx, 0, 1000, 1005, 1)).Values(), flat(f.QDADigits.Decision), 1e-8)
	equalLabels(t, "digits predict", qd.Predict(tensor.Slice(dx, 0, 1000, 1100, 1)), f.QDADigits.Pred)
}

func TestBadInput(t *testing.T) {
	x, y := classes(t, "sklearn/iris.csv")
	dx, dy := classes(t, "sklearn/digits.csv")
	nan := x.Clone()
	nan.SetAt(math.NaN(), 0, 0)
	one := make([]int, 150)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"NaN", second(discriminant.FitLinear(nan, y, discriminant.LinearOptions{})), "discriminant.FitLinear: x[0, 0] is NaN"},
		{"one class", second(discriminant.FitQuadratic(x, one, discriminant.QuadraticOptions{})), "discriminant.FitQuadratic: the labels hold one class"},
		{"shrinkage with SVD", second(discriminant.FitLinear(x, y, discriminant.LinearOptions{Shrinkage: 0.2})), "discriminant.FitLinear: the SVD solver does not shrink"},
		{"shrinkage range", second(discriminant.FitLinear(x, y, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: -0.5})), "discriminant.FitLinear: shrinkage -0.5 must lie in [0, 1]"},
		{"components", second(discriminant.FitLinear(x, y, discriminant.LinearOptions{Components: 3})), "discriminant.FitLinear: 3 components, but at most min(classes − 1, d) = 2"},
		{"reg param", second(discriminant.FitQuadratic(x, y, discriminant.QuadraticOptions{RegParam: 2})), "discriminant.FitQuadratic: RegParam 2 must lie in [0, 1]"},
		{"singular class covariance", second(discriminant.FitQuadratic(tensor.Slice(dx, 0, 0, 300, 1), dy[:300], discriminant.QuadraticOptions{})), "discriminant.FitQuadratic: class 0's covariance is singular"},
		{"zero columns", second(discriminant.FitLinear(tensor.Zeros(tensor.Float64, 150, 0), y, discriminant.LinearOptions{})), "discriminant.FitLinear: x has zero columns"},
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

func second[T any](_ T, err error) error { return err }
