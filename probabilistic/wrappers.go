package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// ZeroInflated mixes a point mass at 0 with a scalar base distribution
// (usually Poisson or negative binomial counts): with probability
// π = sigmoid(GateLogits) the value is a structural 0, otherwise a draw of
// Base (Lambert 1992, "Zero-inflated Poisson regression, with an
// application to defects in manufacturing").
type ZeroInflated struct {
	Base       Distribution
	GateLogits *graph.Node // logit of the probability π of a structural zero
	batch      []int
}

// NewZeroInflated returns the zero-inflated form of base with gate
// probability sigmoid(gateLogits). It panics if base has a non-scalar
// event, or the gate's shape does not broadcast to base's batch shape, or the
// gate is in another graph or dtype than the base's values.
func NewZeroInflated(base Distribution, gateLogits *graph.Node) *ZeroInflated {
	const op = "probabilistic.ZeroInflated"
	if base == nil {
		tensor.Fail(op, "nil base distribution")
	}
	checkParams(op, gateLogits)
	if len(base.EventShape()) != 0 {
		tensor.Fail(op, "base %T has event shape %s: want a scalar distribution", base, tensor.FormatShape(base.EventShape()))
	}
	return &ZeroInflated{Base: base, GateLogits: gateLogits, batch: baseBatch(op, base, gateLogits.Shape())}
}

// BatchShape returns the broadcast batch shape of base and gate.
func (d *ZeroInflated) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *ZeroInflated) EventShape() []int { return []int{} }

// Gate returns π = sigmoid(GateLogits).
func (d *ZeroInflated) Gate() *graph.Node { return graph.Sigmoid(d.GateLogits) }

// LogProb returns log(1 − π) + log p(k) for k ≠ 0 and log(π + (1 − π)p(0))
// at 0, the latter as a stable log-sum-exp.
func (d *ZeroInflated) LogProb(k *graph.Node) *graph.Node {
	checkValue("probabilistic.ZeroInflated.LogProb", k, d.GateLogits, d.batch, nil)
	g := d.GateLogits
	lp := graph.Sub(d.Base.LogProb(k), graph.Softplus(g)) // log(1 − π) + log p(k)
	lz := logAddExp(logSigmoid(g), lp)
	return graph.Where(graph.Equal(k, scalar(k, 0)), lz, lp)
}

// logAddExp returns log(eᵃ + eᵇ) = max + log1p(e^{−|a−b|}), finite when
// either is.
func logAddExp(a, b *graph.Node) *graph.Node {
	m := graph.Maximum(a, b)
	return graph.Add(m, graph.Log1p(graph.Exp(graph.Neg(graph.Abs(graph.Sub(a, b))))))
}

// Entropy panics: there is no closed form in general.
func (d *ZeroInflated) Entropy() *graph.Node {
	return noClosedForm("probabilistic.ZeroInflated.Entropy", "−E[log p(k)]")
}

// Mean returns (1 − π)·μ for the base mean μ.
func (d *ZeroInflated) Mean() *graph.Node {
	keep := graph.Sigmoid(graph.Neg(d.GateLogits))
	return graph.BroadcastTo(graph.Mul(keep, d.Base.Mean()), d.batch...)
}

// Variance returns (1 − π)(σ² + πμ²) for the base mean μ and variance σ².
func (d *ZeroInflated) Variance() *graph.Node {
	pi := d.Gate()
	keep := graph.Sigmoid(graph.Neg(d.GateLogits))
	mu := d.Base.Mean()
	v := graph.Mul(keep, graph.Add(d.Base.Variance(), graph.Mul(pi, graph.Square(mu))))
	return graph.BroadcastTo(v, d.batch...)
}

// Sample draws base values and replaces each by 0 with probability π,
// without gradient.
func (d *ZeroInflated) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.ZeroInflated.Sample", n, d.batch, nil)
	vals := d.Base.Sample(rng, n).Values()
	pi := expandValues(tensor.Sigmoid(hostValue(d.GateLogits)), d.batch)
	for i := range vals {
		if rng.Float64() < pi[i%len(pi)] {
			vals[i] = 0
		}
	}
	return tensor.FromValues(d.GateLogits.DType(), vals, shape...)
}

// Censored is a scalar distribution observed through a censoring window
// [Low, High]: values below Low are recorded as Low and values above High
// as High, so Low and High carry the probability masses F(Low) and
// 1 − F(High) of the base (Tobin 1958, "Estimation of relationships for
// limited dependent variables"). LogProb of a value at a bound is the log
// of that mass; inside the window it is the base log-density. Either
// bound may be nil (no censoring on that side).
type Censored struct {
	Base      CDFer
	Low, High *graph.Node // censoring bounds; nil for none
	batch     []int
}

// NewCensored returns base censored to [low, high]. It panics if both
// bounds are nil, base has a non-scalar event, or a bound does not
// broadcast to base's batch shape.
func NewCensored(base CDFer, low, high *graph.Node) *Censored {
	const op = "probabilistic.Censored"
	if base == nil {
		tensor.Fail(op, "nil base distribution")
	}
	if low == nil && high == nil {
		tensor.Fail(op, "both bounds are nil: want at least one censoring bound")
	}
	if len(base.EventShape()) != 0 {
		tensor.Fail(op, "base %T has event shape %s: want a scalar distribution", base, tensor.FormatShape(base.EventShape()))
	}
	var shapes [][]int
	var bounds []*graph.Node
	for _, b := range []*graph.Node{low, high} {
		if b != nil {
			shapes = append(shapes, b.Shape())
			bounds = append(bounds, b)
		}
	}
	checkParams(op, bounds...)
	return &Censored{Base: base, Low: low, High: high, batch: baseBatch(op, base, shapes...)}
}

// BatchShape returns the broadcast batch shape of base and bounds.
func (d *Censored) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Censored) EventShape() []int { return []int{} }

func (d *Censored) bound() *graph.Node {
	if d.Low != nil {
		return d.Low
	}
	return d.High
}

// LogProb returns log F(Low) for x ≤ Low, log(1 − F(High)) for x ≥ High
// and the base log-density in between. The base density is evaluated at x
// clipped to the window, so values beyond a bound give no NaN gradient.
func (d *Censored) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Censored.LogProb", x, d.bound(), d.batch, nil)
	xc := x
	if d.Low != nil {
		xc = graph.Maximum(xc, d.Low)
	}
	if d.High != nil {
		xc = graph.Minimum(xc, d.High)
	}
	lp := d.Base.LogProb(xc)
	if d.High != nil {
		lp = graph.Where(graph.GreaterEqual(x, d.High), d.Base.LogSurvival(graph.BroadcastTo(d.High, xc.Shape()...)), lp)
	}
	if d.Low != nil {
		lp = graph.Where(graph.LessEqual(x, d.Low), d.Base.LogCDF(graph.BroadcastTo(d.Low, xc.Shape()...)), lp)
	}
	return lp
}

// Entropy panics: a censored distribution mixes a density and point
// masses.
func (d *Censored) Entropy() *graph.Node {
	return noClosedForm("probabilistic.Censored.Entropy", "−E[log p(x)]")
}

// Mean panics: it has no closed form for a general base.
func (d *Censored) Mean() *graph.Node {
	return noClosedForm("probabilistic.Censored.Mean", "the mean")
}

// Variance panics: it has no closed form for a general base.
func (d *Censored) Variance() *graph.Node {
	return noClosedForm("probabilistic.Censored.Variance", "the variance")
}

// Sample draws base values clipped to [Low, High], without gradient.
func (d *Censored) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Censored.Sample", n, d.batch, nil)
	vals := d.Base.Sample(rng, n).Values()
	lo, hi := boundValues(d.Low, d.batch, math.Inf(-1)), boundValues(d.High, d.batch, math.Inf(1))
	for i := range vals {
		j := i % len(lo)
		vals[i] = math.Min(math.Max(vals[i], lo[j]), hi[j])
	}
	return tensor.FromValues(d.bound().DType(), vals, shape...)
}

// baseBatch checks that the shapes broadcast to base's batch shape, so
// that the wrapper's draws are the base's, and returns it.
func baseBatch(op string, base Distribution, shapes ...[]int) []int {
	batch := base.BatchShape()
	all := append([][]int{batch}, shapes...)
	if got := batchOf(op, all...); tensor.FormatShape(got) != tensor.FormatShape(batch) {
		tensor.Fail(op, "parameters broadcast to %s, beyond the base's batch shape %s: give the base that batch shape", tensor.FormatShape(got), tensor.FormatShape(batch))
	}
	return batch
}

func boundValues(b *graph.Node, batch []int, missing float64) []float64 {
	if b == nil {
		v := make([]float64, max(prod(batch), 1))
		for i := range v {
			v[i] = missing
		}
		return v
	}
	return expandValues(b.Value(), batch)
}
