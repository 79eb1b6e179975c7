package preprocess_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/data"
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

func iris(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		t.Fatal(err)
	}
	return x
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
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
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
		near(t, "poly transform", z.Values(), flat(c.want.Transform), 1e-14)
		near(t, "poly inverse", p.InverseTransform(z).Values(), x.Values(), 0)
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
	near(t, "mean", s.Mean, f.Scaler.Mean, 1e-14)
	near(t, "var", s.Var, f.Scaler.Var, 1e-12)
	near(t, "scale", s.Scale, f.Scaler.Scale, 1e-12)
	if s.Scale[4] != 1 {
		t.Fatalf("constant column scale %v, want 1", s.Scale[4])
	}
	first := tensor.Slice(x, 0, 0, 3, 1)
	near(t, "transform", s.Transform(first).Values(), flat(f.Scaler.Transform), 1e-12)
	near(t, "inverse", s.InverseTransform(s.Transform(x)).Values(), x.Values(), 1e-14)

	nm, err := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{NoMean: true})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "transform without mean", nm.Transform(first).Values(), flat(f.NoMean.Transform), 1e-12)
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
		{"NaN", second(preprocess.FitStandardScaler(nan, preprocess.StandardScalerOptions{})), "preprocess.FitStandardScaler: x[2, 3] is NaN"},
		{"zero columns", second(preprocess.FitPolynomialFeatures(tensor.Zeros(tensor.Float64, 3, 0), preprocess.PolynomialOptions{})), "preprocess.FitPolynomialFeatures: x has zero columns"},
		{"degree", second(preprocess.FitPolynomialFeatures(x, preprocess.PolynomialOptions{Degree: -1})), "preprocess.FitPolynomialFeatures: degree -1 must be at least 1"},
		{"nil", second(preprocess.FitStandardScaler(nil, preprocess.StandardScalerOptions{})), "preprocess.FitStandardScaler: x is nil"},
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

func second[T any](_ T, err error) error { return err }
