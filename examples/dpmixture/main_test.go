package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A short run: setosa is a cluster of its own, so the partition agrees
// with the species at least as well as "setosa against the rest", whose
// adjusted Rand index is by hand (3·C(50,2) − e)/((3·C(50,2) + C(50,2) +
// C(100,2))/2 − e) with e = 3·C(50,2)·(C(50,2) + C(100,2))/C(150,2):
// (3675 − 2030.7)/(4925 − 2030.7) = 0.568.
func TestIrisClusters(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"clusters_per_sweep", "clusters_mode", "ari_last", "ari_mean", "last_cluster_sizes", "setosa_alone", "plots"}, Pictures: []string{"clusters.png", "partition.png"}},
		"-alpha", "1", "-burn", "100", "-keep", "20")
	assert.Len(t, res.K, 20)
	assert.True(t, res.SetosaAlone, "sizes %v", res.LastSizes)
	assert.GreaterOrEqual(t, res.ARI, 0.568-0.02, "small outlier clusters may cost a little")
}
