package ensemble

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// Bagging is an average of least-squares regression trees, each grown on
// a bootstrap sample of the rows (Breiman 1996): the regression
// counterpart of Forest.
type Bagging struct{ Trees []*Tree }

// FitBagging grows trees regression trees on bootstrap samples of the
// rows of x (n, d) with targets y, seeded. Leaves hold their rows' mean
// target (opts.Lambda is taken as 0 unless set); MaxDepth defaults to 8
// and MinLeaf to 5 here.
func FitBagging(x *tensor.Tensor, y []float64, trees int, opts TreeOptions, seed uint64) (*Bagging, error) {
	const op = "ensemble.FitBagging"
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[0] != len(y) {
		return nil, fmt.Errorf("%s: want an (n, d) matrix with one target per row, got %v and %d targets", op, x, len(y))
	}
	if trees < 1 {
		return nil, fmt.Errorf("%s: %d trees", op, trees)
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 8
	}
	if opts.MinLeaf <= 0 {
		opts.MinLeaf = 5
	}
	n, d := x.Shape()[0], x.Shape()[1]
	xv := x.Cast(tensor.Float64).Contiguous().Values()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = xv[i*d : (i+1)*d]
	}
	// Least squares from zero: g = −y, h = 1 make a leaf −G/(H + λ) the mean.
	g, h := make([]float64, n), make([]float64, n)
	for i, v := range y {
		g[i], h[i] = -v, 1
	}
	rng := tensor.NewRNG(seed)
	b := &Bagging{}
	for range trees {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.Intn(n)
		}
		b.Trees = append(b.Trees, fitTree(rows, g, h, idx, opts))
	}
	return b, nil
}

// Predict returns the trees' mean prediction for each row of x.
func (b *Bagging) Predict(x *tensor.Tensor) []float64 {
	n, d := x.Shape()[0], x.Shape()[1]
	xv := x.Cast(tensor.Float64).Contiguous().Values()
	out := make([]float64, n)
	for i := range n {
		for _, t := range b.Trees {
			out[i] += t.Predict(xv[i*d:(i+1)*d]) / float64(len(b.Trees))
		}
	}
	return out
}
