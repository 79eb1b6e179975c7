package plot

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "curve.png")
	err := WritePNG(path,
		Panel{Title: "loss", XLabel: "epoch", Curves: []Curve{{Name: "train", Y: []float64{2, 1, 0.5}}}},
		Panel{Title: "series", Curves: []Curve{{Name: "a", Y: []float64{0, 1, 0}, Style: Scatter}, {Name: "b", Y: []float64{1, 0, 1}, Style: Line}}})
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	// Two panels of 5×3.5 inches side by side at vgimg's default 96 dpi.
	assert.Equal(t, 960, img.Bounds().Dx())
	assert.Equal(t, 336, img.Bounds().Dy())

	require.Error(t, WritePNG(path))
}
