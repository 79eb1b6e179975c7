package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Bijector is a differentiable, invertible map from an unconstrained space
// onto a constrained one, used to optimise constrained parameters (positive
// scales, probabilities, simplex weights, Cholesky factors) without
// constraints, and to change variables in densities:
// log p_Y(Forward(x)) = log p_X(x) − LogDetJacobian(x).
//
// Elementwise bijectors (Exp, Softplus, Sigmoid) act on each entry and
// LogDetJacobian returns one log-derivative per entry, shaped like x; the
// log-determinant of the whole map is their sum. StickBreaking and
// CholeskyFactor act on the last axis (event rank 1); their
// LogDetJacobian drops that axis.
type Bijector interface {
	// Forward maps unconstrained x into the constrained space.
	Forward(x *graph.Node) *graph.Node
	// Inverse maps constrained y back: Inverse(Forward(x)) = x.
	Inverse(y *graph.Node) *graph.Node
	// LogDetJacobian returns log |det ∂Forward/∂x| at x.
	LogDetJacobian(x *graph.Node) *graph.Node
}

// Exp maps ℝ onto the positive numbers by y = eˣ.
type Exp struct{}

// Forward returns eˣ.
func (Exp) Forward(x *graph.Node) *graph.Node { return graph.Exp(x) }

// Inverse returns log y.
func (Exp) Inverse(y *graph.Node) *graph.Node { return graph.Log(y) }

// LogDetJacobian returns log eˣ = x for each entry.
func (Exp) LogDetJacobian(x *graph.Node) *graph.Node { return x }

// Softplus maps ℝ onto the positive numbers by y = log(1 + eˣ), which grows
// linearly rather than exponentially (GPyTorch's default positivity
// constraint).
type Softplus struct{}

// Forward returns log(1 + eˣ), computed stably.
func (Softplus) Forward(x *graph.Node) *graph.Node { return graph.Softplus(x) }

// Inverse returns log(eʸ − 1) = y + log(1 − e⁻ʸ), stable for large y.
func (Softplus) Inverse(y *graph.Node) *graph.Node {
	return graph.Add(y, graph.Log(graph.Neg(graph.Expm1(graph.Neg(y)))))
}

// LogDetJacobian returns log sigmoid(x) = −softplus(−x) for each entry.
func (Softplus) LogDetJacobian(x *graph.Node) *graph.Node { return logSigmoid(x) }

// Sigmoid maps ℝ onto the unit interval (0, 1) by y = 1/(1 + e⁻ˣ).
type Sigmoid struct{}

// Forward returns sigmoid(x).
func (Sigmoid) Forward(x *graph.Node) *graph.Node { return graph.Sigmoid(x) }

// Inverse returns logit(y) = log y − log(1 − y).
func (Sigmoid) Inverse(y *graph.Node) *graph.Node {
	return graph.Sub(graph.Log(y), graph.Log1p(graph.Neg(y)))
}

// LogDetJacobian returns log(σ(x)(1 − σ(x))) = −softplus(−x) − softplus(x)
// for each entry.
func (Sigmoid) LogDetJacobian(x *graph.Node) *graph.Node {
	return graph.Neg(graph.Add(graph.Softplus(graph.Neg(x)), graph.Softplus(x)))
}

// ScaledSigmoid maps ℝ onto the interval (−α/(1−2α), (1−α)/(1−2α)) ⊃
// [0, 1] by y = (sigmoid(x) − α)/(1 − 2α). Its inverse is the logit
// transform of RealNVP (Dinh, Sohl-Dickstein and Bengio 2017, §4.1) for
// dequantised pixels y ∈ [0, 1): x = logit(α + (1 − 2α)·y), whose α keeps
// the logit away from the infinities at 0 and 1 (they use α = 0.05).
// Alpha must lie in [0, ½).
type ScaledSigmoid struct{ Alpha float64 }

func (b ScaledSigmoid) check(op string) {
	if !(b.Alpha >= 0 && b.Alpha < 0.5) {
		tensor.Fail("probabilistic.ScaledSigmoid."+op, "alpha %g: want 0 ≤ α < ½", b.Alpha)
	}
}

// Forward returns (sigmoid(x) − α)/(1 − 2α). It panics for α outside [0, ½).
func (b ScaledSigmoid) Forward(x *graph.Node) *graph.Node {
	b.check("Forward")
	return graph.MulScalar(graph.AddScalar(graph.Sigmoid(x), -b.Alpha), 1/(1-2*b.Alpha))
}

// Inverse returns logit(α + (1 − 2α)·y).
func (b ScaledSigmoid) Inverse(y *graph.Node) *graph.Node {
	b.check("Inverse")
	return Sigmoid{}.Inverse(graph.AddScalar(graph.MulScalar(y, 1-2*b.Alpha), b.Alpha))
}

// LogDetJacobian returns log(σ(x)(1 − σ(x))) − log(1 − 2α) for each entry.
func (b ScaledSigmoid) LogDetJacobian(x *graph.Node) *graph.Node {
	b.check("LogDetJacobian")
	return graph.AddScalar(Sigmoid{}.LogDetJacobian(x), -math.Log(1-2*b.Alpha))
}

// StickBreaking maps ℝ^{K−1} onto the interior of the simplex Δᴷ = {y ∈
// (0, 1)ᴷ : Σ y = 1} along the last axis, by logistic stick-breaking as in
// Stan and TensorFlow Probability: zₖ = sigmoid(xₖ − log(K − k)) for k = 1,
// …, K−1 is the fraction broken off the remaining stick, yₖ = zₖ·Π_{j<k} (1 −
// zⱼ) and y_K is what is left. The log(K − k) offset maps x = 0 to the
// centre (1/K, …, 1/K). The Jacobian is that of the first K − 1 outputs,
// which determine the last.
type StickBreaking struct{}

// stickOffsets returns the constant (log(K−1), log(K−2), …, log 1) for m = K−1.
func stickOffsets(x *graph.Node, m int) *graph.Node {
	v := make([]float64, m)
	for k := range v {
		v[k] = math.Log(float64(m - k))
	}
	return x.Graph().Const(tensor.FromValues(x.DType(), v, m))
}

// triOnes returns the constant m×cols matrix with ones where keep(row,
// column) holds: with a triangular pattern, v·U gives cumulative sums of v
// along its last axis without a loop.
func triOnes(x *graph.Node, m, cols int, keep func(i, j int) bool) *graph.Node {
	v := make([]float64, m*cols)
	for i := 0; i < m; i++ {
		for j := 0; j < cols; j++ {
			if keep(i, j) {
				v[i*cols+j] = 1
			}
		}
	}
	return x.Graph().Const(tensor.FromValues(x.DType(), v, m, cols))
}

func checkLastAxis(op string, x *graph.Node, min int) int {
	if x == nil || x.Dim() == 0 || x.Shape()[x.Dim()-1] < min {
		tensor.Fail(op, "operand %s: want shape (..., n) with n ≥ %d", graph.Describe(x), min)
	}
	return x.Shape()[x.Dim()-1]
}

// logParts returns log zₖ and log(1 − zₖ) for the shifted inputs.
func (StickBreaking) logParts(x *graph.Node) (logz, log1mz *graph.Node) {
	m := x.Shape()[x.Dim()-1]
	t := graph.Sub(x, stickOffsets(x, m))
	return logSigmoid(t), graph.Neg(graph.Softplus(t))
}

// Forward maps x (..., K−1) to y (..., K) on the simplex. It works in log
// space: log yₖ = log zₖ + Σ_{j<k} log(1 − zⱼ), the sums taken by a product
// with a triangular matrix of ones.
func (b StickBreaking) Forward(x *graph.Node) *graph.Node {
	m := checkLastAxis("probabilistic.StickBreaking.Forward", x, 1)
	logz, log1mz := b.logParts(x)
	// (K−1)×K: column k sums log(1 − zⱼ) over j < k; column K−1 over all j.
	u := triOnes(x, m, m+1, func(i, j int) bool { return i < j })
	logRest := graph.MatMul(log1mz, u)
	pads := make([][2]int, x.Dim())
	pads[x.Dim()-1] = [2]int{0, 1} // y_K = rest of the stick: log z_K = 0
	return graph.Exp(graph.Add(graph.Pad(logz, pads, 0), logRest))
}

// Inverse maps y (..., K) on the simplex back to x (..., K−1):
// xₖ = log yₖ − log Σ_{j>k} yⱼ + log(K − k), the tail sums taken directly so
// that no 1 − Σ cancels.
func (StickBreaking) Inverse(y *graph.Node) *graph.Node {
	n := checkLastAxis("probabilistic.StickBreaking.Inverse", y, 2)
	m := n - 1
	// K×(K−1): column k sums yⱼ over j > k.
	tail := graph.MatMul(y, triOnes(y, n, m, func(i, j int) bool { return i > j }))
	head := graph.Slice(y, -1, 0, m, 1)
	return graph.Add(graph.Sub(graph.Log(head), graph.Log(tail)), stickOffsets(y, m))
}

// LogDetJacobian returns Σₖ [log zₖ + log(1 − zₖ) + Σ_{j<k} log(1 − zⱼ)], the
// log-determinant of the triangular Jacobian of the first K − 1 outputs,
// shaped like x without its last axis.
func (b StickBreaking) LogDetJacobian(x *graph.Node) *graph.Node {
	m := checkLastAxis("probabilistic.StickBreaking.LogDetJacobian", x, 1)
	logz, log1mz := b.logParts(x)
	u := triOnes(x, m, m, func(i, j int) bool { return i < j })
	logRest := graph.MatMul(log1mz, u)
	return graph.Sum(graph.Add(graph.Add(logz, log1mz), logRest), []int{-1}, false)
}

// CholeskyFactor maps an unconstrained vector of length n(n+1)/2 onto the
// n×n lower-triangular matrices with a positive diagonal (Cholesky factors
// of covariance matrices). The vector fills the lower triangle row by row,
// (0,0), (1,0), (1,1), (2,0), …, and the diagonal entries pass through
// exp or, with Softplus set, through softplus. The Jacobian is that of the
// map onto the n(n+1)/2 entries of the lower triangle.
type CholeskyFactor struct {
	N        int  // matrix size n
	Softplus bool // positive diagonal by softplus instead of exp
}

// NewCholeskyFactor returns the bijector onto n×n Cholesky factors with an
// exp (or, with softplus, softplus) diagonal. It panics if n < 1.
func NewCholeskyFactor(n int, softplus bool) CholeskyFactor {
	if n < 1 {
		tensor.Fail("probabilistic.CholeskyFactor", "matrix size %d: want n ≥ 1", n)
	}
	return CholeskyFactor{N: n, Softplus: softplus}
}

// layout returns, for the packed vector, the positions of the diagonal
// and off-diagonal entries in the vector and in the flattened n×n matrix.
func (c CholeskyFactor) layout() (diagVec, diagMat, offVec, offMat []int) {
	k := 0
	for i := 0; i < c.N; i++ {
		for j := 0; j <= i; j++ {
			if i == j {
				diagVec, diagMat = append(diagVec, k), append(diagMat, i*c.N+j)
			} else {
				offVec, offMat = append(offVec, k), append(offMat, i*c.N+j)
			}
			k++
		}
	}
	return
}

func (c CholeskyFactor) check(op string, x *graph.Node) {
	m := c.N * (c.N + 1) / 2
	if x == nil || x.Dim() == 0 || x.Shape()[x.Dim()-1] != m {
		tensor.Fail(op, "operand %s: want shape (..., %d) for %d×%d factors", graph.Describe(x), m, c.N, c.N)
	}
}

func (c CholeskyFactor) positive(x *graph.Node) *graph.Node {
	if c.Softplus {
		return graph.Softplus(x)
	}
	return graph.Exp(x)
}

// Forward maps x (..., n(n+1)/2) to L (..., n, n).
func (c CholeskyFactor) Forward(x *graph.Node) *graph.Node {
	c.check("probabilistic.CholeskyFactor.Forward", x)
	dv, dm, ov, om := c.layout()
	nn := c.N * c.N
	l := graph.ScatterAdd(c.positive(graph.IndexSelect(x, -1, dv)), -1, dm, nn)
	if len(ov) > 0 {
		l = graph.Add(l, graph.ScatterAdd(graph.IndexSelect(x, -1, ov), -1, om, nn))
	}
	shape := concatShape(x.Shape()[:x.Dim()-1], []int{c.N, c.N})
	return graph.Reshape(l, shape...)
}

// Inverse maps L (..., n, n) back to x (..., n(n+1)/2); the upper triangle
// is ignored.
func (c CholeskyFactor) Inverse(l *graph.Node) *graph.Node {
	const op = "probabilistic.CholeskyFactor.Inverse"
	s := l.Shape()
	if len(s) < 2 || s[len(s)-1] != c.N || s[len(s)-2] != c.N {
		tensor.Fail(op, "operand %s: want shape (..., %d, %d)", graph.Describe(l), c.N, c.N)
	}
	flat := graph.Reshape(l, concatShape(s[:len(s)-2], []int{c.N * c.N})...)
	dv, dm, ov, om := c.layout()
	m := c.N * (c.N + 1) / 2
	diag := graph.IndexSelect(flat, -1, dm)
	var inv Bijector = Exp{}
	if c.Softplus {
		inv = Softplus{}
	}
	x := graph.ScatterAdd(inv.Inverse(diag), -1, dv, m)
	if len(ov) > 0 {
		x = graph.Add(x, graph.ScatterAdd(graph.IndexSelect(flat, -1, om), -1, ov, m))
	}
	return x
}

// LogDetJacobian returns Σ log f′(xᵢᵢ) over the diagonal entries (f = exp
// or softplus): the Jacobian onto the lower triangle is diagonal, the
// off-diagonal entries being copied.
func (c CholeskyFactor) LogDetJacobian(x *graph.Node) *graph.Node {
	c.check("probabilistic.CholeskyFactor.LogDetJacobian", x)
	dv, _, _, _ := c.layout()
	d := graph.IndexSelect(x, -1, dv)
	if c.Softplus {
		return graph.Sum(logSigmoid(d), []int{-1}, false)
	}
	return graph.Sum(d, []int{-1}, false)
}
