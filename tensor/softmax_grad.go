package tensor

import "slices"

// SoftmaxGrad returns y ⊙ (v − Σ v ⊙ y) along axis, where y = Softmax(x,
// axis): the product of softmax's Jacobian at x with v, which is the same
// matrix for the vector-Jacobian and the Jacobian-vector product (it is
// symmetric). One pass per slice instead of the four of the composite. y
// and v must have one shape and dtype; it panics otherwise or if axis is
// out of range.
func SoftmaxGrad(y, v *Tensor, axis int) *Tensor {
	const op = "SoftmaxGrad"
	sameDType(op, y, v)
	if !slices.Equal(y.shape, v.shape) {
		Fail(op, "operands must have one shape: %s", describe(y, v))
	}
	return softmaxGradRun(NewOn(y.Device(), y.dtype, y.shape...), y, v, normAxis(op, axis, y.shape))
}

// softmaxGradRun is SoftmaxGrad after validation, the trusted kernel graph
// calls (internal/unchecked): y and v have dst's shape and dtype, axis is
// in range and non-negative, and dst is contiguous and overlaps neither.
func softmaxGradRun(dst, y, v *Tensor, ax int) *Tensor {
	if dst.Size() == 0 {
		return dst
	}
	if dst.dev != nil || y.dev != nil || v.dev != nil {
		gpuSoftmaxGrad("SoftmaxGrad", dst, y, v, ax)
		return dst
	}
	if !y.IsContiguous() {
		y = y.Clone()
	}
	if !v.IsContiguous() {
		v = v.Clone()
	}
	outer := shapeSize(y.shape[:ax])
	r := y.shape[ax]
	inner := shapeSize(y.shape[ax+1:])
	n := dst.Size()
	if y.dtype == Float32 {
		softmaxGradRows(storage[float32](dst)[dst.offset:dst.offset+n], storage[float32](y)[y.offset:y.offset+n],
			storage[float32](v)[v.offset:v.offset+n], outer, r, inner)
	} else {
		softmaxGradRows(storage[float64](dst)[dst.offset:dst.offset+n], storage[float64](y)[y.offset:y.offset+n],
			storage[float64](v)[v.offset:v.offset+n], outer, r, inner)
	}
	return dst
}

// softmaxGradRows splits the outer slices over goroutines as softmaxRows
// does; each slice is computed by the same code either way.
func softmaxGradRows[T Float](d, y, v []T, outer, r, inner int) {
	span := r * inner
	if outer < 2 || outer*span < 2*parallelElemMin {
		softmaxGradT(d, y, v, outer, r, inner)
		return
	}
	parallelRange(outer, max(1, (parallelElemMin+span-1)/span), func(lo, hi int) {
		softmaxGradT(d[lo*span:hi*span], y[lo*span:hi*span], v[lo*span:hi*span], hi-lo, r, inner)
	})
}

// softmaxGradT computes y ⊙ (v − Σ v ⊙ y) over the middle axis of the
// (outer, r, inner) layout.
func softmaxGradT[T Float](d, y, v []T, outer, r, inner int) {
	if inner == 1 {
		for o := 0; o < outer; o++ {
			lo, hi := o*r, (o+1)*r
			yr, vr, dr := y[lo:hi], v[lo:hi:hi], d[lo:hi:hi]
			s := dot8(yr, vr)
			for i, yi := range yr {
				dr[i] = yi * (vr[i] - s)
			}
		}
		return
	}
	s := make([]T, inner)
	for o := 0; o < outer; o++ {
		base := o * r * inner
		clear(s)
		for i := 0; i < r; i++ {
			row := base + i*inner
			for j, yj := range y[row : row+inner] {
				s[j] += yj * v[row+j]
			}
		}
		for i := 0; i < r; i++ {
			row := base + i*inner
			for j, yj := range y[row : row+inner] {
				d[row+j] = yj * (v[row+j] - s[j])
			}
		}
	}
}

// dot8 returns Σ x[i]·y[i] in eight interleaved partial sums, combined
// pairwise (sum8's order).
func dot8[T Float](x, y []T) T {
	y = y[:len(x)]
	var p [8]T
	i := dot8Blocks(x, y, &p)
	for ; i+8 <= len(x); i += 8 {
		a, b := x[i:i+8:i+8], y[i:i+8:i+8]
		p[0] += T(a[0] * b[0])
		p[1] += T(a[1] * b[1])
		p[2] += T(a[2] * b[2])
		p[3] += T(a[3] * b[3])
		p[4] += T(a[4] * b[4])
		p[5] += T(a[5] * b[5])
		p[6] += T(a[6] * b[6])
		p[7] += T(a[7] * b[7])
	}
	for j := range x[i:] {
		p[j] += T(x[i+j] * y[i+j])
	}
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}
