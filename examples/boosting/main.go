// Command boosting trains gradient-boosted trees (ensemble.FitBooster, Newton
// boosting whose gradients and Hessians come from autodiff) on two sets
// shipped with Gradus and compares them with bagged trees / a random
// forest on a held-out quarter:
//
//   - diabetes (regression, squared error): test RMSE and R² against bagged
//     regression trees;
//   - breast cancer (classification, the logistic loss of package losses):
//     test accuracy and ROC AUC against a random forest.
//
// It draws the boosting training loss per round for both (loss.png in -out).
//
//	go run ./examples/boosting [-rounds 200] [-lr 0.05] [-depth 3] [-seed 1] [-out out/boosting] [-json] [-quiet]
package main

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/ensemble"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

type config struct {
	Rounds int     `flag:"rounds" help:"boosting rounds"`
	Depth  int     `flag:"depth" help:"depth of the boosted trees"`
	LR     float64 `flag:"lr" help:"learning rate (shrinkage)"`
}

type result struct {
	DiabetesBoostRMSE float64 `json:"diabetes_boost_rmse"`
	DiabetesBoostR2   float64 `json:"diabetes_boost_r2"`
	DiabetesBagRMSE   float64 `json:"diabetes_bagging_rmse"`
	DiabetesBagR2     float64 `json:"diabetes_bagging_r2"`
	CancerBoostAcc    float64 `json:"cancer_boost_accuracy"`
	CancerBoostAUC    float64 `json:"cancer_boost_auc"`
	CancerForestAcc   float64 `json:"cancer_forest_accuracy"`
	Plot              string  `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "boosting"}, config{Rounds: 200, Depth: 3, LR: 0.05}, run)
}

// load reads the embedded scikit-learn set name ("diabetes"): the
// features, the integer target column, and the same targets as floats,
// which the trees regress on.
func load(name string) (x *tensor.Tensor, labels []int, y []float64, err error) {
	x, labels, err = data.Classes("sklearn/"+name+".csv", "target")
	y = make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l)
	}
	return x, labels, y, err
}

// split returns the rows of x and their targets for the index sets.
func split(x *tensor.Tensor, y []float64, tr, te []int) (xtr, xte *tensor.Tensor, ytr, yte []float64) {
	pick := func(idx []int) []float64 {
		out := make([]float64, len(idx))
		for i, k := range idx {
			out[i] = y[k]
		}
		return out
	}
	return tensor.IndexSelect(x, 0, tr), tensor.IndexSelect(x, 0, te), pick(tr), pick(te)
}

func run(cfg config, env *cli.Env) (res result, err error) {
	ctx := env.Context()
	opts := ensemble.BoosterOptions{Loss: losses.MSE, Rounds: cfg.Rounds, LearningRate: cfg.LR, MaxDepth: cfg.Depth}
	vec := func(v []float64) *tensor.Tensor { return tensor.FromFloat64s(v, len(v)) }

	// Diabetes: regression.
	x, _, y, err := load("diabetes")
	if err != nil {
		return res, err
	}
	tr, te := data.TrainTestSplit(len(y), 0.25, env.Seed)
	xtr, xte, ytr, yte := split(x, y, tr, te)
	boost, err := ensemble.FitBooster(ctx, xtr, vec(ytr), opts)
	if err != nil {
		return res, fmt.Errorf("diabetes: %w", err)
	}
	bag, err := ensemble.FitBagging(ctx, xtr, vec(ytr), ensemble.BaggingOptions{Trees: 100, Seed: env.Seed})
	if err != nil {
		return res, fmt.Errorf("diabetes: %w", err)
	}
	score := func(pred []float64) (float64, float64, error) {
		mse, err := metrics.MSE(pred, yte)
		if err != nil {
			return 0, 0, err
		}
		r2, err := metrics.R2(pred, yte)
		return math.Sqrt(mse), r2, err
	}
	if res.DiabetesBoostRMSE, res.DiabetesBoostR2, err = score(boost.Predict(xte).Float64s()); err != nil {
		return res, err
	}
	if res.DiabetesBagRMSE, res.DiabetesBagR2, err = score(bag.Predict(xte).Float64s()); err != nil {
		return res, err
	}
	env.Printf("diabetes (%d train, %d test): boosted trees RMSE %.1f, R² %.3f; bagged trees RMSE %.1f, R² %.3f\n",
		len(tr), len(te), res.DiabetesBoostRMSE, res.DiabetesBoostR2, res.DiabetesBagRMSE, res.DiabetesBagR2)
	diabetesLoss := boost.Trace

	// Breast cancer: classification.
	xc, cls, yc, err := load("breast_cancer")
	if err != nil {
		return res, err
	}
	tr, te = data.TrainTestSplit(len(yc), 0.25, env.Seed)
	xtr, xte, ytr, _ = split(xc, yc, tr, te)
	opts.Loss = losses.BCEWithLogits
	cb, err := ensemble.FitBooster(ctx, xtr, vec(ytr), opts)
	if err != nil {
		return res, fmt.Errorf("breast cancer: %w", err)
	}
	logits := cb.Predict(xte).Float64s()
	pred, truth := make([]int, len(te)), make([]int, len(te))
	for i, k := range te {
		truth[i] = cls[k]
		if logits[i] > 0 {
			pred[i] = 1
		}
	}
	if res.CancerBoostAcc, err = metrics.Accuracy(pred, truth); err != nil {
		return res, err
	}
	if res.CancerBoostAUC, err = metrics.ROCAUC(logits, truth); err != nil {
		return res, err
	}
	trCls := make([]int, len(tr))
	for i, k := range tr {
		trCls[i] = cls[k]
	}
	forest, err := ensemble.FitForest(ctx, xtr, trCls, ensemble.ForestOptions{Trees: 100, Classes: 2, Seed: env.Seed})
	if err != nil {
		return res, fmt.Errorf("breast cancer: %w", err)
	}
	if res.CancerForestAcc, err = metrics.Accuracy(forest.Predict(xte), truth); err != nil {
		return res, err
	}
	env.Printf("breast cancer (%d train, %d test): boosted trees accuracy %.3f, AUC %.3f; random forest accuracy %.3f\n",
		len(tr), len(te), res.CancerBoostAcc, res.CancerBoostAUC, res.CancerForestAcc)
	res.Plot, err = env.WritePNG("loss.png",
		plot.Panel{Title: "diabetes: boosting training loss", XLabel: "round", YLabel: "sum of squared errors",
			Curves: []plot.Curve{{Name: "train", Y: diabetesLoss, Style: plot.Line}}},
		plot.Panel{Title: "breast cancer: boosting training loss", XLabel: "round", YLabel: "logistic loss (sum)",
			Curves: []plot.Curve{{Name: "train", Y: cb.Trace, Style: plot.Line}}})
	return res, err
}
