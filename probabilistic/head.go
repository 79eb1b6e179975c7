package probabilistic

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// ScaleParam chooses how GaussianHead turns its second linear map into a
// standard deviation.
type ScaleParam int

const (
	// LogVariance reads the second map as log σ², so σ = exp(½·out): the
	// VAE convention, matching losses.KLDiagGaussian.
	LogVariance ScaleParam = iota
	// SoftplusScale reads it as σ = softplus(out) + MinScale, which grows
	// linearly and avoids the exponential's overflow.
	SoftplusScale
)

// GaussianHead is a stochastic layer mapping features (..., In) to a
// diagonal Normal over (..., Out): two linear maps give the mean and the
// scale (as log-variance or through softplus). It satisfies nn.Module, with
// parameters "mean.weight", "mean.bias", "scale.weight", "scale.bias".
type GaussianHead struct {
	MeanLayer  *nn.Linear // features → mean
	ScaleLayer *nn.Linear // features → log σ² or softplus⁻¹(σ), as Param says
	Param      ScaleParam // how ScaleLayer's output becomes σ
	// MinScale is added to the softplus scale (SoftplusScale only) to keep
	// σ away from 0; NewGaussianHead sets it to 1e-6.
	MinScale float64
}

// NewGaussianHead returns a head from in features to out Gaussian outputs,
// initialised like nn.Linear, in dtype dt. It panics if in or out is not
// positive.
func NewGaussianHead(rng *tensor.RNG, in, out int, param ScaleParam, dt tensor.DType) *GaussianHead {
	if param != LogVariance && param != SoftplusScale {
		tensor.Fail("probabilistic.GaussianHead", "unknown scale parameterisation %d", param)
	}
	return &GaussianHead{
		MeanLayer:  nn.NewLinear(rng, in, out, true, dt),
		ScaleLayer: nn.NewLinear(rng, in, out, true, dt),
		Param:      param,
		MinScale:   1e-6,
	}
}

// String names the head, e.g. "GaussianHead(64→8)".
func (h *GaussianHead) String() string {
	return fmt.Sprintf("GaussianHead(%d→%d)", h.MeanLayer.In, h.MeanLayer.Out)
}

// Params lists the mean layer's parameters under "mean." and the scale
// layer's under "scale.".
func (h *GaussianHead) Params() []nn.NamedParam {
	var ps []nn.NamedParam
	for _, p := range h.MeanLayer.Params() {
		ps = append(ps, nn.NamedParam{Name: "mean." + p.Name, Param: p.Param})
	}
	for _, p := range h.ScaleLayer.Params() {
		ps = append(ps, nn.NamedParam{Name: "scale." + p.Name, Param: p.Param})
	}
	return ps
}

// SetTraining does nothing: the head behaves the same in both modes (it
// returns a distribution; whether to sample or take the mean is the
// caller's choice).
func (h *GaussianHead) SetTraining(bool) {}

// Forward maps x (..., In) to the mean and the raw scale output (..., Out):
// the log-variance for LogVariance, the pre-softplus value for
// SoftplusScale. It panics, naming the layer, if x does not fit.
func (h *GaussianHead) Forward(x *graph.Node) (mean, raw *graph.Node) {
	return h.MeanLayer.Forward(x), h.ScaleLayer.Forward(x)
}

// Distribution maps x (..., In) to the diagonal Normal with batch shape
// (..., Out).
func (h *GaussianHead) Distribution(x *graph.Node) *Normal {
	mu, raw := h.Forward(x)
	var scale *graph.Node
	if h.Param == SoftplusScale {
		scale = graph.AddScalar(graph.Softplus(raw), h.MinScale)
	} else {
		scale = graph.Exp(graph.MulScalar(raw, 0.5))
	}
	return NewNormal(mu, scale)
}

// Reparameterise returns μ + exp(½·logvar)·ε, the reparameterisation trick
// of variational autoencoders: a sample of N(μ, exp(logvar)) that is
// differentiable with respect to μ and logvar, given standard normal noise
// ε (usually a constant). The three broadcast.
func Reparameterise(mu, logvar, eps *graph.Node) *graph.Node {
	checkParams("probabilistic.Reparameterise", mu, logvar, eps)
	return graph.Add(mu, graph.Mul(graph.Exp(graph.MulScalar(logvar, 0.5)), eps))
}

var _ nn.Module = (*GaussianHead)(nil)
