package train

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
)

// The metadata keys of a training checkpoint.
const (
	metaEpoch = "train.epoch"
	metaStep  = "train.step"
	metaSeed  = "train.seed"
	metaBest  = "train.best"
	metaBestE = "train.best_epoch"
	metaBad   = "train.bad_epochs"
)

// Save writes a checkpoint to path atomically (nn/checkpoint's safetensors
// with the parameters and buffers under their dotted names, the optimiser
// state, and the counters as metadata): everything Resume needs to
// continue the run exactly. The schedule is a function of the step and
// the RNG of the epoch, so neither needs more.
func (t *Trainer) Save(path string) error {
	meta := map[string]string{
		metaEpoch: strconv.Itoa(t.epoch), metaStep: strconv.Itoa(t.step),
		metaSeed: strconv.FormatUint(t.cfg.Seed, 10), metaBest: strconv.FormatFloat(t.best, 'g', -1, 64),
		metaBestE: strconv.Itoa(t.bestEpoch), metaBad: strconv.Itoa(t.bad),
	}
	if err := checkpoint.Save(path, nn.State(t.model), t.opt.State(nn.Names(t.params)), meta); err != nil {
		return fmt.Errorf("train: saving: %w", err)
	}
	return nil
}

// Resume loads a checkpoint written by Save into the model and the
// optimiser and restores the counters, so that Fit continues with the
// next epoch as if the run had not stopped. The Trainer must have been
// built with the same configuration (its seed is checked). The History of
// the resumed Trainer holds the epochs run after resumption only; the
// JSON-lines log of the first part holds the others. On error nothing is
// changed.
func (t *Trainer) Resume(path string) error {
	_, meta, err := checkpoint.ReadFile(path)
	if err != nil {
		return fmt.Errorf("train: resuming: %w", err)
	}
	var ints [4]int
	for i, k := range []string{metaEpoch, metaStep, metaBestE, metaBad} {
		if ints[i], err = strconv.Atoi(meta[k]); err != nil {
			return fmt.Errorf("train: resuming from %s: metadata %q is %q: not a training checkpoint written by Trainer.Save", path, k, meta[k])
		}
	}
	best, err := strconv.ParseFloat(meta[metaBest], 64)
	if err != nil {
		return fmt.Errorf("train: resuming from %s: metadata %q is %q", path, metaBest, meta[metaBest])
	}
	if s := strconv.FormatUint(t.cfg.Seed, 10); meta[metaSeed] != s {
		return fmt.Errorf("train: resuming from %s: the checkpoint's seed is %s, the Trainer's %s", path, meta[metaSeed], s)
	}
	// Check the optimiser state against a scratch copy of the model first,
	// so that a bad file changes nothing.
	scratch := nn.StateDict{}
	for name, v := range nn.State(t.model) {
		scratch[name] = tensor.ZerosLike(v)
	}
	optState, err := checkpoint.LoadInto(path, scratch)
	if err != nil {
		return fmt.Errorf("train: resuming: %w", err)
	}
	names := nn.Names(t.params)
	saved := t.opt.State(names)
	if err := t.opt.LoadState(names, optState); err != nil {
		return fmt.Errorf("train: resuming from %s: optimiser state: %w", path, err)
	}
	if _, err := checkpoint.LoadInto(path, nn.State(t.model)); err != nil {
		_ = t.opt.LoadState(names, saved)
		return fmt.Errorf("train: resuming: %w", err)
	}
	t.epoch, t.step, t.bestEpoch, t.bad, t.best = ints[0], ints[1], ints[2], ints[3], best
	t.hist.BestEpoch = t.bestEpoch
	if t.cfg.Schedule != nil {
		t.opt.SetLR(t.cfg.Schedule.LR(max(t.step-1, 0)))
	}
	t.rngEpoch = -1
	return nil
}

// InFloat64 runs f with every parameter and buffer of model temporarily
// replaced by a float64 copy, and restores the originals (which are not
// modified) afterwards, even if f panics. It is the way to train in
// float32 and evaluate in float64: the forward pass builds on whatever
// dtype the parameters have, so inputs must be cast by f too.
func InFloat64(model nn.Module, f func()) {
	ps := append(append([]nn.NamedParam(nil), model.Params()...), nn.Buffers(model)...)
	orig := make([]*tensor.Tensor, len(ps))
	for i, p := range ps {
		orig[i] = p.Value
		p.Value = p.Value.Cast(tensor.Float64)
	}
	defer func() {
		for i, p := range ps {
			p.Value = orig[i]
		}
	}()
	f()
}

func sortedNames(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
