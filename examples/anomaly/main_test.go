package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
)

// The quick mode (2,000 training digits, 20 components, K = 5) with 0 held
// out: 117 of the 1,000 test digits are zeros, so flagging everything
// would score F1 = 2·0.117/1.117 ≈ 0.21; the detector reaches 0.68 (0.72
// precision, 0.64 recall). F1 is the harmonic mean of the two, and the
// PNG is written.
func TestDemoDetectsHeldOutDigit(t *testing.T) {
	dir := t.TempDir()
	res, err := run(config{digit: 0, components: 20, k: 5, train: 2000, seed: 1, out: dir})
	require.NoError(t, err)
	assert.Greater(t, res.F1, 0.6)
	assert.Greater(t, res.ValidationF1, 0.6)
	assert.InDelta(t, 2*res.Precision*res.Recall/(res.Precision+res.Recall), res.F1, 1e-12)
	_, y, err := data.MNIST("train")
	require.NoError(t, err)
	zeros := 0
	for _, l := range y[:2000] {
		if l == 0 {
			zeros++
		}
	}
	assert.Equal(t, 2000-zeros, res.TrainRows)
	st, err := os.Stat(res.Plot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(5000))

	_, err = run(config{digit: 10, components: 20, k: 5, train: 2000})
	assert.ErrorContains(t, err, "-digit 10")
}
