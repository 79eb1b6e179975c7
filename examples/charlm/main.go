// Command charlm trains a character-level transformer language model
// (nn.TransformerLM: decoder-only, learned positions, pre-norm causal
// blocks) on Newton's Opticks (1730, public domain; see SOURCES.md),
// shipped next to this file. The first 90 % of the characters train it
// and the last 10 % are held out; it reports the held-out bits per
// character next to a unigram and a bigram model with add-one smoothing
// counted on the training split, writes a sample generated at -temperature
// to sample.txt, the training curve to curve.png and the JSON-lines log to
// log.jsonl in -out.
//
// The defaults (width 128, 4 heads, 2 blocks, context 64, batches of 32,
// AdamW with warm-up and cosine decay, 8 epochs of 100 steps) take a few
// minutes on two cores and beat the bigram model clearly. -demo trains a
// tiny model for 60 steps. -device cuda trains on an NVIDIA GPU (go run
// -tags cuda ./examples/charlm -device cuda).
//
//	go run ./examples/charlm [-epochs 8] [-steps 100] [-seed 1] [-temperature 0.8] [-prompt Light] [-out out/charlm] [-json] [-quiet] [-demo]
package main

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config is a run's settings; the tagged fields are its flags.
type config struct {
	cli.Training                          // -epochs (of -steps optimiser steps each), -batch, -lr
	cli.Device                            // -device
	StepsPerEpoch                 int     `flag:"steps" help:"optimiser steps per epoch"`
	Temperature                   float64 `flag:"temperature" help:"sampling temperature (0: greedy)"`
	SampleLen                     int     `flag:"sample" help:"characters to generate"`
	Prompt                        string  `flag:"prompt" help:"text the sample starts from"`
	Demo                          bool    `flag:"demo" help:"quick run: a tiny model for a few dozen steps"`
	Width, Heads, Layers, Context int
	ValChars                      int // score only the first ValChars held-out characters (0: all)
}

// defaults are the settings of a plain `go run ./examples/charlm`.
func defaults() config {
	return config{Training: cli.Training{Epochs: 8, Batch: 32, LR: 3e-3}, Width: 128, Heads: 4, Layers: 2, Context: 64, StepsPerEpoch: 100,
		Temperature: 0.8, SampleLen: 600, Prompt: "Light"}
}

// demo is the quick mode of -demo and main_test.go: a tiny model, a few
// dozen steps, part of the held-out split.
func demo(c config) config {
	c.Width, c.Heads, c.Layers, c.Context, c.Batch = 32, 2, 1, 32, 16
	c.Epochs, c.StepsPerEpoch, c.SampleLen, c.ValChars, c.LR = 2, 30, 80, 4000, 5e-3
	return c
}

// result is what -json prints.
type result struct {
	ValBPC     float64   `json:"val_bpc"`
	UnigramBPC float64   `json:"unigram_bpc"`
	BigramBPC  float64   `json:"bigram_bpc"`
	TrainBPC   float64   `json:"train_bpc"` // the last epoch's mean training loss in bits
	ValCurve   []float64 `json:"val_bpc_per_epoch"`
	Params     int       `json:"params"`
	Steps      int       `json:"steps"`
	Seconds    float64   `json:"seconds"`
	Sample     string    `json:"sample"`
	StepBPC    []float64 `json:"step_bpc"` // every optimiser step's training loss in bits
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "charlm"}, defaults(), func(c config, env *cli.Env) (result, error) {
		if c.Demo {
			c = cli.Preset(env, c, demo)
		}
		return run(c, env)
	})
}

// windows samples count random window starts per epoch (with
// replacement) from [0, n), reproducibly from the seed and the epoch.
type windows struct {
	n, count int
	seed     uint64
}

// Indices returns the epoch's window starts.
func (w windows) Indices(epoch int) []int {
	rng := tensor.NewRNG(w.seed*0x9E3779B97F4A7C15 + uint64(epoch) + 7)
	out := make([]int, w.count)
	for i := range out {
		out[i] = rng.Intn(w.n)
	}
	return out
}

// starts is a Dataset whose examples are window starts only: the loss
// function reads the characters itself.
type starts int

// Len returns the number of window starts.
func (s starts) Len() int { return int(s) }

// Get returns an empty example: the index is the data.
func (starts) Get(int) data.Example { return data.Example{} }

// collate keeps only the indices (the window starts).
func collate(_ []data.Example, index []int) data.Batch {
	return data.Batch{Index: append([]int(nil), index...)}
}

// windowLoss returns the mean cross-entropy (nats) of predicting
// text[s+1 : s+L+1] from text[s : s+L] for every start s.
func windowLoss(g *graph.Graph, m *nn.TransformerLM, text []int, starts []int, l int) *graph.Node {
	in := make([]int, 0, len(starts)*l)
	next := make([]int, 0, len(starts)*l)
	for _, s := range starts {
		in = append(in, text[s:s+l]...)
		next = append(next, text[s+1:s+l+1]...)
	}
	logits := m.Forward(g, in, len(starts))
	return losses.CrossEntropy(graph.Reshape(logits, len(in), m.Config.Vocab), next, losses.CrossEntropyOptions{})
}

// heldOutBPC scores every character of val after the first, in
// consecutive windows of the context length (each window's first
// character is read, not scored), and returns the bits per character.
func heldOutBPC(m *nn.TransformerLM, val []int, l, batch int) float64 {
	g := graph.New()
	defer g.Reset()
	var ss []int
	for s := 0; s+1 < len(val); s += l {
		ss = append(ss, s)
	}
	total, n := 0.0, 0
	for lo := 0; lo < len(ss); lo += batch {
		full := ss[lo:min(lo+batch, len(ss))]
		// The last window may be short: score it alone at its length.
		if last := full[len(full)-1]; last+l+1 > len(val) {
			if len(full) > 1 {
				total += sumNats(g, m, val, full[:len(full)-1], l)
				n += (len(full) - 1) * l
			}
			k := len(val) - 1 - last
			total += sumNats(g, m, val, []int{last}, k)
			n += k
			continue
		}
		total += sumNats(g, m, val, full, l)
		n += len(full) * l
	}
	return total / float64(n) / math.Ln2
}

// sumNats is the summed negative log-likelihood of windows of length l.
func sumNats(g *graph.Graph, m *nn.TransformerLM, text, starts []int, l int) float64 {
	g.Reset()
	return windowLoss(g, m, text, starts, l).Item() * float64(len(starts)*l)
}

// run trains and evaluates the model, writing the sample, the curve and
// the log into -out; -seed draws the weights, batches and sample.
func run(c config, env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	start := time.Now()
	corp := newCorpus(opticks)
	cut := len(corp.text) * 9 / 10
	trainIDs, val := corp.text[:cut], corp.text[cut:]
	if c.ValChars > 0 && c.ValChars < len(val) {
		val = val[:c.ValChars]
	}
	v := len(corp.chars)
	res.UnigramBPC, res.BigramBPC = baselines(trainIDs, val, v)
	prog := train.NewProgress(env.Log)
	prog.Printf("charlm: Newton's Opticks, %d characters (%d distinct): %d train, %d held out; unigram %.3f, bigram %.3f bits/char",
		len(corp.text), v, len(trainIDs), len(val), res.UnigramBPC, res.BigramBPC)

	m := nn.NewTransformerLM(tensor.NewRNG(env.Seed), nn.TransformerLMOptions{
		Vocab: v, Context: c.Context, Width: c.Width, Heads: c.Heads, Layers: c.Layers}, tensor.Float32)
	dev, err := c.Device.Open()
	if err != nil {
		return res, err
	}
	nn.To(m, dev) // before the optimiser, which keeps the tensors it is given
	res.Params = nn.NumParams(m)
	prog.Printf("TransformerLM: width %d, %d heads, %d blocks, context %d: %d parameters on %v", c.Width, c.Heads, c.Layers, c.Context, res.Params, dev)

	total := c.Epochs * c.StepsPerEpoch
	opt := optim.NewAdamW(nn.Values(m.Params()), optim.AdamOptions{LR: c.LR, Beta2: 0.99, WeightDecay: 0.01})
	loader := data.NewLoader(starts(len(trainIDs)-c.Context), data.LoaderOptions{BatchSize: c.Batch, Collate: collate,
		Sampler: windows{n: len(trainIDs) - c.Context, count: c.StepsPerEpoch * c.Batch, seed: env.Seed}})
	logFile, err := os.Create(env.Path("log.jsonl"))
	if err != nil {
		return res, err
	}
	defer logFile.Close()
	cfg := train.Options{Epochs: c.Epochs, ClipNorm: 1, Seed: env.Seed, Progress: env.Log, Log: logFile,
		Schedule: optim.LinearWarmup(min(100, total/10), optim.CosineAnnealingLR(c.LR, max(1, total-min(100, total/10)), c.LR/10)),
		Eval: func(int) (map[string]float64, error) {
			b := heldOutBPC(m, val, c.Context, 2*c.Batch)
			res.ValCurve = append(res.ValCurve, b)
			return map[string]float64{"val_bpc": b}, nil
		}}
	tr := train.New(m, opt, func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return windowLoss(g, m, trainIDs, b.Index, c.Context)
	}, loader, cfg)
	hist, err := tr.Fit(env.Context())
	if err != nil {
		return res, err
	}
	for _, l := range hist.StepLoss {
		res.StepBPC = append(res.StepBPC, l/math.Ln2)
	}
	res.Steps = tr.Steps()
	last := hist.Records[len(hist.Records)-1]
	res.TrainBPC = last.TrainLoss / math.Ln2
	res.ValBPC = res.ValCurve[len(res.ValCurve)-1]
	prog.Printf("held-out bits per character: model %.3f, bigram %.3f, unigram %.3f", res.ValBPC, res.BigramBPC, res.UnigramBPC)

	prompt, err := corp.encode(c.Prompt)
	if err != nil {
		return res, fmt.Errorf("-prompt: %w", err)
	}
	res.Sample = c.Prompt + corp.decode(m.Sample(tensor.NewRNG(env.Seed+1), prompt, c.SampleLen, c.Temperature))
	prog.Printf("sample at temperature %g:\n%s", c.Temperature, res.Sample)
	if err := writeOutputs(c, env, res); err != nil {
		return res, err
	}
	prog.Printf("wrote %s, %s and %s", env.Path("sample.txt"), env.Path("curve.png"), env.Path("log.jsonl"))
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// writeOutputs writes the sample and the training curve: the loss of
// every step and the held-out bits per character of every epoch, against
// the two baselines.
func writeOutputs(c config, env *cli.Env, res result) error {
	if err := os.WriteFile(env.Path("sample.txt"), []byte(res.Sample+"\n"), 0o644); err != nil {
		return err
	}
	steps := make([]float64, len(res.StepBPC))
	for i := range steps {
		steps[i] = float64(i + 1)
	}
	perEpoch := make([]float64, len(res.ValCurve))
	for i := range perEpoch {
		perEpoch[i] = float64((i + 1) * c.StepsPerEpoch)
	}
	flat := func(v float64) []float64 { return []float64{v, v} }
	ends := []float64{1, float64(max(len(steps), 2))}
	return plot.WritePNG(env.Path("curve.png"), plot.Panel{
		Title: "charlm on Newton's Opticks", XLabel: "optimiser step", YLabel: "bits per character",
		Curves: []plot.Curve{
			{Name: "train (batch)", X: steps, Y: res.StepBPC, Style: plot.Line},
			{Name: "held out", X: perEpoch, Y: res.ValCurve, Style: plot.LinePoints},
			{Name: fmt.Sprintf("bigram %.2f", res.BigramBPC), X: ends, Y: flat(res.BigramBPC), Style: plot.Line},
			{Name: fmt.Sprintf("unigram %.2f", res.UnigramBPC), X: ends, Y: flat(res.UnigramBPC), Style: plot.Line},
		}})
}
