package kernel

import (
	"fmt"
	"math"
	"strconv"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Hyperparam is a hyperparameter (of a kernel, a likelihood or a mean function).
// It is stored unconstrained, as a tensor that optimisers update in place,
// and mapped onto its constrained domain by a bijector plus an optional
// floor: value = floor + bijector(raw). Positive hyperparameters use
// probabilistic.Softplus by default, as GPyTorch does.
//
// A Hyperparam holds one value (shape ()) or several (shape (k), e.g. one ARD
// lengthscale per input dimension).
type Hyperparam struct {
	kernel string // prefix of the dotted name, e.g. "rbf"; "" for none
	local  string // the parameter's own name, e.g. "lengthscale"
	raw    *nn.Param
	bij    probabilistic.Bijector
	floor  float64
	prior  Prior
	fixed  bool
}

// NewHyperparam returns a positive hyperparameter named name (dotted, e.g.
// "rbf.lengthscale") holding values (one value gives shape (), several give
// shape (k)), stored through the softplus bijector in float64. It panics
// with a *tensor.Error if there are no values or one is not positive and
// finite.
func NewHyperparam(name string, values ...float64) *Hyperparam {
	if len(values) == 0 {
		tensor.Fail("kernel.NewHyperparam", "%s: no values", name)
	}
	p := &Hyperparam{bij: probabilistic.Softplus{}}
	p.setName(name)
	shape := []int{}
	if len(values) > 1 {
		shape = []int{len(values)}
	}
	p.raw = nn.NewParam(tensor.Zeros(tensor.Float64, shape...))
	if err := p.Set(values...); err != nil {
		tensor.Fail("kernel.NewHyperparam", "%v", err)
	}
	return p
}

// NewUnconstrainedHyperparam returns a real-valued hyperparameter (such as a
// constant mean) stored through the Identity bijector.
func NewUnconstrainedHyperparam(name string, values ...float64) *Hyperparam {
	if len(values) == 0 {
		tensor.Fail("kernel.NewUnconstrainedHyperparam", "%s: no values", name)
	}
	p := &Hyperparam{bij: Identity{}, floor: 0}
	p.setName(name)
	shape := []int{}
	if len(values) > 1 {
		shape = []int{len(values)}
	}
	p.raw = nn.NewParam(tensor.FromValues(tensor.Float64, values, shape...))
	return p
}

func (p *Hyperparam) setName(name string) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			p.kernel, p.local = name[:i], name[i+1:]
			return
		}
	}
	p.kernel, p.local = "", name
}

// Name returns the dotted name, e.g. "rbf.lengthscale".
func (p *Hyperparam) Name() string {
	if p.kernel == "" {
		return p.local
	}
	return p.kernel + "." + p.local
}

// SetName renames the hyperparameter (a dotted name such as
// "seasonal.variance") and returns it. Combining kernels afterwards keeps
// names unique.
func (p *Hyperparam) SetName(name string) *Hyperparam { p.setName(name); return p }

// Size returns the number of values.
func (p *Hyperparam) Size() int { return p.raw.Value.Size() }

// Raw returns the unconstrained tensor. Optimisers update it in place;
// replace values only between evaluations.
func (p *Hyperparam) Raw() *tensor.Tensor { return p.raw.Value }

// RawNode returns the node that stands for the unconstrained tensor in g
// in this step (g.VarOf(Raw())), to differentiate with respect to. To
// evaluate at unconstrained values that are themselves computed or
// checked, bind them first with g.Bind(p.Raw(), n).
func (p *Hyperparam) RawNode(g *graph.Graph) *graph.Node { return p.raw.Node(g) }

// Node returns the constrained value as a node of g, differentiable with
// respect to RawNode(g).
func (p *Hyperparam) Node(g *graph.Graph) *graph.Node {
	v := p.bij.Forward(p.RawNode(g))
	if p.floor != 0 {
		v = graph.AddScalar(v, p.floor)
	}
	return v
}

// Get returns the constrained values.
func (p *Hyperparam) Get() []float64 {
	g := graph.New()
	v := p.bij.Forward(g.Const(p.raw.Value)).Value().Values()
	for i := range v {
		v[i] += p.floor
	}
	return v
}

// Value returns the first constrained value: the value of a scalar
// hyperparameter.
func (p *Hyperparam) Value() float64 { return p.Get()[0] }

// Set sets the constrained values; a single value is used for every
// element. It returns an error, and changes nothing, if the count is wrong
// or a value is not finite or lies outside the domain (at or below the
// floor for positive hyperparameters).
func (p *Hyperparam) Set(values ...float64) error {
	n := p.Size()
	if len(values) == 1 && n > 1 {
		v := values[0]
		values = make([]float64, n)
		for i := range values {
			values[i] = v
		}
	}
	if len(values) != n {
		return fmt.Errorf("kernel: %s has %d values, got %d", p.Name(), n, len(values))
	}
	shifted := make([]float64, n)
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel: %s: value %g is not finite", p.Name(), v)
		}
		shifted[i] = v - p.floor
	}
	g := graph.New()
	raw := p.bij.Inverse(g.Const(tensor.FromValues(p.raw.Value.DType(), shifted, p.raw.Value.Shape()...))).Value()
	for i, r := range raw.Values() {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("kernel: %s: value %g is outside the domain (floor %g)", p.Name(), values[i], p.floor)
		}
	}
	tensor.CopyInto(p.raw.Value, raw)
	return nil
}

// Bijector returns the map from the unconstrained to the constrained space.
func (p *Hyperparam) Bijector() probabilistic.Bijector { return p.bij }

// SetBijector changes the map to the unconstrained space (e.g. to
// probabilistic.Exp), keeping the constrained values. It returns p, and
// panics with a *tensor.Error if the current values cannot be represented.
func (p *Hyperparam) SetBijector(b probabilistic.Bijector) *Hyperparam {
	v := p.Get()
	old := p.bij
	p.bij = b
	if err := p.Set(v...); err != nil {
		p.bij = old
		tensor.Fail("kernel.Hyperparam.SetBijector", "%v", err)
	}
	return p
}

// Floor returns the lower bound added to the bijector's output.
func (p *Hyperparam) Floor() float64 { return p.floor }

// SetFloor sets the lower bound (value = floor + bijector(raw)), keeping
// the constrained values; values at or below the new floor are raised just
// above it. It returns p.
func (p *Hyperparam) SetFloor(floor float64) *Hyperparam {
	v := p.Get()
	p.floor = floor
	for i := range v {
		if v[i] <= floor {
			v[i] = floor + math.Max(1e-6, math.Abs(floor)*1e-3)
		}
	}
	if err := p.Set(v...); err != nil {
		tensor.Fail("kernel.Hyperparam.SetFloor", "%v", err)
	}
	return p
}

// Prior returns the prior, or nil.
func (p *Hyperparam) Prior() Prior { return p.prior }

// SetPrior sets a prior on the constrained value (nil removes it); its log
// density is added to the objective that fitting maximises. It returns p.
func (p *Hyperparam) SetPrior(prior Prior) *Hyperparam { p.prior = prior; return p }

// Fixed reports whether fitting leaves the parameter alone.
func (p *Hyperparam) Fixed() bool { return p.fixed }

// SetFixed excludes the parameter from fitting (or includes it again). It
// returns p.
func (p *Hyperparam) SetFixed(fixed bool) *Hyperparam { p.fixed = fixed; return p }

// LogPrior returns the log prior density of the constrained value, summed
// over its elements, as a scalar node of g, or nil without a prior. The
// density is that of the constrained value, without the Jacobian of the
// bijector (GPyTorch's convention): maximising LML + LogPrior is MAP
// estimation of the constrained hyperparameters.
func (p *Hyperparam) LogPrior(g *graph.Graph) *graph.Node {
	if p.prior == nil {
		return nil
	}
	d := p.prior(g, p.raw.Value.DType())
	return graph.Sum(d.LogProb(p.Node(g)), nil, false)
}

// SetDType converts the stored values to dt (float32 or float64). Models
// call it so that hyperparameters match their data's dtype.
func (p *Hyperparam) SetDType(dt tensor.DType) {
	if p.raw.Value.DType() != dt {
		p.raw.Value = p.raw.Value.Cast(dt)
	}
}

// Prior builds, in graph g and dtype dt, the prior distribution of a
// hyperparameter's constrained value. Distributions are graph objects, so
// a prior is a constructor that each evaluation calls in its own graph.
type Prior func(g *graph.Graph, dt tensor.DType) probabilistic.Distribution

// GammaPrior returns the Gamma(concentration, rate) prior (mean
// concentration/rate), the usual prior on lengthscales and variances.
func GammaPrior(concentration, rate float64) Prior {
	return func(g *graph.Graph, dt tensor.DType) probabilistic.Distribution {
		return probabilistic.NewGamma(g.Scalar(dt, concentration), g.Scalar(dt, rate))
	}
}

// NormalPrior returns the Normal(loc, scale) prior, e.g. for a constant
// mean.
func NormalPrior(loc, scale float64) Prior {
	return func(g *graph.Graph, dt tensor.DType) probabilistic.Distribution {
		return probabilistic.NewNormal(g.Scalar(dt, loc), g.Scalar(dt, scale))
	}
}

// Identity is the bijector of real-valued hyperparameters: it leaves values
// unchanged.
type Identity struct{}

// Forward returns x.
func (Identity) Forward(x *graph.Node) *graph.Node { return x }

// Inverse returns y.
func (Identity) Inverse(y *graph.Node) *graph.Node { return y }

// LogDetJacobian returns zeros shaped like x.
func (Identity) LogDetJacobian(x *graph.Node) *graph.Node { return graph.MulScalar(x, 0) }

// UniqueHyperparams returns ps without repeated pointers (a kernel used
// twice shares its hyperparameters) and renames hyperparameters whose names
// collide by suffixing their prefix: the second "rbf.lengthscale" becomes
// "rbf_2.lengthscale". Models call it on their kernel's hyperparameters
// joined with their own (a likelihood's noise, a mean).
func UniqueHyperparams(ps []*Hyperparam) []*Hyperparam {
	seenPtr := make(map[*Hyperparam]bool, len(ps))
	seenName := make(map[string]bool, len(ps))
	out := make([]*Hyperparam, 0, len(ps))
	for _, p := range ps {
		if seenPtr[p] {
			continue
		}
		seenPtr[p] = true
		if seenName[p.Name()] {
			base := p.kernel
			for k := 2; ; k++ {
				p.kernel = base + "_" + strconv.Itoa(k)
				if base == "" {
					p.kernel = ""
					p.local = p.local + "_" + strconv.Itoa(k)
				}
				if !seenName[p.Name()] {
					break
				}
				if base == "" {
					p.local = p.local[:len(p.local)-len(strconv.Itoa(k))-1]
				}
			}
		}
		seenName[p.Name()] = true
		out = append(out, p)
	}
	return out
}

// Lookup returns the hyperparameter of ps with the given dotted name, or
// nil.
func Lookup(ps []*Hyperparam, name string) *Hyperparam {
	for _, p := range ps {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Unconstrain maps a constrained value to the unconstrained space, giving
// −Inf for values at or below the floor and +Inf for +Inf (NaN above the
// top of a bounded domain such as a sigmoid's). Optimisers that search the
// raw values use it to turn bounds and starting points into raw ones.
func (p *Hyperparam) Unconstrain(v float64) float64 {
	if math.IsInf(v, 1) {
		return v
	}
	if !(v > p.floor) && p.bij != (Identity{}) {
		return math.Inf(-1)
	}
	g := graph.New()
	return p.bij.Inverse(g.Scalar(tensor.Float64, v-p.floor)).Item()
}

// RawBounds checks the bounds [lo, hi] of the constrained value and maps
// them to the unconstrained space. It returns an error unless they are an
// interval that reaches into the domain; an upper bound above the top of a
// bounded domain maps to +Inf.
func (p *Hyperparam) RawBounds(lo, hi float64) (rawLo, rawHi float64, err error) {
	if !(lo < hi) || math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 0, fmt.Errorf("bounds [%g, %g] of %s are not an interval", lo, hi, p.Name())
	}
	rawLo, rawHi = p.Unconstrain(lo), p.Unconstrain(hi)
	if math.IsNaN(rawHi) && !math.IsNaN(rawLo) {
		rawHi = math.Inf(1) // above the top of a bounded domain (a sigmoid's 1)
	}
	if math.IsNaN(rawLo) || math.IsNaN(rawHi) || rawHi == math.Inf(-1) {
		return 0, 0, fmt.Errorf("bounds [%g, %g] of %s lie outside its domain (floor %g)", lo, hi, p.Name(), p.floor)
	}
	return rawLo, rawHi, nil
}

// Supremum returns the top of the domain: the floor plus the bijector's
// value at +∞ (+Inf for exp and softplus, floor + 1 for a sigmoid).
func (p *Hyperparam) Supremum() float64 {
	g := graph.New()
	return p.floor + p.bij.Forward(g.Scalar(tensor.Float64, math.Inf(1))).Item()
}
