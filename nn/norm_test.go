package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// [1, 2, 3, 4] has mean 2.5 and biased variance 1.25, so it normalises to
// (x − 2.5)/√1.25 = ±1.5/1.1180 = ±1.3416 and ±0.5/1.1180 = ±0.4472.
var (
	bnInput = []float64{1, 2, 3, 4}
	bnWant  = []float64{-1.5 / math.Sqrt(1.25), -0.5 / math.Sqrt(1.25), 0.5 / math.Sqrt(1.25), 1.5 / math.Sqrt(1.25)}
)

func TestBatchNormTrainingByHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		cases := []struct {
			name  string
			bn    *nn.BatchNorm
			shape []int
		}{
			{"1d", nn.NewBatchNorm1D(1, dt), []int{4, 1}},
			{"1d-seq", nn.NewBatchNorm1D(1, dt), []int{2, 1, 2}},
			{"2d", nn.NewBatchNorm2D(1, dt), []int{2, 1, 1, 2}},
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				bn := c.bn
				bn.Eps = 0
				g := graph.New()
				y := bn.Forward(g.Const(tensor.FromValues(dt, bnInput, c.shape...)))
				require.Equal(t, c.shape, y.Shape())
				assert.InDeltaSlice(t, bnWant, y.Value().Values(), 1e-6)
				assert.InDeltaSlice(t, []float64{-1.3416, -0.4472, 0.4472, 1.3416}, y.Value().Values(), 1e-4)

				// Running stats after one step with momentum 0.1: mean 0.9·0 + 0.1·2.5,
				// variance 0.9·1 + 0.1·(5/3) with the unbiased variance 5/3.
				assert.InDelta(t, 0.25, bn.RunningMean.Value.Values()[0], numtest.Tol(dt))
				assert.InDelta(t, 0.9+0.1*5.0/3, bn.RunningVar.Value.Values()[0], numtest.Tol(dt))
				assert.Equal(t, 1.0, bn.NumBatchesTracked.Value.Item())

				// Evaluation mode uses them: (1 − 0.25)/√(16/15).
				bn.SetTraining(false)
				ye := bn.Forward(g.Const(tensor.FromValues(dt, []float64{1, 1, 1, 1}, c.shape...)))
				assert.InDelta(t, 0.75/math.Sqrt(0.9+0.1*5.0/3), ye.Value().Values()[0], numtest.Tol(dt)*10)
				assert.InDelta(t, 0.25, bn.RunningMean.Value.Values()[0], numtest.Tol(dt), "no update in evaluation mode")
			})
		}
	}
}

func TestBatchNormChannelsAndAffine(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			bn := nn.NewBatchNorm2D(2, dt)
			bn.Eps = 0
			set(bn.Weight, 2, 1)
			set(bn.Bias, 1, -3)
			// Channel 0 holds 1, 2 (sample 0) and 3, 4 (sample 1); channel 1 holds 10·that.
			x := tensor.FromValues(dt, []float64{1, 2, 10, 20, 3, 4, 30, 40}, 2, 2, 1, 2)
			g := graph.New()
			y := bn.Forward(g.Const(x)).Value().Values()
			// Both channels normalise to bnWant (scaling does not matter), then
			// channel 0 becomes 2·x̂ + 1 and channel 1 x̂ − 3.
			w := bnWant
			want := []float64{2*w[0] + 1, 2*w[1] + 1, w[0] - 3, w[1] - 3, 2*w[2] + 1, 2*w[3] + 1, w[2] - 3, w[3] - 3}
			assert.InDeltaSlice(t, want, y, 1e-5)
			// Running means 0.25 and 2.5; running variances 0.9 + 0.1·5/3 and 0.9 + 0.1·500/3.
			assert.InDeltaSlice(t, []float64{0.25, 2.5}, bn.RunningMean.Value.Values(), numtest.Tol(dt)*10)
			assert.InDeltaSlice(t, []float64{0.9 + 0.1*5.0/3, 0.9 + 0.1*500.0/3}, bn.RunningVar.Value.Values(), numtest.Tol(dt)*100)

			names := []string{}
			for _, b := range bn.Buffers() {
				names = append(names, b.Name)
			}
			assert.Equal(t, []string{"running_mean", "running_var", "num_batches_tracked"}, names)
			assert.Equal(t, 4, nn.NumParams(bn), "buffers are not parameters")

			one := tensor.Zeros(dt, 1, 2, 1, 1)
			assert.Contains(t, panicMessage(t, func() { bn.Forward(g.Const(one)) }), "one value per channel")
			bn.SetTraining(false)
			assert.NotPanics(t, func() { bn.Forward(g.Const(one)) })
		})
	}
}

func TestLayerNormByHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			ln := nn.NewLayerNorm([]int{4}, 0, true, dt)
			g := graph.New()
			// Each row is normalised on its own: the second row is 10·the first + 5.
			x := tensor.FromValues(dt, []float64{1, 2, 3, 4, 15, 25, 35, 45}, 2, 4)
			y := ln.Forward(g.Const(x))
			assert.InDeltaSlice(t, append(append([]float64{}, bnWant...), bnWant...), y.Value().Values(), 1e-5)

			set(ln.Weight, 1, 2, 3, 4)
			set(ln.Bias, 1, 1, 1, 1)
			y = ln.Forward(g.Const(x))
			for i, v := range y.Value().Values()[:4] {
				assert.InDelta(t, bnWant[i]*float64(i+1)+1, v, 1e-5)
			}

			// Two normalised axes: (2, 2) over the last two of (1, 2, 2).
			ln2 := nn.NewLayerNorm([]int{2, 2}, 1e-5, false, dt)
			assert.Nil(t, ln2.Params())
			y2 := ln2.Forward(g.Const(tensor.FromValues(dt, bnInput, 1, 2, 2)))
			// With eps 1e-5: (x − 2.5)/√(1.25 + 1e-5).
			for i, v := range y2.Value().Values() {
				assert.InDelta(t, (bnInput[i]-2.5)/math.Sqrt(1.25+1e-5), v, 1e-6)
			}
		})
	}
}
