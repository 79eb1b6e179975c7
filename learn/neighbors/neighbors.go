// Package neighbors holds k-nearest-neighbour classification and
// regression in scikit-learn's form (Cover & Hart 1967, "Nearest neighbor
// pattern classification"): a fit stores the training rows, and a
// prediction looks up the K rows nearest in Euclidean distance to each
// query, found by brute force over tensor.SqDist in blocks of queries.
//
//	x, labels, err := data.Classes("sklearn/iris.csv", "target")
//	m, err := neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 5})
//	if err != nil { … }
//	pred := m.Predict(xTest)      // []int
//	p := m.PredictProba(xTest)    // (m, classes): neighbour votes
//	idx, dist := m.Neighbors(xTest)
//	r, err := neighbors.FitRegressor(x, y, neighbors.RegressorOptions{K: 7, Weights: neighbors.Distance})
//	fmt.Println(r.Predict(xTest).Values())
//
// Ties: neighbours at equal distance are taken in order of their training
// row, lower first (scikit-learn leaves that order to its sort); a vote
// tied between classes goes to the lower class, as scikit-learn's does.
// Weights: Uniform gives each neighbour one vote, Distance weights it by
// 1/distance, and a query that coincides with training rows takes the
// votes of those rows alone. x may be float32 or float64; rows are kept
// and compared in float64, and the tensors returned have their input's
// dtype.
package neighbors

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// Weighting chooses how the K neighbours' votes (or targets) are weighted.
type Weighting int

const (
	// Uniform weights every neighbour equally (scikit-learn's "uniform").
	Uniform Weighting = iota
	// Distance weights a neighbour by the inverse of its distance
	// (scikit-learn's "distance").
	Distance
)

// ClassifierOptions configures FitClassifier.
type ClassifierOptions struct {
	K       int       // neighbours consulted, 1 ≤ K ≤ n (default 5)
	Weights Weighting // Uniform (default) or Distance
}

// Classifier is a fitted k-nearest-neighbour classifier.
type Classifier struct {
	K       int
	Weights Weighting
	Classes int // the number of classes, 0 … Classes−1
	train   *index
	labels  []int
}

// FitClassifier stores the rows of x (n, d) and their labels. It returns
// an error naming the fit for bad data (NaN or ±Inf, zero columns, one
// class, an empty class, labels not matching the rows), for K above n or
// negative, and for an unknown weighting.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitClassifier(x *tensor.Tensor, labels []int, opts ClassifierOptions) (*Classifier, error) {
	const op = "neighbors.FitClassifier"
	ix, k, err := newIndex(op, x, opts.K, opts.Weights)
	if err != nil {
		return nil, err
	}
	classes, _, err := validate.Labels(op, labels, ix.n)
	if err != nil {
		return nil, err
	}
	return &Classifier{K: k, Weights: opts.Weights, Classes: classes, train: ix, labels: append([]int(nil), labels...)}, nil
}

// Neighbors returns, for each row of x (m, d), the training rows of its K
// nearest neighbours, nearest first, and their Euclidean distances. It
// panics with a *tensor.Error when x does not have d columns.
func (c *Classifier) Neighbors(x *tensor.Tensor) (idx [][]int, dist [][]float64) {
	return c.train.query("neighbors.Classifier.Neighbors", x, c.K)
}

// PredictProba returns each row's class probabilities, the neighbours'
// weighted votes normalised to sum to 1: an (m, classes) tensor in x's
// dtype. It panics with a *tensor.Error when x does not have d columns.
func (c *Classifier) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	p := c.votes("neighbors.Classifier.PredictProba", x)
	return validate.Out(x.DType(), p, len(p)/c.Classes, c.Classes)
}

// Predict returns each row's class of largest vote, the lower class on a
// tie. It panics with a *tensor.Error when x does not have d columns.
func (c *Classifier) Predict(x *tensor.Tensor) []int {
	p := c.votes("neighbors.Classifier.Predict", x)
	return tensor.ArgMax(tensor.FromFloat64s(p, len(p)/c.Classes, c.Classes), 1)
}

func (c *Classifier) votes(op string, x *tensor.Tensor) []float64 {
	idx, dist := c.train.query(op, x, c.K)
	out := make([]float64, len(idx)*c.Classes)
	for i, nb := range idx {
		w := weights(dist[i], c.Weights)
		row := out[i*c.Classes : (i+1)*c.Classes]
		tot := 0.0
		for q, j := range nb {
			row[c.labels[j]] += w[q]
			tot += w[q]
		}
		for k := range row {
			row[k] /= tot
		}
	}
	return out
}

// RegressorOptions configures FitRegressor.
type RegressorOptions struct {
	K       int       // neighbours averaged, 1 ≤ K ≤ n (default 5)
	Weights Weighting // Uniform (default) or Distance
}

// Regressor is a fitted k-nearest-neighbour regressor.
type Regressor struct {
	K       int
	Weights Weighting
	train   *index
	y       []float64
}

// FitRegressor stores the rows of x (n, d) and their targets y (n). It
// returns an error naming the fit for bad data (NaN or ±Inf in x or y,
// zero columns, y of the wrong length), for K above n or negative, and
// for an unknown weighting.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitRegressor(x, y *tensor.Tensor, opts RegressorOptions) (*Regressor, error) {
	const op = "neighbors.FitRegressor"
	ix, k, err := newIndex(op, x, opts.K, opts.Weights)
	if err != nil {
		return nil, err
	}
	yv, err := validate.Target(op, y, ix.n)
	if err != nil {
		return nil, err
	}
	return &Regressor{K: k, Weights: opts.Weights, train: ix, y: yv}, nil
}

// Neighbors returns, for each row of x (m, d), the training rows of its K
// nearest neighbours, nearest first, and their Euclidean distances. It
// panics with a *tensor.Error when x does not have d columns.
func (r *Regressor) Neighbors(x *tensor.Tensor) (idx [][]int, dist [][]float64) {
	return r.train.query("neighbors.Regressor.Neighbors", x, r.K)
}

// Predict returns the (weighted) mean target of each row's K nearest
// neighbours, an (m) tensor in x's dtype. It panics with a *tensor.Error
// when x does not have d columns.
func (r *Regressor) Predict(x *tensor.Tensor) *tensor.Tensor {
	idx, dist := r.train.query("neighbors.Regressor.Predict", x, r.K)
	out := make([]float64, len(idx))
	for i, nb := range idx {
		w := weights(dist[i], r.Weights)
		num, den := 0.0, 0.0
		for q, j := range nb {
			num += w[q] * r.y[j]
			den += w[q]
		}
		out[i] = num / den
	}
	return validate.Out(x.DType(), out, len(out))
}

// weights returns the neighbours' weights: ones, or 1/distance, where a
// zero distance gives its neighbours weight 1 and the others 0.
func weights(dist []float64, w Weighting) []float64 {
	out := make([]float64, len(dist))
	exact := false
	for q, d := range dist {
		if w == Uniform {
			out[q] = 1
		} else if d == 0 {
			exact = true
		} else {
			out[q] = 1 / d
		}
	}
	if exact {
		for q, d := range dist {
			out[q] = 0
			if d == 0 {
				out[q] = 1
			}
		}
	}
	return out
}

// index holds the training rows for brute-force search.
type index struct {
	x    *tensor.Tensor // (n, d) float64
	n, d int
}

func newIndex(op string, x *tensor.Tensor, k int, w Weighting) (*index, int, error) {
	xv, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, 0, err
	}
	if k == 0 {
		k = 5
	}
	switch {
	case k < 0 || k > n:
		return nil, 0, fmt.Errorf("%s: K = %d neighbours, but x has %d rows: need 1 ≤ K ≤ n", op, k, n)
	case w != Uniform && w != Distance:
		return nil, 0, fmt.Errorf("%s: unknown weighting %d", op, w)
	}
	return &index{x: tensor.FromFloat64s(xv, n, d), n: n, d: d}, k, nil
}

// queryBlock is the number of queries whose distances to every training
// row are held at once.
const queryBlock = 256

// query returns the k nearest training rows of each row of x, nearest
// first (ties by lower row), with their Euclidean distances.
func (ix *index) query(op string, x *tensor.Tensor, k int) ([][]int, [][]float64) {
	xv, m := validate.Query(op, x, ix.d)
	idx, dist := make([][]int, m), make([][]float64, m)
	for b0 := 0; b0 < m; b0 += queryBlock {
		b1 := min(m, b0+queryBlock)
		sq := tensor.SqDist(tensor.FromFloat64s(xv[b0*ix.d:b1*ix.d], b1-b0, ix.d), ix.x).Float64s()
		for i := b0; i < b1; i++ {
			idx[i], dist[i] = nearest(sq[(i-b0)*ix.n:(i-b0+1)*ix.n], k)
		}
	}
	return idx, dist
}

// nearest returns the k smallest of the squared distances row, by
// insertion into a sorted list (k is small), ties to the lower index,
// with their square roots.
func nearest(row []float64, k int) ([]int, []float64) {
	idx, d := make([]int, 0, k), make([]float64, 0, k)
	for j, v := range row {
		if len(idx) == k && !(v < d[k-1]) {
			continue
		}
		if len(idx) < k {
			idx, d = append(idx, 0), append(d, 0)
		}
		p := len(idx) - 1
		for p > 0 && v < d[p-1] {
			idx[p], d[p] = idx[p-1], d[p-1]
			p--
		}
		idx[p], d[p] = j, v
	}
	for q := range d {
		d[q] = math.Sqrt(d[q])
	}
	return idx, d
}
