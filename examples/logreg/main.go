// Command logreg fits logistic regression to the scikit-learn breast-cancer
// (binary) or digits (10 classes) data shipped with Gradus, by maximum
// likelihood, MAP, or Bayesian inference with the Laplace approximation, and
// draws a reliability (calibration) diagram of the predictions.
//
//	go run ./examples/logreg [-data breast_cancer|digits|file.csv] [-l2 1]
//	    [-solver lbfgs|newton|irls] [-link logit|probit] [-bayes [-fit-alpha]]
//	    [-out ./out/logreg] [-json] [-quiet]
//
// Features are standardised by their mean and population standard deviation
// over the whole set; the figures are on the training set. With -bayes the
// prior is θ ~ N(0, α⁻¹I) with α = -l2 (or the evidence maximiser with
// -fit-alpha), and the reported log loss and accuracy are those of the
// Bayesian predictive (probit approximation).
package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	L2       float64 `flag:"l2" help:"λ of the penalty (λ/2)‖w‖² (0: maximum likelihood); with -bayes the prior precision α"`
	Solver   string  `flag:"solver" help:"lbfgs, newton or irls"`
	Link     string  `flag:"link" help:"logit or probit (binary data only)"`
	Bayes    bool    `flag:"bayes" help:"Bayesian logistic regression by the Laplace approximation"`
	FitAlpha bool    `flag:"fit-alpha" help:"with -bayes: choose α by maximising the evidence"`
	Holdout  float64 `flag:"holdout" help:"fraction of the samples held out for test figures and the reliability diagram"`
}

// result is what -json prints. Coef and Intercept are a list and a number
// for binary models, a list of rows and a list for multiclass ones.
type result struct {
	Coef         any      `json:"coef"`
	Intercept    any      `json:"intercept"`
	MeanLogLoss  float64  `json:"mean_log_loss"`
	Accuracy     float64  `json:"accuracy"`
	LogEvidence  *float64 `json:"log_evidence,omitempty"`
	Alpha        *float64 `json:"alpha,omitempty"`
	MAPLogLoss   *float64 `json:"map_mean_log_loss,omitempty"`
	MAPAccuracy  *float64 `json:"map_accuracy,omitempty"`
	MCLogLoss    *float64 `json:"mc_mean_log_loss,omitempty"`
	Iterations   int      `json:"iterations"`
	Calibration  string   `json:"calibration_png,omitempty"`
	NumSamples   int      `json:"n"`
	NumFeatures  int      `json:"d"`
	NumClasses   int      `json:"classes"`
	SolverReport string   `json:"solver"`
	// Test holds the held-out figures with -holdout.
	Test map[string]float64 `json:"test,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "logreg", Data: "breast_cancer", DataUsage: "breast_cancer, digits, or the path of a CSV with a \"target\" column"}
	return cli.Configured(p, config{L2: 1, Solver: logreg.LBFGS, Link: "logit"}, run)
}

// load reads the data set, standardises its features and returns them
// with integer labels.
func load(name string) (*tensor.Tensor, []int, error) {
	path := name
	switch name {
	case "breast_cancer", "digits", "iris":
		path = "sklearn/" + name + ".csv"
	}
	tab, err := data.LoadCSV(path)
	if err != nil {
		return nil, nil, err
	}
	rows, target, err := tab.Split("target")
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: no rows", path)
	}
	n, d := len(rows), len(rows[0])
	flat := make([]float64, 0, n*d)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	x := tensor.FromFloat64s(flat, n, d)
	data.Standardise(x)
	y := make([]int, n)
	for i, v := range target {
		if v != math.Trunc(v) || v < 0 {
			return nil, nil, fmt.Errorf("%s: target %v in row %d is not a class label (0, 1, 2, …)", path, v, i+1)
		}
		y[i] = int(v)
	}
	return x, y, nil
}

// run fits the model to -data and writes the calibration diagram; -seed
// draws the Monte Carlo predictive and the -holdout split.
func run(o config, env *cli.Env) (res result, err error) {
	x, y, err := load(env.Data)
	if err != nil {
		return res, err
	}
	classes := 0
	for _, v := range y {
		classes = max(classes, v+1)
	}
	link := logreg.Logit
	switch {
	case classes > 2:
		if o.Link == "probit" {
			return res, fmt.Errorf("-link probit needs binary labels; %s has %d classes", env.Data, classes)
		}
		link = logreg.Softmax
	case o.Link == "probit":
		link = logreg.Probit
	case o.Link != "logit":
		return res, cli.BadFlagf("unknown -link %q (want logit or probit)", o.Link)
	}
	classes = max(classes, 2)
	n, d := x.Shape()[0], x.Shape()[1]
	res.NumSamples, res.NumFeatures, res.NumClasses = n, d, classes
	env.Printf("%s: %d samples, %d features, %d classes (%s link, %s solver)\n", env.Data, n, d, classes, link, o.Solver)

	// With -holdout, fit on a random part and keep the rest for the
	// held-out figures and the reliability diagram.
	xTest, yTest := (*tensor.Tensor)(nil), []int(nil)
	if o.Holdout > 0 {
		trainIdx, testIdx := data.TrainTestSplit(n, o.Holdout, env.Seed)
		xTest, yTest = tensor.IndexSelect(x, 0, testIdx), gather(y, testIdx)
		x, y = tensor.IndexSelect(x, 0, trainIdx), gather(y, trainIdx)
		env.Printf("held out %d samples; fitting on %d\n", len(testIdx), len(trainIdx))
	}
	var (
		m    *logreg.Regression
		post *logreg.Laplace
	)
	if o.Bayes {
		alpha := o.L2
		if o.FitAlpha {
			alpha = 0
		} else if alpha <= 0 {
			return res, fmt.Errorf("-bayes needs a prior precision -l2 > 0 (or -fit-alpha)")
		}
		post, err = logreg.FitLaplace(env.Context(), x, y, logreg.LaplaceOptions{Alpha: alpha, Link: link, Classes: classes, Solver: o.Solver})
		if err != nil {
			return res, err
		}
		m = post.MAP
		ev, a := post.LogEvidence, post.Alpha
		res.LogEvidence, res.Alpha = &ev, &a
		env.Printf("Laplace: α = %.4g, log evidence = %.4f\n", a, ev)
	} else {
		m, err = logreg.FitRegression(env.Context(), x, y, logreg.RegressionOptions{L2: o.L2, Link: link, Classes: classes, Solver: o.Solver})
		if err != nil {
			if errors.Is(err, logreg.ErrSeparable) || errors.Is(err, tensor.ErrNotConverged) {
				return res, fmt.Errorf("%w\n(the maximum-likelihood fit of standardised %s does not exist or did not converge; try -l2 1)", err, env.Data)
			}
			return res, err
		}
	}
	// predict returns the plug-in, probit-approximation and Monte Carlo
	// predictive probabilities (the last two nil without -bayes).
	predict := func(x *tensor.Tensor) (mapP, bayesP, mcP *tensor.Tensor) {
		mapP = m.PredictProba(x)
		if post != nil {
			bayesP = post.PredictProba(x)
			mcP = post.PredictMC(x, 200, env.Seed)
		}
		return mapP, bayesP, mcP
	}
	// score returns the mean log loss and the accuracy of probabilities p
	// (n, classes) against labels (the accuracy only if acc is not nil).
	var scoreErr error
	score := func(p *tensor.Tensor, labels []int, acc *float64) float64 {
		ll, err := metrics.LogLoss(p, labels)
		scoreErr = errors.Join(scoreErr, err)
		if acc != nil {
			a, err := metrics.Accuracy(tensor.ArgMax(p, 1), labels)
			scoreErr = errors.Join(scoreErr, err)
			*acc = a
		}
		return ll
	}
	res.Iterations = m.Iterations
	res.SolverReport = m.Reason
	if classes == 2 {
		res.Coef, res.Intercept = m.Coef[0], m.Intercept[0]
	} else {
		res.Coef, res.Intercept = m.Coef, m.Intercept
	}
	mapP, bayesP, mcP := predict(x)
	res.MeanLogLoss = score(mapP, y, &res.Accuracy)
	env.Printf("training set, MAP/ML plug-in: mean log loss %.4f, accuracy %.4f (%d iterations, %s)\n",
		res.MeanLogLoss, res.Accuracy, m.Iterations, m.Reason)
	if o.Bayes {
		ml, ma, mc := res.MeanLogLoss, res.Accuracy, score(mcP, y, nil)
		res.MAPLogLoss, res.MAPAccuracy, res.MCLogLoss = &ml, &ma, &mc
		res.MeanLogLoss = score(bayesP, y, &res.Accuracy)
		env.Printf("training set, Bayesian predictive (probit approximation): mean log loss %.4f, accuracy %.4f\n", res.MeanLogLoss, res.Accuracy)
		env.Printf("training set, Bayesian predictive (Monte Carlo, 200 draws): mean log loss %.4f\n", mc)
	}
	where := "training set"
	if xTest != nil {
		where = "held-out set"
		mapP, bayesP, mcP = predict(xTest)
		y = yTest
		var acc float64
		res.Test = map[string]float64{"map_mean_log_loss": score(mapP, y, &acc)}
		res.Test["map_accuracy"] = acc
		env.Printf("held-out set, MAP/ML plug-in: mean log loss %.4f, accuracy %.4f\n", res.Test["map_mean_log_loss"], res.Test["map_accuracy"])
		if o.Bayes {
			res.Test["bayes_mean_log_loss"] = score(bayesP, y, &acc)
			res.Test["bayes_accuracy"] = acc
			res.Test["mc_mean_log_loss"] = score(mcP, y, nil)
			env.Printf("held-out set, Bayesian predictive (probit approximation): mean log loss %.4f, accuracy %.4f; Monte Carlo: %.4f\n",
				res.Test["bayes_mean_log_loss"], res.Test["bayes_accuracy"], res.Test["mc_mean_log_loss"])
		}
	}

	if scoreErr != nil {
		return res, scoreErr
	}
	base := strings.TrimSuffix(filepath.Base(env.Data), filepath.Ext(env.Data))
	path := env.Path("calibration_" + base + ".png")
	series := []calSeries{{"MAP plug-in", mapP}}
	if o.Bayes {
		series = append(series, calSeries{"Bayes (probit approx.)", bayesP}, calSeries{"Bayes (Monte Carlo)", mcP})
	}
	if err := writeCalibration(path, env.Data+", "+where, series, y); err != nil {
		return res, err
	}
	res.Calibration = path
	env.Printf("reliability diagram: %s\n", path)
	return res, nil
}

// gather returns y[idx[k]] for each k.
func gather(y, idx []int) []int {
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = y[i]
	}
	return out
}

// calSeries is one set of predicted probabilities for the diagram.
type calSeries struct {
	name string
	p    *tensor.Tensor // (n, classes)
}

// reliability bins predictions by confidence into bins equal-width bins
// and returns, for each non-empty bin, the mean confidence, the observed
// frequency and the count. For two classes the confidence is P(y = 1) and
// the frequency that of y = 1; for more, the confidence is the largest
// class probability and the frequency the accuracy.
func reliability(p *tensor.Tensor, y []int, bins int) (conf, freq []float64, count []int) {
	sumC := make([]float64, bins)
	sumF := make([]float64, bins)
	cnt := make([]int, bins)
	classes, pv, best := p.Shape()[1], p.Values(), tensor.ArgMax(p, 1)
	for i := range y {
		row := pv[i*classes : (i+1)*classes]
		var c, f float64
		if len(row) == 2 {
			c = row[1]
			if y[i] == 1 {
				f = 1
			}
		} else {
			k := best[i]
			c = row[k]
			if k == y[i] {
				f = 1
			}
		}
		b := min(int(c*float64(bins)), bins-1)
		sumC[b] += c
		sumF[b] += f
		cnt[b]++
	}
	for b := range bins {
		if cnt[b] > 0 {
			conf = append(conf, sumC[b]/float64(cnt[b]))
			freq = append(freq, sumF[b]/float64(cnt[b]))
			count = append(count, cnt[b])
		}
	}
	return conf, freq, count
}

// writeCalibration draws the reliability diagram of each series against
// the diagonal of perfect calibration.
func writeCalibration(path, title string, series []calSeries, y []int) error {
	pn := plot.Panel{Title: "Reliability diagram: " + title, XLabel: "predicted probability", YLabel: "observed frequency",
		Curves: []plot.Curve{{Name: "perfect calibration", X: []float64{0, 1}, Y: []float64{0, 1}, Style: plot.Line}}}
	if series[0].p.Shape()[1] > 2 {
		pn.XLabel, pn.YLabel = "confidence (largest class probability)", "accuracy"
	}
	for _, s := range series {
		conf, freq, _ := reliability(s.p, y, 10)
		pn.Curves = append(pn.Curves, plot.Curve{Name: s.name, X: conf, Y: freq})
	}
	return plot.WritePNG(path, pn)
}
