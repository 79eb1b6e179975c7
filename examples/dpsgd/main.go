// Command dpsgd trains a 784-128-10 tanh perceptron on MNIST with
// differentially private SGD (Abadi et al. 2016, "Deep Learning with
// Differential Privacy"): batches drawn by Poisson sampling, every
// example's gradient clipped to norm C, Gaussian noise of standard
// deviation σC added to their sum, divided by the expected batch size, then
// SGD with momentum. A Rényi-DP accountant for the sampled Gaussian
// mechanism (Mironov, Talwar and Zhang 2019) reports ε at δ after every
// epoch, with Balle et al. 2020's conversion; by default σ is the smallest
// that keeps the whole run within -target-epsilon. The same model trained
// the same way without the noise (σ = 0; clipping kept, so the gap is what
// the noise costs) is reported beside it.
//
// By default it uses the 8,000 training and 2,000 test digits embedded in
// Gradus; -data names a directory holding the full data set's IDX files.
// It writes accuracy and ε against epoch to dpsgd.png in -out.
//
// Defaults: Poisson batches of expected size 512 (q = 0.064, 16 steps an
// epoch), 5 epochs, C = 1, SGD from learning rate 2 with cosine decay and
// momentum 0.9, and σ = 1.161, the smallest noise multiplier that keeps
// the 80 steps within ε = 3.5 at δ = 1e-5. On the embedded subset this
// reaches 88.9 % test accuracy at ε = 3.50 (seeds 2 and 3: 88.9 %, 88.4 %),
// against 90.3 % for the same run without noise, at about 7 s per epoch on
// two shared cores (AMD EPYC Zen 5); accuracy peaks near 89 % from the
// third epoch while ε keeps growing, from 2.05 after the first.
//
//	go run ./examples/dpsgd [-epochs 5] [-batch 512] [-clip 1] [-target-epsilon 3.5] [-sigma 0] [-seed 1] [-data dir] [-out out/dpsgd] [-json] [-quiet]
package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/optim/privacy"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config holds the program's own settings, one flag each.
type config struct {
	Epochs     int     `flag:"epochs" help:"passes over the training data (each of round(N/batch) steps)"`
	Batch      int     `flag:"batch" help:"expected batch size qN of the Poisson sampling"`
	LR         float64 `flag:"lr" help:"SGD learning rate at the start (cosine decay to 0)"`
	Momentum   float64 `flag:"momentum" help:"SGD momentum"`
	Hidden     int     `flag:"hidden" help:"hidden units"`
	Clip       float64 `flag:"clip" help:"per-example gradient norm bound C"`
	Sigma      float64 `flag:"sigma" help:"noise multiplier σ (0: the smallest that meets -target-epsilon)"`
	TargetEps  float64 `flag:"target-epsilon" help:"privacy budget ε for the whole run, used when -sigma is 0"`
	Delta      float64 `flag:"delta" help:"δ of the (ε, δ) guarantee"`
	NonPrivate bool    `flag:"nonprivate" help:"also train the non-private baseline: the same run without noise (σ = 0)"`
	mnist.Subset
}

var defaults = config{Epochs: 5, Batch: 512, LR: 2, Momentum: 0.9, Hidden: 128, Clip: 1,
	TargetEps: 3.5, Delta: 1e-5, NonPrivate: true}

// result is printed with -json.
type result struct {
	TestAccuracy           float64   `json:"test_accuracy"`
	Epsilon                float64   `json:"epsilon"`
	Delta                  float64   `json:"delta"`
	Conversion             string    `json:"conversion"`
	BestOrder              float64   `json:"best_order"`
	NoiseMultiplier        float64   `json:"noise_multiplier"`
	Clip                   float64   `json:"clip"`
	Epochs                 int       `json:"epochs"`
	Steps                  int       `json:"steps"`
	SamplingRate           float64   `json:"sampling_rate"`
	SecondsPerEpoch        float64   `json:"seconds_per_epoch"`
	NonPrivateTestAccuracy float64   `json:"nonprivate_test_accuracy,omitempty"`
	NonPrivateSecPerEpoch  float64   `json:"nonprivate_seconds_per_epoch,omitempty"`
	TestAccuracyPerEpoch   []float64 `json:"test_accuracy_per_epoch"`
	EpsilonPerEpoch        []float64 `json:"epsilon_per_epoch"`
	NonPrivatePerEpoch     []float64 `json:"nonprivate_test_accuracy_per_epoch,omitempty"`
	TrainSize              int       `json:"train_size"`
	TestSize               int       `json:"test_size"`
	Plot                   string    `json:"plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "dpsgd",
		DataUsage: mnist.DataUsage},
		defaults, run)
}

// mlp is Linear(784→hidden), tanh, Linear(hidden→10). tanh rather than
// ReLU: bounded activations keep clipped gradients informative under DP
// (Papernot et al. 2021, "Tempered Sigmoid Activations for Deep Learning
// with Differential Privacy").
type mlp struct{ fc1, fc2 *nn.Linear }

func newMLP(rng *tensor.RNG, hidden int, dt tensor.DType) *mlp {
	return &mlp{nn.NewLinear(rng, 784, hidden, true, dt), nn.NewLinear(rng, hidden, 10, true, dt)}
}

// params lists the parameters in the order perExampleGrads returns their
// gradients.
func (m *mlp) params() []*tensor.Tensor {
	return []*tensor.Tensor{m.fc1.Weight.Value, m.fc1.Bias.Value, m.fc2.Weight.Value, m.fc2.Bias.Value}
}

func (m *mlp) forward(g *graph.Graph, x *tensor.Tensor) *graph.Node {
	return m.fc2.Forward(graph.Tanh(m.fc1.Forward(g.Const(x))))
}

func run(c config, env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	switch {
	case c.Epochs <= 0 || c.Batch <= 0 || c.Hidden <= 0:
		return res, cli.BadFlagf("-epochs, -batch and -hidden must be positive")
	case !(c.Clip > 0) || !(c.LR > 0) || !(c.Momentum >= 0 && c.Momentum < 1):
		return res, cli.BadFlagf("-clip and -lr must be positive and -momentum in [0, 1)")
	case c.Sigma < 0 || c.Sigma == 0 && !(c.TargetEps > 0):
		return res, cli.BadFlagf("-sigma must be >= 0, and -target-epsilon positive when -sigma is 0")
	case !(c.Delta > 0 && c.Delta < 1):
		return res, cli.BadFlagf("-delta %g must lie in (0, 1)", c.Delta)
	}
	x, y, xt, yt, err := mnist.LoadMNIST(env.Data, []int{784}, c.Subset)
	if err != nil {
		return res, err
	}
	x, xt = x.Contiguous(), xt.Contiguous()
	n := len(y)
	if c.Batch > n {
		return res, cli.BadFlagf("-batch %d exceeds the %d training digits", c.Batch, n)
	}
	q := float64(c.Batch) / float64(n)
	stepsPerEpoch := int(math.Round(float64(n) / float64(c.Batch)))
	res = result{Delta: c.Delta, Clip: c.Clip, Epochs: c.Epochs, Steps: c.Epochs * stepsPerEpoch,
		SamplingRate: q, TrainSize: n, TestSize: len(yt), Conversion: privacy.Balle2020.String()}
	res.NoiseMultiplier = c.Sigma
	if c.Sigma == 0 {
		if res.NoiseMultiplier, err = privacy.NoiseMultiplier(c.TargetEps, c.Delta, q, res.Steps, privacy.AccountantOptions{}); err != nil {
			return res, err
		}
	}
	env.Printf("dpsgd: %d training and %d test digits; Poisson batches q = %.4f (expected %d), %d steps; C = %g, σ = %.4f\n",
		n, len(yt), q, c.Batch, res.Steps, c.Clip, res.NoiseMultiplier)

	h, err := fit(c, env, x, y, xt, yt, q, stepsPerEpoch, res.NoiseMultiplier, true)
	if err != nil {
		return res, err
	}
	res.TestAccuracyPerEpoch, res.EpsilonPerEpoch, res.SecondsPerEpoch = h.acc, h.eps, h.seconds
	res.TestAccuracy, res.Epsilon, res.BestOrder = h.acc[len(h.acc)-1], h.eps[len(h.eps)-1], h.order
	panels := []plot.Panel{
		{Title: "dpsgd: test accuracy", XLabel: "epoch", YLabel: "accuracy",
			Curves: []plot.Curve{{Name: fmt.Sprintf("DP-SGD (σ = %.2f)", res.NoiseMultiplier), Y: h.acc}}},
		{Title: fmt.Sprintf("dpsgd: privacy spent (δ = %g)", c.Delta), XLabel: "epoch", YLabel: "ε",
			Curves: []plot.Curve{{Name: "ε", Y: h.eps}}},
	}
	if c.NonPrivate {
		np, err := fit(c, env, x, y, xt, yt, q, stepsPerEpoch, 0, false)
		if err != nil {
			return res, err
		}
		res.NonPrivatePerEpoch, res.NonPrivateSecPerEpoch = np.acc, np.seconds
		res.NonPrivateTestAccuracy = np.acc[len(np.acc)-1]
		panels[0].Curves = append(panels[0].Curves, plot.Curve{Name: "non-private", Y: np.acc})
		env.Printf("test accuracy %.2f %% at ε = %.2f (δ = %g); non-private %.2f %%\n",
			100*res.TestAccuracy, res.Epsilon, c.Delta, 100*res.NonPrivateTestAccuracy)
	} else {
		env.Printf("test accuracy %.2f %% at ε = %.2f (δ = %g)\n", 100*res.TestAccuracy, res.Epsilon, c.Delta)
	}
	res.Plot = env.Path("dpsgd.png")
	if err := plot.WritePNG(res.Plot, panels...); err != nil {
		return res, err
	}
	env.Printf("wrote %s\n", res.Plot)
	return res, nil
}

// history records one training run.
type history struct {
	acc, eps []float64
	order    float64 // the Rényi order of the final ε
	seconds  float64 // mean wall time of an epoch's steps
}

// fit trains a fresh model (seeded from -seed, so both runs start from the
// same weights and draw the same batches) for c.Epochs epochs of
// stepsPerEpoch Poisson batches at rate q through privacy.DPSGD with noise
// multiplier sigma, and tracks ε when private. The non-private baseline is
// the same run with sigma = 0: clipping kept, so that the gap between the
// two is what the noise costs (plain SGD at DP-SGD's learning rate
// diverges on unclipped gradients).
func fit(c config, env *cli.Env, x *tensor.Tensor, y []int, xt *tensor.Tensor, yt []int,
	q float64, stepsPerEpoch int, sigma float64, private bool) (h history, err error) {
	m := newMLP(tensor.NewRNG(env.Seed), c.Hidden, tensor.Float32)
	sgd := optim.NewSGD(m.params(), optim.SGDOptions{LR: c.LR, Momentum: c.Momentum})
	// Cosine decay to 0: late steps, mostly noise, then move the weights little.
	sched := optim.CosineAnnealingLR(c.LR, c.Epochs*stepsPerEpoch, 0)
	step := 0
	n := len(y)
	dp := privacy.NewDPSGD(sgd, privacy.DPSGDOptions{Clip: c.Clip, NoiseMultiplier: sigma,
		ExpectedBatch: q * float64(n), Seed: env.Seed + 1})
	acc := privacy.NewAccountant(privacy.AccountantOptions{})
	sampler := tensor.NewRNG(env.Seed + 2)
	name := "non-private"
	if private {
		name = "DP-SGD"
	}
	var total float64
	for epoch := 1; epoch <= c.Epochs; epoch++ {
		start := time.Now()
		for range stepsPerEpoch {
			sgd.SetLR(sched.LR(step))
			step++
			idx := privacy.PoissonBatch(sampler, n, q)
			grads := emptyGrads(m) // an empty batch still costs privacy and gets noise
			if len(idx) > 0 {
				xb, yb := tensor.IndexSelect(x, 0, idx), data.GatherLabels(nil, y, idx)
				grads = perExampleGrads(m, xb, yb)
			}
			if _, err := dp.Step(grads); err != nil {
				return h, fmt.Errorf("%s epoch %d: %w", name, epoch, err)
			}
		}
		total += time.Since(start).Seconds()
		pred, _ := train.Predict(xt, 500, m.forward)
		a, err := metrics.Accuracy(pred, yt)
		if err != nil {
			return h, err
		}
		h.acc = append(h.acc, a)
		if private {
			if err := acc.Compose(q, sigma, stepsPerEpoch); err != nil {
				return h, err
			}
			eps, order, err := acc.Epsilon(c.Delta)
			if err != nil {
				return h, err
			}
			h.eps, h.order = append(h.eps, eps), order
			env.Printf("%s epoch %d: test accuracy %.2f %%, ε = %.3f (%.1f s)\n", name, epoch, 100*a, eps, time.Since(start).Seconds())
		} else {
			env.Printf("%s epoch %d: test accuracy %.2f %% (%.1f s)\n", name, epoch, 100*a, time.Since(start).Seconds())
		}
	}
	h.seconds = total / float64(c.Epochs)
	return h, nil
}

// emptyGrads is the per-example gradients of a batch of no examples.
func emptyGrads(m *mlp) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, p := range m.params() {
		out = append(out, tensor.Zeros(p.DType(), append([]int{0}, p.Shape()...)...))
	}
	return out
}
