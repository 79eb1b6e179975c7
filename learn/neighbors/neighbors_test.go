package neighbors_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/internal/sktest"
	"github.com/gradus-ml/gradus/learn/neighbors"
	"github.com/gradus-ml/gradus/tensor"
)

// fixture holds scikit-learn's values, written by
// learn/internal/skfixtures/gen.py.
type fixture struct {
	ClfUniform  clf `json:"clf_uniform"`
	ClfDistance clf `json:"clf_distance"`
	RegUniform  struct {
		Pred []float64 `json:"pred"`
	} `json:"reg_uniform"`
	RegDistance struct {
		Pred []float64 `json:"pred"`
	} `json:"reg_distance"`
}

type clf struct {
	Pred  []int       `json:"pred"`
	Proba [][]float64 `json:"proba"`
}

func TestClassifierMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y, err := data.Classes("sklearn/breast_cancer.csv", "target")
	if err != nil {
		t.Fatal(err)
	}
	x = tensor.Slice(x, 1, 0, 4, 1)
	train, test := tensor.Slice(x, 0, 0, 400, 1), tensor.Slice(x, 0, 400, 569, 1)
	for _, c := range []struct {
		w    neighbors.Weighting
		want clf
	}{{neighbors.Uniform, f.ClfUniform}, {neighbors.Distance, f.ClfDistance}} {
		m, err := neighbors.FitClassifier(train, y[:400], neighbors.ClassifierOptions{K: 5, Weights: c.w})
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for _, r := range c.want.Proba {
			want = append(want, r...)
		}
		sktest.Near(t, "proba", m.PredictProba(test).Values(), want, 1e-12)
		pred := m.Predict(test)
		for i := range pred {
			if pred[i] != c.want.Pred[i] {
				t.Fatalf("weights %d: row %d predicted %d, scikit-learn %d", c.w, i, pred[i], c.want.Pred[i])
			}
		}
	}
}

func TestRegressorMatchesSklearn(t *testing.T) {
	f := load(t)
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tab.Select("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
	yy, _ := tab.Select("target")
	y := tensor.Reshape(yy, 442)
	train, test := tensor.Slice(x, 0, 0, 350, 1), tensor.Slice(x, 0, 350, 442, 1)
	for _, c := range []struct {
		w    neighbors.Weighting
		want []float64
	}{{neighbors.Uniform, f.RegUniform.Pred}, {neighbors.Distance, f.RegDistance.Pred}} {
		m, err := neighbors.FitRegressor(train, tensor.Slice(y, 0, 0, 350, 1), neighbors.RegressorOptions{K: 7, Weights: c.w})
		if err != nil {
			t.Fatal(err)
		}
		sktest.Near(t, "regression", m.Predict(test).Values(), c.want, 1e-10)
		p32 := m.Predict(test.Cast(tensor.Float32))
		if p32.DType() != tensor.Float32 {
			t.Fatalf("Predict of float32 rows gave %v", p32.DType())
		}
	}
}

// Hand-made ties: the query 0 is at distance 1 from rows 0 (label 1) and
// 1 (label 0) and at 2 from row 2 (label 0). With K = 2 the tie in
// distance keeps rows 0 and 1, lower index first, and the tied vote goes
// to class 0; with K = 1 row 0 alone votes. A query on a training row
// takes that row's label alone under distance weights.
func TestTiesAndExactMatches(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, -1, 2}, 3, 1)
	labels := []int{1, 0, 0}
	q := tensor.FromFloat64s([]float64{0, 2}, 2, 1)
	m, err := neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	idx, dist := m.Neighbors(q)
	if idx[0][0] != 0 || idx[0][1] != 1 || dist[0][0] != 1 || dist[0][1] != 1 {
		t.Fatalf("neighbours %v at %v, want [0 1] at [1 1]", idx[0], dist[0])
	}
	if p := m.Predict(q); p[0] != 0 {
		t.Fatalf("tied vote went to %d, want 0", p[0])
	}
	m1, _ := neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 1})
	if p := m1.Predict(q); p[0] != 1 {
		t.Fatalf("K = 1 predicted %d, want row 0's label 1", p[0])
	}
	md, _ := neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 3, Weights: neighbors.Distance})
	sktest.Near(t, "exact match", md.PredictProba(q).Values()[2:], []float64{1, 0}, 0)
	// Distance weights at 0: 1/1 for rows 0 and 1, 1/2 for row 2.
	sktest.Near(t, "inverse distance", md.PredictProba(q).Values()[:2], []float64{1.5 / 2.5, 1 / 2.5}, 1e-15)
}

func TestBadInput(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	labels := []int{0, 1, 0, 1}
	nan := tensor.FromFloat64s([]float64{0, math.NaN(), 2, 3}, 4, 1)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"K > n", sktest.Err(neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 5})), "neighbors.FitClassifier: K = 5 neighbours, but x has 4 rows"},
		{"NaN", sktest.Err(neighbors.FitRegressor(nan, x.Clone(), neighbors.RegressorOptions{K: 2})), "neighbors.FitRegressor: x[1, 0] is NaN"},
		{"one class", sktest.Err(neighbors.FitClassifier(x, []int{0, 0, 0, 0}, neighbors.ClassifierOptions{K: 1})), "neighbors.FitClassifier: the labels hold one class"},
		{"zero columns", sktest.Err(neighbors.FitClassifier(tensor.Zeros(tensor.Float64, 4, 0), labels, neighbors.ClassifierOptions{K: 1})), "neighbors.FitClassifier: x has zero columns"},
		{"weighting", sktest.Err(neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 1, Weights: 7})), "neighbors.FitClassifier: unknown weighting 7"},
		{"negative K", sktest.Err(neighbors.FitRegressor(x, tensor.Zeros(tensor.Float64, 4), neighbors.RegressorOptions{K: -1})), "neighbors.FitRegressor: K = -1 neighbours"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
}

func load(t *testing.T) (f fixture) {
	sktest.Load(t, &f)
	return f
}
