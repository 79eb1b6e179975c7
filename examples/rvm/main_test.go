package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Tipping (2001, §5.1) reports for this problem about 7 relevance vectors
// against about 28 support vectors at similar error. Here: few relevance
// vectors (under 12), several times fewer than the SVR's support vectors,
// an error against the noiseless function well under the noise level,
// and the noise estimated within 25 %.
func TestSinc(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"relevance_vectors", "bias_kept", "noise_sd", "rmse", "svr_support_vectors", "svr_rmse", "plot"}, Pictures: []string{"fit.png"}},
		"-n", "100", "-noise", "0.1", "-lengthscale", "1.6")
	assert.Less(t, len(res.RelevanceVectors), 12)
	assert.Greater(t, len(res.RelevanceVectors), 3)
	assert.Greater(t, res.SVRSupport, 3*len(res.RelevanceVectors))
	assert.Less(t, res.RMSE, 0.05)
	assert.Less(t, math.Abs(res.NoiseSD-0.1), 0.025)
	clitest.Fails(t, program(), 2, "-n", "1")
}
