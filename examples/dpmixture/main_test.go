package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A short run: setosa is a cluster of its own, so the partition agrees
// with the species at least as well as "setosa against the rest", whose
// adjusted Rand index is by hand (3·C(50,2) − e)/((3·C(50,2) + C(50,2) +
// C(100,2))/2 − e) with e = 3·C(50,2)·(C(50,2) + C(100,2))/C(150,2):
// (3675 − 2030.7)/(4925 − 2030.7) = 0.568.
func TestIrisClusters(t *testing.T) {
	out := t.TempDir()
	res, err := run(config{Alpha: 1, Burn: 100, Keep: 20, Seed: 1, Out: out}, false)
	require.NoError(t, err)
	assert.Len(t, res.K, 20)
	assert.True(t, res.SetosaAlone, "sizes %v", res.LastSizes)
	assert.GreaterOrEqual(t, res.ARI, 0.568-0.02, "small outlier clusters may cost a little")
	for _, p := range res.Plots {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(5000))
	}
}
