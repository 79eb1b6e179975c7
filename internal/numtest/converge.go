package numtest

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// Unconverged checks the rule for a fit that ran out of iterations: err
// is (or wraps) a *tensor.NotConvergedError whose Op starts with op and
// which counts at least one iteration, and the fitted model is usable:
// outputs, the values it produced (predictions, log-densities, …), are
// all finite and there is at least one. It returns the error it found.
func Unconverged(t testing.TB, err error, op string, outputs ...[]float64) *tensor.NotConvergedError {
	t.Helper()
	var nc *tensor.NotConvergedError
	if !errors.As(err, &nc) {
		t.Errorf("%s: error %v is not a *tensor.NotConvergedError", op, err)
		return nil
	}
	if !strings.HasPrefix(nc.Op, op) || nc.Iterations < 1 {
		t.Errorf("%s: NotConvergedError names %q after %d iterations", op, nc.Op, nc.Iterations)
	}
	if len(outputs) == 0 {
		t.Errorf("%s: no outputs of the model to check", op)
	}
	for _, v := range outputs {
		Finite(t, op, v)
	}
	return nc
}

// Finite fails t, naming what, when v is empty or holds a NaN or an
// infinity.
func Finite(t testing.TB, what string, v []float64) {
	t.Helper()
	if len(v) == 0 {
		t.Errorf("%s: no values", what)
	}
	for i, e := range v {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Errorf("%s: value %d is %v", what, i, e)
			return
		}
	}
}

// FitCase is one fit of a degenerate-data table: Fit fits a model and
// returns what it predicts, all of which must be finite.
type FitCase struct {
	Name string
	Fit  func() ([]float64, error)
}

// FiniteFits runs each case as the subtest prefix/Name and checks that it
// fits without error and predicts only finite values.
func FiniteFits(t *testing.T, prefix string, cases []FitCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(prefix+"/"+c.Name, func(t *testing.T) {
			out, err := c.Fit()
			if err != nil {
				t.Fatal(err)
			}
			Finite(t, c.Name, out)
		})
	}
}

// Err returns the error of a call that returns a value and an error, so
// that a table can hold just the error: numtest.Err(svm.FitSVC(...)).
func Err[T any](_ T, err error) error { return err }
