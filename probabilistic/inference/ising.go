package inference

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// IsingResult is the mean-field posterior of a binary image.
type IsingResult struct {
	// Mean holds μᵢ = E_q[xᵢ] ∈ (−1, 1) for every pixel (H, W); its sign is
	// the denoised image.
	Mean *tensor.Tensor
	// ELBO after each sweep; coordinate ascent never lowers it.
	ELBO []float64
}

// IsingOptions configures IsingDenoise.
type IsingOptions struct {
	// Coupling is the Ising prior's w; 0 (the default) makes the pixels
	// independent, so the posterior is the likelihood's alone.
	Coupling float64
	Sigma    float64 // the noise's standard deviation σ > 0; 0 means 1
	Sweeps   int     // sweeps over the image; 0 means 10
}

// IsingDenoise restores a binary (±1) image from noisy observations y
// (H, W), yᵢ = xᵢ + N(0, σ²), under the Ising prior p(x) ∝ exp(w·Σ_{i~j}
// xᵢxⱼ) over 4-neighbour edges, by mean-field coordinate-ascent variational
// inference (CAVI; Bishop 2006, "Pattern recognition and machine
// learning", §8.4 and ch. 10; Blei, Kucukelbir and McAuliffe 2017,
// "Variational inference: a review for statisticians"): with
// mᵢ = w·Σ_{j~i} μⱼ and aᵢ = mᵢ + ½(Lᵢ(1) − Lᵢ(−1)) = mᵢ + 2yᵢ/(2σ²),
//
//	μᵢ ← tanh(aᵢ),   q(xᵢ = 1) = σ(2aᵢ).
//
// Pixels are updated a checkerboard colour at a time: no two neighbours
// change together, so each half-sweep is a set of exact coordinate updates
// and the ELBO cannot decrease. The neighbour sums are a 3×3 convolution.
// It checks ctx before every sweep: when ctx is cancelled it returns the
// current q with ctx.Err() wrapped. Sweeps is a budget with no
// convergence test (the ELBO it records shows the progress), so it never
// reports non-convergence; non-finite observations are an error.
func IsingDenoise(ctx context.Context, y *tensor.Tensor, opts IsingOptions) (*IsingResult, error) {
	w, sigma, sweeps := opts.Coupling, opts.Sigma, opts.Sweeps
	if sigma == 0 {
		sigma = 1
	}
	if sweeps == 0 {
		sweeps = 10
	}
	if y == nil || y.Dim() != 2 || y.Size() == 0 {
		return nil, fmt.Errorf("inference.IsingDenoise: observations must be a non-empty (H, W) image, got %v", y)
	}
	if !(sigma > 0) || math.IsNaN(w) || math.IsInf(w, 0) || sweeps < 1 {
		return nil, fmt.Errorf("inference.IsingDenoise: need σ > 0, finite w and sweeps ≥ 1 (σ = %v, w = %v, sweeps %d)", sigma, w, sweeps)
	}
	h, wd := y.Shape()[0], y.Shape()[1]
	yv := y.Cast(tensor.Float64).Contiguous().Values()
	for i, v := range yv {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("inference.IsingDenoise: y[%d, %d] is %v: observations must be finite", i/wd, i%wd, v)
		}
	}
	field := make([]float64, len(yv)) // ½(Lᵢ(1) − Lᵢ(−1)) = yᵢ/σ²
	for i, v := range yv {
		field[i] = v / (sigma * sigma)
	}
	cross := tensor.FromFloat64s([]float64{0, 1, 0, 1, 0, 1, 0, 1, 0}, 1, 1, 3, 3)
	conv := tensor.ConvParams{Padding: [2]int{1, 1}}
	mu := make([]float64, len(yv)) // start from q = ½ everywhere
	res := &IsingResult{}
	for sweep := range sweeps {
		if err := ctx.Err(); err != nil {
			res.Mean = tensor.FromFloat64s(mu, h, wd)
			return res, fmt.Errorf("inference.IsingDenoise: stopped after %d sweeps: %w", sweep, err)
		}
		for colour := range 2 {
			nb := tensor.Conv2D(tensor.FromFloat64s(mu, 1, 1, h, wd), cross, conv).Values()
			for r := range h {
				for c := range wd {
					if (r+c)%2 == colour {
						i := r*wd + c
						mu[i] = math.Tanh(w*nb[i] + field[i])
					}
				}
			}
		}
		res.ELBO = append(res.ELBO, isingELBO(mu, field, w, h, wd))
	}
	res.Mean = tensor.FromFloat64s(mu, h, wd)
	return res, nil
}

// isingELBO is E_q[log p(x) + log p(y | x)] + H[q] up to constants:
// w·Σ_{i~j} μᵢμⱼ + Σᵢ fieldᵢ·μᵢ + Σᵢ H_b((1 + μᵢ)/2), where the likelihood
// term Σ E[Lᵢ(xᵢ)] equals Σ fieldᵢμᵢ up to a constant.
func isingELBO(mu, field []float64, w float64, h, wd int) float64 {
	e := 0.0
	for r := range h {
		for c := range wd {
			i := r*wd + c
			if c+1 < wd {
				e += w * mu[i] * mu[i+1]
			}
			if r+1 < h {
				e += w * mu[i] * mu[i+wd]
			}
			e += field[i] * mu[i]
			q := (1 + mu[i]) / 2
			for _, p := range []float64{q, 1 - q} {
				if p > 0 {
					e -= p * math.Log(p)
				}
			}
		}
	}
	return e
}
