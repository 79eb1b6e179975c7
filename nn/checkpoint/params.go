package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// OptimPrefix is prepended to the names of optimiser state tensors in files
// written by Save, keeping them apart from parameter names.
const OptimPrefix = "optim."

// ErrMismatch is wrapped by the errors LoadInto returns when a checkpoint
// does not fit the parameters: a missing or unexpected tensor, or a
// different shape or dtype.
var ErrMismatch = errors.New("checkpoint does not match the parameters")

// Save writes the state dict state (nn.State of a model: parameters and
// buffers under their dotted names) and the optimiser state optState
// (optim's State, keyed by parameter name; may be nil), stored under names
// prefixed with "optim.", with the metadata meta (may be nil) to path
// atomically (see WriteFile). It returns an error if a name in state
// starts with "optim.", which LoadInto would take for optimiser state.
func Save(path string, state nn.StateDict, optState map[string]*tensor.Tensor, meta map[string]string) error {
	all := make(map[string]*tensor.Tensor, len(state)+len(optState))
	for name, t := range state {
		if strings.HasPrefix(name, OptimPrefix) {
			return fmt.Errorf("checkpoint: state dict name %q starts with %q, which is reserved for optimiser state (writing %s)", name, OptimPrefix, path)
		}
		all[name] = t
	}
	for name, t := range optState {
		all[OptimPrefix+name] = t
	}
	return WriteFile(path, all, meta)
}

// LoadInto reads the checkpoint at path and copies its tensors into the
// state dict state (nn.State of a model, whose tensors are the model's
// own), matching by name, and returns the optimiser state stored with them
// (the "optim." tensors, with the prefix removed; empty if there is none),
// ready for an optimiser's LoadState.
//
// It is all or nothing: it checks everything before copying anything.
// Every name in state must be in the file with the same shape, its values
// convertible to the tensor's dtype (float32 ↔ float64; a value that
// overflows float32 is an error), and the file must have no other tensors
// apart from optimiser state. On any error, which then names every
// offending tensor with both shapes and wraps ErrMismatch (or is a
// *FormatError or an I/O error), no tensor of state has been modified.
func LoadInto(path string, state nn.StateDict) (optState map[string]*tensor.Tensor, err error) {
	ts, _, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, name := range sortedKeys(state) {
		dst, src := state[name], ts[name]
		switch {
		case dst == nil:
			problems = append(problems, fmt.Sprintf("tensor %q of the state dict is nil", name))
		case src == nil:
			problems = append(problems, fmt.Sprintf("tensor %q %s %s is missing from the file", name, tensor.FormatShape(dst.Shape()), dst.DType()))
		case !slices.Equal(src.Shape(), dst.Shape()):
			problems = append(problems, fmt.Sprintf("tensor %q is %s %s in the file but %s %s in the model",
				name, tensor.FormatShape(src.Shape()), src.DType(), tensor.FormatShape(dst.Shape()), dst.DType()))
		default:
			c, err := convert(name, src, dst.DType())
			if err != nil {
				problems = append(problems, err.Error())
			}
			ts[name] = c
		}
	}
	optState = map[string]*tensor.Tensor{}
	for _, name := range sortedKeys(ts) {
		if rest, ok := strings.CutPrefix(name, OptimPrefix); ok {
			optState[rest] = ts[name]
			continue
		}
		if _, ok := state[name]; !ok {
			t := ts[name]
			problems = append(problems, fmt.Sprintf("unexpected tensor %q %s %s in the file", name, tensor.FormatShape(t.Shape()), t.DType()))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("checkpoint: %s: %w: %s", path, ErrMismatch, strings.Join(problems, "; "))
	}
	for name, dst := range state {
		tensor.CopyInto(dst, ts[name])
	}
	return optState, nil
}

func sortedKeys(m map[string]*tensor.Tensor) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
