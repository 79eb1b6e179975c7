package onnx

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// TorchStateDict returns an imported model's parameters and buffers under
// the PyTorch state-dict names and in the layouts of the module that
// torch.onnx.export exported, so that a model fine-tuned in Gradus goes
// back to PyTorch (checkpoint.WriteFile, then load_state_dict with
// strict=True).
//
// PyTorch's exporter keeps most initializers under their state-dict names
// (with training=TrainingMode.PRESERVE, see docs/onnx.md) but writes some
// in another layout under a new name. sources says, for those, which
// PyTorch parameter an initializer was made of, by a rule keyed by the
// initializer's name:
//
//   - "T:name": the transposed weight of a Linear that became a MatMul
//     (onnx::MatMul_42);
//   - "R:name": a weight reshaped, PReLU's (C, 1, 1) slope, flattened to
//     PyTorch's one axis;
//   - "LSTM:prefix:layer:W", "LSTM:prefix:layer:R", "LSTM:prefix:layer:B"
//     and the same with GRU: the W, R and B inputs of ONNX's LSTM and GRU,
//     which hold both directions and PyTorch's weight_ih, weight_hh and
//     bias_ih with bias_hh, their gates reordered (ONNX's i, o, f, c for
//     PyTorch's i, f, g, o; z, r, h for r, z, n); prefix is the
//     recurrent module's name ("lstm" for weight_ih_l0 at lstm.weight_ih_l0,
//     "" for a bare nn.LSTM);
//   - "name": the initializer renamed, as it is;
//   - "" or no entry: the initializer under its own name, as it is.
//
// testdata/zoo.py shows how to compute sources in PyTorch (its source
// function compares each initializer with the module's parameters). Two
// initializers made of one PyTorch parameter (a Linear used as Gemm and as
// MatMul) must still hold equal values; the tensors returned are copies.
//
// TorchStateDict returns an error for a rule it cannot parse, a key that
// is not one of the model's initializers, a tensor whose shape does not
// fit its rule, or two initializers that give one PyTorch tensor different
// values.
func TorchStateDict(m *Model, sources map[string]string) (nn.StateDict, error) {
	if m == nil {
		tensor.Fail("onnx.TorchStateDict", "nil model")
	}
	state := append(m.Params(), m.Buffers()...)
	known := map[string]bool{}
	for _, p := range state {
		known[p.Name] = true
	}
	keys := make([]string, 0, len(sources))
	for k := range sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return nil, fmt.Errorf("onnx.TorchStateDict: sources name %q, which is not a parameter or buffer of the model", k)
		}
	}
	out := nn.StateDict{}
	from := map[string]string{}
	for _, p := range state {
		parts, err := torchLayout(sources[p.Name], p.Name, p.Value)
		if err != nil {
			return nil, fmt.Errorf("onnx.TorchStateDict: %w", err)
		}
		for _, part := range parts {
			if old, ok := out[part.name]; ok {
				if !exBitsEqual(old, part.t) {
					return nil, fmt.Errorf("onnx.TorchStateDict: initializers %q and %q both give %q, with different values (trained apart?)", from[part.name], p.Name, part.name)
				}
				continue
			}
			out[part.name], from[part.name] = part.t.Contiguous().Clone(), p.Name
		}
	}
	return out, nil
}

// torchPart is one PyTorch tensor made from an initializer.
type torchPart struct {
	name string
	t    *tensor.Tensor
}

// torchLayout applies the rule src (see TorchStateDict) to the
// initializer init holding t; it serves the gradients of the zoo tests
// too.
func torchLayout(src, init string, t *tensor.Tensor) ([]torchPart, error) {
	parts := strings.Split(src, ":")
	bad := func(format string, args ...any) ([]torchPart, error) {
		return nil, fmt.Errorf("initializer %q (shape %s), rule %q: %s", init, tensor.FormatShape(t.Shape()), src, fmt.Sprintf(format, args...))
	}
	switch {
	case src == "":
		return []torchPart{{init, t}}, nil
	case len(parts) == 1:
		return []torchPart{{src, t}}, nil
	case len(parts) == 2 && parts[0] == "T" && parts[1] != "":
		if t.Dim() != 2 {
			return bad("a transposed weight must have two axes")
		}
		return []torchPart{{parts[1], tensor.Transpose(t)}}, nil
	case len(parts) == 2 && parts[0] == "R" && parts[1] != "":
		return []torchPart{{parts[1], tensor.Reshape(t.Contiguous(), t.Size())}}, nil
	case len(parts) == 4 && (parts[0] == "LSTM" || parts[0] == "GRU"):
	default:
		return bad("not T:name, R:name, LSTM:prefix:layer:W|R|B, GRU:prefix:layer:W|R|B or a name")
	}
	layer, err := strconv.Atoi(parts[2])
	if err != nil || layer < 0 {
		return bad("layer %q is not a number", parts[2])
	}
	order := []int{0, 3, 1, 2} // ONNX's gate j is PyTorch's order[j]
	if parts[0] == "GRU" {
		order = []int{1, 0, 2}
	}
	kinds := map[string][]string{"W": {"weight_ih"}, "R": {"weight_hh"}, "B": {"bias_ih", "bias_hh"}}[parts[3]]
	if kinds == nil {
		return bad("%q is not W, R or B", parts[3])
	}
	if t.Dim() < 2 || t.Shape()[0] < 1 || t.Shape()[0] > 2 || t.Shape()[1]%(len(order)*len(kinds)) != 0 {
		return bad("want (directions 1 or 2, a multiple of %d, …)", len(order)*len(kinds))
	}
	prefix := parts[1]
	if prefix != "" {
		prefix += "."
	}
	var out []torchPart
	for d := range t.Shape()[0] {
		sfx := []string{"", "_reverse"}[d]
		td := tensor.Reshape(tensor.Slice(t, 0, d, d+1, 1).Contiguous(), t.Shape()[1:]...)
		n := td.Shape()[0] / len(kinds)
		for k, kind := range kinds {
			v := tensor.Slice(td, 0, k*n, (k+1)*n, 1).Contiguous()
			chunks := tensor.Split(v, 0, slices.Repeat([]int{n / len(order)}, len(order))...)
			torch := make([]*tensor.Tensor, len(order))
			for j, o := range order {
				torch[o] = chunks[j]
			}
			out = append(out, torchPart{fmt.Sprintf("%s%s_l%d%s", prefix, kind, layer, sfx), tensor.Concat(0, torch...)})
		}
	}
	return out, nil
}
