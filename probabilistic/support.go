package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Supported is a continuous distribution that names its support by the
// bijector mapping ℝ (or ℝ^{K−1} for the simplex) onto it, so that a sampler
// or a variational fit can move in unconstrained space and add the
// bijector's log-Jacobian, as Stan and NumPyro do with their constraint
// registries. Discrete distributions do not implement it.
type Supported interface {
	Distribution
	// Support returns the bijector from unconstrained space onto the
	// support. Its Forward maps each unconstrained value to a value in the
	// support; its LogDetJacobian is the density correction.
	Support() Bijector
}

// Identity is the bijector of the real line onto itself.
type Identity struct{}

// Forward returns x.
func (Identity) Forward(x *graph.Node) *graph.Node { return x }

// Inverse returns y.
func (Identity) Inverse(y *graph.Node) *graph.Node { return y }

// LogDetJacobian returns zeros shaped like x.
func (Identity) LogDetJacobian(x *graph.Node) *graph.Node {
	return graph.MulScalar(x, 0)
}

// Interval maps ℝ onto the open interval (Low, High) by y = Low + (High −
// Low)·sigmoid(x), elementwise; the bounds broadcast against x.
type Interval struct {
	Low, High *graph.Node
}

// Forward returns Low + (High − Low)·sigmoid(x).
func (b Interval) Forward(x *graph.Node) *graph.Node {
	return graph.Add(b.Low, graph.Mul(graph.Sub(b.High, b.Low), graph.Sigmoid(x)))
}

// Inverse returns logit((y − Low)/(High − Low)).
func (b Interval) Inverse(y *graph.Node) *graph.Node {
	return Sigmoid{}.Inverse(graph.Div(graph.Sub(y, b.Low), graph.Sub(b.High, b.Low)))
}

// LogDetJacobian returns log(High − Low) + log σ(x)(1 − σ(x)) per entry.
func (b Interval) LogDetJacobian(x *graph.Node) *graph.Node {
	return graph.Add(graph.Log(graph.Sub(b.High, b.Low)), Sigmoid{}.LogDetJacobian(x))
}

// Support returns Identity: the real line.
func (d *Normal) Support() Bijector { return Identity{} }

// Support returns Identity: the real line.
func (d *StudentT) Support() Bijector { return Identity{} }

// Support returns Identity: the real line.
func (d *Laplace) Support() Bijector { return Identity{} }

// Support returns Identity: ℝᵈ.
func (d *MultivariateNormal) Support() Bijector { return Identity{} }

// Support returns Exp: the positive numbers.
func (d *Gamma) Support() Bijector { return Exp{} }

// Support returns Sigmoid: the unit interval.
func (d *Beta) Support() Bijector { return Sigmoid{} }

// Support returns StickBreaking: the interior of the simplex.
func (d *Dirichlet) Support() Bijector { return StickBreaking{} }

// Support returns Interval{Low, High}.
func (d *Uniform) Support() Bijector { return Interval{Low: d.Low, High: d.High} }

// CDFer is a scalar distribution with a cumulative distribution function
// in log space, which Censored needs for the mass beyond its bounds.
type CDFer interface {
	Distribution
	// LogCDF returns log P(X ≤ x), shaped like LogProb(x).
	LogCDF(x *graph.Node) *graph.Node
	// LogSurvival returns log P(X > x), shaped like LogProb(x).
	LogSurvival(x *graph.Node) *graph.Node
}

// erfc returns 1 − erf(x) composed of graph.Erf: it loses relative
// precision where erf(x) is near 1 (x > 5 or so, where erfc < 2e−12).
func erfc(x *graph.Node) *graph.Node { return graph.Sub(scalar(x, 1), graph.Erf(x)) }

const invSqrt2 = 0.7071067811865476 // 1/√2

// normalLogCDF returns log Φ(z) = log(½ erfc(−z/√2)).
func normalLogCDF(z *graph.Node) *graph.Node {
	return graph.AddScalar(graph.Log(erfc(graph.MulScalar(z, -invSqrt2))), -ln2)
}

const ln2 = 0.6931471805599453

// LogCDF returns log Φ((x − μ)/σ), with Φ from graph.Erf: accurate to
// about 1e−16/Φ relative error, so to 1e−9 for x above μ − 5σ.
func (d *Normal) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Normal.LogCDF", x, d.Loc, d.batch, nil)
	return normalLogCDF(graph.Div(graph.Sub(x, d.Loc), d.Scale))
}

// LogSurvival returns log(1 − Φ((x − μ)/σ)) (see LogCDF for the accuracy,
// mirrored).
func (d *Normal) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Normal.LogSurvival", x, d.Loc, d.batch, nil)
	return normalLogCDF(graph.Div(graph.Sub(d.Loc, x), d.Scale))
}

// LogCDF returns log ½e^z for z = (x − μ)/b < 0 and log(1 − ½e^{−z})
// otherwise; each branch sees z clipped to its side, so neither overflows
// and the gradient stays finite.
func (d *Laplace) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Laplace.LogCDF", x, d.Loc, d.batch, nil)
	return laplaceLogCDF(graph.Div(graph.Sub(x, d.Loc), d.Scale))
}

// LogSurvival returns log P(X > x), the LogCDF of the mirrored value.
func (d *Laplace) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Laplace.LogSurvival", x, d.Loc, d.batch, nil)
	return laplaceLogCDF(graph.Div(graph.Sub(d.Loc, x), d.Scale))
}

func laplaceLogCDF(z *graph.Node) *graph.Node {
	zero := scalar(z, 0)
	neg := graph.AddScalar(graph.Minimum(z, zero), -ln2)
	pos := graph.Log1p(graph.MulScalar(graph.Exp(graph.Neg(graph.Maximum(z, zero))), -0.5))
	return graph.Where(graph.Less(z, zero), neg, pos)
}

// LogCDF returns log of (x − low)/(high − low) clipped to [0, 1].
func (d *Uniform) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Uniform.LogCDF", x, d.Low, d.batch, nil)
	return graph.Log(graph.Clamp(graph.Div(graph.Sub(x, d.Low), d.width()), 0, 1))
}

// LogSurvival returns log of (high − x)/(high − low) clipped to [0, 1].
func (d *Uniform) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Uniform.LogSurvival", x, d.Low, d.batch, nil)
	return graph.Log(graph.Clamp(graph.Div(graph.Sub(d.High, x), d.width()), 0, 1))
}

// noClosedForm panics for moments and entropies that have none.
func noClosedForm(op, what string) *graph.Node {
	tensor.Fail(op, "no closed form; estimate %s from samples", what)
	return nil
}
