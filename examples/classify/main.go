// Command classify compares the classical classifiers of learn/ on iris
// (150 flowers, 4 measurements, 3 species) or on the 8×8 digits (1,797
// images, 64 pixel counts 0-16, 10 classes): after a seeded train/test
// split and a StandardScaler fitted on the training rows, linear and
// quadratic discriminant analysis, Gaussian naive Bayes and k-nearest
// neighbours (and, on the digits, multinomial naive Bayes on the raw
// counts) are scored by test accuracy and log loss. It draws the training
// and test rows on the first two Fisher directions of the LDA (lda.png)
// and the confusion matrix of the most accurate model on the test rows
// (confusion.png).
//
//	go run ./examples/classify [-data iris|digits] [-test 0.3] [-k 5] [-reg 0] [-seed 1] [-out out/classify] [-json] [-quiet]
//
// -reg is QDA's covariance regularisation r (each class covariance becomes
// (1 − r)·Σ_c + r·I); the digits need some (their standardised pixels are
// collinear within a class), so -reg 0 means 0 on iris and 0.5 on the
// digits. -json prints {"models": [{"name", "accuracy", "log_loss"}, ...],
// "best", "lda_explained_variance", ...}.
package main

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/discriminant"
	"github.com/gradus-ml/gradus/learn/naivebayes"
	"github.com/gradus-ml/gradus/learn/neighbors"
	"github.com/gradus-ml/gradus/learn/preprocess"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	Test float64 `flag:"test" help:"share of the rows held out for testing"`
	K    int     `flag:"k" help:"neighbours of the k-nearest-neighbour classifier"`
	Reg  float64 `flag:"reg" help:"QDA covariance regularisation r ∈ [0, 1] (0: 0 on iris, 0.5 on the digits)"`
}

// score is one model's test figures.
type score struct {
	Name     string  `json:"name"`
	Accuracy float64 `json:"accuracy"`
	LogLoss  float64 `json:"log_loss"`
}

// result is what -json prints.
type result struct {
	Data      string    `json:"data"`
	Train     int       `json:"n_train"`
	Test      int       `json:"n_test"`
	Features  int       `json:"n_features"`
	Classes   int       `json:"n_classes"`
	Models    []score   `json:"models"`
	Best      string    `json:"best"`
	QDAReg    float64   `json:"qda_reg"`
	Explained []float64 `json:"lda_explained_variance"`
	LDAPlot   string    `json:"lda_plot"`
	Confusion [][]int   `json:"confusion"` // the best model's, counts[true][predicted]
	ConfPlot  string    `json:"confusion_plot"`
}

// classifier is what every fitted model offers.
type classifier interface {
	Predict(x *tensor.Tensor) []int
	PredictProba(x *tensor.Tensor) *tensor.Tensor
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "classify", Data: "iris", DataUsage: "iris or digits"}, config{Test: 0.3, K: 5}, run)
}

// load returns the features, the labels and the class names.
func load(name string) (*tensor.Tensor, []int, []string, error) {
	switch name {
	case "iris":
		x, labels, err := data.Classes("sklearn/iris.csv", "target")
		return x, labels, []string{"setosa", "versicolor", "virginica"}, err
	case "digits":
		x, labels, err := data.Classes("sklearn/digits.csv", "target")
		return x, labels, plot.Names(10), err
	}
	return nil, nil, nil, cli.BadFlagf("unknown -data %q (want iris or digits)", name)
}

func run(c config, env *cli.Env) (res result, err error) {
	switch {
	case !(c.Test > 0 && c.Test < 1):
		return res, cli.BadFlagf("-test must be in (0, 1), got %g", c.Test)
	case c.K < 1:
		return res, cli.BadFlagf("-k must be at least 1, got %d", c.K)
	case !(c.Reg >= 0 && c.Reg <= 1):
		return res, cli.BadFlagf("-reg must be in [0, 1], got %g", c.Reg)
	}
	x, labels, names, err := load(env.Data)
	if err != nil {
		return res, err
	}
	n := x.Shape()[0]
	res.Data, res.Features, res.Classes = env.Data, x.Shape()[1], len(names)
	train, test := data.TrainTestSplit(n, c.Test, env.Seed)
	res.Train, res.Test = len(train), len(test)
	xTr, xTe := tensor.IndexSelect(x, 0, train), tensor.IndexSelect(x, 0, test)
	yTr, yTe := data.GatherLabels(nil, labels, train), data.GatherLabels(nil, labels, test)
	env.Printf("%s: %d rows of %d features, %d classes; %d train, %d test\n", env.Data, n, res.Features, res.Classes, len(train), len(test))

	scaler, err := preprocess.FitStandardScaler(xTr, preprocess.StandardScalerOptions{})
	if err != nil {
		return res, err
	}
	zTr, zTe := scaler.Transform(xTr), scaler.Transform(xTe)

	res.QDAReg = c.Reg
	if res.QDAReg == 0 && env.Data == "digits" {
		res.QDAReg = 0.5
	}
	lda, err := discriminant.FitLinear(zTr, yTr, discriminant.LinearOptions{})
	if err != nil {
		return res, err
	}
	fits := []struct {
		name   string
		counts bool // fitted on the raw counts, not the standardised features
		fit    func(x *tensor.Tensor) (classifier, error)
	}{
		{"LDA", false, func(*tensor.Tensor) (classifier, error) { return lda, nil }},
		{"QDA", false, func(x *tensor.Tensor) (classifier, error) {
			return discriminant.FitQuadratic(x, yTr, discriminant.QuadraticOptions{RegParam: res.QDAReg})
		}},
		{"Gaussian naive Bayes", false, func(x *tensor.Tensor) (classifier, error) {
			return naivebayes.FitGaussian(x, yTr, naivebayes.GaussianOptions{})
		}},
		{fmt.Sprintf("%d-nearest neighbours", c.K), false, func(x *tensor.Tensor) (classifier, error) {
			return neighbors.FitClassifier(x, yTr, neighbors.ClassifierOptions{K: c.K})
		}},
	}
	if env.Data == "digits" {
		fits = append(fits, struct {
			name   string
			counts bool
			fit    func(x *tensor.Tensor) (classifier, error)
		}{"multinomial naive Bayes", true, func(x *tensor.Tensor) (classifier, error) {
			return naivebayes.FitMultinomial(x, yTr, naivebayes.MultinomialOptions{})
		}})
	}
	var bestPred []int
	bestAcc := math.Inf(-1)
	for _, f := range fits {
		fitX, testX := zTr, zTe
		if f.counts {
			fitX, testX = xTr, xTe
		}
		m, err := f.fit(fitX)
		if err != nil {
			return res, fmt.Errorf("%s: %w", f.name, err)
		}
		pred := m.Predict(testX)
		s := score{Name: f.name}
		if s.Accuracy, err = metrics.Accuracy(pred, yTe); err != nil {
			return res, err
		}
		if s.LogLoss, err = metrics.LogLoss(m.PredictProba(testX), yTe); err != nil {
			return res, err
		}
		res.Models = append(res.Models, s)
		env.Printf("%-24s test accuracy %.2f%%, log loss %.4f\n", f.name, 100*s.Accuracy, s.LogLoss)
		if s.Accuracy > bestAcc {
			bestAcc, bestPred, res.Best = s.Accuracy, pred, s.Name
		}
	}

	res.Explained = lda.ExplainedVarianceRatio
	if err := drawLDA(env, &res, lda, zTr, zTe, yTr, yTe, names); err != nil {
		return res, err
	}
	if res.Confusion, err = metrics.Confusion(bestPred, yTe, len(names)); err != nil {
		return res, err
	}
	res.ConfPlot = env.Path("confusion.png")
	if err := plot.Confusion(res.ConfPlot, fmt.Sprintf("%s on %s: %s (test accuracy %.1f%%)", res.Best, env.Data, "confusion", 100*bestAcc),
		res.Confusion, names); err != nil {
		return res, err
	}
	env.Printf("best: %s; LDA projection: %s; confusion matrix: %s\n", res.Best, res.LDAPlot, res.ConfPlot)
	return res, nil
}

// drawLDA scatters the training and test rows on the first two Fisher
// directions, coloured by class, one panel each.
func drawLDA(env *cli.Env, res *result, lda *discriminant.Linear, zTr, zTe *tensor.Tensor, yTr, yTe []int, names []string) error {
	var panels []plot.Panel
	for _, part := range []struct {
		name string
		z    *tensor.Tensor
		y    []int
	}{{"training", zTr, yTr}, {"test", zTe, yTe}} {
		proj := tensor.Slice(lda.Transform(part.z), 1, 0, 2, 1).Contiguous()
		panels = append(panels, plot.Panel{Title: fmt.Sprintf("%s: Fisher LDA projection (%s rows)", env.Data, part.name),
			XLabel: "discriminant 1", YLabel: "discriminant 2", Curves: plot.ByLabel(proj, part.y, names)})
	}
	res.LDAPlot = env.Path("lda.png")
	return plot.WritePNG(res.LDAPlot, panels...)
}
