// Command lstm trains long short-term memory networks (nn.LSTM) on two
// tasks.
//
// -task mnist (the default) reads each MNIST digit as a sequence of its 28
// rows of 28 pixels: LSTM(28→128, one layer), then Linear(128→10) on the
// last hidden state (with -bidirectional, a second LSTM reads the rows
// from the bottom up and the read-out takes both final states,
// Linear(256→10)), trained with Adam (learning rate 1e-3, batches of 128)
// on the cross-entropy. It uses the embedded 8,000/2,000 subset unless -data
// names a directory of the full data set's IDX files, writes the training
// curves and a checkpoint to -out, and reloads the checkpoint into a fresh
// model to check it predicts the same classes. Ten epochs reach about 93 %
// test accuracy on the subset.
//
// -task sine forecasts a noisy sine wave, the next value from the previous
// 20, and reports the mean squared error on the held-out last fifth of the
// series next to the noise floor (the noise variance: the error of a
// forecaster that knows the clean sine exactly). With -capture each
// training step replays a program captured once (train.Options.Capture):
// the same losses and weights, bit for bit, in less time per epoch.
//
//	go run ./examples/lstm [-task mnist|sine] [-bidirectional] [-capture] [-epochs 10] [-seed 1] [-data dir] [-out out/lstm] [-json] [-quiet]
package main

import (
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// seqModel is an LSTM followed by a linear read-out of its last hidden
// state.
type seqModel struct {
	lstm *nn.LSTM
	head *nn.Linear
}

// newSeqModel returns LSTM(in→hidden, one layer, batch first, in both
// directions if bidirectional) and Linear(directions·hidden→out),
// initialised as PyTorch does.
func newSeqModel(rng *tensor.RNG, in, hidden, out int, bidirectional bool) *seqModel {
	lstm := nn.NewLSTM(rng, in, hidden, nn.RNNOptions{BatchFirst: true, Bidirectional: bidirectional})
	return &seqModel{lstm: lstm, head: nn.NewLinear(rng, lstm.Directions()*hidden, out, true, tensor.Float32)}
}

// Params lists "lstm.weight_ih_l0", ..., "head.weight", "head.bias".
func (m *seqModel) Params() []nn.NamedParam {
	return append(nn.Prefix("lstm", m.lstm.Params()), nn.Prefix("head", m.head.Params())...)
}

// SetTraining does nothing: neither layer depends on the mode.
func (m *seqModel) SetTraining(bool) {}

// Forward maps sequences x (B, T, in) to outputs (B, out), reading the
// final hidden states of every direction side by side.
func (m *seqModel) Forward(x *graph.Node) *graph.Node {
	_, hN, _ := m.lstm.Forward(x, nil, nil) // hN (directions, B, hidden)
	s := hN.Shape()
	return m.head.Forward(graph.Reshape(graph.Permute(hN, 1, 0, 2), s[1], s[0]*s[2]))
}

// classifier reads a digit as 28 time steps of 28 pixels.
var classifier = newClassifier(false)

// newClassifier is classifier, in both directions if bidirectional.
func newClassifier(bidirectional bool) mnist.Classifier {
	return mnist.Classifier{
		Name:  "lstm",
		Input: []int{28, 28},
		Build: func(rng *tensor.RNG) (nn.Module, train.Forward) {
			m := newSeqModel(rng, 28, 128, 10, bidirectional)
			return m, func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return m.Forward(g.Const(xb)) }
		},
	}
}

func main() { cli.Main(program()) }

// config is the MNIST examples' settings and the task; the tagged fields
// are the flags.
type config struct {
	mnist.Options
	Task          string `flag:"task" help:"mnist (digits as sequences of rows) or sine (noisy sine forecast)"`
	Bidirectional bool   `flag:"bidirectional" help:"a second LSTM reads each sequence backwards; the read-out takes both final states"`
	Capture       bool   `flag:"capture" help:"replay each training step as a program captured once (graph.Capture through train.Options.Capture; -task sine)"`
}

func program() cli.Program {
	p := cli.Program{Name: classifier.Name, DataUsage: mnist.DataUsage + " (-task mnist)"}
	return cli.Configured(p, config{Options: mnist.DefaultOptions(), Task: "mnist"}, func(c config, env *cli.Env) (any, error) {
		switch c.Task {
		case "mnist":
			if c.Capture {
				return nil, cli.BadFlagf("-capture needs -task sine: the digits' loss reads class labels, which a captured program would freeze")
			}
			return mnist.RunMNIST(newClassifier(c.Bidirectional), c.Options, env)
		case "sine":
			sc := defaultSine(cli.Preset(env, c.Options, sineTraining))
			sc.Bidirectional, sc.Capture = c.Bidirectional, c.Capture
			return runSine(sc, env)
		}
		return nil, cli.BadFlagf("unknown -task %q: want mnist or sine", c.Task)
	})
}
