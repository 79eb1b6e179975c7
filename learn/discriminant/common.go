package discriminant

import "github.com/gradus-ml/gradus/tensor"

// classMeans returns the mean row of each class.
func classMeans(xv []float64, d int, labels []int, counts []int) [][]float64 {
	means := make([][]float64, len(counts))
	for c := range means {
		means[c] = make([]float64, d)
	}
	for i, c := range labels {
		for j := range d {
			means[c][j] += xv[i*d+j]
		}
	}
	for c, m := range means {
		for j := range m {
			m[j] /= float64(counts[c])
		}
	}
	return means
}

// svd returns the singular values of the (m, n) row-major matrix a and
// its right singular vectors as v[j][r] (n, min(m, n)), by tensor.SVD.
func svd(a []float64, m, n int) ([]float64, [][]float64, error) {
	_, s, vt, err := tensor.SVD(tensor.FromFloat64s(a, m, n))
	if err != nil {
		return nil, nil, err
	}
	k := min(m, n)
	vv := vt.Values()
	v := make([][]float64, n)
	for j := range v {
		v[j] = vv[j*k : (j+1)*k]
	}
	return s.Values(), v, nil
}

// softmax turns (m, k) scores into probabilities in x's dtype.
func softmax(x *tensor.Tensor, s []float64, k int) *tensor.Tensor {
	p := tensor.Softmax(tensor.FromFloat64s(s, len(s)/k, k), 1)
	if x.DType() == tensor.Float32 {
		return p.Cast(tensor.Float32)
	}
	return p
}
