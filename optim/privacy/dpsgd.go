package privacy

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// DPSGDOptions configures a DP-SGD step.
type DPSGDOptions struct {
	// Clip is C, the largest L2 norm of one example's gradient over all
	// parameters jointly; larger ones are scaled down to it. Required (> 0).
	Clip float64
	// NoiseMultiplier is σ: the noise added to the clipped sum has standard
	// deviation σ·C in every coordinate. 0 adds none (and gives no privacy).
	NoiseMultiplier float64
	// ExpectedBatch divides the noisy sum. With Poisson sampling set it to
	// q·N, the expected batch size: dividing by the drawn size would make the
	// scale of the update depend on the data. 0 divides by the number of
	// examples in each step's batch (fixed-size batches).
	ExpectedBatch float64
	// Seed seeds the noise.
	Seed uint64
}

// DPSGD is a differentially private optimiser (Abadi et al. 2016,
// Algorithm 1): it turns the per-example gradients of a batch into one
// clipped, noisy, averaged gradient and hands it to a wrapped optim
// optimiser (SGD, Adam, ...). Its privacy is that of the sampled Gaussian
// mechanism with noise multiplier σ at the sampling rate the batches were
// drawn with; an Accountant tracks it.
type DPSGD struct {
	inner optim.Optimizer
	opts  DPSGDOptions
	rng   *tensor.RNG
	grads []*tensor.Tensor // the privatised gradient, one per parameter
	sum   []float64        // float64 accumulator, as long as the largest parameter
	norms []float64
}

// NewDPSGD wraps inner. It panics with a *tensor.Error if Clip is not
// finite and positive, NoiseMultiplier or ExpectedBatch is negative or not
// finite.
func NewDPSGD(inner optim.Optimizer, opts DPSGDOptions) *DPSGD {
	const op = "NewDPSGD"
	switch {
	case inner == nil:
		tensor.Fail(op, "the wrapped optimiser is nil")
	case !(opts.Clip > 0) || math.IsInf(opts.Clip, 0):
		tensor.Fail(op, "Clip = %g must be finite and > 0", opts.Clip)
	case !(opts.NoiseMultiplier >= 0) || math.IsInf(opts.NoiseMultiplier, 0):
		tensor.Fail(op, "NoiseMultiplier = %g must be finite and >= 0", opts.NoiseMultiplier)
	case !(opts.ExpectedBatch >= 0) || math.IsInf(opts.ExpectedBatch, 0):
		tensor.Fail(op, "ExpectedBatch = %g must be finite and >= 0", opts.ExpectedBatch)
	}
	d := &DPSGD{inner: inner, opts: opts, rng: tensor.NewRNG(opts.Seed)}
	for _, p := range inner.Params() {
		d.grads = append(d.grads, tensor.ZerosLike(p))
		d.sum = make([]float64, max(len(d.sum), p.Size()))
	}
	return d
}

// Optimizer returns the wrapped optimiser (for its learning rate and
// state).
func (d *DPSGD) Optimizer() optim.Optimizer { return d.inner }

// Step applies one DP-SGD update from perExample, one tensor per
// parameter, each of shape (B, parameter's shape...) with the same B (B = 0
// for an empty Poisson batch, which still adds noise): it clips every
// example's gradient to norm Clip in place (ClipPerExample), sums over the
// batch, adds N(0, σ²C²) to every coordinate, divides by ExpectedBatch (or
// B) and calls the wrapped optimiser's Step. It returns the per-example
// norms before clipping (valid until the next Step). A mismatch of count,
// shape or dtype returns an *optim.Error wrapping optim.ErrMismatch with
// nothing changed; a non-finite result is refused by the wrapped
// optimiser, the parameters unchanged.
func (d *DPSGD) Step(perExample []*tensor.Tensor) ([]float64, error) {
	params := d.inner.Params()
	b, err := checkPerExample("DPSGD.Step", params, perExample)
	if err != nil {
		return nil, err
	}
	div := d.opts.ExpectedBatch
	if div == 0 {
		if b == 0 {
			return nil, &optim.Error{Op: "DPSGD.Step", Param: -1, Err: optim.ErrMismatch,
				Msg: "an empty batch needs DPSGDOptions.ExpectedBatch to scale the noise"}
		}
		div = float64(b)
	}
	d.norms = clipPerExample(perExample, b, d.opts.Clip, d.norms[:0])
	std := d.opts.NoiseMultiplier * d.opts.Clip
	for i, g := range perExample {
		if g.DType() == tensor.Float32 {
			noisyMean(d.grads[i].Float32s(), g.Float32s(), d.sum, b, std, div, d.rng)
		} else {
			noisyMean(d.grads[i].Float64s(), g.Float64s(), d.sum, b, std, div, d.rng)
		}
	}
	return d.norms, d.inner.Step(d.grads)
}

// noisyMean sets dst to (Σ_e g[e] + N(0, std²))/div, summing the rows of
// g in float64 in sum (row by row, so that memory is read in order).
func noisyMean[T tensor.Float](dst, g []T, sum []float64, b int, std, div float64, rng *tensor.RNG) {
	n := len(dst)
	sum = sum[:n]
	clear(sum)
	for e := range b {
		for j, x := range g[e*n : (e+1)*n] {
			sum[j] += float64(x)
		}
	}
	for j, s := range sum {
		if std > 0 {
			s += std * rng.NormFloat64()
		}
		dst[j] = T(s / div)
	}
}

// ClipPerExample scales, in place, each example's gradient (row b of
// every tensor in perExample, taken jointly) by min(1, clip/‖g_b‖), so
// that no example's gradient has an L2 norm above clip, and returns the
// norms before clipping. perExample holds one tensor per parameter, each
// of shape (B, ...) with the same B. It panics with a *tensor.Error if clip
// is not finite and positive or the tensors are not contiguous
// float32/float64 tensors with a common leading axis.
func ClipPerExample(perExample []*tensor.Tensor, clip float64) []float64 {
	if !(clip > 0) || math.IsInf(clip, 0) {
		tensor.Fail("ClipPerExample", "clip = %g must be finite and > 0", clip)
	}
	b, err := checkPerExample("ClipPerExample", nil, perExample)
	if err != nil {
		tensor.Fail("ClipPerExample", "%s", err.(*optim.Error).Msg)
	}
	return clipPerExample(perExample, b, clip, nil)
}

func clipPerExample(perExample []*tensor.Tensor, b int, clip float64, norms []float64) []float64 {
	for range b {
		norms = append(norms, 0)
	}
	for _, g := range perExample {
		if g.DType() == tensor.Float32 {
			addRowSquares(norms, g.Float32s())
		} else {
			addRowSquares(norms, g.Float64s())
		}
	}
	for e := range norms {
		norms[e] = math.Sqrt(norms[e])
	}
	for _, g := range perExample {
		if g.DType() == tensor.Float32 {
			scaleRows(g.Float32s(), norms, clip)
		} else {
			scaleRows(g.Float64s(), norms, clip)
		}
	}
	return norms
}

func addRowSquares[T tensor.Float](ss []float64, g []T) {
	n := len(g) / max(len(ss), 1)
	for e := range ss {
		s := 0.0
		for _, x := range g[e*n : (e+1)*n] {
			s += float64(x) * float64(x)
		}
		ss[e] += s
	}
}

func scaleRows[T tensor.Float](g []T, norms []float64, clip float64) {
	n := len(g) / max(len(norms), 1)
	for e, norm := range norms {
		if norm > clip {
			c := T(clip / norm)
			row := g[e*n : (e+1)*n]
			for j := range row {
				row[j] *= c
			}
		}
	}
}

// checkPerExample checks that every tensor is a contiguous float tensor
// with one leading batch axis shared by all, and, if params is not nil,
// that tensor i is (B, params[i]'s shape) of params[i]'s dtype. It returns B.
func checkPerExample(op string, params, perExample []*tensor.Tensor) (int, error) {
	bad := func(i int, format string, a ...any) (int, error) {
		return 0, &optim.Error{Op: op, Param: i, Err: optim.ErrMismatch, Msg: fmt.Sprintf(format, a...)}
	}
	if len(perExample) == 0 || params != nil && len(perExample) != len(params) {
		return bad(-1, "got %d per-example gradients for %d parameters", len(perExample), len(params))
	}
	b := -1
	for i, g := range perExample {
		switch {
		case g == nil:
			return bad(i, "per-example gradient %d is nil", i)
		case g.DType() != tensor.Float32 && g.DType() != tensor.Float64:
			return bad(i, "per-example gradient %d has dtype %v; want float32 or float64", i, g.DType())
		case !g.IsContiguous():
			return bad(i, "per-example gradient %d is not contiguous", i)
		case len(g.Shape()) == 0:
			return bad(i, "per-example gradient %d is a scalar; want a leading batch axis", i)
		case b >= 0 && g.Shape()[0] != b:
			return bad(i, "per-example gradient %d has %d examples, the first has %d", i, g.Shape()[0], b)
		}
		b = g.Shape()[0]
		if params != nil {
			p := params[i]
			if g.DType() != p.DType() || !slices.Equal(g.Shape()[1:], p.Shape()) {
				return bad(i, "per-example gradient %d has shape %s %v; want (%d, %s) %v, a row per example of parameter %d",
					i, tensor.FormatShape(g.Shape()), g.DType(), b, tensor.FormatShape(p.Shape()), p.DType(), i)
			}
		}
	}
	return b, nil
}

// PoissonBatch draws a batch by Poisson sampling: each of the indices
// 0…n−1 independently with probability q, in increasing order. This is
// the sampling the accountant's guarantee assumes (Mironov, Talwar and
// Zhang 2019); the batch size varies around q·n and may be 0. It panics
// with a *tensor.Error if n is negative or q is outside [0, 1].
func PoissonBatch(rng *tensor.RNG, n int, q float64) []int {
	if n < 0 || !(q >= 0 && q <= 1) {
		tensor.Fail("PoissonBatch", "want n >= 0 and q in [0, 1], got n = %d, q = %g", n, q)
	}
	var idx []int
	for i := range n {
		if rng.Float64() < q {
			idx = append(idx, i)
		}
	}
	return idx
}
