// Command anomaly runs the density-based anomaly detector of package
// anomaly on MNIST with one digit class held out as the anomaly: PCA and a
// Gaussian mixture are fitted on the other digits of the training split,
// the log-density threshold is chosen by F₁ on the first half of the test
// split (the validation half), and precision, recall and F₁ are reported
// on the second half. A PNG shows the most and the least anomalous test
// digits.
//
//	go run ./examples/anomaly [-digit 0] [-components 30] [-k 10] [-train-n 0] [-test-n 0] [-seed 1] [-data DIR] [-out out/anomaly] [-json] [-quiet] [-demo]
package main

import (
	"errors"
	"slices"
	"sort"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/learn/anomaly"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// result is what -json prints.
type result struct {
	Digit        int     `json:"anomaly_digit"`
	TrainRows    int     `json:"train_rows"`
	ValidationF1 float64 `json:"validation_f1"`
	Threshold    float64 `json:"threshold"`
	Precision    float64 `json:"precision"`
	Recall       float64 `json:"recall"`
	F1           float64 `json:"f1"`
	Plot         string  `json:"plot,omitempty"`
}

// config holds the settings; the tagged fields are its flags. -seed
// draws the mixture's k-means start.
type config struct {
	Digit      int `flag:"digit" help:"the digit class held out as the anomaly"`
	Components int `flag:"components" help:"principal components kept"`
	K          int `flag:"k" help:"mixture components (full covariances)"`
	mnist.Subset
	Demo bool `flag:"demo" help:"quick run: 2,000 training digits, 20 components, K = 5"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "anomaly", DataUsage: mnist.DataUsage}
	return cli.Configured(p, config{Components: 30, K: 10}, func(c config, env *cli.Env) (result, error) {
		if c.Demo {
			c = cli.Preset(env, c, demoConfig)
		}
		return run(c, env)
	})
}

// demoConfig shrinks c to a run of seconds.
func demoConfig(c config) config {
	c.TrainN, c.Components, c.K = 2000, 20, 5
	return c
}

// rows returns the rows of x at idx as a float64 matrix.
func rows(x *tensor.Tensor, idx []int) *tensor.Tensor {
	parts := make([]*tensor.Tensor, len(idx))
	for j, i := range idx {
		parts[j] = tensor.Slice(x, 0, i, i+1, 1)
	}
	return tensor.Concat(0, parts...).Cast(tensor.Float64).Contiguous()
}

func run(c config, env *cli.Env) (res result, err error) {
	say := func(format string, a ...any) { env.Printf(format+"\n", a...) }
	if c.Digit < 0 || c.Digit > 9 {
		return res, cli.BadFlagf("-digit %d: want 0…9", c.Digit)
	}
	res.Digit = c.Digit
	x, y, xt, yt, err := mnist.LoadMNIST(env.Data, []int{784}, c.Subset)
	if err != nil {
		return res, err
	}
	var normal []int
	for i, l := range y {
		if l != c.Digit {
			normal = append(normal, i)
		}
	}
	res.TrainRows = len(normal)
	say("fitting PCA (%d components) and a %d-component Gaussian mixture to %d training digits other than %d…",
		c.Components, c.K, len(normal), c.Digit)
	d, err := anomaly.FitDetector(env.Context(), rows(x, normal), anomaly.Options{Components: c.Components, K: c.K, RegCovar: 1e-4, Seed: env.Seed})
	if errors.Is(err, tensor.ErrNotConverged) {
		say("%v (keeping the last EM iterate)", err)
	} else if err != nil {
		return res, err
	}
	say("EM: %d iterations, mean log-likelihood %.3f in the principal subspace", d.Mixture.Iterations, d.Mixture.LogLikelihood)

	half := len(yt) / 2
	split := func(lo, hi int) (*tensor.Tensor, []int, []int) {
		idx := make([]int, 0, hi-lo)
		truth := make([]int, hi-lo) // 1: the anomalous digit
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
			if yt[i] == c.Digit {
				truth[i-lo] = 1
			}
		}
		return rows(xt, idx), truth, idx
	}
	xv, tv, _ := split(0, half)
	if res.ValidationF1, err = d.Calibrate(xv, tv); err != nil {
		return res, err
	}
	res.Threshold = d.Threshold
	say("threshold on the log-density %.2f, chosen by F1 = %.3f on %d validation digits", d.Threshold, res.ValidationF1, half)
	xs, ts, idx := split(half, len(yt))
	prf, _, _, err := metrics.PrecisionRecallF1(d.Predict(xs), ts, 2)
	if err != nil {
		return res, err
	}
	res.Precision, res.Recall, res.F1 = prf[1].Precision, prf[1].Recall, prf[1].F1
	say("test (%d digits, %d of them %d): precision %.3f, recall %.3f, F1 %.3f",
		len(ts), count(ts), c.Digit, res.Precision, res.Recall, res.F1)
	scores := d.LogProb(xs).Float64s()
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return scores[order[a]] < scores[order[b]] })
	res.Plot = env.Path("anomaly_extremes.png")
	if err := extremes(res.Plot, xt, idx, order); err != nil {
		return res, err
	}
	say("picture (top: the 12 most anomalous test digits; bottom: the 12 least): %s", res.Plot)
	return res, nil
}

func count(labels []int) int {
	n := 0
	for _, v := range labels {
		n += v
	}
	return n
}

// extremes writes two rows of 28×28 digits: the 12 lowest-density test
// digits on top, the 12 highest below (ink dark).
func extremes(path string, xt *tensor.Tensor, idx, order []int) error {
	const per = 12
	picks := make([]int, 0, 2*per)
	for _, o := range append(slices.Clone(order[:per]), order[len(order)-per:]...) {
		picks = append(picks, idx[o])
	}
	// Negated so that ink (1) is black on white.
	digits := tensor.Neg(rows(xt, picks))
	return plot.ImageGrid(path, tensor.Reshape(digits, 2*per, 28, 28), per, 2, -1, 0)
}
