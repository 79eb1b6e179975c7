package train

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Captured steps (Options.Capture). The loss and its gradients are traced
// once per shape of the batch's tensors into a graph.Program whose inputs
// are the batch's X and Targets and the model's parameters, and replayed
// for every later batch of that shape without building the graph (a
// smaller last batch gets a program of its own). The optimiser step,
// clipping, accumulation and the schedule run as in the eager loop.

// capturedGradients returns the loss of batch b and its gradients in the
// parameters, from the program of b's shapes (captured on first use).
// The tensors are the program's, valid until its next run.
func (t *Trainer) capturedGradients(b data.Batch, rng *tensor.RNG) (float64, []*tensor.Tensor, error) {
	if b.X == nil {
		return 0, nil, errors.New("the batch has no X: a captured step reads the batch's tensors")
	}
	if b.Targets == b.X {
		return 0, nil, errors.New("the batch's X and Targets are one tensor")
	}
	batch := []*tensor.Tensor{b.X}
	if b.Targets != nil {
		batch = append(batch, b.Targets)
	}
	in := append(batch, t.values...)
	key := shapesKey(batch)
	p := t.programs[key]
	if p == nil {
		nb := len(batch)
		step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			l := t.loss(g, b, rng)
			if l == nil {
				tensor.Fail("train", "the loss function returned nil")
			}
			return append([]*graph.Node{l}, autodiff.Grad(l, in[nb:]...)...)
		}
		var err error
		if p, err = graph.Capture(step, in, graph.CaptureOptions{}); err != nil {
			return 0, nil, fmt.Errorf("capturing the step (Options.Capture): %w; a captured loss function reads the batch's tensors through g.VarOf, takes one-hot targets as a tensor rather than labels, and draws no random numbers", err)
		}
		if t.programs == nil {
			t.programs = map[string]*graph.Program{}
		}
		t.programs[key] = p
	}
	out, err := p.Run(in)
	if err != nil {
		return 0, nil, err
	}
	return out[0].Item(), out[1:], nil
}

// shapesKey names the dtypes and shapes of ts.
func shapesKey(ts []*tensor.Tensor) string {
	var b strings.Builder
	for _, x := range ts {
		fmt.Fprintf(&b, "%v%v;", x.DType(), x.Shape())
	}
	return b.String()
}
