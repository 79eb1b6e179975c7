package train

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A diverging epoch (NaN loss, an infinite metric) is written as a record
// that ReadLog reads back with the same values: the log drops nothing.
func TestLogKeepsNonFiniteValues(t *testing.T) {
	recs := []Record{
		{Epoch: 1, Step: 10, LR: 0.1, TrainLoss: 0.5, Metrics: map[string]float64{"val_loss": 0.25}, Seconds: 1.5, Best: true},
		{Epoch: 2, Step: 20, LR: 0.1, TrainLoss: math.NaN(), Metrics: map[string]float64{"val_loss": math.Inf(1), "val_min": math.Inf(-1)}, Seconds: 2},
	}
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		buf.Write(append(b, '\n'))
	}
	assert.Contains(t, buf.String(), `"train_loss":"NaN"`)
	assert.Contains(t, buf.String(), `"val_loss":"+Inf"`)
	assert.Contains(t, buf.String(), `"val_min":"-Inf"`)
	assert.Contains(t, buf.String(), `"train_loss":0.5`, "finite values stay numbers")
	got, err := ReadLog(&buf)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, recs[0], got[0])
	assert.True(t, math.IsNaN(got[1].TrainLoss))
	assert.Equal(t, math.Inf(1), got[1].Metrics["val_loss"])
	assert.Equal(t, math.Inf(-1), got[1].Metrics["val_min"])
	assert.Equal(t, 20, got[1].Step)

	_, err = ReadLog(strings.NewReader(`{"epoch": 1, "train_loss": "lots"}` + "\n"))
	assert.ErrorContains(t, err, "log line 1")
	assert.ErrorContains(t, err, `"lots" is not a number`)
}
