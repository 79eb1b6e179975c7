package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// LossFunc builds the scalar loss of a batch on g (a fresh graph each
// micro-batch): typically the model's forward pass and a loss from package
// losses. A panic with a *tensor.Error (bad shapes, say) becomes Step's
// error.
type LossFunc func(g *graph.Graph, b data.Batch) *graph.Node

// Config configures a Loop. Zero values are the defaults given.
type Config struct {
	Epochs int // passes over the loader (required)
	// Accumulate is the number of micro-batches whose gradients are
	// averaged into one optimiser step (default 1). With a mean loss and
	// equal micro-batches, k micro-batches of b examples step exactly as
	// one batch of k·b.
	Accumulate int
	// ClipNorm > 0 scales the averaged gradients down to this global
	// norm before each step.
	ClipNorm float64
	// Schedule sets the learning rate before every optimiser step from
	// the number of steps taken so far; nil keeps the optimiser's.
	Schedule optim.Schedule
	// Validate computes metrics after each epoch, with the model in
	// evaluation mode, on a graph of its own.
	Validate func(g *graph.Graph) (map[string]float64, error)
	// Monitor names the metric (from Validate, or "train_loss") that
	// decides the best epoch and early stopping; "" disables both.
	Monitor string
	// Maximize says a larger Monitor is better (accuracy); by default
	// smaller is (loss).
	Maximize bool
	// Patience > 0 stops training after that many epochs in a row
	// without an improvement of Monitor.
	Patience int
	// Dir, if set, receives checkpoints (atomically written safetensors):
	// last.safetensors after every epoch, holding the parameters, buffers,
	// optimiser state and the loop's counters, and best.safetensors
	// whenever Monitor improves.
	Dir string
	// Resume continues from Dir/last.safetensors when it exists: the run
	// then ends exactly as an uninterrupted one would (the loader's order
	// depends only on the epoch, the schedule only on the step count).
	Resume bool
	// Log, if set, receives one JSON object per epoch (JSON Lines): the
	// fields of Epoch.
	Log io.Writer
	// Progress shows a bar per epoch on a terminal and a line per epoch
	// elsewhere; nil shows nothing.
	Progress *Progress
	// Callbacks run after every epoch, in order; an error stops training
	// and is returned.
	Callbacks []func(Epoch) error
}

// Epoch is what the loop reports after each epoch.
type Epoch struct {
	Epoch     int                `json:"epoch"` // 1-based
	Steps     int                `json:"steps"` // optimiser steps so far
	TrainLoss float64            `json:"train_loss"`
	LR        float64            `json:"lr"` // the learning rate of the epoch's last step
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Best      bool               `json:"best"` // Monitor improved this epoch
	Seconds   float64            `json:"seconds"`
}

// History is the record of Run.
type History struct {
	Epochs    []Epoch
	BestEpoch int  // the epoch with the best Monitor (0 without one)
	Stopped   bool // early stopping ended the run
}

// Loop trains a model with an optimiser on a loss over a loader's batches.
// Run does everything Config describes; Step drives training one
// micro-batch at a time for a loop of one's own.
type Loop struct {
	model  nn.Module
	params []nn.NamedParam
	opt    optim.Optimizer
	loss   LossFunc
	loader *data.Loader
	cfg    Config
	g      *graph.Graph
	accum  []*tensor.Tensor // gradient sums over the current micro-batches
	micro  int              // micro-batches in accum
	steps  int              // optimiser steps taken
	epoch  int              // epochs completed
	best   float64
	bad    int // epochs since the last improvement
}

// New returns a Loop. opt must update model.Params() in order. It returns
// an error for a bad configuration.
func New(model nn.Module, opt optim.Optimizer, loss LossFunc, loader *data.Loader, cfg Config) (*Loop, error) {
	switch {
	case model == nil || opt == nil || loss == nil || loader == nil:
		return nil, errors.New("train.New: model, optimiser, loss and loader are required")
	case cfg.Epochs < 1:
		return nil, fmt.Errorf("train.New: Epochs = %d, want ≥ 1", cfg.Epochs)
	case cfg.Accumulate < 0 || cfg.ClipNorm < 0 || cfg.Patience < 0:
		return nil, fmt.Errorf("train.New: Accumulate %d, ClipNorm %g and Patience %d must not be negative", cfg.Accumulate, cfg.ClipNorm, cfg.Patience)
	case cfg.Resume && cfg.Dir == "":
		return nil, errors.New("train.New: Resume needs Dir")
	case cfg.Patience > 0 && cfg.Monitor == "":
		return nil, errors.New("train.New: Patience needs a Monitor metric")
	}
	if cfg.Accumulate == 0 {
		cfg.Accumulate = 1
	}
	params := model.Params()
	ov := opt.Params()
	if len(ov) != len(params) {
		return nil, fmt.Errorf("train.New: the optimiser updates %d tensors, the model has %d parameters", len(ov), len(params))
	}
	for i, p := range params {
		if ov[i] != p.Value {
			return nil, fmt.Errorf("train.New: the optimiser's tensor %d is not the model's parameter %q", i, p.Name)
		}
	}
	l := &Loop{model: model, params: params, opt: opt, loss: loss, loader: loader, cfg: cfg, g: graph.New(), best: math.NaN()}
	for _, p := range params {
		l.accum = append(l.accum, tensor.ZerosLike(p.Value))
	}
	return l, nil
}

// Steps returns the optimiser steps taken.
func (l *Loop) Steps() int { return l.steps }

// Step adds the gradient of one micro-batch's loss and, once Accumulate
// micro-batches are in, takes an optimiser step on their mean (clipped,
// with the scheduled learning rate); stepped says whether it did. On an
// error (a bad batch, a non-finite gradient) the parameters are unchanged
// and the pending micro-batches are dropped.
func (l *Loop) Step(b data.Batch) (loss float64, stepped bool, err error) {
	defer func() {
		if err != nil {
			l.dropPending()
		}
	}()
	var grads []*tensor.Tensor
	err = func() (err error) {
		defer tensor.Recover(&err)
		l.g.Reset()
		out := l.loss(l.g, b)
		loss = out.Item()
		grads = nn.Gradients(out, l.params)
		return nil
	}()
	if err != nil {
		return loss, false, fmt.Errorf("train: step %d: %w", l.steps+1, err)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, false, fmt.Errorf("train: step %d: the loss is %v", l.steps+1, loss)
	}
	for i, g := range grads {
		tensor.AddTo(l.accum[i], l.accum[i], g)
	}
	l.micro++
	if l.micro < l.cfg.Accumulate {
		return loss, false, nil
	}
	if l.cfg.Accumulate > 1 {
		for _, a := range l.accum {
			tensor.MulScalarTo(a, a, 1/float64(l.cfg.Accumulate))
		}
	}
	if l.cfg.ClipNorm > 0 {
		optim.ClipByGlobalNorm(l.accum, l.cfg.ClipNorm)
	}
	if l.cfg.Schedule != nil {
		l.opt.SetLR(l.cfg.Schedule.LR(l.steps))
	}
	if err := l.opt.Step(l.accum); err != nil {
		return loss, false, fmt.Errorf("train: step %d: %w", l.steps+1, err)
	}
	l.steps++
	l.dropPending()
	return loss, true, nil
}

func (l *Loop) dropPending() {
	for _, a := range l.accum {
		a.Fill(0)
	}
	l.micro = 0
}

// Run trains for the configured epochs (from the checkpoint when
// resuming), validating, logging, checkpointing and stopping early as
// Config says. Micro-batches left over at the end of an epoch (fewer than
// Accumulate) are dropped, so every step averages the same number.
func (l *Loop) Run() (History, error) {
	var h History
	if l.cfg.Resume {
		if err := l.resume(); err != nil {
			return h, err
		}
	}
	prog := l.cfg.Progress
	if prog == nil {
		prog = NewProgress(nil)
	}
	for l.epoch < l.cfg.Epochs {
		start := time.Now()
		e := Epoch{Epoch: l.epoch + 1}
		l.model.SetTraining(true)
		prog.StartEpoch(fmt.Sprintf("epoch %d/%d", e.Epoch, l.cfg.Epochs), -1)
		sum, n := 0.0, 0
		for b := range l.loader.Epoch(l.epoch) {
			loss, _, err := l.Step(b)
			if err != nil {
				return h, fmt.Errorf("epoch %d: %w", e.Epoch, err)
			}
			sum += loss
			n++
			prog.Step(loss)
		}
		l.dropPending()
		l.g.Reset()
		e.TrainLoss, e.Steps, e.LR = sum/float64(max(n, 1)), l.steps, l.opt.LR()
		l.model.SetTraining(false)
		if l.cfg.Validate != nil {
			m, err := l.cfg.Validate(graph.New())
			if err != nil {
				return h, fmt.Errorf("epoch %d: validation: %w", e.Epoch, err)
			}
			e.Metrics = m
		}
		l.epoch++
		if err := l.judge(&e); err != nil {
			return h, err
		}
		e.Seconds = time.Since(start).Seconds()
		if err := l.save("last.safetensors"); err != nil {
			return h, err
		}
		if e.Best {
			h.BestEpoch = e.Epoch
			if err := l.save("best.safetensors"); err != nil {
				return h, err
			}
		}
		h.Epochs = append(h.Epochs, e)
		prog.EndEpoch("train loss %.4f%s (%.1f s)", e.TrainLoss, metricsText(e.Metrics), e.Seconds)
		if l.cfg.Log != nil {
			if err := json.NewEncoder(l.cfg.Log).Encode(e); err != nil {
				return h, fmt.Errorf("train: writing the log: %w", err)
			}
		}
		for _, cb := range l.cfg.Callbacks {
			if err := cb(e); err != nil {
				return h, fmt.Errorf("epoch %d: callback: %w", e.Epoch, err)
			}
		}
		if l.cfg.Patience > 0 && l.bad >= l.cfg.Patience {
			h.Stopped = true
			break
		}
	}
	return h, nil
}

// judge updates the best value of Monitor and the epochs without
// improvement.
func (l *Loop) judge(e *Epoch) error {
	if l.cfg.Monitor == "" {
		return nil
	}
	v, ok := e.Metrics[l.cfg.Monitor]
	if l.cfg.Monitor == "train_loss" {
		v, ok = e.TrainLoss, true
	}
	if !ok {
		return fmt.Errorf("train: epoch %d: Validate reported no metric %q (have %v)", e.Epoch, l.cfg.Monitor, keys(e.Metrics))
	}
	better := math.IsNaN(l.best) || (l.cfg.Maximize && v > l.best) || (!l.cfg.Maximize && v < l.best)
	if better {
		l.best, l.bad, e.Best = v, 0, true
	} else {
		l.bad++
	}
	return nil
}

// save writes the loop's state to Dir/name (nothing without a Dir).
func (l *Loop) save(name string) error {
	if l.cfg.Dir == "" {
		return nil
	}
	if err := os.MkdirAll(l.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	meta := map[string]string{
		"epoch": strconv.Itoa(l.epoch), "steps": strconv.Itoa(l.steps),
		"best": strconv.FormatFloat(l.best, 'g', -1, 64), "bad_epochs": strconv.Itoa(l.bad),
		"lr": strconv.FormatFloat(l.opt.LR(), 'g', -1, 64),
	}
	return checkpoint.SaveParams(filepath.Join(l.cfg.Dir, name), stateOf(l.model), l.opt.State(), meta)
}

// resume restores Dir/last.safetensors if it exists.
func (l *Loop) resume() error {
	path := filepath.Join(l.cfg.Dir, "last.safetensors")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, meta, err := checkpoint.ReadFile(path)
	if err != nil {
		return fmt.Errorf("train: resuming: %w", err)
	}
	var epoch, steps, bad int
	var best, lr float64
	for _, f := range []struct {
		key   string
		parse func(string) error
	}{
		{"epoch", func(s string) (err error) { epoch, err = strconv.Atoi(s); return }},
		{"steps", func(s string) (err error) { steps, err = strconv.Atoi(s); return }},
		{"bad_epochs", func(s string) (err error) { bad, err = strconv.Atoi(s); return }},
		{"best", func(s string) (err error) { best, err = strconv.ParseFloat(s, 64); return }},
		{"lr", func(s string) (err error) { lr, err = strconv.ParseFloat(s, 64); return }},
	} {
		if err := f.parse(meta[f.key]); err != nil {
			return fmt.Errorf("train: resuming from %s: metadata %q: %w", path, f.key, err)
		}
	}
	optState, err := checkpoint.LoadInto(path, stateOf(l.model))
	if err != nil {
		return fmt.Errorf("train: resuming: %w", err)
	}
	if err := l.opt.LoadState(optState); err != nil {
		return fmt.Errorf("train: resuming from %s: %w", path, err)
	}
	l.epoch, l.steps, l.bad, l.best = epoch, steps, bad, best
	l.opt.SetLR(lr)
	return nil
}

func stateOf(m nn.Module) map[string]*tensor.Tensor {
	out := map[string]*tensor.Tensor{}
	for _, p := range nn.State(m) {
		out[p.Name] = p.Value
	}
	return out
}
