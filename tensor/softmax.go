package tensor

// Softmax and LogSoftmax along one axis, computed stably by subtracting the
// maximum along the axis. The kernels see the input as (outer, r, inner):
// inner == 1 is the common last-axis case, one contiguous row at a time;
// otherwise a row of running maxima and sums of length inner is kept.

// Softmax returns exp(a) / Σ exp(a) along axis, computed stably by
// subtracting the maximum along the axis first. A slice that is all −Inf
// has no distribution and gives NaN. It panics if axis is out of range.
func Softmax(a *Tensor, axis int) *Tensor { return softmax("Softmax", nil, a, axis, false) }

// SoftmaxInto is Softmax writing into dst (nil allocates), which must have
// a's shape and dtype; dst may be a itself. It returns dst.
func SoftmaxInto(dst, a *Tensor, axis int) *Tensor { return softmax("Softmax", dst, a, axis, false) }

// LogSoftmax returns a − LogSumExp(a) along axis, computed stably. It
// panics if axis is out of range.
func LogSoftmax(a *Tensor, axis int) *Tensor { return softmax("LogSoftmax", nil, a, axis, true) }

// LogSoftmaxInto is LogSoftmax writing into dst (see SoftmaxInto).
func LogSoftmaxInto(dst, a *Tensor, axis int) *Tensor {
	return softmax("LogSoftmax", dst, a, axis, true)
}

func softmax(op string, dst, a *Tensor, axis int, logOut bool) *Tensor {
	ax := normAxis(op, axis, a.shape)
	dst = prepareDst(op, dst, a.dtype, a.shape, a)
	checkOverlap(op, dst, a)
	return softmaxRun(dst, a, ax, logOut)
}

// softmaxRun is softmax after validation, the trusted kernel graph calls
// (internal/unchecked): axis is in range and non-negative, dst is shaped
// like a with its dtype and overlaps a only by being it.
func softmaxRun(dst, a *Tensor, ax int, logOut bool) *Tensor {
	if dst.dev != nil || a.dev != nil {
		gpuSoftmax("Softmax", dst, a, ax, logOut)
		return dst
	}
	out := dst
	if !dst.IsContiguous() {
		out = New(a.dtype, a.shape...)
	}
	src := a
	if !a.IsContiguous() {
		// Copy into the output and work in place: the kernel reads each
		// element before it writes it.
		CopyInto(out, a)
		src = out
	}
	outer := shapeSize(a.shape[:ax])
	r := a.shape[ax]
	inner := shapeSize(a.shape[ax+1:])
	if a.Size() > 0 {
		if a.dtype == Float32 {
			softmaxRows(storage[float32](out)[out.offset:out.offset+out.Size()], storage[float32](src)[src.offset:src.offset+src.Size()], outer, r, inner, logOut, fmath32)
		} else {
			softmaxRows(storage[float64](out)[out.offset:out.offset+out.Size()], storage[float64](src)[src.offset:src.offset+src.Size()], outer, r, inner, logOut, fmath64)
		}
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// softmaxRows is softmaxT with the outer slices split over goroutines
// when there are enough elements (an exponential each, so as many as a
// heavy elementwise op needs): attention scores, (B·heads·L, L), are
// millions. Each slice is computed by the same kernel as in a serial run,
// so the result is bit-identical.
func softmaxRows[T Float](dst, x []T, outer, r, inner int, logOut bool, fm *fmath[T]) {
	span := r * inner
	if outer < 2 || outer*span < 2*heavyElemMin {
		softmaxT(dst, x, outer, r, inner, logOut, fm)
		return
	}
	parallelRange(outer, max(1, (heavyElemMin+span-1)/span), func(lo, hi int) {
		softmaxT(dst[lo*span:hi*span], x[lo*span:hi*span], hi-lo, r, inner, logOut, fm)
	})
}

// softmaxT computes softmax of x laid out as (outer, r, inner) into dst
// (same layout; dst may be x).
func softmaxT[T Float](dst, x []T, outer, r, inner int, logOut bool, fm *fmath[T]) {
	if inner == 1 {
		for o := 0; o < outer; o++ {
			row, d := x[o*r:(o+1)*r], dst[o*r:(o+1)*r]
			m := maxRun(row, 0, r, 1, 0)
			var s T
			if logOut {
				for _, v := range row {
					s += fm.exp(v - m)
				}
				// (v − m) is exact for nearby values; folding m into the
				// log term first would lose digits for large inputs.
				ls := fm.log(s)
				for i, v := range row {
					d[i] = (v - m) - ls
				}
				continue
			}
			if d32, ok := any(d).([]float32); ok {
				s = T(expShift32(d32, any(row).([]float32), float32(m)))
			} else {
				for i, v := range row {
					e := fm.exp(v - m)
					d[i] = e
					s += e
				}
			}
			inv := 1 / s
			for i := range d {
				d[i] *= inv
			}
		}
		return
	}
	m := make([]T, inner)
	s := make([]T, inner)
	for o := 0; o < outer; o++ {
		xb, db := x[o*r*inner:(o+1)*r*inner], dst[o*r*inner:(o+1)*r*inner]
		copy(m, xb[:inner])
		for i := 1; i < r; i++ {
			for j, v := range xb[i*inner : (i+1)*inner] {
				if v > m[j] || v != v {
					m[j] = v
				}
			}
		}
		fillT1(s, 0)
		for i := 0; i < r; i++ {
			xr, dr := xb[i*inner:(i+1)*inner], db[i*inner:(i+1)*inner]
			for j, v := range xr {
				e := fm.exp(v - m[j])
				s[j] += e
				if !logOut {
					dr[j] = e
				}
			}
		}
		for j := range s {
			if logOut {
				s[j] = fm.log(s[j])
			} else {
				s[j] = 1 / s[j]
			}
		}
		for i := 0; i < r; i++ {
			xr, dr := xb[i*inner:(i+1)*inner], db[i*inner:(i+1)*inner]
			for j := range dr {
				if logOut {
					dr[j] = (xr[j] - m[j]) - s[j]
				} else {
					dr[j] *= s[j]
				}
			}
		}
	}
}

// expShift32 sets d[i] = exp32(x[i] − m) and returns their sum: the
// exponentials of a softmax row, which math32.Exp made a twentieth of a
// transformer block.
func expShift32(d, x []float32, m float32) float32 {
	// expShiftRun32 then sum8(d), in one pass: the vector kernel adds
	// each block to the partial sums as it writes it.
	var p [8]float32
	x = x[:len(d)]
	for i := 0; i < len(d); {
		i += expShiftSumBlocks(d[i:], x[i:], m, &p)
		for end := min(i+8, len(d)); i < end; i++ {
			d[i] = expShiftOne32(x[i], m)
			p[i%8] += d[i]
		}
	}
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}

// expShiftRun32 sets d[i] = exp32(x[i] − m). The vector kernel takes the
// blocks whose values stay in exp32Core's range; the rest go through the
// same scalar code, so the values do not depend on which path computed
// them. With m = 0 it is Exp (x − 0 is x exactly).
func expShiftRun32(d, x []float32, m float32) {
	x = x[:len(d)]
	for i := 0; i < len(d); {
		i += expShiftBlocks(d[i:], x[i:], m)
		for end := min(i+8, len(d)); i < end; i++ {
			d[i] = expShiftOne32(x[i], m)
		}
	}
}

// expShiftOne32 is exp32(x − m) as the scalar blocks of expShiftRun32 and
// expShift32 compute it: exp32Core inlined where the vector kernel would
// have taken the value.
func expShiftOne32(x, m float32) float32 {
	v := x - m
	if v >= -87 && v <= 88 {
		return exp32Core(v)
	}
	return exp32(v)
}

// sum8 adds x in eight interleaved partial sums, combined pairwise: a
// fixed order on every platform, without the latency of one running sum.
func sum8[T Float](x []T) T {
	var p [8]T
	i := sum8Blocks(x, &p)
	for ; i+8 <= len(x); i += 8 {
		b := x[i : i+8 : i+8]
		p[0] += b[0]
		p[1] += b[1]
		p[2] += b[2]
		p[3] += b[3]
		p[4] += b[4]
		p[5] += b[5]
		p[6] += b[6]
		p[7] += b[7]
	}
	for j, v := range x[i:] {
		p[j] += v
	}
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}
