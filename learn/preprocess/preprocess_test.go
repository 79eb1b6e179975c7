package preprocess_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/internal/sktest"
	"github.com/gradus-ml/gradus/learn/preprocess"
	"github.com/gradus-ml/gradus/tensor"
)

// fixture holds scikit-learn's values, written by
// learn/internal/skfixtures/gen.py.
type fixture struct {
	Poly3       poly `json:"poly3"`
	Interaction poly `json:"poly2_interaction"`
	Scaler      struct {
		Mean      []float64   `json:"mean"`
		Var       []float64   `json:"var"`
		Scale     []float64   `json:"scale"`
		Transform [][]float64 `json:"transform"`
	} `json:"scaler"`
	NoMean struct {
		Transform [][]float64 `json:"transform"`
	} `json:"scaler_nomean"`
}

type poly struct {
	Powers    [][]int     `json:"powers"`
	Transform [][]float64 `json:"transform"`
}

func iris(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestPolynomialFeaturesMatchSklearn(t *testing.T) {
	f := load(t)
	x := tensor.Slice(tensor.Slice(iris(t), 0, 0, 4, 1), 1, 0, 3, 1)
	for _, c := range []struct {
		opts preprocess.PolynomialOptions
		want poly
	}{
		{preprocess.PolynomialOptions{Degree: 3}, f.Poly3},
		{preprocess.PolynomialOptions{InteractionOnly: true, NoBias: true}, f.Interaction},
	} {
		p, err := preprocess.FitPolynomialFeatures(x, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Powers) != len(c.want.Powers) {
			t.Fatalf("%+v: %d columns, want %d", c.opts, len(p.Powers), len(c.want.Powers))
		}
		for k := range p.Powers {
			for j := range p.Powers[k] {
				if p.Powers[k][j] != c.want.Powers[k][j] {
					t.Fatalf("%+v: column %d has powers %v, scikit-learn %v", c.opts, k, p.Powers[k], c.want.Powers[k])
				}
			}
		}
		z := p.Transform(x)
		sktest.Near(t, "poly transform", z.Values(), sktest.Flat(c.want.Transform), 1e-14)
		sktest.Near(t, "poly inverse", p.InverseTransform(z).Values(), x.Values(), 0)
	}
}

func TestStandardScalerMatchesSklearn(t *testing.T) {
	f := load(t)
	// iris, a constant column 3.7 (variance zero up to rounding: scale 1)
	// and diabetes' first column.
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		t.Fatal(err)
	}
	age, _ := tab.Select("age")
	x := tensor.Concat(1, iris(t), tensor.Full(tensor.Float64, 3.7, 150, 1), tensor.Slice(age, 0, 0, 150, 1))
	s, err := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "mean", s.Mean, f.Scaler.Mean, 1e-14)
	sktest.Near(t, "var", s.Var, f.Scaler.Var, 1e-12)
	sktest.Near(t, "scale", s.Scale, f.Scaler.Scale, 1e-12)
	if s.Scale[4] != 1 {
		t.Fatalf("constant column scale %v, want 1", s.Scale[4])
	}
	first := tensor.Slice(x, 0, 0, 3, 1)
	sktest.Near(t, "transform", s.Transform(first).Values(), sktest.Flat(f.Scaler.Transform), 1e-12)
	sktest.Near(t, "inverse", s.InverseTransform(s.Transform(x)).Values(), x.Values(), 1e-14)

	nm, err := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{NoMean: true})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "transform without mean", nm.Transform(first).Values(), sktest.Flat(f.NoMean.Transform), 1e-12)
	ns, _ := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{NoStd: true})
	got := ns.Transform(first).Values()
	xv := first.Values()
	for i := range got {
		if want := xv[i] - s.Mean[i%6]; math.Abs(got[i]-want) > 1e-14 {
			t.Fatalf("NoStd transform[%d] = %v, want %v", i, got[i], want)
		}
	}
	if z := s.Transform(x.Cast(tensor.Float32)); z.DType() != tensor.Float32 {
		t.Fatalf("Transform of float32 gave %v", z.DType())
	}
}

func TestBadInput(t *testing.T) {
	x := iris(t)
	nan := x.Clone()
	nan.SetAt(math.NaN(), 2, 3)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"NaN", sktest.Err(preprocess.FitStandardScaler(nan, preprocess.StandardScalerOptions{})), "preprocess.FitStandardScaler: x[2, 3] is NaN"},
		{"zero columns", sktest.Err(preprocess.FitPolynomialFeatures(tensor.Zeros(tensor.Float64, 3, 0), preprocess.PolynomialOptions{})), "preprocess.FitPolynomialFeatures: x has zero columns"},
		{"degree", sktest.Err(preprocess.FitPolynomialFeatures(x, preprocess.PolynomialOptions{Degree: -1})), "preprocess.FitPolynomialFeatures: degree -1 must be at least 1"},
		{"nil", sktest.Err(preprocess.FitStandardScaler(nil, preprocess.StandardScalerOptions{})), "preprocess.FitStandardScaler: x is nil"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
	s, _ := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{})
	defer func() {
		e, ok := recover().(*tensor.Error)
		if !ok || !strings.Contains(e.Error(), "preprocess.StandardScaler.Transform") {
			t.Fatalf("Transform of 2 columns: panic %v, want a *tensor.Error naming the call", e)
		}
	}()
	s.Transform(tensor.Zeros(tensor.Float64, 1, 2))
}

func load(t *testing.T) (f fixture) {
	sktest.Load(t, &f)
	return f
}
