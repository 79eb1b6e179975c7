package train

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
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

	// Options.Plateau's state, in checkpoints of runs that have one.
	metaPlateauBest     = "train.plateau.best"
	metaPlateauBad      = "train.plateau.bad_epochs"
	metaPlateauCooldown = "train.plateau.cooldown"
)

// Save writes a checkpoint to path atomically (nn/checkpoint's Save: the
// parameters and buffers under their dotted names, the model's random
// streams such as Dropout's, the optimiser state, and the counters as
// metadata, with Options.Plateau's state when there is one): everything
// Resume needs to continue the run exactly. The schedule is a function of
// the step, the loss function's RNG and the loader's order functions of
// the seeds and the epoch, so none needs more.
func (t *Trainer) Save(path string) error {
	meta := map[string]string{
		metaEpoch: strconv.Itoa(t.epoch), metaStep: strconv.Itoa(t.step),
		metaSeed: strconv.FormatUint(t.cfg.Seed, 10), metaBest: strconv.FormatFloat(t.best, 'g', -1, 64),
		metaBestE: strconv.Itoa(t.bestEpoch), metaBad: strconv.Itoa(t.bad),
	}
	if t.plateau != nil {
		p := t.plateau.State()
		meta[metaPlateauBest] = strconv.FormatFloat(p.Best, 'g', -1, 64)
		meta[metaPlateauBad], meta[metaPlateauCooldown] = strconv.Itoa(p.Bad), strconv.Itoa(p.Cooldown)
	}
	if err := checkpoint.Save(path, t.model, checkpoint.SaveOptions{Optimizer: t.opt, Metadata: meta}); err != nil {
		return fmt.Errorf("train: saving: %w", err)
	}
	return nil
}

// counters are the Trainer's state that a checkpoint holds as metadata.
type counters struct {
	epoch, step, bestEpoch, bad int
	best                        float64
	plateau                     optim.PlateauState
}

// Resume loads a checkpoint written by Save into the model, its random
// streams and the optimiser and restores the counters, so that Fit
// continues with the next epoch as if the run had not stopped: the
// parameters after two epochs, Save, Resume and two more are those of
// four epochs bit for bit. The Trainer must have been built with the same
// configuration (its seed is checked). The History of the resumed Trainer
// holds the epochs run after resumption only; the JSON-lines log of the
// first part holds the others.
//
// It is all or nothing: the whole checkpoint (tensors, optimiser state,
// random streams, counters) is validated before anything is changed, and
// on error the model, the optimiser and the Trainer are as they were.
// NaN or ±Inf in parameters or optimiser state, negative counters, a best
// epoch after the last one and a missing random stream are errors naming
// the file and the entry.
func (t *Trainer) Resume(path string) error {
	var c counters
	check := func(meta map[string]string) error {
		var err error
		c, err = t.checkCounters(meta)
		return err
	}
	if _, err := checkpoint.LoadInto(path, t.model, checkpoint.LoadOptions{Optimizer: t.opt, CheckMetadata: check}); err != nil {
		return fmt.Errorf("train: resuming: %w", err)
	}
	t.epoch, t.step, t.bestEpoch, t.bad, t.best = c.epoch, c.step, c.bestEpoch, c.bad, c.best
	t.hist.BestEpoch = t.bestEpoch
	if t.plateau != nil {
		_ = t.plateau.SetState(c.plateau) // checked by checkCounters
	}
	if t.cfg.Schedule != nil {
		t.opt.SetLR(t.cfg.Schedule.LR(max(t.step-1, 0)))
	}
	t.rngEpoch = -1
	return nil
}

// checkCounters parses and validates the counters of a checkpoint's
// metadata, and checks that it holds every random stream of the model (a
// file without them would restore none and the run would draw other
// masks).
func (t *Trainer) checkCounters(meta map[string]string) (counters, error) {
	var c counters
	for _, f := range []struct {
		key string
		dst *int
	}{{metaEpoch, &c.epoch}, {metaStep, &c.step}, {metaBestE, &c.bestEpoch}, {metaBad, &c.bad}} {
		v, err := strconv.Atoi(meta[f.key])
		if err != nil {
			return c, fmt.Errorf("metadata %q is %q: not a training checkpoint written by Trainer.Save", f.key, meta[f.key])
		}
		if v < 0 {
			return c, fmt.Errorf("metadata %q is %d, a count that cannot be negative", f.key, v)
		}
		*f.dst = v
	}
	if c.bestEpoch > c.epoch || c.bad > c.epoch {
		return c, fmt.Errorf("metadata %q (%d) and %q (%d) must not exceed %q (%d)", metaBestE, c.bestEpoch, metaBad, c.bad, metaEpoch, c.epoch)
	}
	var err error
	if c.best, err = strconv.ParseFloat(meta[metaBest], 64); err != nil {
		return c, fmt.Errorf("metadata %q is %q: not a number", metaBest, meta[metaBest])
	}
	if math.IsNaN(c.best) != (c.bestEpoch == 0) {
		return c, fmt.Errorf("metadata %q is %g with %q %d: a best value needs the epoch it was reached in, and only then", metaBest, c.best, metaBestE, c.bestEpoch)
	}
	if s := strconv.FormatUint(t.cfg.Seed, 10); meta[metaSeed] != s {
		return c, fmt.Errorf("the checkpoint's seed is %s, the Trainer's %s", meta[metaSeed], s)
	}
	if err := t.checkPlateau(meta, &c); err != nil {
		return c, err
	}
	for _, r := range nn.RNGs(t.model) {
		if _, ok := meta[checkpoint.RNGPrefix+r.Name]; !ok {
			return c, fmt.Errorf("the model's random stream %q is not in the checkpoint (metadata %q)", r.Name, checkpoint.RNGPrefix+r.Name)
		}
	}
	return c, nil
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

// checkPlateau parses Options.Plateau's state from a checkpoint's metadata
// into c and checks that the scheduler could be in it; a checkpoint with
// such state for a Trainer without Plateau, or the other way round, is a
// run of another configuration.
func (t *Trainer) checkPlateau(meta map[string]string, c *counters) error {
	_, has := meta[metaPlateauBest]
	switch {
	case t.plateau == nil && has:
		return fmt.Errorf("the checkpoint holds a Plateau scheduler's state (metadata %q) but the Trainer has no Plateau", metaPlateauBest)
	case t.plateau == nil:
		return nil
	case !has:
		return fmt.Errorf("the Trainer has a Plateau scheduler but the checkpoint holds no state for it (metadata %q)", metaPlateauBest)
	}
	var err error
	if c.plateau.Best, err = strconv.ParseFloat(meta[metaPlateauBest], 64); err != nil {
		return fmt.Errorf("metadata %q is %q: not a number", metaPlateauBest, meta[metaPlateauBest])
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{metaPlateauBad, &c.plateau.Bad}, {metaPlateauCooldown, &c.plateau.Cooldown}} {
		if *f.dst, err = strconv.Atoi(meta[f.key]); err != nil {
			return fmt.Errorf("metadata %q is %q: not a count", f.key, meta[f.key])
		}
	}
	trial := *t.plateau // SetState on a copy: nothing changes before the whole checkpoint is checked
	if err := trial.SetState(c.plateau); err != nil {
		return fmt.Errorf("metadata %q: %w", "train.plateau", err)
	}
	return nil
}
