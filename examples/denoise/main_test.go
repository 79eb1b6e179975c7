package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Noise of σ = 1 on ±1 pixels flips a pixel's sign with probability
// Φ(−1) = 0.1587; the Ising posterior mean cuts the errors to about a
// quarter of that.
func TestDenoising(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"noisy_error_rate", "denoised_error_rate", "final_elbo", "plot"}, Pictures: []string{"digits.png"}},
		"-n", "8", "-sigma", "1", "-w", "0.8", "-sweeps", "15")
	phi := 0.5 * math.Erfc(1/math.Sqrt2)
	assert.InDelta(t, phi, res.NoisyErrorRate, 0.015)
	assert.Less(t, res.DenoisedErrorRate, res.NoisyErrorRate/3)
}
