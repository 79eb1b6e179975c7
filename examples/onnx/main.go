// Command onnx imports a classifier exported from PyTorch as ONNX and
// trains it further in Gradus. The model shipped with it (digits.onnx,
// 13 KB) is a small MNIST CNN (conv 5×5 stride 2, ReLU, max-pool, linear)
// that nn/onnx/testdata/zoo.py trained for one epoch on 2,000 digits and
// exported with torch.onnx.export (opset 13); -model names another ONNX
// classifier of (n, 784) pixels into 10 logits.
//
// The program imports the model (its initializers become parameters under
// PyTorch's state-dict names), measures its accuracy on the test digits,
// fine-tunes it with Adam for -epochs on the training digits and measures
// it again. It writes the weights as safetensors (model.safetensors, which
// PyTorch loads into the original nn.Module with strict names) and loads
// them into a fresh import of the file, and exports the whole fine-tuned
// model as ONNX again (model.onnx) and imports that; for each it reports
// the largest difference between the logits on the test digits
// (checkpoint_max_abs_diff, roundtrip_max_abs_diff; 0 when exact). The
// fine-tuned weights also go out under PyTorch's state-dict names and
// layouts (torch.safetensors, through onnx.TorchStateDict; -sources maps
// the weights torch.onnx.export renamed, which the embedded model has
// none of). The fine-tuning curves go to training.png. On the embedded
// subset one epoch lifts the test accuracy from about 77 % to about 91 %.
//
//	go run ./examples/onnx [-epochs 1] [-batch 50] [-lr 2e-3] [-model FILE.onnx] [-sources FILE.json] [-seed 1] [-data dir] [-out out/onnx] [-json] [-quiet]
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

//go:embed digits.onnx
var digits []byte

// config holds the settings; the tagged fields are its flags.
type config struct {
	mnist.Options
	Model   string `flag:"model" help:"ONNX classifier of (n, 784) pixels into 10 logits (default: the embedded PyTorch-exported CNN)"`
	Sources string `flag:"sources" help:"JSON file mapping the model's renamed initializers to PyTorch parameters, as testdata/zoo.py writes (see onnx.TorchStateDict)"`
}

// result is what -json prints.
type result struct {
	ImportedAccuracy  float64   `json:"imported_accuracy"`  // test accuracy of the model as exported
	FinetunedAccuracy float64   `json:"finetuned_accuracy"` // after fine-tuning
	ImportedLoss      float64   `json:"imported_loss"`      // test cross-entropy
	FinetunedLoss     float64   `json:"finetuned_loss"`
	Operators         []string  `json:"operators"` // the ONNX operators the model uses
	Params            []string  `json:"params"`    // its parameters' names
	StepLoss          []float64 `json:"step_loss"`
	// RoundtripMaxAbsDiff is the largest difference between the logits of
	// the fine-tuned model and of its ONNX export (Exported) imported again,
	// on the test digits; Roundtrip says what the round trip went through.
	RoundtripMaxAbsDiff float64 `json:"roundtrip_max_abs_diff"`
	Roundtrip           string  `json:"roundtrip"`
	Exported            string  `json:"exported"`
	// CheckpointMaxAbsDiff is the same for its safetensors file
	// (Checkpoint) loaded into a fresh import of the original file.
	CheckpointMaxAbsDiff float64 `json:"checkpoint_max_abs_diff"`
	Checkpoint           string  `json:"checkpoint"`
	// TorchWeights is the fine-tuned weights under PyTorch's state-dict
	// names and layouts (onnx.TorchStateDict), for load_state_dict with
	// strict=True; TorchTensors lists its tensors.
	TorchWeights string   `json:"torch_weights"`
	TorchTensors []string `json:"torch_tensors"`
	Plot         string   `json:"plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	o := mnist.DefaultOptions()
	o.Epochs, o.Batch, o.LR = 1, 50, 2e-3
	return cli.Configured(cli.Program{Name: "onnx", DataUsage: mnist.DataUsage}, config{Options: o}, run)
}

// load imports the -model file or the embedded one.
func load(c config) (*onnx.Model, error) {
	if c.Model != "" {
		return onnx.Open(c.Model)
	}
	return onnx.Read(bytes.NewReader(digits))
}

// evaluate returns the test accuracy and cross-entropy of m.
func evaluate(forward train.Forward, x *tensor.Tensor, y []int) (acc, loss float64, err error) {
	pred, proba := train.Predict(x, 500, forward)
	if acc, err = metrics.Accuracy(pred, y); err != nil {
		return 0, 0, err
	}
	loss, err = metrics.LogLoss(proba, y)
	return acc, loss, err
}

// maxAbsDiff returns max |a − b| over the elements of two tensors of one
// shape.
func maxAbsDiff(a, b *tensor.Tensor) float64 {
	d, av, bv := 0.0, a.Values(), b.Values()
	for i := range av {
		d = math.Max(d, math.Abs(av[i]-bv[i]))
	}
	return d
}

// logits returns m's outputs on x.
func logits(m *onnx.Model, x *tensor.Tensor) *tensor.Tensor {
	g := graph.New()
	return m.Forward(g.Const(x)).Value().Clone()
}

func run(c config, env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	if c.Epochs < 1 || c.Batch < 1 || !(c.LR > 0) {
		return res, cli.BadFlagf("need -epochs and -batch ≥ 1 and -lr > 0")
	}
	m, err := load(c)
	if err != nil {
		return res, err
	}
	if in := m.Inputs(); len(in) != 1 || len(m.Outputs()) != 1 || len(in[0].Shape) != 2 || in[0].Shape[1] != 784 {
		return res, fmt.Errorf("the model must take one (n, 784) input and give one output; it takes %v", in)
	}
	res.Operators = m.Operators()
	for _, p := range m.Params() {
		res.Params = append(res.Params, p.Name)
	}
	env.Printf("imported %v: operators %s; parameters %s\n", m, strings.Join(res.Operators, " "), strings.Join(res.Params, " "))
	x, y, xt, yt, err := mnist.LoadMNIST(env.Data, []int{784}, c.Subset)
	if err != nil {
		return res, err
	}
	forward := func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return m.Forward(g.Const(xb)) }
	if res.ImportedAccuracy, res.ImportedLoss, err = evaluate(forward, xt, yt); err != nil {
		return res, err
	}
	env.Printf("as exported: test accuracy %.2f %%, cross-entropy %.4f\n", 100*res.ImportedAccuracy, res.ImportedLoss)
	h, err := mnist.FitClassifier(env.Context(), m, forward, x, y, xt, yt, mnist.Config{
		Epochs: c.Epochs, Batch: c.Batch, LR: c.LR, Seed: env.Seed, MaxSteps: c.MaxSteps, Progress: env.Log})
	if err != nil {
		return res, err
	}
	res.StepLoss = h.StepLoss
	m.SetTraining(false) // train leaves it in training mode, which batch normalisation would see
	if res.FinetunedAccuracy, res.FinetunedLoss, err = evaluate(forward, xt, yt); err != nil {
		return res, err
	}
	env.Printf("fine-tuned: test accuracy %.2f %%, cross-entropy %.4f\n", 100*res.FinetunedAccuracy, res.FinetunedLoss)

	// The weights go out as safetensors under PyTorch's names, checked by
	// loading them into a fresh import of the same file, and the whole model
	// as ONNX again, checked by importing that.
	fresh, err := load(c)
	if err != nil {
		return res, err
	}
	res.Checkpoint = env.Path("model.safetensors")
	if _, err := mnist.CheckpointRoundTrip(res.Checkpoint, m, fresh, nil, map[string]string{"source": "examples/onnx"},
		func() (a, b []int) {
			a, _ = train.Predict(xt, 500, forward)
			b, _ = train.Predict(xt, 500, func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return fresh.Forward(g.Const(xb)) })
			return a, b
		}); err != nil {
		return res, err
	}
	res.CheckpointMaxAbsDiff = maxAbsDiff(logits(m, xt), logits(fresh, xt))
	var sources map[string]string
	if c.Sources != "" {
		b, err := os.ReadFile(c.Sources)
		if err != nil {
			return res, err
		}
		if err := json.Unmarshal(b, &sources); err != nil {
			return res, fmt.Errorf("%s: %w", c.Sources, err)
		}
	}
	sd, err := onnx.TorchStateDict(m, sources)
	if err != nil {
		return res, err
	}
	res.TorchWeights = env.Path("torch.safetensors")
	if err := checkpoint.WriteFile(res.TorchWeights, sd, map[string]string{"source": "examples/onnx"}); err != nil {
		return res, err
	}
	res.TorchTensors = slices.Sorted(maps.Keys(sd))
	res.Exported, res.Roundtrip = env.Path("model.onnx"), "onnx"
	if err := onnx.Save(res.Exported, m, []*tensor.Tensor{tensor.Slice(xt, 0, 0, 2, 1).Contiguous()}, onnx.ExportOptions{}); err != nil {
		return res, err
	}
	again, err := onnx.Open(res.Exported)
	if err != nil {
		return res, err
	}
	res.RoundtripMaxAbsDiff = maxAbsDiff(logits(m, xt), logits(again, xt))
	env.Printf("wrote %s (reloaded logits differ by at most %g), %s (re-imported logits differ by at most %g) and %s (PyTorch's names)\n",
		res.Checkpoint, res.CheckpointMaxAbsDiff, res.Exported, res.RoundtripMaxAbsDiff, res.TorchWeights)

	acc := slices.Concat([]float64{res.ImportedAccuracy}, h.TestAccuracy)
	epochs := make([]float64, len(acc))
	for i := range epochs {
		epochs[i] = float64(i)
	}
	res.Plot, err = env.WritePNG("training.png",
		plot.Panel{Title: "fine-tuning the imported CNN", XLabel: "step", YLabel: "cross-entropy",
			Curves: []plot.Curve{{Name: "batch loss", Y: h.StepLoss, Style: plot.Line}}},
		plot.Panel{Title: "test accuracy (epoch 0: as exported)", XLabel: "epoch", YLabel: "accuracy",
			Curves: []plot.Curve{{Name: "test", X: epochs, Y: acc, Style: plot.LinePoints}}})
	return res, err
}
