// Package sktest holds what the tests of learn/'s estimators share to
// compare them with the scikit-learn fixtures that
// learn/internal/skfixtures/gen.py writes into each package's testdata:
// loading a fixture and a data set, and comparing values and labels. Only
// tests import it (layercheck enforces that).
package sktest

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/tensor"
)

// Load decodes the calling package's testdata/sklearn.json into v, or
// fails the test.
func Load(t testing.TB, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/sklearn.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// Classes returns the features and the integer "target" column of an
// embedded (or on-disk) CSV data set, or fails the test.
func Classes(t testing.TB, name string) (*tensor.Tensor, []int) {
	t.Helper()
	x, y, err := data.Classes(name, "target")
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

// Flat concatenates the rows of m.
func Flat(m [][]float64) []float64 {
	var out []float64
	for _, r := range m {
		out = append(out, r...)
	}
	return out
}

// Near fails the test unless got and want have the same length and
// |got − want| ≤ tol·max(1, |want|) elementwise.
func Near(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.17g, want %.17g (tol %g)", what, i, got[i], want[i], tol)
		}
	}
}

// EqualLabels fails the test unless got and want are the same labels.
func EqualLabels(t testing.TB, what string, got, want []int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d labels, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d predicted %d, scikit-learn %d", what, i, got[i], want[i])
		}
	}
}

// Rows returns the rows idx of the (n, d) matrix x as a new float64
// matrix.
func Rows(x *tensor.Tensor, idx []int) *tensor.Tensor {
	d := x.Shape()[1]
	v := x.Values()
	out := make([]float64, 0, len(idx)*d)
	for _, i := range idx {
		out = append(out, v[i*d:(i+1)*d]...)
	}
	return tensor.FromFloat64s(out, len(idx), d)
}

// Err returns the error of a (value, error) pair, so that a table of bad
// inputs can hold calls of fits with different result types.
func Err[T any](_ T, err error) error { return err }
