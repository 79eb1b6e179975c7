//go:build amd64 && !purego

package tensor

// simd_amd64.s is written by an avo program in a module of its own, so the
// library never depends on avo; its test checks that every kernel keeps
// the machine code of the hand-written original.
//
//go:generate go run -C internal/asmgen . -out ../../simd_amd64.s

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasSIMD reports whether the AVX2 elementwise kernels can run here.
var hasSIMD = cpu.X86.HasAVX2

// hasAVX512 reports whether the AVX-512 forms of the float32
// transcendental kernels (sigmoid, tanh, softplus, GELU, their
// derivatives' and softmax's exponentials) can run here: they process 16
// lanes where the AVX2 ones process 8, with the same bits.
var hasAVX512 = hasSIMD && cpu.X86.HasAVX512F

// wideUnary runs the AVX-512 kernel wide over d and x where the CPU has
// it, then the AVX2 kernel narrow over what wide left (a tail shorter
// than 16, or a block wide hands back, whose first half narrow may still
// take), and returns how many elements they wrote.
func wideUnary(d, x []float32, wide, narrow func(d, x *float32, n int) int) int {
	n := 0
	if hasAVX512 && len(d) >= 16 {
		n = wide(unsafe.SliceData(d), unsafe.SliceData(x), len(d))
	}
	if len(d)-n < 8 {
		return n
	}
	return n + narrow(unsafe.SliceData(d[n:]), unsafe.SliceData(x[n:]), len(d)-n)
}

// wideBinary is wideUnary for kernels of two operands.
func wideBinary(d, v, x []float32, wide, narrow func(d, v, x *float32, n int) int) int {
	n := 0
	if hasAVX512 && len(d) >= 16 {
		n = wide(unsafe.SliceData(d), unsafe.SliceData(v), unsafe.SliceData(x), len(d))
	}
	if len(d)-n < 8 {
		return n
	}
	return n + narrow(unsafe.SliceData(d[n:]), unsafe.SliceData(v[n:]), unsafe.SliceData(x[n:]), len(d)-n)
}

// The AVX-512 kernels, implemented in simd_amd64.s.

//go:noescape
func sigmoidAVX512(d, x *float32, n int) int

//go:noescape
func tanhAVX512(d, x *float32, n int) int

//go:noescape
func sigmoidGradAVX512(d, v, x *float32, n int) int

//go:noescape
func softplusAVX512(d, x *float32, n int) int

//go:noescape
func geluAVX512(d, x *float32, n int) int

//go:noescape
func geluGradAVX512(d, v, x *float32, n int) int

//go:noescape
func expShiftAVX512(d, x *float32, n int, m float32) int

// sigmoidAVX2 is implemented in simd_amd64.s.
//
//go:noescape
func sigmoidAVX2(d, x *float32, n int) int

// sigmoidBlocks runs the vector sigmoid over d and x (same length) as far
// as it can and returns how many elements it wrote.
func sigmoidBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideUnary(d, x, sigmoidAVX512, sigmoidAVX2)
}

// tanhAVX2 is implemented in simd_amd64.s.
//
//go:noescape
func tanhAVX2(d, x *float32, n int) int

// tanhBlocks runs the vector tanh over d and x (same length) as far as it
// can and returns how many elements it wrote.
func tanhBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideUnary(d, x, tanhAVX512, tanhAVX2)
}

// Binary arithmetic on contiguous runs, implemented in simd_amd64.s. Each
// returns how many leading elements it wrote (the rest is left to Go).
//
//go:noescape
func addAVX2F32(d, x, y unsafe.Pointer, n int) int

//go:noescape
func mulAVX2F32(d, x, y unsafe.Pointer, n int) int

//go:noescape
func subAVX2F32(d, x, y unsafe.Pointer, n int) int

//go:noescape
func addAVX2F64(d, x, y unsafe.Pointer, n int) int

//go:noescape
func mulAVX2F64(d, x, y unsafe.Pointer, n int) int

//go:noescape
func subAVX2F64(d, x, y unsafe.Pointer, n int) int

// arithBlocks applies the vector kernel for op ('+', '*' or '-') to the
// leading elements of d, x and y (x and y at least as long as d) and
// returns how many it wrote.
func arithBlocks[T Float](op byte, d, x, y []T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	pd, px, py := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y))
	var zero T
	if _, ok := any(zero).(float32); ok {
		switch op {
		case '+':
			return addAVX2F32(pd, px, py, len(d))
		case '*':
			return mulAVX2F32(pd, px, py, len(d))
		case '-':
			return subAVX2F32(pd, px, py, len(d))
		}
		return 0
	}
	switch op {
	case '+':
		return addAVX2F64(pd, px, py, len(d))
	case '*':
		return mulAVX2F64(pd, px, py, len(d))
	case '-':
		return subAVX2F64(pd, px, py, len(d))
	}
	return 0
}

//go:noescape
func reluAVX2F32(d, x unsafe.Pointer, n int) int

//go:noescape
func reluAVX2F64(d, x unsafe.Pointer, n int) int

//go:noescape
func reluGradAVX2F32(d, v, y unsafe.Pointer, n int) int

//go:noescape
func reluGradAVX2F64(d, v, y unsafe.Pointer, n int) int

// reluBlocks applies the vector ReLU to the leading elements of d and x
// and returns how many it wrote.
func reluBlocks[T Float](d, x []T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	pd, px := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x))
	var zero T
	if _, ok := any(zero).(float32); ok {
		return reluAVX2F32(pd, px, len(d))
	}
	return reluAVX2F64(pd, px, len(d))
}

// reluGradBlocks applies the vector ReLU cotangent v·sign(y) to the
// leading elements and returns how many it wrote.
func reluGradBlocks[T Float](d, v, y []T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	pd, pv, py := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(v)), unsafe.Pointer(unsafe.SliceData(y))
	var zero T
	if _, ok := any(zero).(float32); ok {
		return reluGradAVX2F32(pd, pv, py, len(d))
	}
	return reluGradAVX2F64(pd, pv, py, len(d))
}

//go:noescape
func sigmoidGradAVX2(d, v, x *float32, n int) int

// sigmoidGradBlocks runs the vector sigmoid derivative over d, v and x
// (same length) as far as it can and returns how many elements it wrote.
func sigmoidGradBlocks(d, v, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideBinary(d, v, x, sigmoidGradAVX512, sigmoidGradAVX2)
}

// softplusAVX2 is implemented in simd_amd64.s.
//
//go:noescape
func softplusAVX2(d, x *float32, n int) int

// softplusBlocks runs the vector softplus over d and x (same length) as
// far as it can and returns how many elements it wrote.
func softplusBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideUnary(d, x, softplusAVX512, softplusAVX2)
}

// expAVX2F64 is implemented in simd_amd64.s.
//
//go:noescape
func expAVX2F64(d, x *float64, n int) int

// expBlocks64 runs the vector exp64Core over d and x (x at least as long
// as d) as far as it can and returns how many elements it wrote.
func expBlocks64(d, x []float64) int {
	if !hasSIMD || len(d) < 4 {
		return 0
	}
	return expAVX2F64(unsafe.SliceData(d), unsafe.SliceData(x), len(d))
}

// rotAVX2F64 is implemented in simd_amd64.s.
//
//go:noescape
func rotAVX2F64(zi, zj *float64, n int, c, s float64) int

// rotBlocks applies the rotation of rotate to the leading elements of zi
// and zj (zj at least as long as zi) with the vector kernel, for float64,
// and returns how many it did.
func rotBlocks[T Float](zi, zj []T, c, s T) int {
	if !hasSIMD || len(zi) < 4 {
		return 0
	}
	if zi64, ok := any(zi).([]float64); ok {
		return rotAVX2F64(unsafe.SliceData(zi64), unsafe.SliceData(any(zj).([]float64)), len(zi), float64(c), float64(s))
	}
	return 0
}

// hasFMA reports whether the kernels that use fused multiply-adds (the
// symmetric matrix-vector product) can run here.
var hasFMA = hasSIMD && cpu.X86.HasFMA

// symvColsAVX2F64 and symvColsAVX2F32 are implemented in simd_amd64.s.
//
//go:noescape
func symvColsAVX2F64(a *float64, lda int, x, y *float64, n int, alpha, dots *float64) int

//go:noescape
func symvColsAVX2F32(a *float32, lda int, x, y *float32, n int, alpha, dots *float32) int

// symvCols does the work of symvColsScalar with the vector kernel of T
// and returns how many rows it did (a multiple of the kernel's lanes, 4
// for float64 and 8 for float32; the caller finishes the rest), adding
// the lanes of each dot product into dots[k] in pairs.
func symvCols[T Float](a []T, lda int, x, y []T, alpha *[4]T, dots *[4]T) int {
	n := len(y)
	w := 32 / int(unsafe.Sizeof(y[0])) // lanes of a 256-bit register
	if !hasFMA || n < w {
		return 0
	}
	_ = a[3*lda+n-1]
	_ = x[n-1]
	var lanes [32]T
	var done int
	switch a := any(a).(type) {
	case []float64:
		done = symvColsAVX2F64(unsafe.SliceData(a), lda, unsafe.SliceData(any(x).([]float64)),
			unsafe.SliceData(any(y).([]float64)), n, &any(alpha).(*[4]float64)[0], &any(&lanes).(*[32]float64)[0])
	case []float32:
		done = symvColsAVX2F32(unsafe.SliceData(a), lda, unsafe.SliceData(any(x).([]float32)),
			unsafe.SliceData(any(y).([]float32)), n, &any(alpha).(*[4]float32)[0], &any(&lanes).(*[32]float32)[0])
	}
	for k := range 4 {
		dots[k] += laneSum(lanes[w*k : w*(k+1)])
	}
	return done
}

// dotColsAVX2F64, dotColsAVX2F32, axpyColsAVX2F64 and axpyColsAVX2F32 are
// implemented in simd_amd64.s.
//
//go:noescape
func dotColsAVX2F64(a *float64, lda int, x *float64, n int, dots *float64) int

//go:noescape
func dotColsAVX2F32(a *float32, lda int, x *float32, n int, dots *float32) int

//go:noescape
func axpyColsAVX2F64(a *float64, lda int, y *float64, n int, alpha *float64) int

//go:noescape
func axpyColsAVX2F32(a *float32, lda int, y *float32, n int, alpha *float32) int

// dotCols adds to dots[k] the dot products of the four vectors
// a[k·lda:][:len(x)] with x, over the elements the vector kernel of T
// takes, and returns how many that is (the caller finishes the rest).
func dotCols[T Float](a []T, lda int, x []T, dots *[4]T) int {
	n := len(x)
	w := 32 / int(unsafe.Sizeof(x[0]))
	if !hasFMA || n < w {
		return 0
	}
	_ = a[3*lda+n-1]
	var lanes [32]T
	var done int
	switch a := any(a).(type) {
	case []float64:
		done = dotColsAVX2F64(unsafe.SliceData(a), lda, unsafe.SliceData(any(x).([]float64)), n, &any(&lanes).(*[32]float64)[0])
	case []float32:
		done = dotColsAVX2F32(unsafe.SliceData(a), lda, unsafe.SliceData(any(x).([]float32)), n, &any(&lanes).(*[32]float32)[0])
	}
	for k := range 4 {
		dots[k] += laneSum(lanes[w*k : w*(k+1)])
	}
	return done
}

// axpyCols sets y[i] += Σₖ alpha[k]·a[k·lda+i] over the elements the
// vector kernel of T takes, with symvCols's arithmetic, and returns how
// many that is (the caller finishes the rest).
func axpyCols[T Float](a []T, lda int, y []T, alpha *[4]T) int {
	n := len(y)
	w := 32 / int(unsafe.Sizeof(y[0]))
	if !hasFMA || n < w {
		return 0
	}
	_ = a[3*lda+n-1]
	switch a := any(a).(type) {
	case []float64:
		return axpyColsAVX2F64(unsafe.SliceData(a), lda, unsafe.SliceData(any(y).([]float64)), n, &any(alpha).(*[4]float64)[0])
	case []float32:
		return axpyColsAVX2F32(unsafe.SliceData(a), lda, unsafe.SliceData(any(y).([]float32)), n, &any(alpha).(*[4]float32)[0])
	}
	return 0
}

// laneSum adds the 4 or 8 lanes in s in pairs: (s₀ + s₁) + (s₂ + s₃) for
// four, and two such sums added for eight.
func laneSum[T Float](s []T) T {
	if len(s) == 4 {
		return (s[0] + s[1]) + (s[2] + s[3])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

//go:noescape
func geluAVX2(d, x *float32, n int) int

//go:noescape
func geluGradAVX2(d, v, x *float32, n int) int

// geluBlocks runs the vector gelu32 over d and x (same length) as far as
// it can and returns how many elements it wrote.
func geluBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideUnary(d, x, geluAVX512, geluAVX2)
}

// geluGradBlocks runs the vector geluGrad32 over d, v and x (same length)
// as far as it can and returns how many elements it wrote.
func geluGradBlocks(d, v, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideBinary(d, v, x, geluGradAVX512, geluGradAVX2)
}

//go:noescape
func expShiftAVX2(d, x *float32, n int, m float32) int

// expShiftBlocks sets d[i] = exp32(x[i] − m) with the vector exp32Core as
// far as every value stays in its range and returns how many elements it
// wrote (a multiple of 8).
func expShiftBlocks(d, x []float32, m float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	n := 0
	if hasAVX512 && len(d) >= 16 {
		n = expShiftAVX512(unsafe.SliceData(d), unsafe.SliceData(x), len(d), m)
	}
	if len(d)-n < 8 {
		return n
	}
	return n + expShiftAVX2(unsafe.SliceData(d[n:]), unsafe.SliceData(x[n:]), len(d)-n, m)
}

//go:noescape
func expShiftSumAVX2(d, x *float32, n int, m float32, acc *float32) int

//go:noescape
func expShiftSumAVX512(d, x *float32, n int, m float32, acc *float32) int

// expShiftSumBlocks is expShiftBlocks that also adds each value written,
// d[i], to acc[i mod 8] in order of i: sum8's partial sums.
func expShiftSumBlocks(d, x []float32, m float32, acc *[8]float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	n := 0
	if hasAVX512 && len(d) >= 16 {
		n = expShiftSumAVX512(unsafe.SliceData(d), unsafe.SliceData(x), len(d), m, &acc[0])
	}
	if len(d)-n < 8 {
		return n
	}
	return n + expShiftSumAVX2(unsafe.SliceData(d[n:]), unsafe.SliceData(x[n:]), len(d)-n, m, &acc[0])
}

//go:noescape
func maxAVX2F32(x *float32, n int, acc *float32) int

// maxBlocks folds x's leading blocks of 8 into the lane maxima acc (lane
// j takes x[i] for i ≡ j mod 8) and returns how many elements it read, or
// −1 when one of them is NaN.
func maxBlocks(x []float32, acc *[8]float32) int {
	if !hasSIMD || len(x) < 8 {
		return 0
	}
	return maxAVX2F32(unsafe.SliceData(x), len(x), &acc[0])
}

//go:noescape
func sum8AVX2F32(x, acc unsafe.Pointer, n int) int

//go:noescape
func sum8AVX2F64(x, acc unsafe.Pointer, n int) int

//go:noescape
func sqDev8AVX2F32(x, acc, m unsafe.Pointer, n int) int

//go:noescape
func sqDev8AVX2F64(x, acc, m unsafe.Pointer, n int) int

//go:noescape
func dot8AVX2F32(x, y, acc unsafe.Pointer, n int) int

//go:noescape
func dot8AVX2F64(x, y, acc unsafe.Pointer, n int) int

// dot8Blocks is sum8Blocks for the products x[i]·y[i] (y at least as long
// as x), dot8's terms.
func dot8Blocks[T Float](x, y []T, p *[8]T) int {
	if !hasSIMD || len(x) < 8 {
		return 0
	}
	px, py, pp := unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y)), unsafe.Pointer(p)
	if _, ok := any(x).([]float32); ok {
		return dot8AVX2F32(px, py, pp, len(x))
	}
	return dot8AVX2F64(px, py, pp, len(x))
}

//go:noescape
func scaleAVX2F32(d, x, s unsafe.Pointer, n int) int

//go:noescape
func scaleAVX2F64(d, x, s unsafe.Pointer, n int) int

// scaleBlocks sets d[i] = x[i]·s over the leading full vectors of d (x as
// long) and returns how many elements it wrote.
func scaleBlocks[T Float](d, x []T, s T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	pd, px, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(&s)
	if _, ok := any(d).([]float32); ok {
		return scaleAVX2F32(pd, px, ps, len(d))
	}
	return scaleAVX2F64(pd, px, ps, len(d))
}

//go:noescape
func affineAVX2F32(d, x, sb unsafe.Pointer, n int) int

//go:noescape
func affineAVX2F64(d, x, sb unsafe.Pointer, n int) int

// sum8Blocks adds x's leading blocks of 8 to sum8's partial sums p (x[i]
// to p[i mod 8], in order) and returns how many elements it added.
func sum8Blocks[T Float](x []T, p *[8]T) int {
	if !hasSIMD || len(x) < 8 {
		return 0
	}
	px, pp := unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(p)
	if _, ok := any(x).([]float32); ok {
		return sum8AVX2F32(px, pp, len(x))
	}
	return sum8AVX2F64(px, pp, len(x))
}

// sqDev8Blocks is sum8Blocks for the squares (x[i] − m)², sqDev8's terms.
func sqDev8Blocks[T Float](x []T, m T, p *[8]T) int {
	if !hasSIMD || len(x) < 8 {
		return 0
	}
	px, pp, pm := unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(p), unsafe.Pointer(&m)
	if _, ok := any(x).([]float32); ok {
		return sqDev8AVX2F32(px, pp, pm, len(x))
	}
	return sqDev8AVX2F64(px, pp, pm, len(x))
}

// affineBlocks sets d[i] = x[i]·s + b over the leading full vectors of d
// (x as long) and returns how many elements it wrote.
func affineBlocks[T Float](d, x []T, s, b T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	sb := [2]T{s, b}
	pd, px, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(&sb)
	if _, ok := any(d).([]float32); ok {
		return affineAVX2F32(pd, px, ps, len(d))
	}
	return affineAVX2F64(pd, px, ps, len(d))
}

//go:noescape
func leakyAVX2F32(d, v, x, slope unsafe.Pointer, n int) int

//go:noescape
func leakyAVX2F64(d, v, x, slope unsafe.Pointer, n int) int

// leakyBlocks sets d[i] = v[i]·(1 if x[i] > 0 else slope) over whole
// vectors and returns how many elements it wrote.
func leakyBlocks[T Float](d, v, x []T, slope T) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	v, x = v[:len(d)], x[:len(d)]
	pd, pv, px, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(v)), unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(&slope)
	if _, ok := any(d).([]float32); ok {
		return leakyAVX2F32(pd, pv, px, ps, len(d))
	}
	return leakyAVX2F64(pd, pv, px, ps, len(d))
}

//go:noescape
func finiteAVX2F32(x unsafe.Pointer, n int) int

//go:noescape
func finiteAVX2F64(x unsafe.Pointer, n int) int

// finiteBlocks checks the leading elements of xs with the vector kernel:
// it returns how many it found finite (a multiple of 32 float32 or 16
// float64 values), or −1 when one of them is NaN or ±Inf.
func finiteBlocks[T Float](xs []T) int {
	if !hasSIMD || len(xs) < 32 {
		return 0
	}
	p := unsafe.Pointer(unsafe.SliceData(xs))
	if _, ok := any(xs).([]float32); ok {
		return finiteAVX2F32(p, len(xs))
	}
	return finiteAVX2F64(p, len(xs))
}

//go:noescape
func tanhGradAVX2(d, v, y *float32, n int) int

//go:noescape
func tanhGradAVX512(d, v, y *float32, n int) int

// tanhGradBlocks runs the vector tanh derivative rule, d = v·(1 − y²), over
// d, v and y (same length) and returns how many elements it wrote.
func tanhGradBlocks(d, v, y []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return wideBinary(d, v, y, tanhGradAVX512, tanhGradAVX2)
}
