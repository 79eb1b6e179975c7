package main

import (
	"github.com/gradus-ml/gradus/tensor"
)

// perExampleGrads returns the gradient of each example's cross-entropy
// with respect to every parameter of the MLP, one tensor per parameter in
// m.params() order, each with a leading batch axis: (B, hidden, 784),
// (B, hidden), (B, 10, hidden), (B, 10). Row b is the gradient of example
// b's loss alone (not divided by B). When buf is not nil, the two weight
// gradients are written into its tensors' first B rows (they need at least
// B), so that a training loop does not allocate a (B, hidden, 784) array
// every step.
//
// It is the closed form of this two-layer network's backward pass: with
// δ₂ = softmax(z₂) − onehot(y) and δ₁ = (δ₂W₂) ⊙ (1 − tanh²(z₁)), the
// weight gradients are the outer products δ₁ ⊗ x and δ₂ ⊗ a₁ per example.
// It is to give way to autodiff.PerExampleGrads (vmap of grad) when that
// lands; main_test.go checks it against autodiff.Grad example by example.
func perExampleGrads(m *mlp, x *tensor.Tensor, labels []int, buf []*tensor.Tensor) []*tensor.Tensor {
	b := len(labels)
	w1, b1, w2, b2 := m.fc1.Weight.Value, m.fc1.Bias.Value, m.fc2.Weight.Value, m.fc2.Bias.Value
	a1 := tensor.Tanh(tensor.Add(tensor.MatMulT(x, w1, false, true), b1))
	z2 := tensor.Add(tensor.MatMulT(a1, w2, false, true), b2)
	d2 := tensor.Sub(tensor.Softmax(z2, 1), tensor.OneHot(x.DType(), labels, w2.Shape()[0]))
	d1 := tensor.TanhGrad(tensor.MatMul(d2, w2), a1)
	outer := func(k int, u, v *tensor.Tensor) *tensor.Tensor { // (B, m), (B, n) → (B, m, n)
		var dst *tensor.Tensor
		if buf != nil {
			dst = tensor.Slice(buf[k], 0, 0, b, 1)
		} else {
			dst = tensor.Zeros(u.DType(), b, u.Shape()[1], v.Shape()[1])
		}
		// A plain loop: broadcasting Mul takes its general path here and is
		// ten times slower.
		if u.DType() == tensor.Float32 {
			outerTo(dst.Float32s(), u.Contiguous().Float32s(), v.Contiguous().Float32s(), b)
		} else {
			outerTo(dst.Float64s(), u.Contiguous().Float64s(), v.Contiguous().Float64s(), b)
		}
		return dst
	}
	return []*tensor.Tensor{outer(0, d1, x), d1, outer(1, d2, a1), d2}
}

// outerTo sets dst[e] = u[e] ⊗ v[e] for each of the b rows.
func outerTo[T tensor.Float](dst, u, v []T, b int) {
	m, n := len(u)/b, len(v)/b
	for e := range b {
		ve := v[e*n : (e+1)*n]
		for i, ui := range u[e*m : (e+1)*m] {
			row := dst[(e*m+i)*n : (e*m+i+1)*n]
			for j, vj := range ve {
				row[j] = ui * vj
			}
		}
	}
}
