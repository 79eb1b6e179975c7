package numtest

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(string, ...any)     { r.failed = true }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = true }

func TestCloseValues(t *testing.T) {
	cases := []struct {
		want, got []float64
		tol       float64
		fails     bool
	}{
		{[]float64{1, 2}, []float64{1, 2}, 0, false},
		{[]float64{100, 0}, []float64{100.5, 0.5}, 1e-2, false}, // scaled by max|want| = 100
		{[]float64{100, 0}, []float64{102, 0}, 1e-2, true},
		{[]float64{0.5}, []float64{0.5 + 2e-5}, 1e-5, true}, // scale is at least 1
		{[]float64{math.NaN()}, []float64{math.NaN()}, 0, false},
		{[]float64{math.NaN()}, []float64{0}, 1, true},
		{[]float64{math.Inf(1)}, []float64{math.Inf(-1)}, 1, true},
		{[]float64{1}, []float64{1, 2}, 1, true},
	}
	for i, c := range cases {
		r := &recorder{TB: t}
		CloseValues(r, c.want, c.got, c.tol)
		if r.failed != c.fails {
			t.Errorf("case %d: failed = %v, want %v", i, r.failed, c.fails)
		}
	}
}

func TestTolAndPick(t *testing.T) {
	if Tol(tensor.Float32) != 2e-5 || Tol(tensor.Float64) != 1e-12 {
		t.Errorf("Tol = %g, %g", Tol(tensor.Float32), Tol(tensor.Float64))
	}
	if Pick(tensor.Float32, 1, 2) != 1 || Pick(tensor.Float64, 1, 2) != 2 {
		t.Error("Pick chose the wrong value")
	}
	r := &recorder{TB: t}
	Close(r, []float64{1, 2}, tensor.FromFloat64s([]float64{1, 2.5}, 2), 0.1)
	if !r.failed {
		t.Error("Close accepted 2.5 for 2 at tol 0.1")
	}
}

// Misuse accepts only a *tensor.Error for the op, at the site, with the
// fragments.
func TestMisuse(t *testing.T) {
	cases := []struct {
		name, op, site string
		f              func()
		frag           []string
		fails          bool
	}{
		{"accepted", "x.Op", Here(), func() { tensor.Fail("x.Op", "bad thing %d", 3) }, []string{"bad thing 3"}, false},
		{"another op", "y.Op", Here(), func() { tensor.Fail("x.Op", "bad thing %d", 3) }, nil, true},
		{"another site", "x.Op", "elsewhere.go:1", func() { tensor.Fail("x.Op", "bad thing %d", 3) }, nil, true},
		{"missing fragment", "x.Op", Here(), func() { tensor.Fail("x.Op", "bad thing %d", 3) }, []string{"good thing"}, true},
		{"no panic", "x.Op", Here(), func() {}, nil, true},
		{"plain panic", "x.Op", Here(), func() { panic("x.Op: bad") }, nil, true},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		Misuse(r, c.op, c.site, c.f, c.frag...)
		if r.failed != c.fails {
			t.Errorf("%s: failed = %v, want %v", c.name, r.failed, c.fails)
		}
	}
}

// Unconverged accepts a wrapped *tensor.NotConvergedError of the op with
// finite outputs, and nothing else.
func TestUnconverged(t *testing.T) {
	nc := &tensor.NotConvergedError{Op: "x.Fit (machine 1)", Iterations: 2}
	wrapped := fmt.Errorf("outer: %w", nc)
	cases := []struct {
		name    string
		err     error
		outputs [][]float64
		fails   bool
	}{
		{"accepted", wrapped, [][]float64{{1, 2}}, false},
		{"no error", nil, [][]float64{{1}}, true},
		{"another error", errors.New("x.Fit: bad"), [][]float64{{1}}, true},
		{"NaN output", nc, [][]float64{{1, math.NaN()}}, true},
		{"empty output", nc, [][]float64{{}}, true},
		{"no outputs", nc, nil, true},
		{"no iterations", &tensor.NotConvergedError{Op: "x.Fit"}, [][]float64{{1}}, true},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		Unconverged(r, c.err, "x.Fit", c.outputs...)
		if r.failed != c.fails {
			t.Errorf("%s: failed = %v, want %v", c.name, r.failed, c.fails)
		}
	}
}
