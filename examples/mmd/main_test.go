package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// 3s against 8s and x against x² + ε are rejected at the smallest p-value
// 200 permutations allow; two samples of 3s are not.
func TestRejectsOnlyDifferentDistributions(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"tests", "plot"}, Pictures: []string{"nulls.png"}},
		"-n", "60", "-perms", "200")
	require.Len(t, res.Tests, 3)
	assert.InDelta(t, 1.0/201, res.Tests[0].PValue, 1e-12, res.Tests[0].Name)
	assert.Greater(t, res.Tests[1].PValue, 0.05, res.Tests[1].Name)
	assert.InDelta(t, 1.0/201, res.Tests[2].PValue, 1e-12, res.Tests[2].Name)
}
