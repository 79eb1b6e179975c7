package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// AffineCoupling is RealNVP's affine coupling layer (Dinh, Sohl-Dickstein
// and Bengio 2017), a learnable bijector on the last axis (event rank 1).
// The entries where Mask is 1 pass through unchanged and condition an
// affine map of the others:
//
//	y = m⊙x + (1 − m)⊙(x⊙exp(s) + t),  (s, t) = net(m⊙x),
//
// so the Jacobian is triangular with log-determinant Σ (1 − m)⊙s. The
// conditioner is an MLP with two tanh hidden layers; its last layer starts
// at zero, so a new coupling is the identity. s is soft-clamped to
// (−Clamp, Clamp) by Clamp·tanh(s/Clamp) to keep early training stable.
// Stack layers with complementary masks so that every entry is
// transformed.
type AffineCoupling struct {
	Mask  []float64
	Clamp float64
	hid1  *nn.Linear
	hid2  *nn.Linear
	out   *nn.Linear
}

// NewAffineCoupling returns a coupling layer on vectors of len(mask)
// entries (mask entries 0 or 1, at least one of each) with hidden width
// hidden, its weights drawn from rng. It panics on a bad mask or width.
func NewAffineCoupling(rng *tensor.RNG, mask []float64, hidden int, dt tensor.DType) *AffineCoupling {
	const op = "probabilistic.NewAffineCoupling"
	ones := 0
	for _, v := range mask {
		if v != 0 && v != 1 {
			tensor.Fail(op, "mask %v must hold only 0 and 1", mask)
		}
		ones += int(v)
	}
	if ones == 0 || ones == len(mask) {
		tensor.Fail(op, "mask %v must pass some entries and transform others", mask)
	}
	if hidden <= 0 {
		tensor.Fail(op, "hidden width %d must be positive", hidden)
	}
	d := len(mask)
	c := &AffineCoupling{Mask: append([]float64(nil), mask...), Clamp: 2,
		hid1: nn.NewLinear(rng, d, hidden, true, dt), hid2: nn.NewLinear(rng, hidden, hidden, true, dt),
		out: nn.NewLinear(rng, hidden, 2*d, true, dt)}
	c.out.Weight.Value.Fill(0)
	c.out.Bias.Value.Fill(0)
	return c
}

// Params returns the conditioner's parameters ("hidden1", "hidden2",
// "out").
func (c *AffineCoupling) Params() []nn.NamedParam {
	ps := nn.Prefix("hidden1", c.hid1.Params())
	ps = append(ps, nn.Prefix("hidden2", c.hid2.Params())...)
	return append(ps, nn.Prefix("out", c.out.Params())...)
}

// SetTraining does nothing: the layer behaves the same in both modes.
func (c *AffineCoupling) SetTraining(bool) {}

// scaleShift returns s and t, zero on the passed entries, from the passed
// entries of z (x or y: they agree there).
func (c *AffineCoupling) scaleShift(z *graph.Node) (s, t, keep, change *graph.Node) {
	const op = "probabilistic.AffineCoupling"
	d := len(c.Mask)
	if z.Dim() == 0 || z.Shape()[z.Dim()-1] != d {
		tensor.Fail(op, "input %s does not fit a mask of %d entries", graph.Describe(z), d)
	}
	g := z.Graph()
	inv := make([]float64, d)
	for i, v := range c.Mask {
		inv[i] = 1 - v
	}
	keep = g.Const(tensor.FromValues(z.DType(), c.Mask, d))
	change = g.Const(tensor.FromValues(z.DType(), inv, d))
	h := graph.Tanh(c.hid1.Forward(graph.Mul(z, keep)))
	h = c.out.Forward(graph.Tanh(c.hid2.Forward(h)))
	raw, shift := graph.Slice(h, -1, 0, d, 1), graph.Slice(h, -1, d, 2*d, 1)
	s = graph.Mul(graph.MulScalar(graph.Tanh(graph.MulScalar(raw, 1/c.Clamp)), c.Clamp), change)
	return s, graph.Mul(shift, change), keep, change
}

// Forward returns m⊙x + (1 − m)⊙(x⊙exp(s) + t).
func (c *AffineCoupling) Forward(x *graph.Node) *graph.Node {
	s, t, keep, change := c.scaleShift(x)
	moved := graph.Add(graph.Mul(graph.Mul(x, change), graph.Exp(s)), t)
	return graph.Add(graph.Mul(x, keep), moved)
}

// Inverse returns m⊙y + (1 − m)⊙(y − t)⊙exp(−s).
func (c *AffineCoupling) Inverse(y *graph.Node) *graph.Node {
	s, t, keep, change := c.scaleShift(y)
	back := graph.Mul(graph.Mul(graph.Sub(y, t), change), graph.Exp(graph.Neg(s)))
	return graph.Add(graph.Mul(y, keep), back)
}

// LogDetJacobian returns Σ (1 − m)⊙s over the last axis, which it drops.
func (c *AffineCoupling) LogDetJacobian(x *graph.Node) *graph.Node {
	s, _, _, _ := c.scaleShift(x)
	return graph.Sum(s, []int{-1}, false)
}

// InverseLogDet returns Inverse(y) and LogDetJacobian at that point from
// one evaluation of the conditioner (the passed entries, which it reads,
// are the same in x and y); Transformed.LogProb uses it.
func (c *AffineCoupling) InverseLogDet(y *graph.Node) (x, logDet *graph.Node) {
	s, t, keep, change := c.scaleShift(y)
	back := graph.Mul(graph.Mul(graph.Sub(y, t), change), graph.Exp(graph.Neg(s)))
	return graph.Add(graph.Mul(y, keep), back), graph.Sum(s, []int{-1}, false)
}
