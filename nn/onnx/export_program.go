package onnx

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// ExportProgram writes a captured forward pass (graph.Capture) as an ONNX
// model to w: the program's ops as graph.Program.Build applies them again,
// after the capture's optimisations, with each fused step written as the
// ops it fused. in are the tensors the program was captured with, in
// order; those that are parameters or buffers of m (in nn.State(m), the
// same tensors) become initializers under their state-dict names, as in
// Export, and the others are the graph's inputs, in order, their values
// the example. m may be nil when every input is data.
//
// Shapes are fixed as captured (a program runs at its captured shapes),
// so opts.StaticBatch is implied; opts.Forward, IndexInputs and BatchAxes
// must be unset. InputNames, OutputNames and Name apply as in Export.
// Errors are Export's; in particular a graph op without an ONNX mapping
// is an error wrapping ErrNotExportable that names it.
//
// ExportProgram panics with a *tensor.Error if p is nil, in holds nil,
// does not fit the program, or holds nothing but m's state, or opts sets
// what it must not.
func ExportProgram(w io.Writer, p *graph.Program, in []*tensor.Tensor, m nn.Module, opts ExportOptions) error {
	const op = "onnx.ExportProgram"
	if p == nil {
		tensor.Fail(op, "nil program")
	}
	if opts.Forward != nil || opts.IndexInputs != nil || opts.BatchAxes != nil {
		tensor.Fail(op, "opts.Forward, IndexInputs and BatchAxes do not apply to a program")
	}
	state := map[*tensor.Tensor]bool{}
	if m != nil {
		for _, t := range nn.State(m) {
			state[t] = true
		}
	} else {
		m = programModule{}
	}
	var example []*tensor.Tensor
	var pos []int
	for i, t := range in {
		if t == nil {
			tensor.Fail(op, "input %d is nil", i)
		}
		if !state[t] {
			example = append(example, t)
			pos = append(pos, i)
		}
	}
	if len(example) == 0 {
		tensor.Fail(op, "all %d inputs are the module's state: the graph would have no input", len(in))
	}
	opts.StaticBatch = true
	opts.Forward = func(g *graph.Graph, x []*graph.Node) []*graph.Node {
		nodes := make([]*graph.Node, len(in))
		for i, t := range in {
			if state[t] {
				nodes[i] = g.Var(t)
			}
		}
		for j, k := range pos {
			nodes[k] = x[j]
		}
		return p.Build(g, nodes)
	}
	model, err := exportModel(m, example, opts)
	if err != nil {
		return err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(model)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = w.Write(b)
	return err
}

// programModule stands for the absent module of a program whose inputs
// are all data: it has no state.
type programModule struct{}

func (programModule) Params() []nn.NamedParam { return nil }
func (programModule) SetTraining(bool)        {}
