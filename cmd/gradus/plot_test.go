package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/train"
)

const runLog = `{"epoch":1,"step":10,"lr":0.1,"train_loss":2.5,"metrics":{"val_loss":2.7,"val_accuracy":0.4},"seconds":1}
{"epoch":2,"step":20,"lr":0.1,"train_loss":1.5,"metrics":{"val_loss":1.9,"val_accuracy":0.6},"seconds":1}

{"epoch":3,"step":30,"lr":0.05,"train_loss":1.1,"metrics":{"val_accuracy":0.7},"seconds":1}
`

func TestPlotLog(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "run.jsonl")
	require.NoError(t, os.WriteFile(src, []byte(runLog), 0o644))
	var out bytes.Buffer
	require.NoError(t, run([]string{"plot", src}, &out))
	assert.Equal(t, "3 epochs, 2 panels: wrote "+filepath.Join(dir, "run.png")+"\n", out.String())
	f, err := os.Open(filepath.Join(dir, "run.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 960, img.Bounds().Dx()) // two panels of 480 pixels

	recs, err := train.ReadLog(bytes.NewBufferString(runLog))
	require.NoError(t, err)
	panels := logPanels(recs)
	require.Len(t, panels, 2)
	require.Len(t, panels[0].Curves, 2)
	assert.Equal(t, "train_loss", panels[0].Curves[0].Name)
	assert.Equal(t, []float64{2.5, 1.5, 1.1}, panels[0].Curves[0].Y)
	assert.Equal(t, "val_loss", panels[0].Curves[1].Name)
	assert.Equal(t, []float64{1, 2}, panels[0].Curves[1].X) // missing at epoch 3
	assert.Equal(t, []float64{0.4, 0.6, 0.7}, panels[1].Curves[0].Y)

	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"epoch":1}`+"\nnot json\n"), 0o644))
	assert.ErrorContains(t, run([]string{"plot", bad}, &out), "log line 2")
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	assert.ErrorContains(t, run([]string{"plot", empty}, &out), "no records")
	assert.ErrorContains(t, run([]string{"plot"}, &out), "usage")
}
