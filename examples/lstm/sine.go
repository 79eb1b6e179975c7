package main

import (
	"math"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// sineConfig describes the forecasting task and its training.
type sineConfig struct {
	Points        int     // length of the series
	Period        float64 // of the sine, in steps
	Noise         float64 // standard deviation of the Gaussian noise added to each point
	Window        int     // past values the model sees
	Hidden        int     // LSTM units
	Bidirectional bool    // a second LSTM reads the window backwards
	Capture       bool    // replay the training step as a captured program (train.Options.Capture)
	Epochs        int
	Batch         int
	LR            float64
	MaxStep       int // stop after this many steps (0 = no limit), for tests
}

// sineTraining is the training of -task sine where -batch and -lr are not
// given: batches of 64, Adam with learning rate 5e-3.
func sineTraining(o mnist.Options) mnist.Options {
	o.Batch, o.LR = 64, 5e-3
	return o
}

// defaultSine returns the task used by -task sine: 4,000 points of
// sin(2πt/25) with noise of standard deviation 0.1 (a noise floor of 0.01),
// windows of 20, LSTM(1→32), Adam's learning rate decaying to 0 on a
// cosine; o sets the epochs, batches, learning rate and step limit.
func defaultSine(o mnist.Options) sineConfig {
	return sineConfig{
		Points: 4000, Period: 25, Noise: 0.1, Window: 20, Hidden: 32,
		Epochs: o.Epochs, Batch: o.Batch, LR: o.LR, MaxStep: o.MaxSteps,
	}
}

// sineResult is what -task sine reports.
type sineResult struct {
	HeldOutMSE        float64   `json:"heldout_mse"`
	Captured          bool      `json:"captured"`    // the training steps replayed a captured program (-capture)
	NoiseFloor        float64   `json:"noise_floor"` // MSE of the clean sine itself on the held-out targets
	PersistenceMSE    float64   `json:"persistence_mse"`
	TrainLossPerEpoch []float64 `json:"train_loss_per_epoch"`
	Seconds           float64   `json:"seconds"`
	SecondsPerEpoch   []float64 `json:"seconds_per_epoch"`
	TrainSize         int       `json:"train_size"`
	HeldOutSize       int       `json:"heldout_size"`
	Plot              string    `json:"plot,omitempty"`
	Log               string    `json:"log,omitempty"` // the JSON-lines training log
	StepLoss          []float64 `json:"-"`
}

// sineData returns the windows x (n, Window, 1), the next values y (n, 1)
// and the noise-free next values, for every position of the series.
func sineData(c sineConfig, seed uint64) (x, y *tensor.Tensor, clean []float64) {
	rng := tensor.NewRNG(seed)
	s := make([]float64, c.Points)
	cs := make([]float64, c.Points)
	for t := range s {
		cs[t] = math.Sin(2 * math.Pi * float64(t) / c.Period)
		s[t] = cs[t] + c.Noise*rng.NormFloat64()
	}
	n := c.Points - c.Window
	xs := make([]float32, 0, n*c.Window)
	ys := make([]float32, n)
	clean = make([]float64, n)
	for i := range n {
		for _, v := range s[i : i+c.Window] {
			xs = append(xs, float32(v))
		}
		ys[i] = float32(s[i+c.Window])
		clean[i] = cs[i+c.Window]
	}
	return tensor.FromFloat32s(xs, n, c.Window, 1), tensor.FromFloat32s(ys, n, 1), clean
}

// runSine trains the forecaster on the first four fifths of the series
// (in time order, so the held-out part is the future) and evaluates it on
// the rest; -seed draws the noise, the weights and the batches.
func runSine(c sineConfig, env *cli.Env) (res sineResult, err error) {
	defer tensor.Recover(&err)
	start := time.Now()
	prog := train.NewProgress(env.Log)
	x, y, clean := sineData(c, env.Seed)
	n := x.Shape()[0]
	nTrain := n * 4 / 5
	xTr, yTr := tensor.Slice(x, 0, 0, nTrain, 1), tensor.Slice(y, 0, 0, nTrain, 1)
	xTe, yTe := tensor.Slice(x, 0, nTrain, n, 1), tensor.Slice(y, 0, nTrain, n, 1)
	res.TrainSize, res.HeldOutSize, res.Captured = nTrain, n-nTrain, c.Capture

	yv, xv := yTe.Values(), xTe.Contiguous().Values()
	for i, v := range yv {
		res.NoiseFloor += (v - clean[nTrain+i]) * (v - clean[nTrain+i])
		last := xv[(i+1)*c.Window-1] // persistence: tomorrow is like today
		res.PersistenceMSE += (v - last) * (v - last)
	}
	res.NoiseFloor /= float64(len(yv))
	res.PersistenceMSE /= float64(len(yv))

	m := newSeqModel(tensor.NewRNG(env.Seed+1), 1, c.Hidden, 1, c.Bidirectional)
	// Batches of windows shuffled from the seed; the targets are the
	// next values, (nTrain, 1).
	loader := data.NewLoader(data.TensorDataset{X: xTr, Targets: tensor.Reshape(yTr.Contiguous(), nTrain, 1)}, data.LoaderOptions{
		BatchSize: c.Batch, Sampler: data.Random{N: nTrain, Seed: env.Seed}})
	// The batch enters through VarOf, so that a captured step reads each
	// new batch (a Const would freeze the first).
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.MSE(m.Forward(g.VarOf(b.X)), g.VarOf(b.Targets), losses.Mean)
	}
	prog.Printf("lstm sine: %d training and %d held-out windows of %d, LSTM(1→%d), noise sd %g", nTrain, n-nTrain, c.Window, c.Hidden, c.Noise)
	// Cosine decay to zero: the late, small steps average out the noise.
	tc := train.Options{Epochs: c.Epochs, Seed: env.Seed, MaxSteps: c.MaxStep, Progress: env.Log, Capture: c.Capture,
		Schedule: optim.CosineAnnealingLR(c.LR, max(c.Epochs*loader.NumBatches(0), 1), 0)}
	// A JSON-lines log of every epoch, for gradus plot.
	f, path, err := cli.CreateIn(env.Out, "sine.jsonl")
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.Log, tc.Log = path, f
	hist, err := train.New(m, optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: c.LR}), loss, loader, tc).Fit(env.Context())
	if err != nil {
		return res, err
	}
	for _, r := range hist.Records {
		res.TrainLossPerEpoch = append(res.TrainLossPerEpoch, r.TrainLoss)
		res.SecondsPerEpoch = append(res.SecondsPerEpoch, r.Seconds)
	}
	res.StepLoss = hist.StepLoss

	g := graph.New()
	g.Reset()
	pred := m.Forward(g.Const(xTe.Contiguous())).Value().Values()
	for i, v := range yv {
		res.HeldOutMSE += (v - pred[i]) * (v - pred[i])
	}
	res.HeldOutMSE /= float64(len(yv))
	prog.Printf("held-out MSE %.5f; noise floor %.5f (ratio %.3f); persistence forecast %.5f",
		res.HeldOutMSE, res.NoiseFloor, res.HeldOutMSE/res.NoiseFloor, res.PersistenceMSE)

	k := min(150, len(yv))
	res.Plot, err = env.WritePNG("sine.png",
		plot.Panel{Title: "lstm sine: training loss", XLabel: "epoch", YLabel: "MSE",
			Curves: []plot.Curve{{Name: "train", Y: res.TrainLossPerEpoch}}},
		plot.Panel{Title: "held-out forecast", XLabel: "held-out step", YLabel: "value",
			Curves: []plot.Curve{{Name: "observed", Y: yv[:k], Style: plot.Scatter},
				{Name: "clean sine", Y: clean[nTrain : nTrain+k], Style: plot.Line},
				{Name: "forecast", Y: pred[:k], Style: plot.Line}}})
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
