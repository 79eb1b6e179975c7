package cluster

import (
	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// The algorithms work on rows as float64 slices: the distance loops are
// short and branchy, and k·n distances per iteration are cheap next to
// copying the data into tensors each time.

// matrix checks x as every fit in learn/ does (validate.Matrix: a
// non-empty (n, d) matrix of finite values) and returns its rows as
// float64 slices.
func matrix(op string, x *tensor.Tensor) ([][]float64, error) {
	vals, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = vals[i*d : (i+1)*d : (i+1)*d]
	}
	return rows, nil
}

// fromRows packs k rows of length d into a (k, d) float64 tensor.
func fromRows(rows [][]float64, d int) *tensor.Tensor {
	flat := make([]float64, 0, len(rows)*d)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return tensor.FromFloat64s(flat, len(rows), d)
}

func clone(r []float64) []float64 { return append([]float64(nil), r...) }

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		t := v - b[i]
		s += t * t
	}
	return s
}

func addTo(dst, r []float64) {
	for i, v := range r {
		dst[i] += v
	}
}

// meanVariance is the mean over features of their variances, the scale
// scikit-learn's k-means tolerance is relative to.
func meanVariance(rows [][]float64) float64 {
	n, d := float64(len(rows)), len(rows[0])
	total := 0.0
	for f := range d {
		m := 0.0
		for _, r := range rows {
			m += r[f]
		}
		m /= n
		v := 0.0
		for _, r := range rows {
			v += (r[f] - m) * (r[f] - m)
		}
		total += v / n
	}
	return total / float64(d)
}

// checkRows panics with a *tensor.Error for op when x is not a matrix with
// the centres' number of columns.
func checkRows(op string, x, centers *tensor.Tensor) {
	if x == nil {
		tensor.Fail(op, "nil data")
	}
	if x.Dim() != 2 || x.Shape()[1] != centers.Shape()[1] {
		tensor.Fail(op, "data must be (m, %d), got shape %s", centers.Shape()[1], tensor.FormatShape(x.Shape()))
	}
}

// nearest returns each row of x's nearest centre and the squared distance
// to it. It panics with a *tensor.Error naming op when x does not have
// the centres' number of columns.
func nearest(op string, x, centers *tensor.Tensor) ([]int, []float64) {
	checkRows(op, x, centers)
	d := tensor.SqDist(x.Cast(tensor.Float64), centers).Values()
	k := centers.Shape()[0]
	labels := make([]int, x.Shape()[0])
	best := make([]float64, len(labels))
	for i := range labels {
		row := d[i*k : (i+1)*k]
		bj := 0
		for j, v := range row {
			if v < row[bj] {
				bj = j
			}
		}
		labels[i], best[i] = bj, row[bj]
	}
	return labels, best
}
