package probabilistic

import (
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Mixture is a batch of finite mixtures p(x) = Σₖ πₖ pₖ(x) whose components
// come from one family: Mixing is a Categorical with batch shape (batch...)
// over K components, and Components a distribution with batch shape
// (batch..., K) (PyTorch's and TensorFlow Probability's
// MixtureSameFamily). Any family works, scalar or multivariate.
type Mixture struct {
	Mixing     *Categorical
	Components Distribution
	batch      []int
	event      []int
}

// NewMixture returns the mixture of components with weights from mixing.
// It panics with a *tensor.Error when the components' batch shape is not
// the mixing distribution's followed by its number of components.
func NewMixture(mixing *Categorical, components Distribution) *Mixture {
	const op = "probabilistic.Mixture"
	if mixing == nil || components == nil {
		tensor.Fail(op, "nil mixing or component distribution")
	}
	cb, mb := components.BatchShape(), mixing.BatchShape()
	if len(cb) != len(mb)+1 || !slices.Equal(cb[:len(mb)], mb) || cb[len(mb)] != mixing.NumClasses() {
		tensor.Fail(op, "components have batch shape %s; want the mixing batch shape %s followed by %d components",
			tensor.FormatShape(cb), tensor.FormatShape(mb), mixing.NumClasses())
	}
	return &Mixture{Mixing: mixing, Components: components, batch: mb, event: components.EventShape()}
}

// BatchShape returns the mixing distribution's batch shape.
func (m *Mixture) BatchShape() []int { return slices.Clone(m.batch) }

// EventShape returns the components' event shape.
func (m *Mixture) EventShape() []int { return slices.Clone(m.event) }

// componentLogProbs returns log πₖ + log pₖ(x), shaped (sample..., batch..., K).
func (m *Mixture) componentLogProbs(x *graph.Node) *graph.Node {
	x = graph.Unsqueeze(x, x.Dim()-len(m.event)) // broadcast against the K components
	return graph.Add(m.Components.LogProb(x), m.Mixing.LogProbs())
}

// LogProb returns log Σₖ πₖ pₖ(x) by log-sum-exp, shaped (sample..., batch...).
func (m *Mixture) LogProb(x *graph.Node) *graph.Node {
	return graph.LogSumExp(m.componentLogProbs(x), []int{-1}, false)
}

// Responsibilities returns the posterior probabilities p(k | x) of the
// components, shaped (sample..., batch..., K): the E-step of EM.
func (m *Mixture) Responsibilities(x *graph.Node) *graph.Node {
	return graph.Softmax(m.componentLogProbs(x), -1)
}

// Sample draws a component for each draw and batch entry, then a value
// from it: shape (n, batch..., event...), or (batch..., event...) for n = 0.
func (m *Mixture) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	ks := m.Mixing.Sample(rng, n)      // (n, batch...)
	all := m.Components.Sample(rng, n) // (n, batch..., K, event...)
	k := m.Mixing.NumClasses()
	ev := 1
	for _, e := range m.event {
		ev *= e
	}
	idx, src := ks.Values(), all.Contiguous().Values()
	out := make([]float64, len(idx)*ev)
	for i, c := range idx {
		copy(out[i*ev:(i+1)*ev], src[(i*k+int(c))*ev:(i*k+int(c)+1)*ev])
	}
	return tensor.FromValues(all.DType(), out, append(ks.Shape(), m.event...)...)
}

// Mean returns Σₖ πₖ μₖ, shaped (batch..., event...).
func (m *Mixture) Mean() *graph.Node {
	return graph.Sum(graph.Mul(m.weights(), m.Components.Mean()), []int{len(m.batch)}, false)
}

// Variance returns the variance by the law of total variance,
// Σₖ πₖ (σₖ² + μₖ²) − (Σₖ πₖ μₖ)², shaped (batch..., event...).
func (m *Mixture) Variance() *graph.Node {
	mu := m.Components.Mean()
	second := graph.Sum(graph.Mul(m.weights(), graph.Add(m.Components.Variance(), graph.Square(mu))), []int{len(m.batch)}, false)
	return graph.Sub(second, graph.Square(m.Mean()))
}

// Entropy panics with a *tensor.Error: a mixture's entropy has no closed
// form; estimate −E[log p(x)] from samples with LogProb.
func (m *Mixture) Entropy() *graph.Node {
	tensor.Fail("probabilistic.Mixture.Entropy", "a mixture's entropy has no closed form; estimate it as the mean of −LogProb over samples")
	return nil
}

// weights returns πₖ shaped (batch..., K, 1…) to broadcast over the event.
func (m *Mixture) weights() *graph.Node {
	w := m.Mixing.Probs()
	for range m.event {
		w = graph.Unsqueeze(w, -1)
	}
	return w
}
