package nn

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Remat wraps a layer so that the reverse sweep recomputes its inner
// values instead of keeping them (autodiff.Checkpoint; Chen et al. 2016,
// "Training deep nets with sublinear memory cost"), as
// torch.utils.checkpoint and jax.checkpoint do: a step keeps the layer's
// output alone, and the gradient costs one more forward pass of the
// layer. Wrapping each of about √L segments of an L-layer chain keeps
// O(√L) layers' values. Gradients equal the unwrapped layer's bit for
// bit.
//
// The inner layer's Forward runs twice per step, so it must compute the
// same thing both times: do not wrap layers that draw random numbers
// (Dropout) or update state while training (BatchNorm's running
// statistics). Its parameters keep their names: a Remat's state dict is
// the inner layer's.
type Remat struct {
	Inner Layer
}

// NewRemat returns l wrapped for rematerialisation. It panics with a
// *tensor.Error if l is nil.
func NewRemat(l Layer) *Remat {
	if l == nil {
		tensor.Fail("nn.NewRemat", "nil layer")
	}
	return &Remat{Inner: l}
}

// String names the wrapper and its layer, e.g. "Remat(Sequential(...))".
func (r *Remat) String() string { return fmt.Sprintf("Remat(%v)", r.Inner) }

// Params returns the inner layer's parameters, with their names.
func (r *Remat) Params() []NamedParam { return r.Inner.Params() }

// SetTraining sets the inner layer's mode.
func (r *Remat) SetTraining(training bool) { r.Inner.SetTraining(training) }

// Forward applies the inner layer to x through autodiff.Checkpoint, with
// the layer's parameters among the checkpoint's inputs so that their
// gradients flow.
func (r *Remat) Forward(x *graph.Node) *graph.Node {
	g := x.Graph()
	ps := r.Inner.Params()
	xs := make([]*graph.Node, 0, 1+len(ps))
	xs = append(xs, x)
	for _, p := range ps {
		xs = append(xs, p.Node(g))
	}
	return autodiff.Checkpoint(func(in []*graph.Node) *graph.Node { return r.Inner.Forward(in[0]) }, xs...)
}
