package nn

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Param is a trainable tensor. Its Value is updated in place by optimisers
// and read by the graph each step through Node, so the same Param serves
// every step of a training loop.
type Param struct {
	// Value holds the parameter. Replace it only between steps.
	Value *tensor.Tensor
}

// NewParam wraps t as a parameter (without copying it).
func NewParam(t *tensor.Tensor) *Param { return &Param{Value: t} }

// Node returns the node that stands for p in g in this step
// (g.VarOf(p.Value)): a Var made on first use, then the same node until
// g.Reset, so a parameter used in several places (weight tying, an RNN's
// time steps) has one gradient that sums every use. g.Bind can make it
// return a computed node instead.
func (p *Param) Node(g *graph.Graph) *graph.Node { return g.VarOf(p.Value) }

// To moves every parameter and buffer (BatchNorm's running statistics)
// of m to device d, as PyTorch's module.to(device) does: each Param's
// Value becomes a copy on d (the same tensor where it is there already).
// Make the optimiser after the move, since it keeps the tensors it was
// given.
func To(m Module, d tensor.Device) {
	for _, p := range append(m.Params(), Buffers(m)...) {
		p.Value = p.Value.To(d)
	}
}

// NamedParam is a parameter with its dotted path inside a module, such as
// "fc1.weight" (PyTorch's state_dict keys).
type NamedParam struct {
	Name string // dotted path relative to the module, e.g. "fc1.weight"
	*Param
}

// Module is anything that owns parameters. Params lists them in a stable
// order with names relative to the module; composites prefix their
// children's names (Prefix). SetTraining switches between training mode
// (the default, as in PyTorch) and evaluation mode, which changes what
// Dropout and BatchNorm do; composites pass it on to their children.
type Module interface {
	// Params returns the module's parameters with their dotted names.
	Params() []NamedParam
	// SetTraining selects training (true) or evaluation (false) mode.
	SetTraining(training bool)
}

// Layer is a Module with one input and one output, the kind Sequential
// chains.
type Layer interface {
	Module
	// Forward applies the layer to x, building nodes in x's graph.
	Forward(x *graph.Node) *graph.Node
}

// Buffered is implemented by modules with state that is saved with the
// parameters but not trained, such as BatchNorm's running statistics
// (PyTorch's buffers). Buffers are updated in place.
type Buffered interface {
	// Buffers returns the module's buffers with their dotted names.
	Buffers() []NamedParam
}

// Buffers returns m's buffers, or nil if it has none.
func Buffers(m Module) []NamedParam {
	if b, ok := m.(Buffered); ok {
		return b.Buffers()
	}
	return nil
}

// NamedRNG is a random stream a module draws from while it runs, with its
// dotted path inside the module, such as "2.mask" for the masks of a
// Dropout at position 2 of a Sequential.
type NamedRNG struct {
	Name string // dotted path relative to the module
	RNG  *tensor.RNG
}

// Stochastic is implemented by modules that draw random numbers from
// their own streams in Forward, such as Dropout; composites list their
// children's streams (prefixed as for Params). A checkpoint saves these
// streams' states (nn/checkpoint's Save), so that a resumed run draws the
// same masks as an uninterrupted one. A composite that holds a Dropout
// must implement it, as it implements Buffered for a BatchNorm.
type Stochastic interface {
	// RNGs returns the module's random streams with their dotted names.
	// Two names may share one RNG.
	RNGs() []NamedRNG
}

// RNGs returns m's random streams, or nil if it has none.
func RNGs(m Module) []NamedRNG {
	if s, ok := m.(Stochastic); ok {
		return s.RNGs()
	}
	return nil
}

// PrefixRNGs returns rs with "name." put before every name, for
// composites that list their children's streams (see Prefix).
func PrefixRNGs(name string, rs []NamedRNG) []NamedRNG {
	if name == "" {
		return rs
	}
	out := make([]NamedRNG, len(rs))
	for i, r := range rs {
		out[i] = NamedRNG{Name: name + "." + r.Name, RNG: r.RNG}
	}
	return out
}

// StateDict is a model's state under PyTorch's dotted names
// ("fc1.weight", "bn.running_mean"), PyTorch's state_dict: State produces
// it and nn/checkpoint's Save and LoadInto take it. It is a map, not an
// ordered list, because a name is what identifies a tensor everywhere it
// goes: checkpoint files store the names sorted, loading matches by name,
// optimiser state is keyed by name, and a map cannot hold one name twice.
// The tensors are the model's own, not copies, so copying values into a
// StateDict (checkpoint.LoadInto) loads the model.
type StateDict map[string]*tensor.Tensor

// State returns m's state dict: its parameters and its buffers under their
// dotted names. Tied parameters (one tensor under two names) appear under
// both names. It panics with a *tensor.Error if two different entries share
// a name, which would make a checkpoint ambiguous.
func State(m Module) StateDict {
	ps := m.Params()
	bs := Buffers(m)
	out := make(StateDict, len(ps)+len(bs))
	for _, list := range [][]NamedParam{ps, bs} {
		for _, p := range list {
			if p.Param == nil {
				tensor.Fail("nn.State", "%q is nil", p.Name)
			}
			if old, ok := out[p.Name]; ok && old != p.Value {
				tensor.Fail("nn.State", "two tensors are named %q", p.Name)
			}
			out[p.Name] = p.Value
		}
	}
	return out
}

// Values returns the parameters' tensors in order, the form optimisers take.
func Values(ps []NamedParam) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(ps))
	for i, p := range ps {
		out[i] = p.Value
	}
	return out
}

// Names returns the parameters' names in order, the keys under which an
// optimiser's State and LoadState store its buffers.
func Names(ps []NamedParam) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// Gradients returns the gradient of the scalar loss with respect to each
// parameter, in order: the values of autodiff.Grad at the nodes the
// parameters are bound to in loss's graph. A parameter the loss does not
// use in this step gets a zero tensor. The gradients belong to the graph
// and are valid until it is Reset, which is long enough for an optimiser
// step.
func Gradients(loss *graph.Node, ps []NamedParam) []*tensor.Tensor {
	if loss == nil {
		tensor.Fail("nn.Gradients", "nil loss")
	}
	g := loss.Graph()
	out := make([]*tensor.Tensor, len(ps))
	nodes := make([]*graph.Node, 0, len(ps))
	where := make([]int, 0, len(ps))
	for i, p := range ps {
		if p.Param == nil {
			tensor.Fail("nn.Gradients", "parameter %d (%q) is nil", i, p.Name)
		}
		if n := g.Bound(p.Value); n != nil {
			nodes = append(nodes, n)
			where = append(where, i)
		} else {
			out[i] = tensor.ZerosLike(p.Value)
		}
	}
	if len(nodes) > 0 {
		for k, gr := range autodiff.Grad(loss, nodes...) {
			out[where[k]] = gr.Value()
		}
	}
	return out
}

// NumParams returns the number of scalars in m's parameters (buffers not
// included).
func NumParams(m Module) int {
	n := 0
	for _, p := range m.Params() {
		n += p.Value.Size()
	}
	return n
}

// Prefix returns ps with "name." put before every name, for composites
// that list their children's parameters. An empty name leaves them as
// they are.
func Prefix(name string, ps []NamedParam) []NamedParam {
	if name == "" {
		return ps
	}
	out := make([]NamedParam, len(ps))
	for i, p := range ps {
		out[i] = NamedParam{Name: name + "." + p.Name, Param: p.Param}
	}
	return out
}

// mode is embedded by modules whose behaviour depends on training mode.
// Its zero value is training mode, PyTorch's default.
type mode struct{ eval bool }

// SetTraining switches between training (true) and evaluation mode.
func (m *mode) SetTraining(training bool) { m.eval = !training }

// Training reports whether the module is in training mode.
func (m *mode) Training() bool { return !m.eval }

// noParams is embedded by parameter-free, mode-independent layers.
type noParams struct{}

// Params returns nil: the layer has no parameters.
func (noParams) Params() []NamedParam { return nil }

// SetTraining does nothing: the layer behaves the same in both modes.
func (noParams) SetTraining(bool) {}

// checkInput panics, naming the layer, if x is nil or its dtype differs
// from the layer's.
func checkInput(layer fmt.Stringer, x *graph.Node, dt tensor.DType) {
	if x == nil {
		tensor.Fail(layer.String(), "nil input")
	}
	if x.DType() != dt {
		tensor.Fail(layer.String(), "input %s has dtype %v, the layer's parameters are %v", tensor.FormatShape(x.Shape()), x.DType(), dt)
	}
}
