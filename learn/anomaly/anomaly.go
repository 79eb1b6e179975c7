// Package anomaly detects anomalies by density (the pipeline of the ETH
// AML summary §1.1): project the normal training rows onto their leading
// principal components (package pca), fit a Gaussian mixture there by EM
// (package mixture), and flag a row whose log-density falls below a
// threshold chosen to maximise F₁ on a labelled validation split.
//
//	d, err := anomaly.Fit(normal, anomaly.Options{Components: 20, K: 5})
//	f1, err := d.Calibrate(xval, isAnomaly)   // sets d.Threshold
//	flags, err := d.Predict(xtest)
package anomaly

import (
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// Options configures Fit.
type Options struct {
	Components int                    // principal components kept (required)
	K          int                    // mixture components (required)
	Covariance mixture.CovarianceType // of the mixture (default Full)
	RegCovar   float64                // covariance floor (default 1e-6)
	Restarts   int                    // EM starts (default 1)
	Seed       uint64
}

// Detector is a fitted density model of normal rows and its threshold.
type Detector struct {
	PCA       *pca.PCA
	Mixture   *mixture.GaussianMixture
	Threshold float64 // a row is anomalous when its log-density is below (−Inf until Calibrate)
}

// Fit models the rows of normal (n, d), assumed free of anomalies: PCA to
// opts.Components dimensions, then a K-component Gaussian mixture by EM in
// that space. It returns an error naming the step that failed.
func Fit(normal *tensor.Tensor, opts Options) (*Detector, error) {
	if opts.Components < 1 {
		return nil, fmt.Errorf("anomaly.Fit: Components = %d, want ≥ 1", opts.Components)
	}
	p, err := pca.FitPCA(normal, pca.PCAOptions{Components: opts.Components})
	if err != nil {
		return nil, fmt.Errorf("anomaly.Fit: %w", err)
	}
	m, err := mixture.FitGaussianMixture(p.Transform(normal), mixture.Options{K: opts.K, Covariance: opts.Covariance,
		RegCovar: opts.RegCovar, Restarts: opts.Restarts, Seed: opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("anomaly.Fit: %w", err)
	}
	return &Detector{PCA: p, Mixture: m, Threshold: math.Inf(-1)}, nil
}

// Score returns the log-density of each row of x (m, d) under the mixture
// in the principal subspace: lower is more anomalous.
func (d *Detector) Score(x *tensor.Tensor) ([]float64, error) {
	if x == nil || x.Dim() != 2 || x.Shape()[1] != len(d.PCA.Mean) {
		return nil, fmt.Errorf("anomaly.Score: want an (m, %d) matrix, got %v", len(d.PCA.Mean), x)
	}
	return d.Mixture.LogProb(d.PCA.Transform(x))
}

// Calibrate sets Threshold to the value maximising F₁ of "score below
// threshold" against isAnomaly on the validation rows x, and returns that
// F₁. The threshold lies halfway between the last flagged score and the
// next. It needs at least one anomalous row.
func (d *Detector) Calibrate(x *tensor.Tensor, isAnomaly []bool) (float64, error) {
	s, err := d.Score(x)
	if err != nil {
		return 0, err
	}
	t, f1, err := BestThreshold(s, isAnomaly)
	if err != nil {
		return 0, err
	}
	d.Threshold = t
	return f1, nil
}

// Predict flags the rows of x whose log-density is below Threshold.
func (d *Detector) Predict(x *tensor.Tensor) ([]bool, error) {
	s, err := d.Score(x)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(s))
	for i, v := range s {
		out[i] = v < d.Threshold
	}
	return out, nil
}

// BestThreshold returns the threshold t maximising F₁ of the rule
// "score < t" against isAnomaly, halfway between consecutive sorted
// scores (ties flagged together), and that F₁. It returns an error for
// mismatched lengths, no anomalous row, or a NaN score.
func BestThreshold(scores []float64, isAnomaly []bool) (float64, float64, error) {
	if len(scores) != len(isAnomaly) {
		return 0, 0, fmt.Errorf("anomaly.BestThreshold: %d scores for %d labels", len(scores), len(isAnomaly))
	}
	pos := 0
	idx := make([]int, len(scores))
	for i, a := range isAnomaly {
		idx[i] = i
		if a {
			pos++
		}
		if math.IsNaN(scores[i]) {
			return 0, 0, fmt.Errorf("anomaly.BestThreshold: score %d is NaN", i)
		}
	}
	if pos == 0 {
		return 0, 0, fmt.Errorf("anomaly.BestThreshold: no anomalous row among %d", len(scores))
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	best, bestT, tp := -1.0, math.Inf(-1), 0
	for r, i := range idx {
		if isAnomaly[i] {
			tp++
		}
		if r+1 < len(idx) && scores[idx[r+1]] == scores[i] {
			continue // a tie is flagged together
		}
		f1 := 2 * float64(tp) / float64(r+1+pos) // 2TP / (flagged + actual)
		if f1 > best {
			best = f1
			if r+1 < len(idx) {
				bestT = (scores[i] + scores[idx[r+1]]) / 2
			} else {
				bestT = math.Inf(1)
			}
		}
	}
	return bestT, best, nil
}

// PrecisionRecallF1 scores predicted flags against the truth; a ratio
// with a zero denominator is 0.
func PrecisionRecallF1(pred, truth []bool) (precision, recall, f1 float64) {
	tp, fp, fn := 0, 0, 0
	for i := range pred {
		switch {
		case pred[i] && truth[i]:
			tp++
		case pred[i]:
			fp++
		case truth[i]:
			fn++
		}
	}
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		recall = float64(tp) / float64(tp+fn)
	}
	if 2*tp+fp+fn > 0 {
		f1 = 2 * float64(tp) / float64(2*tp+fp+fn)
	}
	return
}
