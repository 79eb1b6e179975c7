package train

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// LossFunc builds the scalar loss of one batch on g: the mean over the
// batch's examples, so that accumulation can weight micro-batches by their
// size. rng is the Trainer's random source for this epoch (for dropout
// masks or noise); using it, rather than an RNG of one's own, keeps a
// resumed run identical to an uninterrupted one.
type LossFunc func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node

// EvalFunc computes metrics after an epoch (1-based), e.g. "val_loss" or
// "val_accuracy". The model is in evaluation mode while it runs.
type EvalFunc func(epoch int) (map[string]float64, error)

// Callback is called after each epoch with its record; returning stop ==
// true ends training after this epoch, an error ends it with that error.
type Callback func(t *Trainer, r Record) (stop bool, err error)

// Options configures a Trainer. The zero value trains one epoch with one
// micro-batch per step, no clipping and the optimiser's own rate.
type Options struct {
	Epochs     int            // passes over the training data (default 1)
	Accumulate int            // micro-batches per optimiser step (default 1)
	ClipNorm   float64        // clip the gradients to this global L2 norm (0: no clipping)
	Schedule   optim.Schedule // learning rate per optimiser step, counted from 0 (nil: keep the optimiser's)

	// Plateau, if not nil, lowers the learning rate when the monitored
	// metric (Monitor, else "train_loss") stops improving, as
	// optim.ReduceLROnPlateau with these options does after each epoch;
	// its Maximize is taken from Options.Maximize. Its state is saved and
	// resumed with the run. It cannot be combined with Schedule.
	Plateau  *optim.PlateauOptions
	Seed     uint64 // seeds the RNG handed to the loss function
	MaxSteps int    // stop after this many optimiser steps in all (0: no limit), for quick runs

	// StepLossWindow makes History.StepLoss the losses of the last this
	// many steps only, so that a run of millions of steps holds constant
	// memory (0: every step's loss).
	StepLossWindow int

	Eval     EvalFunc // metrics after each epoch (may be nil)
	Monitor  string   // metric watched for early stopping and the best checkpoint ("" = none; "train_loss" is always there)
	Maximize bool     // the monitored metric is better when larger (accuracy); else smaller (loss)
	Patience int      // stop after this many epochs without improvement (0: never stop early)
	MinDelta float64  // an improvement must exceed this

	BestPath  string // save a checkpoint here whenever the monitored metric improves ("": never)
	Callbacks []Callback

	Progress io.Writer // progress bar on a terminal, a line per epoch otherwise (nil: silent)
	Log      io.Writer // one JSON object per epoch, non-finite values as "NaN", "+Inf", "-Inf" (nil: none)

	// Gradients returns the gradients of a micro-batch's loss with respect
	// to params, in their order (nil: nn.Gradients). A data-parallel run
	// passes distributed.DataParallel.Gradients, which averages them over
	// the ranks during the backward pass. An error ends the step with the
	// parameters unchanged.
	Gradients func(loss *graph.Node, params []nn.NamedParam) ([]*tensor.Tensor, error)

	// Capture replays the loss and its gradients as a graph.Program
	// traced from the first batch of each shape (graph.Capture), instead
	// of building the graph for every batch: the same bits, faster where
	// building the graph or the program's rewrites matter (a recurrent
	// model's step, 1.3× on lstm_train). The loss function must then read
	// the batch's tensors through g.VarOf (g.Const of them would be
	// frozen, and is refused), take targets as a tensor (one-hot classes
	// rather than Batch.Labels, which the program would freeze) and draw
	// no random numbers; a step that breaks these rules fails with an
	// error saying so. It cannot be combined with Gradients.
	Capture bool
}

// Record is what one epoch produced; it is written as one line of the
// JSON-lines log.
type Record struct {
	Epoch     int                `json:"epoch"`      // 1-based
	Step      int                `json:"step"`       // optimiser steps taken so far
	LR        float64            `json:"lr"`         // learning rate of the epoch's last step
	TrainLoss float64            `json:"train_loss"` // mean loss over the epoch's examples
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Seconds   float64            `json:"seconds"` // wall time of the epoch (not reproducible)
	Best      bool               `json:"best,omitempty"`
}

// Value returns the named metric, "train_loss" included.
func (r Record) Value(name string) (float64, bool) {
	if name == "train_loss" {
		return r.TrainLoss, true
	}
	v, ok := r.Metrics[name]
	return v, ok
}

// History is the records of a run, one per epoch.
type History struct {
	Records   []Record
	StepLoss  []float64 // the loss of every optimiser step (mean over its micro-batches)
	Stopped   bool      // early stopping or a callback ended the run
	BestEpoch int       // epoch of the best monitored value (0 if none)
}

// Trainer runs a training loop. It is not safe for concurrent use.
type Trainer struct {
	model  nn.Module
	params []nn.NamedParam
	opt    optim.Optimizer
	loss   LossFunc
	loader *data.Loader
	cfg    Options
	g      *graph.Graph
	acc    []*tensor.Tensor // accumulated gradients

	values   []*tensor.Tensor          // the parameters' tensors, in order (Options.Capture)
	programs map[string]*graph.Program // Options.Capture: the captured step per shape of the batch

	epoch, step int // completed epochs and optimiser steps
	best        float64
	bestEpoch   int
	bad         int // epochs without improvement
	hist        History
	prog        *Progress
	rng         *tensor.RNG
	rngEpoch    int
	plateau     *optim.ReduceLROnPlateau // nil without Options.Plateau
}

// New returns a Trainer of model's parameters with opt (built over
// nn.Values(model.Params()), in that order) on the batches of loader. It
// panics with a *tensor.Error if an argument is nil or the configuration
// is invalid.
func New(model nn.Module, opt optim.Optimizer, loss LossFunc, loader *data.Loader, cfg Options) *Trainer {
	for _, a := range []struct {
		name string
		nil  bool
	}{{"model", model == nil}, {"optimiser", opt == nil}, {"loss function", loss == nil}} {
		if a.nil {
			tensor.Fail("train.New", "the %s is nil", a.name)
		}
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 1
	}
	if cfg.Accumulate == 0 {
		cfg.Accumulate = 1
	}
	if cfg.Epochs < 0 || cfg.Accumulate < 0 || cfg.Patience < 0 || cfg.MaxSteps < 0 {
		tensor.Fail("train.New", "Epochs %d, Accumulate %d, Patience %d and MaxSteps %d must not be negative",
			cfg.Epochs, cfg.Accumulate, cfg.Patience, cfg.MaxSteps)
	}
	if !(cfg.ClipNorm >= 0) || math.IsInf(cfg.ClipNorm, 0) || !(cfg.MinDelta >= 0) || math.IsInf(cfg.MinDelta, 0) {
		tensor.Fail("train.New", "ClipNorm %g and MinDelta %g must be finite and not negative", cfg.ClipNorm, cfg.MinDelta)
	}
	if cfg.Capture && cfg.Gradients != nil {
		tensor.Fail("train.New", "Capture replays autodiff's gradients and cannot call Options.Gradients: choose one")
	}
	if cfg.Plateau != nil && cfg.Schedule != nil {
		tensor.Fail("train.New", "Plateau and Schedule both set the learning rate: choose one")
	}
	params := model.Params()
	if len(params) != len(opt.Params()) {
		tensor.Fail("train.New", "the model has %d parameters, the optimiser %d", len(params), len(opt.Params()))
	}
	for i, p := range params {
		if p.Value != opt.Params()[i] {
			tensor.Fail("train.New", "parameter %d (%s) is not the optimiser's parameter %d: build the optimiser over nn.Values(model.Params())", i, p.Name, i)
		}
	}
	t := &Trainer{model: model, params: params, opt: opt, loss: loss, loader: loader, cfg: cfg,
		g: graph.New(), prog: NewProgress(cfg.Progress), best: math.NaN(), rngEpoch: -1}
	if cfg.Plateau != nil {
		po := *cfg.Plateau
		po.Maximize = cfg.Maximize
		t.plateau = optim.NewReduceLROnPlateau(opt, po)
	}
	t.values = nn.Values(params)
	t.acc = make([]*tensor.Tensor, len(params))
	for i, p := range params {
		t.acc[i] = tensor.ZerosLike(p.Value)
	}
	return t
}

// Epoch returns the number of completed epochs.
func (t *Trainer) Epoch() int { return t.epoch }

// Steps returns the number of optimiser steps taken.
func (t *Trainer) Steps() int { return t.step }

// History returns the records so far.
func (t *Trainer) History() History {
	h := t.hist
	if w := t.cfg.StepLossWindow; w > 0 {
		// A copy: the window's buffer slides in place as training goes on.
		h.StepLoss = slices.Clone(h.StepLoss[max(0, len(h.StepLoss)-w):])
	}
	return h
}

// RNG returns the random source of the current epoch: a fresh generator
// seeded from Options.Seed and the epoch, so that it can be recreated on
// resumption.
func (t *Trainer) RNG() *tensor.RNG {
	if t.rngEpoch != t.epoch {
		t.rng = tensor.NewRNG(t.cfg.Seed*0x9e3779b97f4a7c15 + uint64(t.epoch) + 1)
		t.rngEpoch = t.epoch
	}
	return t.rng
}

// Step takes one optimiser step on the micro-batches (whose gradients are
// accumulated, each weighted by its share of the examples, so the step is
// that of the mean loss over all of them) and returns that mean loss. It
// sets the scheduled learning rate first and clips the summed gradient to
// Options.ClipNorm. A non-finite loss or gradient is an error and leaves
// the parameters unchanged, and so is a panic in the loss function or the
// gradients (the user's code, or a misuse it makes of Gradus), or a loss
// function that returns nil.
func (t *Trainer) Step(micro ...data.Batch) (loss float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.g.Reset()
			err = panicError(fmt.Sprintf("train: step %d", t.step+1), r)
		}
	}()
	total := 0
	for _, b := range micro {
		total += b.Len()
	}
	if total == 0 {
		return 0, fmt.Errorf("train: step %d: no examples in %d micro-batches", t.step+1, len(micro))
	}
	if len(micro) > 1 { // one micro-batch's gradients are copied over acc
		for _, a := range t.acc {
			tensor.MulScalarTo(a, a, 0)
		}
	}
	rng := t.RNG()
	for i, b := range micro {
		var v float64
		var grads []*tensor.Tensor
		if t.cfg.Capture {
			var err error
			if v, grads, err = t.capturedGradients(b, rng); err != nil {
				return 0, fmt.Errorf("train: step %d, micro-batch %d: %w", t.step+1, i+1, err)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return v, fmt.Errorf("train: step %d, micro-batch %d: loss is %g", t.step+1, i+1, v)
			}
		} else {
			t.g.Reset()
			l := t.loss(t.g, b, rng)
			if l == nil {
				t.g.Reset()
				return 0, fmt.Errorf("train: step %d, micro-batch %d: the loss function returned nil", t.step+1, i+1)
			}
			v = l.Item()
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.g.Reset()
				return v, fmt.Errorf("train: step %d, micro-batch %d: loss is %g", t.step+1, i+1, v)
			}
			var err error
			if grads, err = t.gradients(l); err != nil {
				t.g.Reset()
				return v, fmt.Errorf("train: step %d, micro-batch %d: %w", t.step+1, i+1, err)
			}
		}
		w := float64(b.Len()) / float64(total)
		loss += w * v
		for j, gr := range grads {
			if len(micro) == 1 {
				tensor.CopyInto(t.acc[j], gr)
			} else {
				tensor.AddTo(t.acc[j], t.acc[j], tensor.MulScalar(gr, w))
			}
		}
	}
	t.g.Reset()
	if t.cfg.ClipNorm > 0 {
		optim.ClipByGlobalNorm(t.acc, t.cfg.ClipNorm)
	}
	if t.cfg.Schedule != nil {
		t.opt.SetLR(t.cfg.Schedule.LR(t.step))
	}
	if err := t.opt.Step(t.acc); err != nil {
		return loss, fmt.Errorf("train: step %d: %w", t.step+1, err)
	}
	t.step++
	t.recordStepLoss(loss)
	return loss, nil
}

// recordStepLoss appends loss to the history, keeping at most the last
// StepLossWindow entries. The slice holds up to twice the window and
// slides back to one window when full, so a step costs O(1) amortised and
// memory stays at 2·StepLossWindow values.
func (t *Trainer) recordStepLoss(loss float64) {
	w := t.cfg.StepLossWindow
	h := t.hist.StepLoss
	if w > 0 && len(h) == 2*w {
		h = h[:copy(h, h[w:])]
	}
	if w > 0 && h == nil {
		h = make([]float64, 0, 2*w)
	}
	t.hist.StepLoss = append(h, loss)
}

func (t *Trainer) gradients(l *graph.Node) ([]*tensor.Tensor, error) {
	if t.cfg.Gradients == nil {
		return nn.Gradients(l, t.params), nil
	}
	grads, err := t.cfg.Gradients(l, t.params)
	if err == nil && len(grads) != len(t.params) {
		err = fmt.Errorf("Options.Gradients returned %d gradients for %d parameters", len(grads), len(t.params))
	}
	return grads, err
}

// RunEpoch trains one epoch over the loader's batches, Options.Accumulate
// micro-batches per step (a short remainder makes a smaller last step),
// then calls EndEpoch. It reports whether training should stop.
//
// When ctx is cancelled it stops after the step in progress and returns
// an error wrapping ctx.Err(), without ending the epoch: the epoch is not
// counted, logged, evaluated or checkpointed, so the log and the best
// checkpoint hold complete epochs only. The steps taken stay in the
// parameters and in Steps and History.StepLoss.
func (t *Trainer) RunEpoch(ctx context.Context) (stop bool, err error) {
	if t.loader == nil {
		return false, fmt.Errorf("train: RunEpoch: the Trainer has no loader")
	}
	// A panic while loading a batch (a Dataset's Get, a Transform, a
	// Collate: in the loader's workers it comes back as a
	// *data.WorkerPanic) or in a callback ends the epoch with an error; the
	// parameters are those after the last finished step, and the loader's
	// workers have stopped by the time it is returned.
	defer func() {
		if r := recover(); r != nil {
			stop, err = true, panicError(fmt.Sprintf("train: epoch %d, after step %d", t.epoch+1, t.step), r)
		}
	}()
	start := time.Now()
	t.model.SetTraining(true)
	k := t.cfg.Accumulate
	n := t.loader.NumBatches(t.epoch)
	t.prog.StartEpoch(fmt.Sprintf("epoch %d/%d", t.epoch+1, t.cfg.Epochs), (n+k-1)/k)
	sum, seen := 0.0, 0
	micro := make([]data.Batch, 0, k)
	flush := func() error {
		if len(micro) == 0 {
			return nil
		}
		l, err := t.Step(micro...)
		if err != nil {
			return fmt.Errorf("epoch %d: %w", t.epoch+1, err)
		}
		m := 0
		for _, b := range micro {
			m += b.Len()
		}
		sum += l * float64(m)
		seen += m
		t.prog.Step(l)
		micro = micro[:0]
		return nil
	}
	limited := func() bool { return t.cfg.MaxSteps > 0 && t.step >= t.cfg.MaxSteps }
	cancelled := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("train: epoch %d cancelled after step %d: %w", t.epoch+1, t.step, err)
		}
		return nil
	}
	if err := cancelled(); err != nil {
		return true, err
	}
	for b := range t.loader.Epoch(t.epoch) {
		if micro = append(micro, b); len(micro) == k {
			if err := flush(); err != nil {
				return false, err
			}
			if err := cancelled(); err != nil {
				return true, err
			}
			if limited() {
				micro = micro[:0]
				break
			}
		}
	}
	if err := flush(); err != nil {
		return false, err
	}
	if seen == 0 && !limited() {
		return true, fmt.Errorf("train: epoch %d has no examples: the loader gives %d batches (with DropLast, a batch size above the number of examples leaves none)", t.epoch+1, n)
	}
	stop, err = t.EndEpoch(sum/float64(max(seen, 1)), time.Since(start).Seconds())
	return stop || limited(), err
}

// EndEpoch closes an epoch driven by hand with Step: it evaluates,
// updates early stopping, saves the best checkpoint, writes the log and
// progress line and runs the callbacks. trainLoss is the epoch's mean
// training loss, seconds its wall time. It reports whether to stop.
func (t *Trainer) EndEpoch(trainLoss, seconds float64) (stop bool, err error) {
	t.epoch++
	r := Record{Epoch: t.epoch, Step: t.step, LR: t.opt.LR(), TrainLoss: trainLoss, Seconds: seconds}
	if t.cfg.Eval != nil {
		t.model.SetTraining(false)
		r.Metrics, err = t.cfg.Eval(t.epoch)
		t.model.SetTraining(true)
		if err != nil {
			return true, fmt.Errorf("train: evaluating epoch %d: %w", t.epoch, err)
		}
	}
	if t.cfg.Monitor != "" {
		v, ok := r.Value(t.cfg.Monitor)
		if !ok {
			return true, fmt.Errorf("train: epoch %d: the monitored metric %q is not among the evaluation's metrics", t.epoch, t.cfg.Monitor)
		}
		if t.improved(v) {
			t.best, t.bestEpoch, t.bad, r.Best = v, t.epoch, 0, true
			t.hist.BestEpoch = t.epoch
			if t.cfg.BestPath != "" {
				if err := t.Save(t.cfg.BestPath); err != nil {
					return true, err
				}
			}
		} else {
			t.bad++
			stop = t.cfg.Patience > 0 && t.bad >= t.cfg.Patience
		}
	}
	if t.plateau != nil {
		v, _ := r.Value(cmp.Or(t.cfg.Monitor, "train_loss")) // a missing Monitor ended the epoch above
		t.plateau.Observe(v)
	}
	t.hist.Records = append(t.hist.Records, r)
	t.prog.EndEpoch("%s", summary(r))
	if t.cfg.Log != nil {
		b, err := json.Marshal(r)
		if err != nil {
			return true, fmt.Errorf("train: encoding the log record of epoch %d: %w", t.epoch, err)
		}
		if _, err := t.cfg.Log.Write(append(b, '\n')); err != nil {
			return true, fmt.Errorf("train: writing the log: %w", err)
		}
	}
	for _, c := range t.cfg.Callbacks {
		s, err := c(t, r)
		if err != nil {
			return true, fmt.Errorf("train: callback after epoch %d: %w", t.epoch, err)
		}
		stop = stop || s
	}
	if stop {
		t.hist.Stopped = true
	}
	return stop, nil
}

func (t *Trainer) improved(v float64) bool {
	if math.IsNaN(t.best) {
		return !math.IsNaN(v)
	}
	if t.cfg.Maximize {
		return v > t.best+t.cfg.MinDelta
	}
	return v < t.best-t.cfg.MinDelta
}

// summary formats a record for the progress line.
func summary(r Record) string {
	s := fmt.Sprintf("train_loss %.4f", r.TrainLoss)
	for _, k := range sortedNames(r.Metrics) {
		s += fmt.Sprintf("  %s %.4f", k, r.Metrics[k])
	}
	return s + fmt.Sprintf("  (%.1f s)", r.Seconds)
}

// Fit runs the remaining epochs (all of them, or those after a resumed
// checkpoint) until Options.Epochs, early stopping or a callback ends the
// run, and returns the history. On error the parameters hold the values of
// the last successful step.
//
// When ctx is cancelled, Fit returns promptly, after the optimiser step in
// progress, with the history so far and an error wrapping ctx.Err()
// (errors.Is(err, context.Canceled)). The interrupted epoch is not logged
// or checkpointed (see RunEpoch); Save then Resume continue from the last
// complete epoch's counters with the parameters as they are.
func (t *Trainer) Fit(ctx context.Context) (History, error) {
	for t.epoch < t.cfg.Epochs {
		stop, err := t.RunEpoch(ctx)
		if err != nil {
			return t.History(), err
		}
		if stop {
			break
		}
	}
	return t.History(), nil
}

// Optimizer returns the optimiser the Trainer steps.
func (t *Trainer) Optimizer() optim.Optimizer { return t.opt }

// Model returns the model the Trainer trains.
func (t *Trainer) Model() nn.Module { return t.model }

// panicError turns a recovered panic into an error prefixed by where: an
// error value is wrapped (so errors.As finds a *tensor.Error or a
// *data.WorkerPanic), anything else is formatted.
func panicError(where string, r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: panic: %v", where, r)
}
