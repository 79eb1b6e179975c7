// Package numtest holds what Gradus's numeric tests share: the dtypes every
// value test runs in, the tolerances for comparing values computed in each,
// and a closeness assertion that names the first element that differs. It
// is internal: tests import it, the library never does.
package numtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// DTypes are the dtypes value tests run in, float32 first.
var DTypes = []tensor.DType{tensor.Float32, tensor.Float64}

// Tol is the tolerance for values of order one computed in dt by a short
// chain of ops: a few float32 ulps (2⁻²³ ≈ 1.2e-7) times the chain's
// length, and float64 rounding with the same margin.
func Tol(dt tensor.DType) float64 { return Pick(dt, 2e-5, 1e-12) }

// Pick returns f32 for float32 and f64 for float64, for tests whose
// computation needs tolerances other than Tol's (say why where it is used).
func Pick(dt tensor.DType, f32, f64 float64) float64 {
	if dt == tensor.Float32 {
		return f32
	}
	return f64
}

// Close fails t unless got has len(want) elements and each is within
// tol·max(1, max|want|) of want (NaNs must match NaNs). It reports the
// first element that differs.
func Close(t testing.TB, want []float64, got *tensor.Tensor, tol float64, msgAndArgs ...any) {
	t.Helper()
	if got == nil {
		t.Fatalf("%sgot a nil tensor, want %d values", prefix(msgAndArgs), len(want))
	}
	CloseValues(t, want, got.Values(), tol, msgAndArgs...)
}

// CloseValues is Close for a slice of values.
func CloseValues(t testing.TB, want, got []float64, tol float64, msgAndArgs ...any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%sgot %d values, want %d", prefix(msgAndArgs), len(got), len(want))
	}
	scale := 1.0
	for _, w := range want {
		if !math.IsNaN(w) && !math.IsInf(w, 0) {
			scale = math.Max(scale, math.Abs(w))
		}
	}
	for i, w := range want {
		g := got[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Errorf("%selement %d: got %v, want %v", prefix(msgAndArgs), i, g, w)
				return
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if w != g {
				t.Errorf("%selement %d: got %v, want %v", prefix(msgAndArgs), i, g, w)
				return
			}
		case math.Abs(g-w) > tol*scale:
			t.Errorf("%selement %d: got %.10g, want %.10g (|diff| %.3g > %.3g)", prefix(msgAndArgs), i, g, w, math.Abs(g-w), tol*scale)
			return
		}
	}
}

func prefix(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if f, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(f, msgAndArgs[1:]...) + ": "
	}
	return fmt.Sprint(msgAndArgs...) + ": "
}
