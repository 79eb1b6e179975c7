package plot

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

func decode(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "curve.png")
	err := WritePNG(path,
		Panel{Title: "loss", XLabel: "epoch", Curves: []Curve{{Name: "train", Y: []float64{2, 1, 0.5}}}},
		Panel{Title: "series", Curves: []Curve{{Name: "a", Y: []float64{0, 1, 0}, Style: Scatter}, {Name: "b", X: []float64{0, 5, 9}, Y: []float64{1, 0, 1}, Style: Line}}})
	require.NoError(t, err)
	img, err := png.Decode(decode(t, path))
	require.NoError(t, err)
	// Two panels of 5×3.5 inches side by side at vgimg's default 96 dpi.
	assert.Equal(t, 960, img.Bounds().Dx())
	assert.Equal(t, 336, img.Bounds().Dy())

	require.Error(t, WritePNG(path))
	err = WritePNG(path, Panel{Curves: []Curve{{Name: "bad", X: []float64{1}, Y: []float64{1, 2}}}})
	require.ErrorContains(t, err, `curve "bad": 1 x and 2 y values`)
}

// Three panels in rows of two: a histogram with a vertical line, a band
// with rings, and a heat map under a scatter; the fourth cell stays empty.
func TestWriteGrid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grid.png")
	x := []float64{0, 1, 2}
	err := WriteGrid(path, 2,
		Panel{Title: "null", Curves: []Curve{{Name: "permutations", Y: []float64{0.1, 0.2, 0.2, 0.3}, Style: Histogram, Bins: 3}, {Name: "observed", X: []float64{0.5}, Style: VLines}}},
		Panel{Title: "fit", Bands: []Band{{Name: "±2 sd", X: x, Lo: []float64{-1, -1, -1}, Hi: []float64{1, 2, 1}}},
			Curves: []Curve{{Name: "data", X: x, Y: []float64{0, 1, 0}, Style: Scatter}, {Name: "support", X: x[:1], Y: []float64{0}, Style: Rings},
				{Name: "through the data", X: x, Y: []float64{0, 0.8, 0.1}, Style: Line, Like: 1}}},
		Panel{Title: "density", Map: &Map{X: x, Y: x[:2], Z: [][]float64{{0, 1, 2}, {1, 2, 3}}}, Curves: []Curve{{Y: []float64{1, 0.5}, Style: Scatter}}})
	require.NoError(t, err)
	img, err := png.Decode(decode(t, path))
	require.NoError(t, err)
	assert.Equal(t, []int{960, 672}, []int{img.Bounds().Dx(), img.Bounds().Dy()})

	for _, c := range []struct {
		pn   Panel
		want string
	}{
		{Panel{Title: "a", Bands: []Band{{Name: "b", X: x, Lo: x[:2], Hi: x}}}, `panel "a": band "b" has 3 x, 2 low and 3 high values`},
		{Panel{Title: "m", Map: &Map{X: x, Y: x[:1], Z: [][]float64{{1}}}}, `panel "m": map row 0 has 1 values for 3 xs`},
		{Panel{Title: "v", Curves: []Curve{{Name: "l", X: []float64{math.NaN()}, Style: VLines}}}, "vertical line at NaN"},
		{Panel{Title: "h", Curves: []Curve{{Name: "e", Style: Histogram}}}, `curve "e": histogram of no values`},
	} {
		assert.ErrorContains(t, WritePNG(path, c.pn), c.want)
	}
	assert.ErrorContains(t, WriteGrid(path, 0, Panel{}), "1 panels in 0 columns")
}

// Two 2×2 images, scaled by 2, in a grid of 2 columns: each cell is 5
// pixels wide (4 + border), plus the outer border.
func TestImageGrid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grid.png")
	imgs := tensor.FromValues(tensor.Float32, []float64{0, 1, 0.5, 2, 1, 1, 1, 1}, 2, 2, 2)
	require.NoError(t, ImageGrid(path, imgs, 2, 2, 0, 1))
	img, err := png.Decode(decode(t, path))
	require.NoError(t, err)
	assert.Equal(t, 11, img.Bounds().Dx())
	assert.Equal(t, 6, img.Bounds().Dy())
	grey := func(x, y int) uint32 { r, _, _, _ := img.At(x, y).RGBA(); return r >> 8 }
	assert.Equal(t, uint32(255), grey(0, 0)) // border
	assert.Equal(t, uint32(0), grey(1, 1))   // value 0
	assert.Equal(t, uint32(0), grey(2, 2))   // same pixel, scaled
	assert.Equal(t, uint32(255), grey(3, 1)) // value 1
	assert.Equal(t, uint32(128), grey(1, 3)) // value 0.5
	assert.Equal(t, uint32(255), grey(3, 3)) // value 2 clipped to 1

	require.ErrorContains(t, ImageGrid(path, tensor.Zeros(tensor.Float32, 4), 2, 1, 0, 1), "want (n, h, w)")
	require.ErrorContains(t, ImageGrid(path, imgs, 0, 1, 0, 1), "0 columns")
}

func TestByLabel(t *testing.T) {
	xy := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 3, 2)
	c := ByLabel(xy, []int{1, 0, 1}, []string{"a", "b"})
	require.Len(t, c, 2)
	assert.Equal(t, Curve{Name: "a", Style: Scatter, X: []float64{2}, Y: []float64{3}}, c[0])
	assert.Equal(t, Curve{Name: "b", Style: Scatter, X: []float64{0, 4}, Y: []float64{1, 5}}, c[1])
	assert.Equal(t, []string{"0", "1", "2"}, Names(3))
	defer func() {
		e, ok := recover().(*tensor.Error)
		require.True(t, ok)
		assert.Equal(t, "label 2 of point 1 outside 0 … 1", e.Msg)
	}()
	assert.Panics(t, func() { ByLabel(xy, []int{0, 1}, []string{"a", "b"}) })
	ByLabel(xy, []int{0, 2, 1}, []string{"a", "b"})
}
