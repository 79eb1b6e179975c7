package logreg

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// problem is a validated data set with the layout of θ: rows weight
// vectors of cols = d (+1 with an intercept) entries each, the intercept
// last, flattened row-major.
type problem struct {
	link      Link
	n, d      int
	rows      int // 1 for the binary links, K for softmax
	cols      int // d, plus 1 with an intercept
	intercept bool
	x         *tensor.Tensor // (n, cols): the features, then a column of ones
	y         []int
	yCol      *tensor.Tensor // (n, 1): y for logit, 2y−1 for probit
	onehot    *tensor.Tensor // (n, K) for softmax
	prec      *tensor.Tensor // (rows·cols): the prior precision of each θ entry (λ, or 0 for intercepts)
	g         *graph.Graph
}

// newProblem checks x (n, d) and y and lays the problem out, naming op in
// its errors. classes is 2 for the binary links.
func newProblem(op string, x *tensor.Tensor, y []int, link Link, classes int, intercept bool) (*problem, error) {
	vals, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	if len(y) != n {
		return nil, fmt.Errorf("%s: x has %d rows but there are %d labels", op, n, len(y))
	}
	if link == Softmax && classes < 2 {
		return nil, fmt.Errorf("%s: softmax needs at least 2 classes, got %d", op, classes)
	}
	if link != Softmax {
		classes = 2
	}
	for i, v := range y {
		if v < 0 || v >= classes {
			if link != Softmax {
				return nil, fmt.Errorf("%s: label %d at position %d: binary labels must be 0 or 1", op, v, i)
			}
			return nil, fmt.Errorf("%s: label %d at position %d is outside [0, %d)", op, v, i, classes)
		}
	}
	if slices.Min(y) == slices.Max(y) {
		return nil, fmt.Errorf("%s: every label is %d: need at least two classes", op, y[0])
	}
	cols := d
	if intercept {
		cols++
	}
	xa := make([]float64, n*cols)
	for i := range n {
		copy(xa[i*cols:i*cols+d], vals[i*d:(i+1)*d])
		if intercept {
			xa[i*cols+d] = 1
		}
	}
	p := &problem{link: link, n: n, d: d, rows: 1, cols: cols, intercept: intercept,
		x: tensor.FromFloat64s(xa, n, cols), y: append([]int(nil), y...), g: graph.New()}
	yc := make([]float64, n)
	for i, v := range y {
		yc[i] = float64(v)
		if link == Probit {
			yc[i] = 2*yc[i] - 1
		}
	}
	p.yCol = tensor.FromFloat64s(yc, n, 1)
	if link == Softmax {
		p.rows = classes
		p.onehot = tensor.OneHot(tensor.Float64, y, classes)
	}
	p.prec = tensor.Zeros(tensor.Float64, p.rows*p.cols)
	return p, nil
}

// setPrecision sets the prior precision: lambda on the weights and
// interceptPrec on the intercepts.
func (p *problem) setPrecision(lambda, interceptPrec float64) {
	pr := p.prec.Float64s()
	for r := range p.rows {
		for j := range p.cols {
			v := lambda
			if p.intercept && j == p.d {
				v = interceptPrec
			}
			pr[r*p.cols+j] = v
		}
	}
}

// size is the number of parameters.
func (p *problem) size() int { return p.rows * p.cols }

// eta returns the linear predictor (n, rows) for θ.
func (p *problem) eta(g *graph.Graph, theta *graph.Node) *graph.Node {
	w := graph.Reshape(theta, p.rows, p.cols)
	return graph.MatMulT(g.Const(p.x), w, false, true)
}

// dataLoss returns Σᵢ ℓ(yᵢ, ηᵢ) for eta (n, rows).
func (p *problem) dataLoss(g *graph.Graph, eta *graph.Node) *graph.Node {
	switch p.link {
	case Probit:
		return graph.Neg(graph.Sum(LogNdtr(graph.Mul(g.Const(p.yCol), eta)), nil, false))
	case Softmax:
		lse := graph.Sum(graph.LogSumExp(eta, []int{1}, false), nil, false)
		return graph.Sub(lse, graph.Sum(graph.Mul(g.Const(p.onehot), eta), nil, false))
	default:
		return graph.Sum(graph.Sub(graph.Softplus(eta), graph.Mul(g.Const(p.yCol), eta)), nil, false)
	}
}

// objective returns E(θ) = dataLoss + ½·Σ prec·θ².
func (p *problem) objective(g *graph.Graph, theta *graph.Node) *graph.Node {
	pen := graph.MulScalar(graph.Sum(graph.Mul(g.Const(p.prec), graph.Square(theta)), nil, false), 0.5)
	return graph.Add(p.dataLoss(g, p.eta(g, theta)), pen)
}

// value returns E(θ).
func (p *problem) value(theta []float64) float64 {
	p.g.Reset()
	return p.objective(p.g, p.g.Var(tensor.FromFloat64s(theta))).Item()
}

// valueGrad returns E(θ) and writes ∇E into grad.
func (p *problem) valueGrad(theta, grad []float64) float64 {
	p.g.Reset()
	th := p.g.Var(tensor.FromFloat64s(theta))
	f, gr := autodiff.ValueAndGrad(p.objective(p.g, th), th)
	copy(grad, gr[0].Value().Values())
	return f
}

// hessianChunk is the number of Hessian columns formed per graph: each
// JVP of the gradient keeps tangents of every node alive until Reset, so
// the columns are built in chunks to bound memory.
const hessianChunk = 32

// hessian returns E(θ), ∇E and the Hessian ∇²E (p×p, row-major) by forward
// over reverse: column k is the JVP of autodiff.Grad along the basis vector
// eₖ (what autodiff.Hessian does), built hessianChunk columns at a time.
func (p *problem) hessian(theta []float64) (f float64, grad, hess []float64) {
	np := p.size()
	hess = make([]float64, np*np)
	e := make([]float64, np)
	for k0 := 0; k0 < np; k0 += hessianChunk {
		p.g.Reset()
		th := p.g.Var(tensor.FromFloat64s(theta))
		obj := p.objective(p.g, th)
		gr := autodiff.Grad(obj, th)[0]
		if k0 == 0 {
			f, grad = obj.Item(), gr.Value().Values()
		}
		for k := k0; k < min(k0+hessianChunk, np); k++ {
			clear(e)
			e[k] = 1
			col := autodiff.JVP([]*graph.Node{gr}, []*graph.Node{th}, []*graph.Node{p.g.Const(tensor.FromFloat64s(e))})[0].Value().Values()
			for i, v := range col {
				hess[i*np+k] = v
			}
		}
	}
	symmetrise(hess, np)
	return f, grad, hess
}

// irlsSystem returns E(θ), ∇E and the weighted least-squares system
// A = X̃ᵀSX̃ + Λ, r = X̃ᵀ(Sη − u) whose solution is the next IRLS iterate.
// The scores u = ∂ℓ/∂η and the working weights S = ∂²ℓ/∂η² (diagonal for
// the binary links, K×K blocks per sample for softmax) are autodiff
// derivatives of the loss with respect to the linear predictor η.
func (p *problem) irlsSystem(theta []float64) (f float64, grad, a, r []float64) {
	p.g.Reset()
	g := p.g
	th := g.Var(tensor.FromFloat64s(theta))
	f, gr := autodiff.ValueAndGrad(p.objective(g, th), th)
	grad = gr[0].Value().Values()

	etaVal := p.eta(g, g.Const(tensor.FromFloat64s(theta))).Value().Values() // (n, rows)
	eta := g.Var(tensor.FromFloat64s(etaVal, p.n, p.rows))
	loss := p.dataLoss(g, eta)
	u := autodiff.Grad(loss, eta)[0].Value().Values()
	k := p.rows
	// s[i][a][b] = ∂²ℓᵢ/∂ηᵢₐ∂ηᵢ_b: one HVP per class, with the tangent 1 in
	// column b of every row, since the loss is a sum of per-sample terms.
	s := make([]float64, p.n*k*k)
	for b := range k {
		v := make([]float64, p.n*k)
		for i := range p.n {
			v[i*k+b] = 1
		}
		hv := autodiff.HVP(loss, []*graph.Node{eta}, []*graph.Node{g.Const(tensor.FromFloat64s(v, p.n, k))})[0].Value().Values()
		for i := range p.n {
			for a := range k {
				s[(i*k+a)*k+b] = hv[i*k+a]
			}
		}
	}
	np := p.size()
	a = make([]float64, np*np)
	r = make([]float64, np)
	c := p.cols
	// r = X̃ᵀ(Sη − u), class block by class block.
	z := make([]float64, p.n*k)
	for i := range p.n {
		for ra := range k {
			v := -u[i*k+ra]
			for rb := range k {
				v += s[(i*k+ra)*k+rb] * etaVal[i*k+rb]
			}
			z[i*k+ra] = v
		}
	}
	copy(r, tensor.MatMulT(tensor.FromFloat64s(z, p.n, k), p.x, true, false).Values()) // (k, c)
	// A's block (ra, rb) is X̃ᵀ diag(s_{·,ra,rb}) X̃.
	sx := make([]float64, p.n*c)
	x := p.x.Float64s()
	for ra := range k {
		for rb := range k {
			for i := range p.n {
				w := s[(i*k+ra)*k+rb]
				for j := range c {
					sx[i*c+j] = w * x[i*c+j]
				}
			}
			blk := tensor.MatMulT(tensor.FromFloat64s(sx, p.n, c), p.x, true, false).Values()
			for j := range c {
				copy(a[(ra*c+j)*np+rb*c:(ra*c+j)*np+rb*c+c], blk[j*c:(j+1)*c])
			}
		}
	}
	pr := p.prec.Float64s()
	for j := range np {
		a[j*np+j] += pr[j]
	}
	return f, grad, a, r
}

// separated reports whether θ classifies every training sample correctly
// with a positive margin: then the likelihood has no finite maximiser.
func (p *problem) separated(theta []float64) bool {
	p.g.Reset()
	eta := p.eta(p.g, p.g.Const(tensor.FromFloat64s(theta))).Value().Values()
	k := p.rows
	for i, yi := range p.y {
		if k == 1 {
			if (yi == 1) != (eta[i] > 0) {
				return false
			}
			continue
		}
		for c := range k {
			if c != yi && eta[i*k+c] >= eta[i*k+yi] {
				return false
			}
		}
	}
	return true
}

// rankDeficient reports whether E is invariant along some direction for
// every data set: softmax with an unpenalised parameter (adding a constant
// to that parameter in every class leaves the probabilities unchanged).
func (p *problem) rankDeficient() bool {
	if p.link != Softmax {
		return false
	}
	for _, v := range p.prec.Float64s() {
		if v == 0 {
			return true
		}
	}
	return false
}

// symmetrise replaces the n×n matrix a by (a + aᵀ)/2.
func symmetrise(a []float64, n int) {
	for i := range n {
		for j := i + 1; j < n; j++ {
			m := 0.5 * (a[i*n+j] + a[j*n+i])
			a[i*n+j], a[j*n+i] = m, m
		}
	}
}

// solveSym solves A·x = b for the symmetric positive semi-definite A (n×n):
// by Cholesky, or by the eigendecomposition's pseudo-inverse when A is
// singular (pinv) or Cholesky fails, which gives the minimum-norm solution.
func solveSym(a, b []float64, n int, pinv bool) ([]float64, error) {
	at := tensor.FromFloat64s(a, n, n)
	bt := tensor.FromFloat64s(b, n, 1)
	if !pinv {
		if l, err := tensor.Cholesky(at); err == nil {
			return tensor.CholeskySolve(l, bt).Values(), nil
		}
	}
	w, v, err := tensor.Eigh(at)
	if err != nil {
		return nil, fmt.Errorf("eigendecomposition of the Hessian: %w", err)
	}
	wv, vv := w.Values(), v.Values()
	cut := 1e-10 * math.Max(math.Abs(wv[0]), math.Abs(wv[n-1]))
	x := make([]float64, n)
	for k := range n {
		if wv[k] <= cut {
			continue
		}
		var c float64
		for i := range n {
			c += vv[i*n+k] * b[i]
		}
		c /= wv[k]
		for i := range n {
			x[i] += c * vv[i*n+k]
		}
	}
	return x, nil
}
