package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Full-rank ADVI matches the Laplace approximation's spread (the posterior
// is close to Gaussian with 569 observations); mean-field underestimates
// it, as it must when the weights are correlated, and reaches a lower
// ELBO. Both means sit within a fraction of a posterior sd of the mode
// (NUTS's means are up to 0.45 sd from it too: the posterior is skewed).
func TestFamiliesAgainstLaplace(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"fits", "plot"}, Pictures: []string{"elbo.png"}},
		"-samples", "4", "-steps", "4000")
	require.Len(t, res.Fits, 2)
	mf, fr := res.Fits[0], res.Fits[1]
	assert.InDelta(t, 1, fr.SDRatio, 0.15, "full rank")
	assert.Less(t, mf.SDRatio, 0.8, "mean field")
	assert.Greater(t, fr.ELBO, mf.ELBO)
	for _, f := range res.Fits {
		assert.Less(t, f.MeanErr, 0.8, f.Family)
	}
	clitest.Fails(t, program(), 2, "-steps", "50")
}
