package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// The quick mode (2,000 training digits, 20 components, K = 5) with 0 held
// out: 117 of the 1,000 test digits are zeros, so flagging everything
// would score F1 = 2·0.117/1.117 ≈ 0.21; the detector reaches 0.68 (0.72
// precision, 0.64 recall). F1 is the harmonic mean of the two, and the
// PNG is written.
func TestDemoDetectsHeldOutDigit(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"precision", "recall", "f1", "validation_f1", "train_rows", "plot"}, Pictures: []string{"anomaly_extremes.png"}},
		"-demo", "-digit", "0")
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
	clitest.Fails(t, program(), 2, "-digit", "10")
}
