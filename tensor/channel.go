package tensor

import "slices"

// Per-channel kernels for tensors laid out (N, C, ...), channels on axis 1:
// the affine map of batch and instance normalisation, x·scale[c] +
// shift[c], and its adjoint in the scale, the per-channel sum of a product.
// Each is one pass over the data, where the broadcasting composites took
// two (multiply, then add) or two plus a reduction.

// ChannelAffine returns x·scale[c] + shift[c] for x (N, C, ...) with at
// least two axes, scale (C) and shift (C) or nil (no shift), all of one
// dtype. It panics with the shapes otherwise.
func ChannelAffine(x, scale, shift *Tensor) *Tensor {
	return ChannelAffineTo(nil, x, scale, shift)
}

// ChannelAffineTo is ChannelAffine writing into dst (nil allocates), which
// must have x's shape and dtype and may be x itself.
func ChannelAffineTo(dst, x, scale, shift *Tensor) *Tensor {
	const op = "ChannelAffine"
	checkChannelOperands(op, x, scale, shift)
	dst = prepareDst(op, dst, x.dtype, x.shape, x, scale)
	checkOverlap(op, dst, x)
	if sharesStorage(dst, scale) || (shift != nil && sharesStorage(dst, shift)) {
		Fail(op, "destination %v shares storage with scale or shift", describe(dst))
	}
	if !dst.IsContiguous() {
		CopyInto(dst, channelAffineTrusted(nil, x, scale, shift))
		return dst
	}
	return channelAffineTrusted(dst, x, scale, shift)
}

// ChannelDot returns the (C) sums Σ a·b over every axis of a and b
// (N, C, ...) but the channel axis 1: the gradient of ChannelAffine in its
// scale, with a the cotangent and b the input. a and b must have one shape
// (at least two axes) and dtype.
func ChannelDot(a, b *Tensor) *Tensor {
	const op = "ChannelDot"
	sameDType(op, a, b)
	if a.Dim() < 2 || !slices.Equal(a.shape, b.shape) {
		Fail(op, "operands %s must have one shape (N, C, ...)", describe(a, b))
	}
	return channelDotTrusted(NewOn(a.Device(), a.dtype, a.shape[1]), a, b)
}

// checkChannelOperands validates ChannelAffine's operands.
func checkChannelOperands(op string, x, scale, shift *Tensor) {
	if shift != nil {
		sameDType(op, x, scale, shift)
	} else {
		sameDType(op, x, scale)
	}
	ok := x.Dim() >= 2 && scale.Dim() == 1 && scale.shape[0] == x.shape[1]
	if shift != nil {
		ok = ok && shift.Dim() == 1 && shift.shape[0] == x.shape[1]
	}
	if !ok {
		operands := []*Tensor{x, scale}
		if shift != nil {
			operands = append(operands, shift)
		}
		Fail(op, "operands %s do not fit: want x (N, C, ...), scale (C) and shift (C) or nil", describe(operands...))
	}
}

// channelLayout returns the (outer, channels, inner) sizes of x (N, C, ...).
func channelLayout(x *Tensor) (n, c, r int) {
	return x.shape[0], x.shape[1], shapeSize(x.shape[2:])
}

// channelAffineTrusted is ChannelAffineTo after validation (graph's
// kernel): dst is nil or contiguous with x's shape and dtype.
func channelAffineTrusted(dst, x, scale, shift *Tensor) *Tensor {
	if dst == nil {
		dst = newUninitOn("ChannelAffine", x.Device(), x.dtype, x.shape...)
	}
	if dst.Size() == 0 {
		return dst
	}
	if dst.dev != nil || x.dev != nil {
		gpuChannelAffine(dst, x, scale, shift)
		return dst
	}
	n, c, r := channelLayout(x)
	if x.dtype == Float32 {
		channelAffineRuns(contigData[float32](dst), contigData[float32](x), contigData[float32](scale), optData[float32](shift), n, c, r)
	} else {
		channelAffineRuns(contigData[float64](dst), contigData[float64](x), contigData[float64](scale), optData[float64](shift), n, c, r)
	}
	return dst
}

// optData is contigData, or nil for a nil tensor.
func optData[T Float](t *Tensor) []T {
	if t == nil {
		return nil
	}
	return contigData[T](t)
}

// channelAffineRuns maps the n·c runs of r elements, each with its
// channel's scale and shift, over goroutines for large tensors.
func channelAffineRuns[T Float](d, x, scale, shift []T, n, c, r int) {
	if r == 1 && c > 1 {
		// Channels last, as in a layer's features (N, C): each of the n
		// rows is one elementwise pass against scale and shift.
		parallelRange(n, max(1, parallelElemMin/c), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				affineRow(d[i*c:(i+1)*c], x[i*c:(i+1)*c], scale, shift)
			}
		})
		return
	}
	runs := n * c
	parallelRange(runs, max(1, parallelElemMin/max(r, 1)), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			ch := k % c
			if shift == nil {
				mulScalarRun(d[k*r:(k+1)*r], x[k*r:(k+1)*r], scale[ch], 0)
				continue
			}
			affineRun(d[k*r:(k+1)*r], x[k*r:(k+1)*r], scale[ch], shift[ch])
		}
	})
}

// affineRow sets d = x·scale + shift elementwise (shift nil: none) with
// the vector multiply and add kernels; the row is still in cache for the
// second. d may be x.
func affineRow[T Float](d, x, scale, shift []T) {
	mulRun(d, x, scale)
	if shift != nil {
		addRun(d, d, shift)
	}
}

// affineRun sets d = x·s + b elementwise. d may be x.
func affineRun[T Float](d, x []T, s, b T) {
	x = x[:len(d)]
	k := affineBlocks(d, x, s, b)
	for i, v := range x[k:] {
		d[k+i] = T(v*s) + b // the product rounded, as in the vector pass
	}
}

// channelDotTrusted is ChannelDot after validation: dst (C) is contiguous,
// a and b have one shape (N, C, ...).
func channelDotTrusted(dst, a, b *Tensor) *Tensor {
	if dst.dev != nil || a.dev != nil || b.dev != nil {
		gpuChannelDot(dst, a, b)
		return dst
	}
	n, c, r := channelLayout(a)
	if a.dtype == Float32 {
		channelDotRuns(contigData[float32](dst), contigData[float32](a), contigData[float32](b), n, c, r)
	} else {
		channelDotRuns(contigData[float64](dst), contigData[float64](a), contigData[float64](b), n, c, r)
	}
	return dst
}

// channelDotRuns sums, per channel, the dot products of its n runs (each
// in dot8's fixed order), accumulating the runs in float64. Channels are
// split over goroutines, so the result does not depend on how many run.
func channelDotRuns[T Float](d, a, b []T, n, c, r int) {
	if r == 1 && c > 1 {
		channelDotColumns(d, a, b, n, c)
		return
	}
	parallelRange(c, max(1, parallelElemMin/max(n*r, 1)), func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var s float64
			for i := 0; i < n; i++ {
				k := (i*c + ch) * r
				s += float64(dot8(a[k:k+r], b[k:k+r]))
			}
			d[ch] = T(s)
		}
	})
}

// ChannelMoments returns the per-channel mean and biased variance of x
// (N, C, ...) over every axis but axis 1, stacked as a (2, C) tensor: row 0
// the means, row 1 the variances, as batch normalisation uses them. Each
// channel is summed in float64, its mean first and then the squared
// deviations from it (two passes, no cancellation). It panics if x has
// fewer than two axes or no elements per channel.
func ChannelMoments(x *Tensor) *Tensor {
	const op = "ChannelMoments"
	if x.Dim() < 2 {
		Fail(op, "input %s must have shape (N, C, ...)", describe(x))
	}
	if n, c, r := channelLayout(x); c > 0 && n*r == 0 {
		Fail(op, "input %s has no elements per channel", describe(x))
	}
	return channelMomentsTrusted(NewOn(x.Device(), x.dtype, 2, x.shape[1]), x)
}

// channelMomentsTrusted is ChannelMoments after validation: dst (2, C) is
// contiguous.
func channelMomentsTrusted(dst, x *Tensor) *Tensor {
	if dst.dev != nil || x.dev != nil {
		gpuChannelMoments(dst, x)
		return dst
	}
	n, c, r := channelLayout(x)
	if x.dtype == Float32 {
		channelMomentRuns(contigData[float32](dst), contigData[float32](x), n, c, r)
	} else {
		channelMomentRuns(contigData[float64](dst), contigData[float64](x), n, c, r)
	}
	return dst
}

// channelMomentRuns writes the means to d[:c] and the variances to d[c:],
// channels split over goroutines (each computed the same way whatever the
// split).
func channelMomentRuns[T Float](d, x []T, n, c, r int) {
	count := float64(n * r)
	parallelRange(c, max(1, parallelElemMin/max(2*n*r, 1)), func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var s float64
			for i := 0; i < n; i++ {
				k := (i*c + ch) * r
				s += float64(sum8(x[k : k+r]))
			}
			mean := s / count
			var q float64
			m := T(mean)
			for i := 0; i < n; i++ {
				k := (i*c + ch) * r
				q += float64(sqDev8(x[k:k+r], m))
			}
			d[ch], d[c+ch] = m, T(q/count)
		}
	})
}

// channelDotColumns is channelDotRuns for channels last (runs of one):
// each goroutine takes a range of channels and walks the rows, adding the
// products into float64 accumulators in row order.
func channelDotColumns[T Float](d, a, b []T, n, c int) {
	parallelRange(c, max(16, parallelElemMin/max(n, 1)), func(lo, hi int) {
		acc := make([]float64, hi-lo)
		for i := 0; i < n; i++ {
			ar, br := a[i*c+lo:i*c+hi], b[i*c+lo:i*c+hi]
			br = br[:len(ar)]
			for j, v := range ar {
				acc[j] += float64(v * br[j])
			}
		}
		for j, v := range acc {
			d[lo+j] = T(v)
		}
	})
}

// sqDev8 returns Σ (x[i] − m)² in eight interleaved partial sums combined
// pairwise, as dot8.
func sqDev8[T Float](x []T, m T) T {
	var p [8]T
	i := sqDev8Blocks(x, m, &p)
	for ; i+8 <= len(x); i += 8 {
		a := x[i : i+8 : i+8]
		d0, d1, d2, d3 := a[0]-m, a[1]-m, a[2]-m, a[3]-m
		d4, d5, d6, d7 := a[4]-m, a[5]-m, a[6]-m, a[7]-m
		p[0] += T(d0 * d0)
		p[1] += T(d1 * d1)
		p[2] += T(d2 * d2)
		p[3] += T(d3 * d3)
		p[4] += T(d4 * d4)
		p[5] += T(d5 * d5)
		p[6] += T(d6 * d6)
		p[7] += T(d7 * d7)
	}
	for j, v := range x[i:] {
		dv := v - m
		p[j] += T(dv * dv)
	}
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}
