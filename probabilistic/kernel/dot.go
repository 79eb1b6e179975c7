package kernel

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Linear is the linear (dot-product) kernel k(x, x') = v·xᵀx', the
// covariance of Bayesian linear regression through the origin with
// weight variance v ("linear.variance").
type Linear struct{ variance *Hyperparam }

// NewLinear returns the linear kernel with weight variance v.
func NewLinear(variance float64) *Linear {
	return &Linear{variance: NewHyperparam("linear.variance", variance)}
}

// Variance returns the variance hyperparameter.
func (k *Linear) Variance() *Hyperparam { return k.variance }

// Hyperparams returns the variance.
func (k *Linear) Hyperparams() []*Hyperparam { return []*Hyperparam{k.variance} }

// K returns v·x1·x2ᵀ.
func (k *Linear) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.linear.K", x1, x2)
	return graph.Mul(k.variance.Node(x1.Graph()), graph.MatMulT(x1, x2, false, true))
}

// Diag returns v·‖xᵢ‖².
func (k *Linear) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.linear.Diag", x)
	return graph.Mul(k.variance.Node(x.Graph()), graph.Sum(graph.Square(x), []int{1}, false))
}

// Polynomial is the polynomial kernel k(x, x') = (xᵀx' + c)^degree with a
// learnable offset c ≥ 0 ("polynomial.offset") and a fixed integer degree.
type Polynomial struct {
	degree int
	offset *Hyperparam
}

// NewPolynomial returns the polynomial kernel of the given degree (≥ 1)
// and offset (> 0). It panics with a *tensor.Error if degree < 1.
func NewPolynomial(degree int, offset float64) *Polynomial {
	if degree < 1 {
		tensor.Fail("kernel.NewPolynomial", "degree %d < 1", degree)
	}
	return &Polynomial{degree: degree, offset: NewHyperparam("polynomial.offset", offset)}
}

// Offset returns the offset hyperparameter.
func (k *Polynomial) Offset() *Hyperparam { return k.offset }

// Degree returns the degree.
func (k *Polynomial) Degree() int { return k.degree }

// Hyperparams returns the offset.
func (k *Polynomial) Hyperparams() []*Hyperparam { return []*Hyperparam{k.offset} }

// power returns b^degree by repeated multiplication, which is exact for
// negative bases and has the obvious derivative.
func (k *Polynomial) power(b *graph.Node) *graph.Node {
	out := b
	for i := 1; i < k.degree; i++ {
		out = graph.Mul(out, b)
	}
	return out
}

// K returns (x1·x2ᵀ + c)^degree.
func (k *Polynomial) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.polynomial.K", x1, x2)
	return k.power(graph.Add(graph.MatMulT(x1, x2, false, true), k.offset.Node(x1.Graph())))
}

// Diag returns (‖xᵢ‖² + c)^degree.
func (k *Polynomial) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.polynomial.Diag", x)
	return k.power(graph.Add(graph.Sum(graph.Square(x), []int{1}, false), k.offset.Node(x.Graph())))
}

// White is the white-noise kernel σ²·δ(x, x'), with variance
// "white.variance". As in scikit-learn's WhiteKernel, K(x, x) (the same
// node twice) is σ²I and K(x1, x2) of two different nodes is zero, so the
// noise is part of the covariance at the training inputs but not of the
// cross-covariance used to predict.
type White struct{ variance *Hyperparam }

// NewWhite returns the white-noise kernel with variance σ².
func NewWhite(variance float64) *White {
	return &White{variance: NewHyperparam("white.variance", variance)}
}

// Variance returns the variance hyperparameter.
func (k *White) Variance() *Hyperparam { return k.variance }

// Hyperparams returns the variance.
func (k *White) Hyperparams() []*Hyperparam { return []*Hyperparam{k.variance} }

// K returns σ²I when x1 and x2 are the same node, zeros otherwise.
func (k *White) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.white.K", x1, x2)
	g := x1.Graph()
	n, m := x1.Shape()[0], x2.Shape()[0]
	if x1 != x2 {
		return g.Const(g.Alloc(x1.DType(), n, m))
	}
	return graph.AddDiag(g.Const(g.Alloc(x1.DType(), n, n)), k.variance.Node(g))
}

// Diag returns σ² for every row.
func (k *White) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.white.Diag", x)
	return graph.BroadcastTo(k.variance.Node(x.Graph()), x.Shape()[0])
}

// Constant is the constant kernel k(x, x') = c ("constant.value"), the
// covariance of a random offset with variance c.
type Constant struct{ value *Hyperparam }

// NewConstant returns the constant kernel with value c > 0.
func NewConstant(c float64) *Constant {
	return &Constant{value: NewHyperparam("constant.value", c)}
}

// Value returns the constant's hyperparameter.
func (k *Constant) Value() *Hyperparam { return k.value }

// Hyperparams returns the constant.
func (k *Constant) Hyperparams() []*Hyperparam { return []*Hyperparam{k.value} }

// K returns c everywhere.
func (k *Constant) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.constant.K", x1, x2)
	return graph.BroadcastTo(k.value.Node(x1.Graph()), x1.Shape()[0], x2.Shape()[0])
}

// Diag returns c for every row.
func (k *Constant) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.constant.Diag", x)
	return graph.BroadcastTo(k.value.Node(x.Graph()), x.Shape()[0])
}
