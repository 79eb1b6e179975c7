package data

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

func img(vals []float64, shape ...int) Example {
	return Example{X: tensor.FromFloat64s(vals, shape...), Label: 7}
}

// By hand on a 2-channel 2×2 image.
func TestNormalizeAndFlip(t *testing.T) {
	e := img([]float64{1, 2, 3, 4, 10, 20, 30, 40}, 2, 2, 2)
	n := Normalize([]float64{1, 10}, []float64{2, 10})(e, nil)
	assert.Equal(t, []float64{0, 0.5, 1, 1.5, 0, 1, 2, 3}, n.X.Values())
	assert.Equal(t, 7, n.Label)
	f := HorizontalFlip(1)(e, tensor.NewRNG(1))
	assert.Equal(t, []float64{2, 1, 4, 3, 20, 10, 40, 30}, f.X.Values())
	assert.Equal(t, e.X.Values(), HorizontalFlip(0)(e, tensor.NewRNG(1)).X.Values())
	assert.Panics(t, func() { Normalize([]float64{0}, []float64{0}) })
	assert.Panics(t, func() { Normalize([]float64{0}, []float64{1})(e, nil) }, "2 channels, 1 mean")
}

// shifted returns the (H, W) image v moved by (dy, dx), zero-filled, by
// the definition.
func shifted(v []float64, h, w, dy, dx int) []float64 {
	out := make([]float64, h*w)
	for r := range h {
		for c := range w {
			if r-dy >= 0 && r-dy < h && c-dx >= 0 && c-dx < w {
				out[r*w+c] = v[(r-dy)*w+c-dx]
			}
		}
	}
	return out
}

// Every random crop with padding 2 of a 4×5 image is the image shifted by
// at most 2 pixels each way, and over 400 draws all 25 shifts occur.
func TestRandomCropIsABoundedShift(t *testing.T) {
	v := make([]float64, 20)
	for i := range v {
		v[i] = float64(i + 1)
	}
	e := img(v, 4, 5)
	seen := map[[2]int]bool{}
	rng := tensor.NewRNG(3)
	for range 400 {
		out := RandomCrop(2)(e, rng).X.Values()
		found := false
		for dy := -2; dy <= 2 && !found; dy++ {
			for dx := -2; dx <= 2; dx++ {
				if slices.Equal(out, shifted(v, 4, 5, dy, dx)) {
					seen[[2]int{dy, dx}], found = true, true
					break
				}
			}
		}
		require.True(t, found, "%v is no shift of the image", out)
	}
	assert.Len(t, seen, 25)
	s := RandomShift(0.25)(e, tensor.NewRNG(4)).X.Values()
	ok := false
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ { // 0.25·4 = 1 and round(0.25·5) ≤ 1
			ok = ok || slices.Equal(s, shifted(v, 4, 5, dy, dx))
		}
	}
	assert.True(t, ok)
}

// Augmented batches are the same with and without worker goroutines and
// on every run, and differ between epochs.
func TestLoaderTransformIsDeterministic(t *testing.T) {
	x := tensor.NewRNG(1).Normal(tensor.Float64, 0, 1, 12, 3, 3)
	ds := TensorDataset{X: x, Labels: make([]int, 12)}
	aug := Compose(RandomCrop(1), HorizontalFlip(0.5))
	collect := func(workers, epoch int) [][]float64 {
		l := NewLoader(ds, LoaderOptions{BatchSize: 5, Sampler: Random{N: 12, Seed: 2}, Transform: aug, Seed: 9, Workers: workers})
		var out [][]float64
		for b := range l.Epoch(epoch) {
			out = append(out, b.X.Values())
		}
		return out
	}
	assert.Equal(t, collect(0, 0), collect(3, 0))
	assert.Equal(t, collect(0, 0), collect(0, 0))
	assert.NotEqual(t, collect(0, 0), collect(0, 1))
}

func TestTrainValTestSplit(t *testing.T) {
	tr, va, te := TrainValTestSplit(10, 0.2, 0.3, 1)
	assert.Len(t, tr, 5)
	assert.Len(t, va, 2)
	assert.Len(t, te, 3)
	all := append(append(append([]int{}, tr...), va...), te...)
	slices.Sort(all)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, all)
	assert.Panics(t, func() { TrainValTestSplit(10, 0.6, 0.5, 1) })
}

// Three classes of 10, 7 and 4 examples in 3 folds: each fold holds 3-4,
// 2-3 and 1-2 of them (per class, counts differ by at most one), the
// held-out sets partition the examples and each training set is the rest.
func TestStratifiedKFold(t *testing.T) {
	var labels []int
	for c, n := range []int{10, 7, 4} {
		for range n {
			labels = append(labels, c)
		}
	}
	train, held, err := StratifiedKFold(labels, 3, 5)
	require.NoError(t, err)
	seen := map[int]int{}
	for f := range 3 {
		count := map[int]int{}
		for _, i := range held[f] {
			count[labels[i]]++
			seen[i]++
		}
		assert.Contains(t, []int{3, 4}, count[0], "fold %d", f)
		assert.Contains(t, []int{2, 3}, count[1], "fold %d", f)
		assert.Contains(t, []int{1, 2}, count[2], "fold %d", f)
		assert.Len(t, train[f], len(labels)-len(held[f]))
		for _, i := range train[f] {
			assert.NotContains(t, held[f], i)
		}
		assert.Contains(t, []int{7, 8}, len(held[f]), "fold sizes balance: %d", len(held[f]))
	}
	assert.Len(t, seen, len(labels))
	_, _, err = StratifiedKFold([]int{0, 0, 0, 1}, 3, 1)
	assert.ErrorContains(t, err, "class 1 has 1 examples, fewer than k = 3")
}
