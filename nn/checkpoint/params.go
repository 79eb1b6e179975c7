package checkpoint

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// OptimPrefix is prepended to the names of optimiser state tensors in files
// written by Save, keeping them apart from parameter names.
const OptimPrefix = "optim."

// RNGPrefix is prepended to the names of a model's random streams
// (nn.RNGs, e.g. a Dropout's "2.mask") to make the metadata keys under
// which Save stores their states, in hexadecimal.
const RNGPrefix = "rng."

// ErrMismatch is wrapped by the errors LoadInto returns when a checkpoint
// does not fit the model: a missing or unexpected tensor or random stream,
// a different shape or dtype, a value that does not convert.
var ErrMismatch = errors.New("checkpoint does not match the model")

// ErrNonFinite is wrapped by the errors LoadInto returns when a tensor of
// the model's state holds NaN or ±Inf in the file and
// LoadOptions.AllowNonFinite is not set.
var ErrNonFinite = errors.New("checkpoint holds NaN or ±Inf")

// SaveOptions says what Save writes besides the model. The zero value
// saves the model alone.
type SaveOptions struct {
	// Optimizer, if not nil, has its state saved with the model, keyed
	// by the model's parameter names under "optim." (see OptimPrefix). It
	// must be built over nn.Values(model.Params()), in that order.
	Optimizer optim.Optimizer
	// Metadata is stored in the file's header (nil: none). Keys that
	// start with "rng." are reserved for the random streams.
	Metadata map[string]string
}

// Save writes model's state to path atomically (see WriteFile): its state
// dict (nn.State: parameters and buffers under their dotted names), the
// states of its random streams (nn.RNGs, such as a Dropout's, as
// metadata under "rng."), and opts.Optimizer's state and opts.Metadata
// when given. LoadInto restores all of them in one call.
//
// It returns an error, and writes nothing, if a state dict name starts
// with "optim." or a metadata key with "rng.". It panics with a
// *tensor.Error if opts.Optimizer is not over model's parameters.
func Save(path string, model nn.Module, opts SaveOptions) error {
	state := nn.State(model)
	all := make(map[string]*tensor.Tensor, len(state))
	for name, t := range state {
		if strings.HasPrefix(name, OptimPrefix) {
			return fmt.Errorf("checkpoint: state dict name %q starts with %q, which is reserved for optimiser state (writing %s)", name, OptimPrefix, path)
		}
		all[name] = t
	}
	if opts.Optimizer != nil {
		names := optimizerNames("checkpoint.Save", model, opts.Optimizer)
		for name, t := range opts.Optimizer.State(names) {
			all[OptimPrefix+name] = t
		}
	}
	meta := make(map[string]string, len(opts.Metadata))
	for k, v := range opts.Metadata {
		if strings.HasPrefix(k, RNGPrefix) {
			return fmt.Errorf("checkpoint: metadata key %q starts with %q, which is reserved for random streams (writing %s)", k, RNGPrefix, path)
		}
		meta[k] = v
	}
	for _, r := range nn.RNGs(model) {
		if r.RNG == nil {
			tensor.Fail("checkpoint.Save", "random stream %q is nil", r.Name)
		}
		b, err := r.RNG.MarshalBinary()
		if err != nil {
			return fmt.Errorf("checkpoint: random stream %q: %w (writing %s)", r.Name, err, path)
		}
		s := hex.EncodeToString(b)
		if old, ok := meta[RNGPrefix+r.Name]; ok && old != s {
			tensor.Fail("checkpoint.Save", "two random streams are named %q", r.Name)
		}
		meta[RNGPrefix+r.Name] = s
	}
	return WriteFile(path, all, meta)
}

// optimizerNames returns the names under which opt's state is keyed: the
// model's parameter names. An optimiser over other tensors is misuse.
func optimizerNames(op string, model nn.Module, opt optim.Optimizer) []string {
	params := model.Params()
	ops := opt.Params()
	if len(ops) != len(params) {
		tensor.Fail(op, "the optimiser has %d parameters, the model %d: build it over nn.Values(model.Params())", len(ops), len(params))
	}
	for i, p := range params {
		if p.Param == nil || ops[i] != p.Value {
			tensor.Fail(op, "the optimiser's parameter %d is not the model's %q: build it over nn.Values(model.Params())", i, p.Name)
		}
	}
	return nn.Names(params)
}

// LoadOptions says what LoadInto restores besides the model and what it
// accepts. The zero value restores the model alone and refuses NaN and
// ±Inf.
type LoadOptions struct {
	// Optimizer, if not nil, has its state restored too, from the
	// "optim." tensors, which the file must then hold. It must be built
	// over nn.Values(model.Params()), in that order. When nil, optimiser
	// state in the file is ignored.
	Optimizer optim.Optimizer
	// AllowNonFinite accepts NaN and ±Inf in the model's tensors (a mask
	// of -Inf, say). Optimiser state is never allowed them.
	AllowNonFinite bool
	// CheckMetadata, if not nil, is called with the file's metadata
	// after the tensors and random streams have been
	// validated and before anything is changed; an error from it ends
	// LoadInto with nothing changed. Training loops check their counters
	// here.
	CheckMetadata func(meta map[string]string) error
}

// LoadInto reads the checkpoint at path and restores it into model: its
// parameters and buffers (nn.State, matched by name), its random streams
// (nn.RNGs) and, with opts.Optimizer, the optimiser's state. It returns
// the file's metadata (the random streams' entries, under "rng.",
// included).
//
// It is all or nothing: it validates the whole checkpoint before it
// changes anything, and on any error model and optimiser are as they
// were. Every tensor of model's state must be in the file with the same
// shape, its values convertible to the tensor's dtype (float32 ↔
// float64; a value that overflows float32 is an error) and finite unless
// opts.AllowNonFinite; the file must have no other tensors apart from
// optimiser state; names under which the model lists one tensor twice
// (tied weights) must hold the same values. Random streams are restored
// when the file has any (files written by Save do): then it must hold
// exactly the model's, each a valid state; a file with none (weights from
// PyTorch) leaves them as they are. The optimiser's state is checked by
// its LoadState, which refuses NaN, ±Inf and negative running squares;
// opts.CheckMetadata, if set, is called last.
//
// An error names the file and every offending tensor or stream with what
// was wrong, and wraps ErrMismatch or ErrNonFinite (or is a *FormatError,
// an I/O error, an *optim.Error, or CheckMetadata's error, wrapped). It
// panics with a *tensor.Error if opts.Optimizer is not over model's
// parameters.
func LoadInto(path string, model nn.Module, opts LoadOptions) (map[string]string, error) {
	state := nn.State(model)
	var names []string
	if opts.Optimizer != nil {
		names = optimizerNames("checkpoint.LoadInto", model, opts.Optimizer)
	}
	ts, meta, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p problems
	p.tensors(ts, state, opts.AllowNonFinite)
	rngs, rngStates := p.streams(meta, nn.RNGs(model))
	if err := p.err(path); err != nil {
		return nil, err
	}
	if opts.CheckMetadata != nil {
		if err := opts.CheckMetadata(meta); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
		}
	}
	// The optimiser's LoadState is the last step that may fail, and it
	// changes nothing when it does; what follows cannot fail.
	if opts.Optimizer != nil {
		optState := map[string]*tensor.Tensor{}
		for name, t := range ts {
			if rest, ok := strings.CutPrefix(name, OptimPrefix); ok {
				optState[rest] = t
			}
		}
		if err := opts.Optimizer.LoadState(names, optState); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: optimiser state (entries %q…): %w", path, OptimPrefix, err)
		}
	}
	for name, dst := range state {
		tensor.CopyInto(dst, ts[name])
	}
	for i, r := range rngs {
		if err := r.UnmarshalBinary(rngStates[i]); err != nil {
			panic(err) // validated above on a scratch generator
		}
	}
	return meta, nil
}

// problems collects what is wrong with a checkpoint, so that one error
// reports all of it.
type problems struct {
	mismatch, nonFinite []string
}

// tensors checks the file's tensors ts against the state dict and
// replaces each of state's entries in ts by its value converted to the
// state's dtype.
func (p *problems) tensors(ts map[string]*tensor.Tensor, state nn.StateDict, allowNonFinite bool) {
	tied := map[*tensor.Tensor]string{}
	for _, name := range sortedKeys(state) {
		dst, src := state[name], ts[name]
		switch {
		case dst == nil:
			p.mismatch = append(p.mismatch, fmt.Sprintf("tensor %q of the model is nil", name))
		case src == nil:
			p.mismatch = append(p.mismatch, fmt.Sprintf("tensor %q %s %s is missing from the file", name, tensor.FormatShape(dst.Shape()), dst.DType()))
		case !slices.Equal(src.Shape(), dst.Shape()):
			p.mismatch = append(p.mismatch, fmt.Sprintf("tensor %q is %s %s in the file but %s %s in the model",
				name, tensor.FormatShape(src.Shape()), src.DType(), tensor.FormatShape(dst.Shape()), dst.DType()))
		default:
			c, err := convert(name, src, dst.DType())
			if err != nil {
				p.mismatch = append(p.mismatch, err.Error())
				continue
			}
			ts[name] = c
			if !allowNonFinite {
				if msg := nonFinite(c); msg != "" {
					p.nonFinite = append(p.nonFinite, fmt.Sprintf("tensor %q: %s (LoadOptions.AllowNonFinite accepts them)", name, msg))
				}
			}
			if first, ok := tied[dst]; ok && !slices.Equal(ts[first].Values(), c.Values()) {
				p.mismatch = append(p.mismatch, fmt.Sprintf("tensors %q and %q are one tensor in the model but differ in the file", first, name))
			}
			tied[dst] = name
		}
	}
	for _, name := range sortedKeys(ts) {
		if _, ok := state[name]; !ok && !strings.HasPrefix(name, OptimPrefix) {
			t := ts[name]
			p.mismatch = append(p.mismatch, fmt.Sprintf("unexpected tensor %q %s %s in the file", name, tensor.FormatShape(t.Shape()), t.DType()))
		}
	}
}

// nonFinite describes the NaN and ±Inf values of t, "" if there are none.
func nonFinite(t *tensor.Tensor) string {
	count, at, first := tensor.NonFinite(t)
	if count == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d values are NaN or ±Inf, the first %g at index %d", count, t.Size(), first, at)
}

// streams checks the random streams' states in the metadata against the
// model's streams and returns the generators to restore with their
// decoded states.
func (p *problems) streams(meta map[string]string, model []nn.NamedRNG) ([]*tensor.RNG, [][]byte) {
	inFile := map[string]string{}
	for k, v := range meta {
		if name, ok := strings.CutPrefix(k, RNGPrefix); ok {
			inFile[name] = v
		}
	}
	if len(inFile) == 0 {
		return nil, nil
	}
	var rngs []*tensor.RNG
	var states [][]byte
	byRNG := map[*tensor.RNG]string{}
	inModel := map[string]bool{}
	for _, r := range model {
		if r.RNG == nil {
			tensor.Fail("checkpoint.LoadInto", "random stream %q is nil", r.Name)
		}
		inModel[r.Name] = true
		s, ok := inFile[r.Name]
		if !ok {
			p.mismatch = append(p.mismatch, fmt.Sprintf("random stream %q is missing from the file", r.Name))
			continue
		}
		b, err := hex.DecodeString(s)
		if err == nil {
			err = tensor.NewRNG(0).UnmarshalBinary(b)
		}
		if err != nil {
			p.mismatch = append(p.mismatch, fmt.Sprintf("random stream %q (metadata %q): not a generator state: %v", r.Name, RNGPrefix+r.Name, err))
			continue
		}
		if first, ok := byRNG[r.RNG]; ok && inFile[first] != s {
			p.mismatch = append(p.mismatch, fmt.Sprintf("random streams %q and %q are one generator in the model but differ in the file", first, r.Name))
			continue
		}
		byRNG[r.RNG] = r.Name
		rngs, states = append(rngs, r.RNG), append(states, b)
	}
	var extra []string
	for name := range inFile {
		if !inModel[name] {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		p.mismatch = append(p.mismatch, fmt.Sprintf("unexpected random stream %q in the file", name))
	}
	return rngs, states
}

// err returns the problems as one error naming the file, nil if there
// are none.
func (p *problems) err(path string) error {
	all := strings.Join(append(slices.Clone(p.mismatch), p.nonFinite...), "; ")
	switch {
	case len(p.mismatch) > 0 && len(p.nonFinite) > 0:
		return fmt.Errorf("checkpoint: %s: %w, %w: %s", path, ErrMismatch, ErrNonFinite, all)
	case len(p.mismatch) > 0:
		return fmt.Errorf("checkpoint: %s: %w: %s", path, ErrMismatch, all)
	case len(p.nonFinite) > 0:
		return fmt.Errorf("checkpoint: %s: %w: %s", path, ErrNonFinite, all)
	}
	return nil
}

func sortedKeys(m map[string]*tensor.Tensor) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
