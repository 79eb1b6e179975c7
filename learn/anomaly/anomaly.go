// Package anomaly detects anomalies by density (Chandola, Banerjee and
// Kumar 2009, "Anomaly detection: a survey", §7 on statistical
// techniques): project the normal training rows onto their leading
// principal components (package pca), fit a Gaussian mixture there by EM
// (package mixture), and flag a row whose log-density falls below a
// threshold chosen to maximise F₁ on a labelled validation split.
//
//	d, err := anomaly.FitDetector(ctx, normal, anomaly.Options{Components: 20, K: 5})
//	f1, err := d.Calibrate(xval, labels) // labels: 1 anomalous, 0 normal; sets d.Threshold
//	flags := d.Predict(xtest)            // 1 anomalous, 0 normal
package anomaly

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// Options configures FitDetector. Zero fields take the defaults given.
type Options struct {
	Components int                    // principal components kept (required, 1 ≤ Components ≤ d)
	K          int                    // mixture components (required, 1 ≤ K ≤ n)
	Covariance mixture.CovarianceType // of the mixture (default Full)
	RegCovar   float64                // covariance floor (default 1e-6)
	Restarts   int                    // EM starts (default 1)
	MaxIter    int                    // EM iterations per start (default 100)
	Tol        float64                // EM tolerance on the mean log-likelihood (default 1e-3)
	Seed       uint64                 // seed of the EM starts (default 0)
}

// Detector is a fitted density model of normal rows and its threshold.
type Detector struct {
	PCA     *pca.PCA
	Mixture *mixture.GaussianMixture
	// Threshold: a row is anomalous when its log-density is below it
	// (−Inf, flagging nothing, until Calibrate sets it).
	Threshold float64
}

// FitDetector models the rows of normal (n, d), assumed free of
// anomalies: PCA to opts.Components dimensions, then a K-component
// Gaussian mixture by EM in that space. It returns an error naming the
// fit and what was wrong for bad data (not a matrix, zero columns, NaN or
// Inf, fewer rows than components) or options. When EM runs out of
// iterations the detector comes back with a *tensor.NotConvergedError;
// when ctx is cancelled, with an error wrapping ctx.Err().
func FitDetector(ctx context.Context, normal *tensor.Tensor, opts Options) (*Detector, error) {
	const op = "anomaly.FitDetector"
	_, n, d, err := validate.NamedMatrix(op, "normal", normal)
	if err != nil {
		return nil, err
	}
	if opts.Components < 1 || opts.Components > d {
		return nil, fmt.Errorf("%s: Components = %d for %d columns", op, opts.Components, d)
	}
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("%s: K = %d components for %d rows", op, opts.K, n)
	}
	p, err := pca.FitPCA(normal, pca.PCAOptions{Components: opts.Components})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	m, err := mixture.FitGaussianMixture(ctx, p.Transform(normal), mixture.GaussianMixtureOptions{K: opts.K,
		Covariance: opts.Covariance, RegCovar: opts.RegCovar, Restarts: opts.Restarts, MaxIter: opts.MaxIter,
		Tol: opts.Tol, Seed: opts.Seed})
	if m == nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	det := &Detector{PCA: p, Mixture: m, Threshold: math.Inf(-1)}
	if err != nil { // not converged or cancelled: the detector so far
		return det, fmt.Errorf("%s: %w", op, err)
	}
	return det, nil
}

// LogProb returns the log-density of each row of x (m, d) under the
// mixture in the principal subspace, an (m) tensor: lower is more
// anomalous. It panics with a *tensor.Error when x is not an (m, d)
// matrix.
func (d *Detector) LogProb(x *tensor.Tensor) *tensor.Tensor {
	const op = "anomaly.Detector.LogProb"
	if x == nil {
		tensor.Fail(op, "nil data")
	}
	if x.Dim() != 2 || x.Shape()[1] != len(d.PCA.Mean) {
		tensor.Fail(op, "want an (m, %d) matrix, got shape %s", len(d.PCA.Mean), tensor.FormatShape(x.Shape()))
	}
	return d.Mixture.LogProb(d.PCA.Transform(x))
}

// Calibrate sets Threshold to the value maximising F₁ of "log-density
// below threshold" against labels (1 anomalous, 0 normal) on the
// validation rows x, and returns that F₁. The threshold lies halfway
// between the last flagged log-density and the next. It returns an error
// as BestThreshold does (no anomalous row, a label other than 0 or 1, a
// length mismatch) and panics as LogProb does.
func (d *Detector) Calibrate(x *tensor.Tensor, labels []int) (float64, error) {
	t, f1, err := BestThreshold(d.LogProb(x).Float64s(), labels)
	if err != nil {
		return 0, fmt.Errorf("anomaly.Detector.Calibrate: %w", err)
	}
	d.Threshold = t
	return f1, nil
}

// Predict returns 1 for each row of x whose log-density is below
// Threshold (anomalous) and 0 for the others. It panics as LogProb does.
func (d *Detector) Predict(x *tensor.Tensor) []int {
	s := d.LogProb(x).Float64s()
	out := make([]int, len(s))
	for i, v := range s {
		if v < d.Threshold {
			out[i] = 1
		}
	}
	return out
}

// BestThreshold returns the threshold t maximising F₁ of the rule
// "score < t" against labels (1 anomalous, 0 normal), halfway between
// consecutive sorted scores (ties flagged together), and that F₁. It
// returns an error for mismatched lengths, a label other than 0 or 1, no
// anomalous row, or a NaN score.
func BestThreshold(scores []float64, labels []int) (float64, float64, error) {
	const op = "anomaly.BestThreshold"
	if len(scores) != len(labels) {
		return 0, 0, fmt.Errorf("%s: %d scores for %d labels", op, len(scores), len(labels))
	}
	pos := 0
	idx := make([]int, len(scores))
	for i, l := range labels {
		idx[i] = i
		switch l {
		case 1:
			pos++
		case 0:
		default:
			return 0, 0, fmt.Errorf("%s: label %d is %d; labels must be 0 (normal) or 1 (anomalous)", op, i, l)
		}
		if math.IsNaN(scores[i]) {
			return 0, 0, fmt.Errorf("%s: score %d is NaN", op, i)
		}
	}
	if pos == 0 {
		return 0, 0, fmt.Errorf("%s: no anomalous row among %d", op, len(scores))
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	best, bestT, tp := -1.0, math.Inf(-1), 0
	for r, i := range idx {
		tp += labels[i]
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
