package tensor

// The per-channel operations of batch and layer normalisation on a GPU,
// composed from the elementwise kernels and the sums: x is (N, C, ...),
// the per-channel tensors (C) are read as (1, C, 1, ...) broadcasts.

// channelView reads the (C) tensor v as broadcast over x's shape.
func channelView(v *Tensor, x *Tensor) *Tensor {
	shape := make([]int, len(x.shape))
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = x.shape[1]
	return expandTrusted(reshapeTrusted(v, shape), x.shape)
}

// otherAxes lists every axis of x but the channel axis 1.
func otherAxes(x *Tensor) []int {
	axes := []int{0}
	for i := 2; i < len(x.shape); i++ {
		axes = append(axes, i)
	}
	return axes
}

// gpuChannelAffine sets dst = x·scale[c] + shift[c] (shift may be nil).
func gpuChannelAffine(dst, x, scale, shift *Tensor) {
	defer alive(dst, x, scale, shift)
	sameDevice("ChannelAffine", dst, x, scale, shift)
	gpuBinary("Mul", dst, x, channelView(scale, x))
	if shift != nil {
		gpuBinary("Add", dst, dst, channelView(shift, x))
	}
}

// gpuChannelDot sets dst (C) to Σ a·b over every axis but 1.
func gpuChannelDot(dst, a, b *Tensor) {
	defer alive(dst, a, b)
	const op = "ChannelDot"
	sameDevice(op, dst, a, b)
	p := newUninitOn(op, a.Device(), a.dtype, a.shape...)
	gpuBinary("Mul", p, a, b)
	gpuSum(op, dst, p, otherAxes(a), false)
	p.release()
}

// gpuChannelMoments sets dst (2, C) to the per-channel means and biased
// variances, in two passes as on the CPU (the sums add in the tensor's
// dtype on the GPU).
func gpuChannelMoments(dst, x *Tensor) {
	defer alive(dst, x)
	const op = "ChannelMoments"
	sameDevice(op, dst, x)
	c := x.shape[1]
	mean, variance := sliceTrusted(dst, 0, 0, 1, 1), sliceTrusted(dst, 0, 1, 2, 1)
	mean, variance = reshapeTrusted(mean, []int{c}), reshapeTrusted(variance, []int{c})
	axes := otherAxes(x)
	gpuSum(op, mean, x, axes, true)
	d := newUninitOn(op, x.Device(), x.dtype, x.shape...)
	gpuBinary("Sub", d, x, channelView(mean, x))
	gpuBinary("Mul", d, d, d)
	gpuSum(op, variance, d, axes, true)
	d.release()
}
