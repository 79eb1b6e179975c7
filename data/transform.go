package data

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// A Transform changes one example, typically an image augmentation, with
// randomness from rng. The Loader (LoaderOptions.Transform) gives every
// example its own generator, seeded from the loader's seed, the epoch and
// the example's dataset index, so the result does not depend on which
// worker goroutine builds the batch, nor on the batch size.
type Transform func(e Example, rng *tensor.RNG) Example

// Compose applies the transforms in order.
func Compose(ts ...Transform) Transform {
	return func(e Example, rng *tensor.RNG) Example {
		for _, t := range ts {
			e = t(e, rng)
		}
		return e
	}
}

// exampleRNG returns the generator of one example.
func exampleRNG(seed uint64, epoch, index int) *tensor.RNG {
	// SplitMix64-style mixing keeps nearby (epoch, index) pairs apart.
	x := seed ^ 0x9e3779b97f4a7c15*uint64(epoch+1) ^ 0xbf58476d1ce4e5b9*uint64(index+1)
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return tensor.NewRNG(x)
}

// image returns the example's features as (C, H, W) values, checking the
// shape.
func image(op string, e Example) (vals []float64, c, h, w int) {
	s := e.X.Shape()
	switch len(s) {
	case 2:
		c, h, w = 1, s[0], s[1]
	case 3:
		c, h, w = s[0], s[1], s[2]
	default:
		tensor.Fail(op, "want an image (H, W) or (C, H, W), got shape %v", s)
	}
	return e.X.Contiguous().Values(), c, h, w
}

func withValues(e Example, v []float64) Example {
	e.X = tensor.FromValues(e.X.DType(), v, e.X.Shape()...)
	return e
}

// Normalize returns (x − mean[c])/std[c] per channel of (C, H, W) images
// ((H, W): one channel), as torchvision's Normalize. It panics if the
// statistics' lengths differ or a std is not positive.
func Normalize(mean, std []float64) Transform {
	if len(mean) != len(std) || len(mean) == 0 {
		tensor.Fail("data.Normalize", "mean %v and std %v must have one entry per channel", mean, std)
	}
	for _, s := range std {
		if !(s > 0) {
			tensor.Fail("data.Normalize", "std %v must be positive", std)
		}
	}
	return func(e Example, _ *tensor.RNG) Example {
		v, c, h, w := image("data.Normalize", e)
		if c != len(mean) {
			tensor.Fail("data.Normalize", "an image of %d channels for %d means", c, len(mean))
		}
		out := make([]float64, len(v))
		for ch := range c {
			for i := ch * h * w; i < (ch+1)*h*w; i++ {
				out[i] = (v[i] - mean[ch]) / std[ch]
			}
		}
		return withValues(e, out)
	}
}

// HorizontalFlip mirrors images left to right with probability p.
func HorizontalFlip(p float64) Transform {
	return func(e Example, rng *tensor.RNG) Example {
		if rng.Float64() >= p {
			return e
		}
		v, c, h, w := image("data.HorizontalFlip", e)
		out := make([]float64, len(v))
		for ch := range c {
			for r := range h {
				row := (ch*h + r) * w
				for x := range w {
					out[row+x] = v[row+w-1-x]
				}
			}
		}
		return withValues(e, out)
	}
}

// shift moves an image by (dy, dx) pixels, filling with zeros.
func shift(v []float64, c, h, w, dy, dx int) []float64 {
	out := make([]float64, len(v))
	for ch := range c {
		for r := range h {
			sr := r - dy
			if sr < 0 || sr >= h {
				continue
			}
			for x := range w {
				if sx := x - dx; sx >= 0 && sx < w {
					out[(ch*h+r)*w+x] = v[(ch*h+sr)*w+sx]
				}
			}
		}
	}
	return out
}

// RandomCrop pads images with pad zero pixels on every side and crops a
// window of the original size at a uniformly random offset, as
// torchvision's RandomCrop(size, padding=pad): a shift by up to pad pixels
// each way.
func RandomCrop(pad int) Transform {
	if pad < 0 {
		tensor.Fail("data.RandomCrop", "padding %d must not be negative", pad)
	}
	return func(e Example, rng *tensor.RNG) Example {
		v, c, h, w := image("data.RandomCrop", e)
		// A crop at offset (oy, ox) of the padded image is the image
		// shifted by (pad − oy, pad − ox).
		oy, ox := rng.Intn(2*pad+1), rng.Intn(2*pad+1)
		return withValues(e, shift(v, c, h, w, pad-oy, pad-ox))
	}
}

// RandomShift is an affine translation by up to maxFrac of the height and
// width each way (torchvision's RandomAffine(0, translate=(maxFrac,
// maxFrac))), rounded to whole pixels, filling with zeros.
func RandomShift(maxFrac float64) Transform {
	if !(maxFrac >= 0 && maxFrac < 1) {
		tensor.Fail("data.RandomShift", "maxFrac %g must be in [0, 1)", maxFrac)
	}
	return func(e Example, rng *tensor.RNG) Example {
		v, c, h, w := image("data.RandomShift", e)
		dy := int(math.Round((2*rng.Float64() - 1) * maxFrac * float64(h)))
		dx := int(math.Round((2*rng.Float64() - 1) * maxFrac * float64(w)))
		return withValues(e, shift(v, c, h, w, dy, dx))
	}
}

// TrainValTestSplit shuffles 0..n−1 with the seed and cuts it into
// training, validation and test indices of fractions 1 − val − test, val
// and test (rounded up for val and test). It panics for fractions that are
// negative or add up to more than 1.
func TrainValTestSplit(n int, valFraction, testFraction float64, seed uint64) (train, val, test []int) {
	if n < 0 || !(valFraction >= 0) || !(testFraction >= 0) || valFraction+testFraction > 1 {
		tensor.Fail("data.TrainValTestSplit", "need n ≥ 0 and val, test ≥ 0 with val + test ≤ 1, got %d, %g, %g", n, valFraction, testFraction)
	}
	perm := tensor.NewRNG(seed).Perm(n)
	nVal := int(math.Ceil(valFraction*float64(n) - 1e-9))
	nTest := min(int(math.Ceil(testFraction*float64(n)-1e-9)), n-nVal)
	return perm[nVal+nTest:], perm[:nVal], perm[nVal : nVal+nTest]
}

// StratifiedKFold assigns the examples to k folds so that every fold holds
// each class in nearly the proportion of the whole set (counts per class
// and fold differ by at most one), shuffling within each class with the
// seed, as scikit-learn's StratifiedKFold(shuffle=True) does in spirit.
// It returns, for each fold, the training and the held-out indices
// (sorted). It returns an error for k < 2 or a class with fewer than k
// examples (a fold would miss it).
func StratifiedKFold(labels []int, k int, seed uint64) (train, heldOut [][]int, err error) {
	if k < 2 || k > len(labels) {
		return nil, nil, fmt.Errorf("data.StratifiedKFold: k = %d for %d examples (need 2 ≤ k ≤ n)", k, len(labels))
	}
	byClass := map[int][]int{}
	var classes []int
	for i, l := range labels {
		if _, ok := byClass[l]; !ok {
			classes = append(classes, l)
		}
		byClass[l] = append(byClass[l], i)
	}
	fold := make([]int, len(labels))
	rng := tensor.NewRNG(seed)
	next := 0 // the fold that gets the next class's first example, so remainders spread
	slices.Sort(classes)
	for _, c := range classes {
		idx := byClass[c]
		if len(idx) < k {
			return nil, nil, fmt.Errorf("data.StratifiedKFold: class %d has %d examples, fewer than k = %d", c, len(idx), k)
		}
		perm := rng.Perm(len(idx))
		for j, p := range perm {
			fold[idx[p]] = (next + j) % k
		}
		next = (next + len(idx)) % k
	}
	train, heldOut = make([][]int, k), make([][]int, k)
	for i, f := range fold {
		heldOut[f] = append(heldOut[f], i)
		for g := range k {
			if g != f {
				train[g] = append(train[g], i)
			}
		}
	}
	return train, heldOut, nil
}
