package plot

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodedSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// Each figure writes a PNG of the documented size (inches × 96 dpi), and
// inputs that do not fit are errors naming the file.
func TestFigures(t *testing.T) {
	dir := t.TempDir()
	cm := filepath.Join(dir, "cm.png")
	require.NoError(t, Confusion(cm, "iris", [][]int{{50, 0, 0}, {0, 47, 3}, {0, 2, 48}}, []string{"setosa", "versicolor", "virginica"}))
	w, h := decodedSize(t, cm)
	assert.Equal(t, int(math.Round((1.2+1.5+1)*96)), w)
	assert.Equal(t, int(math.Round((1.2+1.5)*96)), h)
	assert.ErrorContains(t, Confusion(cm, "", [][]int{{1, 2}, {3}}, []string{"a", "b"}), "row 1 has 1 counts")

	x := []float64{0, 1, 2, 3}
	p1 := filepath.Join(dir, "gp1.png")
	require.NoError(t, Posterior1D(p1, Axes{Title: "GP", X: "x", Y: "y"}, x, []float64{0, 1, 0, -1}, []float64{0.1, 0.2, 0.3, 0.2}, []float64{1}, []float64{1.1}))
	w, h = decodedSize(t, p1)
	assert.Equal(t, []int{864, 432}, []int{w, h})
	assert.ErrorContains(t, Posterior1D(p1, Axes{}, x, []float64{0}, nil, nil, nil), "4 inputs, 1 means")

	p2 := filepath.Join(dir, "gp2.png")
	require.NoError(t, Map2D(p2, "mean", []float64{0, 1, 2}, []float64{0, 1}, [][]float64{{0, 1, 2}, {3, 4, 5}}))
	w, h = decodedSize(t, p2)
	assert.Equal(t, []int{576, 480}, []int{w, h})
	assert.ErrorContains(t, Map2D(p2, "", []float64{0, 1}, []float64{0}, [][]float64{{1}}), "row 0 has 1 values for 2 xs")
}
