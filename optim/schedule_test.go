package optim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func TestSchedules(t *testing.T) {
	cases := []struct {
		name  string
		s     Schedule
		steps []int
		want  []float64
	}{
		{
			// 0.1·0.5^⌊step/3⌋
			"StepLR", StepLR(0.1, 3, 0.5),
			[]int{0, 1, 2, 3, 5, 6, 9},
			[]float64{0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.0125},
		},
		{
			// 0.1·0.9^step
			"ExponentialLR", ExponentialLR(0.1, 0.9),
			[]int{0, 1, 2, 3},
			[]float64{0.1, 0.09, 0.081, 0.0729},
		},
		{
			// 0.01 + 0.09·(1 + cos(π·step/4))/2 with cos(π/4) = 0.70710678:
			// step 1: 0.01 + 0.09·0.85355339 = 0.08681981; step 2: 0.01 + 0.045;
			// step 3: 0.01 + 0.09·0.14644661 = 0.02318019; step 4: 0.01;
			// then back up with period 8, as PyTorch's closed form does.
			"CosineAnnealingLR", CosineAnnealingLR(0.1, 4, 0.01),
			[]int{0, 1, 2, 3, 4, 5, 6, 8},
			[]float64{0.1, 0.0868198051534, 0.055, 0.0231801948466, 0.01, 0.0231801948466, 0.055, 0.1},
		},
		{
			// 0.2·(step+1)/4 during the warmup, then 0.2
			"LinearWarmup constant", LinearWarmup(4, Constant(0.2)),
			[]int{0, 1, 2, 3, 4, 100},
			[]float64{0.05, 0.1, 0.15, 0.2, 0.2, 0.2},
		},
		{
			// warmup to StepLR's first rate 0.1, then StepLR shifted by 2:
			// step 4 is StepLR step 2 = 0.1·0.1
			"LinearWarmup StepLR", LinearWarmup(2, StepLR(0.1, 2, 0.1)),
			[]int{0, 1, 2, 3, 4, 5, 6},
			[]float64{0.05, 0.1, 0.1, 0.1, 0.01, 0.01, 0.001},
		},
		{
			"LinearWarmup none", LinearWarmup(0, ExponentialLR(1, 0.5)),
			[]int{0, 1, 2},
			[]float64{1, 0.5, 0.25},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i, s := range c.steps {
				require.InDelta(t, c.want[i], c.s.LR(s), 1e-12, "step %d", s)
			}
		})
	}
}

func TestScheduleMisusePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"StepLR size 0":        func() { StepLR(0.1, 0, 0.5) },
		"Cosine tMax 0":        func() { CosineAnnealingLR(0.1, 0, 0) },
		"Exponential negative": func() { ExponentialLR(-1, 0.5) },
		"Warmup nil":           func() { LinearWarmup(3, nil) },
		"negative step":        func() { StepLR(0.1, 2, 0.5).LR(-1) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				_, ok := recover().(*tensor.Error)
				require.True(t, ok, "want a *tensor.Error panic")
			}()
			f()
		})
	}
}

func TestReduceLROnPlateau(t *testing.T) {
	cases := []struct {
		name    string
		cfg     PlateauOptions
		metrics []float64
		want    []float64 // LR after each Observe, from 1
	}{
		{
			// Relative threshold 0.1: an improvement must beat best·0.9.
			// 10 is best; 9.5, 9.2, 9.1 are not < 9: third bad epoch > patience 2
			// → 0.5, cooldown 1 swallows the next bad epoch (9.05); 9.0 is bad;
			// 8 < 9 is the new best; three bad 8s → 0.25; cooldown; three
			// more → max(0.125, MinLR 0.2) = 0.2; three more → 0.2 again (no change).
			"min rel", PlateauOptions{Factor: 0.5, Patience: 2, Threshold: 0.1, Cooldown: 1, MinLR: 0.2},
			[]float64{10, 9.5, 9.2, 9.1, 9.05, 9.0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8},
			[]float64{1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2, 0.2},
		},
		{
			// Maximise with absolute threshold 0.5 and no patience: 1 is best;
			// 1.4 is not > 1.5 → ×0.1; 2 > 1.5 is the new best; 2.2 is not > 2.5 → ×0.1.
			"max abs", PlateauOptions{Maximize: true, AbsoluteThreshold: true, Threshold: 0.5, Factor: 0.1, NoDefaults: true},
			[]float64{1, 1.4, 2, 2.2},
			[]float64{1, 0.1, 0.1, 0.01},
		},
		{
			// Defaults: patience 10, so the 12th non-improving epoch reduces.
			"defaults", PlateauOptions{},
			[]float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, math.NaN()},
			[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1, 0.1},
		},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				opt := NewSGD([]*tensor.Tensor{tensor.Zeros(dt, 2)}, SGDOptions{LR: 1})
				r := NewReduceLROnPlateau(opt, c.cfg)
				for i, m := range c.metrics {
					r.Observe(m)
					require.InDelta(t, c.want[i], opt.LR(), 1e-15, "after metric %d (%g)", i, m)
				}
			})
		}
	}
}

// Stopping the "min rel" run of TestReduceLROnPlateau after any epoch and
// continuing in a fresh scheduler from State (over an optimiser at the
// learning rate reached) gives the uninterrupted run's rates.
func TestPlateauStateResumes(t *testing.T) {
	cfg := PlateauOptions{Factor: 0.5, Patience: 2, Threshold: 0.1, Cooldown: 1, MinLR: 0.2}
	metrics := []float64{10, 9.5, 9.2, 9.1, 9.05, 9.0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}
	want := []float64{1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2, 0.2}
	for cut := range metrics {
		opt := NewSGD([]*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}, SGDOptions{LR: 1})
		first := NewReduceLROnPlateau(opt, cfg)
		for _, m := range metrics[:cut] {
			first.Observe(m)
		}
		again := NewSGD([]*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}, SGDOptions{LR: opt.LR()})
		second := NewReduceLROnPlateau(again, cfg)
		require.NoError(t, second.SetState(first.State()))
		for i := cut; i < len(metrics); i++ {
			second.Observe(metrics[i])
			require.Equal(t, want[i], again.LR(), "cut after %d epochs, epoch %d", cut, i)
		}
	}
}

// A state no scheduler of these options could be in is refused, and the
// scheduler keeps its own.
func TestPlateauSetStateRefuses(t *testing.T) {
	opt := NewSGD([]*tensor.Tensor{tensor.Zeros(tensor.Float64, 2)}, SGDOptions{LR: 1})
	r := NewReduceLROnPlateau(opt, PlateauOptions{Patience: 2, Cooldown: 1})
	r.Observe(3)
	for _, c := range []struct {
		s    PlateauState
		want string
	}{
		{PlateauState{Best: math.NaN()}, "best metric NaN"},
		{PlateauState{Best: math.Inf(-1)}, "best metric -Inf: want a finite value, or +Inf"},
		{PlateauState{Best: 1, Bad: -1}, "-1 epochs without improvement: want 0 to Patience 2"},
		{PlateauState{Best: 1, Bad: 3}, "3 epochs without improvement"},
		{PlateauState{Best: 1, Cooldown: 2}, "cooldown of 2 epochs: want 0 to Cooldown 1"},
	} {
		err := r.SetState(c.s)
		if assert.Error(t, err, "%+v", c.s) {
			assert.Contains(t, err.Error(), c.want)
		}
		assert.Equal(t, PlateauState{Best: 3}, r.State(), "state changed by a refused SetState(%+v)", c.s)
	}
	up := NewReduceLROnPlateau(opt, PlateauOptions{Maximize: true})
	require.NoError(t, up.SetState(PlateauState{Best: math.Inf(-1)}), "−Inf is a maximising scheduler's start")
}
