package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// By hand: a = (0, 0, 1, 1), b = (0, 0, 0, 1). The contingency table has
// cells 2, 1, 1: Σ C(nᵢⱼ, 2) = 1; rows 2, 2 give 2; columns 3, 1 give 3;
// expected = 2·3/C(4, 2) = 1; ARI = (1 − 1)/((2 + 3)/2 − 1) = 0.
// And a = (0, 0, 1, 1, 2, 2), b = (0, 0, 1, 1, 1, 2): Σ = 2, rows 3,
// columns 1 + 3 = 4, expected 3·4/15 = 0.8, ARI = 1.2/2.7 = 4/9.
func TestAdjustedRandByHand(t *testing.T) {
	ari, err := AdjustedRand([]int{0, 0, 1, 1}, []int{0, 0, 0, 1})
	require.NoError(t, err)
	assert.InDelta(t, 0, ari, 1e-15)
	ari, err = AdjustedRand([]int{0, 0, 1, 1, 2, 2}, []int{0, 0, 1, 1, 1, 2})
	require.NoError(t, err)
	assert.InDelta(t, 4.0/9, ari, 1e-15)
	ari, err = AdjustedRand([]int{3, 3, 7, 7}, []int{1, 1, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, 1.0, ari, "a relabelling is the same partition")
	ari, err = AdjustedRand([]int{0, 0, 0}, []int{5, 5, 5})
	require.NoError(t, err)
	assert.Equal(t, 1.0, ari)
	_, err = AdjustedRand([]int{0, 1}, []int{0})
	assert.ErrorContains(t, err, "2 and 1 items")
}
