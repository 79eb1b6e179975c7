package privacy

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// fromRows builds a (B, n) tensor of dtype dt.
func fromRows(dt tensor.DType, rows ...[]float64) *tensor.Tensor {
	var flat []float64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return tensor.FromFloat64s(flat, len(rows), len(flat)/max(len(rows), 1)).Cast(dt)
}

// Three examples, two parameters (a 2-vector and a 1-vector), clip 1.
// Example 0's gradient (3, 0 | 4) has norm 5 and becomes (0.6, 0 | 0.8);
// example 1's (0.3, 0 | 0.4) has norm 0.5 and stays; example 2's is 0.
func TestClipPerExampleHandWorked(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		w := fromRows(dt, []float64{3, 0}, []float64{0.3, 0}, []float64{0, 0})
		b := fromRows(dt, []float64{4}, []float64{0.4}, []float64{0})
		norms := ClipPerExample([]*tensor.Tensor{w, b}, 1)
		tol := 1e-6
		wantNorms := []float64{5, 0.5, 0}
		for i := range wantNorms {
			if math.Abs(norms[i]-wantNorms[i]) > tol {
				t.Errorf("%v: norm %d = %g, want %g", dt, i, norms[i], wantNorms[i])
			}
		}
		wantW, wantB := []float64{0.6, 0, 0.3, 0, 0, 0}, []float64{0.8, 0.4, 0}
		for i, v := range w.Cast(tensor.Float64).Float64s() {
			if math.Abs(v-wantW[i]) > tol {
				t.Errorf("%v: w[%d] = %g, want %g", dt, i, v, wantW[i])
			}
		}
		for i, v := range b.Cast(tensor.Float64).Float64s() {
			if math.Abs(v-wantB[i]) > tol {
				t.Errorf("%v: b[%d] = %g, want %g", dt, i, v, wantB[i])
			}
		}
	}
}

// Without noise a step is plain SGD on the mean of the clipped gradients:
// with lr 1 from 0 the parameters become −(0.6+0.3+0, 0)/div and
// −(0.8+0.4+0)/div, div the batch size 3 or ExpectedBatch.
func TestStepWithoutNoiseIsClippedMean(t *testing.T) {
	for _, c := range []struct {
		name     string
		expected float64
		div      float64
	}{{"divide by the batch", 0, 3}, {"divide by the expected batch", 6, 6}} {
		w, b := tensor.Zeros(tensor.Float64, 2), tensor.Zeros(tensor.Float64, 1)
		d := NewDPSGD(optim.NewSGD([]*tensor.Tensor{w, b}, optim.SGDOptions{LR: 1}), DPSGDOptions{Clip: 1, ExpectedBatch: c.expected})
		_, err := d.Step([]*tensor.Tensor{
			fromRows(tensor.Float64, []float64{3, 0}, []float64{0.3, 0}, []float64{0, 0}),
			fromRows(tensor.Float64, []float64{4}, []float64{0.4}, []float64{0})})
		if err != nil {
			t.Fatal(err)
		}
		got := append(w.Float64s(), b.Float64s()...)
		want := []float64{-0.9 / c.div, 0, -1.2 / c.div}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-15 {
				t.Errorf("%s: parameter %d = %.17g, want %.17g", c.name, i, got[i], want[i])
			}
		}
	}
}

// The noise: with zero gradients, σ = 2, C = 0.5 and ExpectedBatch 4, one
// SGD step at lr 1 from 0 leaves −N(0, (σC)²)/4 in each of 200,000
// coordinates: mean 0 and standard deviation 0.25. The sample mean is
// within 5 standard errors (5·0.25/√n) of 0 and the sample standard
// deviation within 5 of its standard errors (0.25/√(2n)) of 0.25. The
// same seed with data in the batch moves the parameters by exactly the
// clipped mean more: the noise does not depend on the data.
func TestStepNoiseStatistics(t *testing.T) {
	const n, sigma, clip, div = 200_000, 2.0, 0.5, 4.0
	run := func(rows [][]float64) []float64 {
		w := tensor.Zeros(tensor.Float64, n)
		d := NewDPSGD(optim.NewSGD([]*tensor.Tensor{w}, optim.SGDOptions{LR: 1}),
			DPSGDOptions{Clip: clip, NoiseMultiplier: sigma, ExpectedBatch: div, Seed: 7})
		if _, err := d.Step([]*tensor.Tensor{fromRows(tensor.Float64, rows...)}); err != nil {
			t.Fatal(err)
		}
		return w.Float64s()
	}
	zero := make([]float64, n)
	noise := run([][]float64{zero, zero, zero})
	var s, ss float64
	for _, v := range noise {
		s += v
		ss += v * v
	}
	mean := s / n
	sd := math.Sqrt(ss/n - mean*mean)
	want := sigma * clip / div
	if math.Abs(mean) > 5*want/math.Sqrt(n) {
		t.Errorf("noise mean %.5f, want 0 ± %.5f", mean, 5*want/math.Sqrt(n))
	}
	if math.Abs(sd-want) > 5*want/math.Sqrt(2*n) {
		t.Errorf("noise standard deviation %.5f, want %.5f ± %.5f", sd, want, 5*want/math.Sqrt(2*n))
	}
	// One example with gradient 3 in coordinate 0 (norm 3, clipped to 0.5).
	g := make([]float64, n)
	g[0] = 3
	withData := run([][]float64{g, zero, zero})
	if d := withData[0] - noise[0]; math.Abs(d-(-clip/div)) > 1e-12 {
		t.Errorf("coordinate 0 moved %.15g more with data, want −C/4 = %g", d, -clip/div)
	}
	if withData[1] != noise[1] {
		t.Errorf("coordinate 1: %g with data, %g without; the noise must not depend on the data", withData[1], noise[1])
	}
}

// An empty Poisson batch still adds noise (scaled by ExpectedBatch); without
// ExpectedBatch it is refused.
func TestStepEmptyBatch(t *testing.T) {
	w := tensor.Zeros(tensor.Float32, 3)
	d := NewDPSGD(optim.NewSGD([]*tensor.Tensor{w}, optim.SGDOptions{LR: 1}), DPSGDOptions{Clip: 1, NoiseMultiplier: 1, ExpectedBatch: 10})
	if _, err := d.Step([]*tensor.Tensor{tensor.Zeros(tensor.Float32, 0, 3)}); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(w.Float32s(), []float32{0, 0, 0}) {
		t.Error("an empty batch left the parameters unchanged; it must add noise")
	}
	d = NewDPSGD(optim.NewSGD([]*tensor.Tensor{w}, optim.SGDOptions{LR: 1}), DPSGDOptions{Clip: 1, NoiseMultiplier: 1})
	if _, err := d.Step([]*tensor.Tensor{tensor.Zeros(tensor.Float32, 0, 3)}); !errors.Is(err, optim.ErrMismatch) {
		t.Errorf("empty batch without ExpectedBatch: error %v, want one wrapping optim.ErrMismatch", err)
	}
}

// Per-example gradients that do not fit the parameters are refused with
// an *optim.Error wrapping ErrMismatch, the parameters unchanged.
func TestStepMismatch(t *testing.T) {
	w, b := tensor.Ones(tensor.Float64, 2), tensor.Ones(tensor.Float64, 1)
	d := NewDPSGD(optim.NewSGD([]*tensor.Tensor{w, b}, optim.SGDOptions{LR: 1}), DPSGDOptions{Clip: 1, NoiseMultiplier: 1})
	cases := []struct {
		name string
		g    []*tensor.Tensor
	}{
		{"one tensor for two parameters", []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3, 2)}},
		{"wrong row shape", []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3, 3), tensor.Zeros(tensor.Float64, 3, 1)}},
		{"batch sizes differ", []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3, 2), tensor.Zeros(tensor.Float64, 2, 1)}},
		{"wrong dtype", []*tensor.Tensor{tensor.Zeros(tensor.Float32, 3, 2), tensor.Zeros(tensor.Float64, 3, 1)}},
		{"nil", []*tensor.Tensor{nil, tensor.Zeros(tensor.Float64, 3, 1)}},
	}
	for _, c := range cases {
		_, err := d.Step(c.g)
		var oe *optim.Error
		if !errors.As(err, &oe) || !errors.Is(err, optim.ErrMismatch) {
			t.Errorf("%s: error %v, want an *optim.Error wrapping ErrMismatch", c.name, err)
		}
	}
	if !slices.Equal(w.Float64s(), []float64{1, 1}) || b.Float64s()[0] != 1 {
		t.Errorf("refused steps changed the parameters: %v %v", w.Float64s(), b.Float64s())
	}
}

// Misuse panics with a *tensor.Error naming the call.
func TestMisusePanics(t *testing.T) {
	sgd := optim.NewSGD([]*tensor.Tensor{tensor.Zeros(tensor.Float64, 1)}, optim.SGDOptions{LR: 1})
	cases := []struct {
		name string
		f    func()
	}{
		{"NewDPSGD without Clip", func() { NewDPSGD(sgd, DPSGDOptions{}) }},
		{"NewDPSGD negative σ", func() { NewDPSGD(sgd, DPSGDOptions{Clip: 1, NoiseMultiplier: -1}) }},
		{"ClipPerExample clip 0", func() { ClipPerExample([]*tensor.Tensor{tensor.Zeros(tensor.Float64, 1, 1)}, 0) }},
		{"PoissonBatch q 2", func() { PoissonBatch(tensor.NewRNG(1), 10, 2) }},
		{"NewAccountant order 1", func() { NewAccountant(AccountantOptions{Orders: []float64{1}}) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				var te *tensor.Error
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", c.name)
				} else if err, ok := r.(error); !ok || !errors.As(err, &te) {
					t.Errorf("%s: panic %v, want a *tensor.Error", c.name, r)
				}
			}()
			c.f()
		}()
	}
}

// Poisson sampling: sorted distinct indices, the size within 5 standard
// deviations (√(nq(1−q))) of nq; q = 0 and q = 1 take none and all.
func TestPoissonBatch(t *testing.T) {
	const n, q = 100_000, 0.01
	idx := PoissonBatch(tensor.NewRNG(3), n, q)
	if d := math.Abs(float64(len(idx)) - n*q); d > 5*math.Sqrt(n*q*(1-q)) {
		t.Errorf("batch of %d, want %g ± %.0f", len(idx), n*q, 5*math.Sqrt(n*q*(1-q)))
	}
	for i := 1; i < len(idx); i++ {
		if idx[i] <= idx[i-1] {
			t.Fatalf("indices not increasing at %d: %d after %d", i, idx[i], idx[i-1])
		}
	}
	if got := PoissonBatch(tensor.NewRNG(3), 50, 0); len(got) != 0 {
		t.Errorf("q = 0 took %d", len(got))
	}
	if got := PoissonBatch(tensor.NewRNG(3), 50, 1); len(got) != 50 {
		t.Errorf("q = 1 took %d of 50", len(got))
	}
}
