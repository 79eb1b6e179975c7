package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/tensor"
)

// A short run already beats the standard normal on held-out moons by a
// wide margin (2.81 nats per point: the data are standardised), and the
// samples' moments follow the data's.
func TestTwoMoons(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"test_nll", "base_test_nll", "train_nll_per_100_steps", "sample_mean", "data_mean", "plot", "log", "parameters"}, Pictures: []string{"flow.png"}},
		"-steps", "300", "-layers", "6", "-hidden", "32")
	assert.InDelta(t, 2.81, res.BaseNLL, 0.05)
	assert.Less(t, res.TestNLL, res.BaseNLL-0.6)
	for j := range 2 {
		assert.Less(t, math.Abs(res.SampleMean[j]-res.DataMean[j]), 0.15, "mean %d", j)
		assert.InDelta(t, res.DataStd[j], res.SampleStd[j], 0.2, "sd %d", j)
	}
	// Three windows of 100 steps, one JSON line each from the Trainer.
	require.Len(t, res.Curve, 3)
	assert.Less(t, res.Curve[2], res.Curve[0])
	log := clitest.Log(t, res.Log)
	require.Len(t, log, 3)
	assert.Equal(t, 300, log[2].Step)
	clitest.Fails(t, program(), 2, "-steps", "0")
	clitest.Fails(t, program(), 2, "-data", "cifar")
}

// The uniform density on [0, 1)^784 codes each 8-bit pixel in exactly 8
// bits: bitsPerDim(0) = 784·ln 256/(784·ln 2) = 8.
func TestBitsPerDimUniform(t *testing.T) {
	assert.Equal(t, 8.0, bitsPerDim(0))
	// Each nat per image below the uniform's saves 1/(784·ln 2) bits.
	assert.InDelta(t, 8-1/(784*math.Ln2), bitsPerDim(-1), 1e-12)
}

// The logit-dequantisation baseline's log-det for one pixel by hand:
// byte 128 with u = ½ is y = 128.5/256, p = 0.05 + 0.9·y = ½ + 0.0017578125,
// and log |dy/dx| = log((¼ − 0.0017578125²)/0.9). With one training
// image the fitted Gaussian sits on the point (sd floored at 10⁻³), so the
// test NLL of that pixel is ½ log 2π + log 10⁻³ + log |dy/dx| per pixel.
func TestLogitStatsOnePixel(t *testing.T) {
	v := make([]float64, pixels)
	for i := range v {
		v[i] = 128.5 / 256
	}
	y := tensor.FromFloat64s(v, 1, pixels)
	mean, sd, nll := logitStats(y, y)
	assert.InDelta(t, math.Log(0.5017578125/0.4982421875), mean[0], 1e-12)
	assert.Equal(t, 1e-3, sd[0])
	ld := math.Log((0.25 - 0.0017578125*0.0017578125) / 0.9)
	assert.InDelta(t, pixels*(0.5*math.Log(2*math.Pi)+math.Log(1e-3)+ld), nll, 1e-9)
}

// A quick MNIST run (2,000 training digits, one epoch, two couplings)
// already beats the independent per-pixel Gaussians in logit space on 500
// test digits, and writes the sample grid and one log line per epoch.
func TestMNISTQuick(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[mnistResult](t, program(), clitest.Expect{Fields: []string{"test_bpd", "baseline_test_bpd", "uniform_bpd", "train_bpd_per_epoch", "parameters"}, Pictures: []string{"flow-mnist.png"}},
		"-data", "mnist", "-epochs", "1", "-layers", "2", "-hidden", "64", "-train-n", "2000", "-test-n", "500")
	t.Logf("quick run: test %.3f bpd, baseline %.3f", res.TestBPD, res.BaselineBPD)
	assert.Equal(t, 8.0, res.UniformBPD)
	assert.Greater(t, res.BaselineBPD, 3.0)
	assert.Less(t, res.BaselineBPD, 8.0)
	assert.Less(t, res.TestBPD, res.BaselineBPD-0.1)
	require.Len(t, res.Curve, 1)
	require.Len(t, clitest.Log(t, res.Log), 1)
	clitest.Fails(t, program(), 2, "-data", "mnist", "-epochs", "0")
}
