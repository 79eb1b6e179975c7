package nn

import (
	"strconv"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Sequential chains layers: each one's output is the next one's input
// (PyTorch's nn.Sequential). Children are named "0", "1", … by position
// unless added with a name, and their parameters are listed in order under
// those names: "0.weight", "0.bias", "1.weight", ….
type Sequential struct {
	names  []string
	layers []Layer
}

// NewSequential returns a Sequential of the given layers, named by
// position.
func NewSequential(layers ...Layer) *Sequential {
	s := &Sequential{}
	for _, l := range layers {
		s.Add("", l)
	}
	return s
}

// Add appends a layer named name (its position when name is empty) and
// returns s, so calls chain. It panics if the layer is nil or the name is
// taken or contains a dot.
func (s *Sequential) Add(name string, l Layer) *Sequential {
	if name == "" {
		name = strconv.Itoa(len(s.layers))
	}
	if l == nil {
		tensor.Fail("nn.Sequential.Add", "layer %q is nil", name)
	}
	for _, r := range name {
		if r == '.' {
			tensor.Fail("nn.Sequential.Add", "layer name %q contains a dot", name)
		}
	}
	for _, n := range s.names {
		if n == name {
			tensor.Fail("nn.Sequential.Add", "layer name %q is already used", name)
		}
	}
	s.names = append(s.names, name)
	s.layers = append(s.layers, l)
	return s
}

// Len returns the number of layers.
func (s *Sequential) Len() int { return len(s.layers) }

// Layer returns the i-th layer.
func (s *Sequential) Layer(i int) Layer { return s.layers[i] }

// Name returns the i-th layer's name.
func (s *Sequential) Name(i int) string { return s.names[i] }

// Params returns the layers' parameters in order, each prefixed with its
// layer's name.
func (s *Sequential) Params() []NamedParam {
	var ps []NamedParam
	for i, l := range s.layers {
		ps = append(ps, Prefix(s.names[i], l.Params())...)
	}
	return ps
}

// Buffers returns the layers' buffers in order, each prefixed with its
// layer's name.
func (s *Sequential) Buffers() []NamedParam {
	var bs []NamedParam
	for i, l := range s.layers {
		bs = append(bs, Prefix(s.names[i], Buffers(l))...)
	}
	return bs
}

// RNGs returns the layers' random streams (a Dropout's masks) in order,
// each prefixed with its layer's name.
func (s *Sequential) RNGs() []NamedRNG {
	var rs []NamedRNG
	for i, l := range s.layers {
		rs = append(rs, PrefixRNGs(s.names[i], RNGs(l))...)
	}
	return rs
}

// SetTraining sets the mode of every layer.
func (s *Sequential) SetTraining(training bool) {
	for _, l := range s.layers {
		l.SetTraining(training)
	}
}

// Forward passes x through the layers in order. An empty Sequential
// returns x.
func (s *Sequential) Forward(x *graph.Node) *graph.Node {
	for _, l := range s.layers {
		x = l.Forward(x)
	}
	return x
}
