package tensor

import (
	"math"
	"runtime"
	"slices"

	"github.com/chewxy/math32"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// Reductions. Every reduction goes through one driver (reduceInto) that
// picks between two layouts:
//
//   - a contiguous input whose reduced axes form one block, seen as
//     (outer, R, inner): with inner == 1 each output is one contiguous run
//     (the last-axis case); otherwise each output row is a sum of R
//     contiguous rows (the axis-0 / bias-gradient case). Both are straight
//     loops.
//   - anything else (transposed, sliced, expanded inputs, scattered axes):
//     walk over the input with the reduced axes innermost, so the runs for
//     one output arrive together.
//
// Sums are accumulated in the input's dtype but pairwise (blocks of
// pairBlock elements, combined in a balanced tree), so the rounding error
// grows like log n rather than n: the float32 sum of 10⁶ ones is exactly 10⁶.

// pairBlock is the run length below which sums are accumulated directly.
const pairBlock = 128

// redKind selects a reduction.
type redKind int

const (
	redSum redKind = iota
	redMean
	redMax
	redMin
	redProd
	redLSE
	redVar
)

var redNames = [...]string{"Sum", "Mean", "Max", "Min", "Prod", "LogSumExp", "Variance"}

// fmath holds the transcendental functions and reduction kernels of one
// dtype, built once, so generic code stays in that dtype (float32 never
// round-trips through float64).
type fmath[T Float] struct {
	exp, log                             func(T) T
	nan, inf                             T
	sum, dev, sqDev, lse, max, min, prod *redKernel[T]
}

func newFmath[T Float](exp, log func(T) T) *fmath[T] {
	inf := T(math.Inf(1))
	return &fmath[T]{exp: exp, log: log, nan: T(math.NaN()), inf: inf,
		sum: sumKernel[T](), dev: devKernel[T](), sqDev: sqDevKernel[T](), lse: expKernel(exp),
		max: maxKernel(inf), min: minKernel(inf), prod: prodKernel[T]()}
}

var (
	fmath32 = newFmath[float32](exp32, math32.Log)
	fmath64 = newFmath[float64](math.Exp, math.Log)
)

// Sum returns the sum over axes (nil: all axes; negative axes count from the
// end). With keepdims the reduced axes stay with size 1. Summing over a
// size-0 axis gives 0. It panics if an axis is out of range or repeated.
func Sum(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redSum, nil, a, axes, keepdims, 0)
}

// SumInto is Sum writing into dst, which must have the result's shape and
// a's dtype (nil allocates) and must not overlap a. It returns dst.
func SumInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redSum, dst, a, axes, keepdims, 0)
}

// Mean returns the arithmetic mean over axes (see Sum). The mean over a
// size-0 axis is NaN.
func Mean(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMean, nil, a, axes, keepdims, 0)
}

// MeanInto is Mean writing into dst (see SumInto).
func MeanInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMean, dst, a, axes, keepdims, 0)
}

// Max returns the maximum over axes (see Sum); NaN propagates. It panics
// when a reduced axis has size 0.
func Max(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMax, nil, a, axes, keepdims, 0)
}

// MaxInto is Max writing into dst (see SumInto).
func MaxInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMax, dst, a, axes, keepdims, 0)
}

// Min returns the minimum over axes (see Sum); NaN propagates. It panics
// when a reduced axis has size 0.
func Min(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMin, nil, a, axes, keepdims, 0)
}

// MinInto is Min writing into dst (see SumInto).
func MinInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redMin, dst, a, axes, keepdims, 0)
}

// Prod returns the product over axes (see Sum). The product over a size-0
// axis is 1.
func Prod(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redProd, nil, a, axes, keepdims, 0)
}

// ProdInto is Prod writing into dst (see SumInto).
func ProdInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redProd, dst, a, axes, keepdims, 0)
}

// LogSumExp returns log Σ exp(a) over axes (see Sum), computed stably by
// shifting by the maximum: large inputs do not overflow and a slice of
// all −Inf gives −Inf (not NaN). Over a size-0 axis it is −Inf.
func LogSumExp(a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redLSE, nil, a, axes, keepdims, 0)
}

// LogSumExpInto is LogSumExp writing into dst (see SumInto).
func LogSumExpInto(dst, a *Tensor, axes []int, keepdims bool) *Tensor {
	return reduce(redLSE, dst, a, axes, keepdims, 0)
}

// Variance returns Σ(a − mean)² / (n − ddof) over axes (see Sum), where n is
// the number of elements reduced: ddof 0 is the population variance, ddof 1
// the unbiased sample variance. It is computed in two passes (mean first)
// for accuracy. When n − ddof <= 0 the result is NaN.
func Variance(a *Tensor, axes []int, keepdims bool, ddof int) *Tensor {
	return reduce(redVar, nil, a, axes, keepdims, ddof)
}

// VarianceInto is Variance writing into dst (see SumInto).
func VarianceInto(dst, a *Tensor, axes []int, keepdims bool, ddof int) *Tensor {
	return reduce(redVar, dst, a, axes, keepdims, ddof)
}

// reducePlan describes a reduction of a tensor over a set of axes.
type reducePlan struct {
	reduced  []bool // per input axis
	shape    []int  // result shape (respecting keepdims)
	keepDims []int  // result shape with keepdims, the layout of out/aux
	R, O     int    // elements per output, number of outputs
}

// planBufs backs a reducePlan's slices for up to 8 dimensions, so that
// planning a reduction does not allocate; it lives on the caller's stack.
type planBufs struct {
	reduced     [8]bool
	shape, keep [8]int
}

// planReduce plans a reduction, with the plan's slices in b when they fit.
func planReduce(op string, a *Tensor, axes []int, keepdims bool, b *planBufs) reducePlan {
	return planAxes(a, normAxes(op, axes, a.shape), keepdims, b)
}

// planAxes is planReduce for axes that are in range and distinct.
func planAxes(a *Tensor, ax []int, keepdims bool, b *planBufs) reducePlan {
	var p reducePlan
	p.R, p.O = 1, 1
	if a.Dim() <= len(b.reduced) {
		p.reduced = b.reduced[:a.Dim()]
		p.shape = b.shape[:0]
		p.keepDims = b.keep[:0]
	} else {
		p.reduced = make([]bool, a.Dim())
	}
	for _, i := range ax {
		p.reduced[i] = true
	}
	for i, d := range a.shape {
		if p.reduced[i] {
			p.R *= d
			p.keepDims = append(p.keepDims, 1)
			if keepdims {
				p.shape = append(p.shape, 1)
			}
		} else {
			p.O *= d
			p.keepDims = append(p.keepDims, d)
			p.shape = append(p.shape, d)
		}
	}
	if p.shape == nil {
		p.shape = []int{}
	}
	return p
}

// reduce validates, allocates or checks dst, and dispatches on dtype.
func reduce(kind redKind, dst, a *Tensor, axes []int, keepdims bool, ddof int) *Tensor {
	op := redNames[kind]
	var bufs planBufs
	p := planReduce(op, a, axes, keepdims, &bufs)
	if p.R == 0 && (kind == redMax || kind == redMin) {
		Fail(op, "reduction over a size-0 axis (axes %v, shape %v) has no identity", cloneInts(axes), fmtShape(a.shape))
	}
	// The plan's shape lives on this stack: copy it before New keeps it.
	if dst == nil {
		dst = newUninitOn(op, a.Device(), a.dtype, cloneInts(p.shape)...)
	} else if dst.dtype != a.dtype || !slices.Equal(dst.shape, p.shape) {
		Fail(op, "destination %v does not match result %v %v (operands %s)", describe(dst), fmtShape(cloneInts(p.shape)), a.dtype, describe(a))
	}
	checkDst(op, dst)
	if dst.dev != nil || a.dev != nil {
		var ax []int
		for i, r := range p.reduced {
			if r {
				ax = append(ax, i)
			}
		}
		return gpuReduce(kind, dst, a, ax, ddof)
	}
	return reduceRun(kind, dst, a, &p, ddof)
}

// reduceTrusted is reduce after validation, the trusted kernel graph calls
// (internal/unchecked): the axes are in range and distinct, dst has the
// result's shape and a's dtype, and max and min reduce no size-0 axis.
func reduceTrusted(kind int, dst, a *Tensor, axes []int, keepdims bool, ddof int) *Tensor {
	if dst.dev != nil || a.dev != nil {
		return gpuReduce(redKind(kind), dst, a, axes, ddof)
	}
	var bufs planBufs
	p := planAxes(a, axes, keepdims, &bufs)
	return reduceRun(redKind(kind), dst, a, &p, ddof)
}

// reduceRun computes the planned reduction into dst.
func reduceRun(kind redKind, dst, a *Tensor, p *reducePlan, ddof int) *Tensor {
	out := dst
	if !dst.IsContiguous() || sharesStorage(dst, a) { // a must stay intact while it is read
		out = New(a.dtype, cloneInts(p.shape)...)
	}
	if a.dtype == Float32 {
		reduceT(kind, storage[float32](out)[out.offset:out.offset+out.Size()], a, p, ddof, fmath32)
	} else {
		reduceT(kind, storage[float64](out)[out.offset:out.offset+out.Size()], a, p, ddof, fmath64)
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// reduceT computes reduction kind of a into out (contiguous, p.O elements).
func reduceT[T Float](kind redKind, out []T, a *Tensor, p *reducePlan, ddof int, fm *fmath[T]) {
	switch kind {
	case redSum:
		reduceInto(out, a, p, fm.sum, nil)
	case redMean:
		reduceInto(out, a, p, fm.sum, nil)
		divBy(out, T(p.R)) // 0/0 = NaN for an empty mean
	case redMax:
		reduceInto(out, a, p, fm.max, nil)
	case redMin:
		reduceInto(out, a, p, fm.min, nil)
	case redProd:
		reduceInto(out, a, p, fm.prod, nil)
	case redLSE:
		if p.R == 0 {
			fillT1(out, -fm.inf)
			return
		}
		shift := make([]T, len(out))
		reduceInto(shift, a, p, fm.max, nil)
		for i, m := range shift {
			if m-m != 0 && m == m { // ±Inf: shifting would make Inf−Inf = NaN
				shift[i] = 0
			}
		}
		reduceInto(out, a, p, fm.lse, shift)
		for i, s := range out {
			out[i] = shift[i] + fm.log(s)
		}
	case redVar:
		mean := make([]T, len(out))
		reduceInto(mean, a, p, fm.sum, nil)
		divBy(mean, T(p.R))
		reduceInto(out, a, p, fm.sqDev, mean)
		n := p.R - ddof
		if n <= 0 {
			fillT1(out, fm.nan)
			return
		}
		// Corrected two-pass (Chan, Golub and LeVeque): subtracting
		// (Σd)²/R cancels the rounding error of the mean to first order,
		// which matters in float32 when the mean is large.
		dev := make([]T, len(out))
		reduceInto(dev, a, p, fm.dev, mean)
		for i, d := range dev {
			out[i] -= d * d / T(p.R)
		}
		divBy(out, T(n))
	}
}

// divBy divides rather than multiplying by 1/d: one rounding, not two.
func divBy[T Float](x []T, d T) {
	for i := range x {
		x[i] /= d
	}
}

func fillT1[T Float](x []T, v T) {
	for i := range x {
		x[i] = v
	}
}

// redKernel is one reduction for one dtype. aux is an optional per-output
// value (the shift of LogSumExp, the mean of Variance); kernels that do not
// use it get 0 or nil.
type redKernel[T Float] struct {
	identity T
	// run reduces the strided run x[off], x[off+stride], ... (n elements).
	run func(x []T, off, n, stride int, aux T) T
	// rows folds one contiguous row into dst elementwise.
	rows func(dst, row, aux []T)
	// merge combines partial results of runs for one output.
	merge func(parts []T) T
	// additive kernels combine partials by + and use pairwise row sums.
	additive bool
}

// reduceInto computes the reduction of a described by p into out, laid out
// as the keepdims shape p.keepDims in row-major order.
func reduceInto[T Float](out []T, a *Tensor, p *reducePlan, k *redKernel[T], aux []T) {
	if p.O == 0 {
		return
	}
	if p.R == 0 {
		fillT1(out, k.identity)
		return
	}
	if outer, inner, ok := blockLayout(a, p); ok {
		x := storage[T](a)[a.offset : a.offset+a.Size()]
		R := p.R
		if inner == 1 {
			var z T
			for o := 0; o < outer; o++ {
				if aux != nil {
					z = aux[o]
				}
				out[o] = k.run(x, o*R, R, 1, z)
			}
			return
		}
		var scratch []T
		if k.additive {
			scratch = make([]T, inner*pairDepth(R))
		}
		for o := 0; o < outer; o++ {
			var auxRow []T
			if aux != nil {
				auxRow = aux[o*inner : (o+1)*inner]
			}
			colReduce(out[o*inner:(o+1)*inner], x[o*R*inner:(o+1)*R*inner], R, auxRow, k, scratch)
		}
		return
	}
	reduceWalk(out, a, p, k, aux)
}

// blockLayout reports whether a is contiguous with its reduced axes (of
// size > 1) forming one block, and the sizes before and after that block.
func blockLayout(a *Tensor, p *reducePlan) (outer, inner int, ok bool) {
	if !a.IsContiguous() {
		return 0, 0, false
	}
	outer, inner = 1, 1
	state := 0 // 0 before the block, 1 inside, 2 after
	for i, d := range a.shape {
		if d == 1 {
			continue
		}
		switch {
		case p.reduced[i] && state == 2:
			return 0, 0, false
		case p.reduced[i]:
			state = 1
		case state == 0:
			outer *= d
		default:
			state = 2
			inner *= d
		}
	}
	return outer, inner, true
}

// pairDepth is the number of scratch rows colReduce needs for r rows.
func pairDepth(r int) int {
	d := 0
	for r > pairBlock {
		r = (r + 1) / 2
		d++
	}
	return d
}

// colReduce folds the r contiguous rows of x (each len(dst) long) into dst.
// Additive kernels split the rows in halves recursively, each half summed
// into its own scratch row, so the error grows like log r.
func colReduce[T Float](dst, x []T, r int, aux []T, k *redKernel[T], scratch []T) {
	colReduceOn(dst, x, r, aux, k, scratch, runtime.GOMAXPROCS(0))
}

// colReduceOn is colReduce on up to par goroutines.
func colReduceOn[T Float](dst, x []T, r int, aux []T, k *redKernel[T], scratch []T, par int) {
	n := len(dst)
	if !k.additive || r <= pairBlock {
		fillT1(dst, k.identity)
		for i := 0; i < r; i++ {
			k.rows(dst, x[i*n:(i+1)*n], aux)
		}
		return
	}
	h := r / 2
	tmp, rest := scratch[:n], scratch[n:]
	if par > 1 && r*n >= 2*parallelElemMin {
		// The halves are independent: each on a goroutine (the second with
		// scratch of its own) gives the serial result bit for bit. GEMM's
		// polling helpers run them: a goroutine started per call waited
		// for the OS to wake a thread, and a transformer block's bias
		// gradients took 3.5 times as long as alone.
		rest2 := make([]T, len(rest))
		gemm.ParallelFor(2, 2, func(t int) {
			if t == 0 {
				colReduceOn(dst, x[:h*n], h, aux, k, rest, par/2)
			} else {
				colReduceOn(tmp, x[h*n:], r-h, aux, k, rest2, par-par/2)
			}
		})
	} else {
		colReduceOn(dst, x[:h*n], h, aux, k, scratch, 1)
		colReduceOn(tmp, x[h*n:], r-h, aux, k, rest, 1)
	}
	for j := range dst {
		dst[j] += tmp[j]
	}
}

// reduceWalk handles arbitrary strides: it walks a with kept axes outermost
// and reduced axes innermost, so each output's runs arrive consecutively.
func reduceWalk[T Float](out []T, a *Tensor, p *reducePlan, k *redKernel[T], aux []T) {
	nd := a.Dim()
	shape := make([]int, 0, nd)
	aStr := make([]int, 0, nd)
	oStr := make([]int, 0, nd)
	outStrides := rowMajorStrides(p.keepDims)
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < nd; i++ {
			if p.reduced[i] == (pass == 1) {
				shape = append(shape, a.shape[i])
				aStr = append(aStr, a.strides[i])
				if p.reduced[i] {
					oStr = append(oStr, 0)
				} else {
					oStr = append(oStr, outStrides[i])
				}
			}
		}
	}
	x := storage[T](a)
	cur := -1
	parts := make([]T, 0, 16)
	flush := func() {
		if cur >= 0 {
			out[cur] = k.merge(parts)
			parts = parts[:0]
		}
	}
	var z T
	walk(shape, 2, [maxOperands]int{0, a.offset}, [maxOperands][]int{oStr, aStr}, func(o [maxOperands]int, n int, s [maxOperands]int) {
		if s[0] != 0 { // every reduced axis has size 1: one element per output
			for i := 0; i < n; i++ {
				oi := o[0] + i*s[0]
				if aux != nil {
					z = aux[oi]
				}
				out[oi] = k.run(x, o[1]+i*s[1], 1, 1, z)
			}
			return
		}
		if o[0] != cur {
			flush()
			cur = o[0]
		}
		if aux != nil {
			z = aux[cur]
		}
		parts = append(parts, k.run(x, o[1], n, s[1], z))
	})
	flush()
}

// ArgMax returns, for every position of the other axes in row-major order,
// the index along axis of the largest element (the first one on ties; the
// first NaN if there is one, as NumPy does). It panics if axis is out of
// range or has size 0.
func ArgMax(a *Tensor, axis int) []int { return argReduce("ArgMax", a, axis, true) }

// ArgMin is ArgMax for the smallest element.
func ArgMin(a *Tensor, axis int) []int { return argReduce("ArgMin", a, axis, false) }

func argReduce(op string, a *Tensor, axis int, isMax bool) []int {
	ax := normAxis(op, axis, a.shape)
	if a.shape[ax] == 0 {
		Fail(op, "axis %d of shape %v has size 0", axis, fmtShape(a.shape))
	}
	if a.dtype == Float32 {
		return argReduceT[float32](a, ax, isMax)
	}
	return argReduceT[float64](a, ax, isMax)
}

func argReduceT[T Float](a *Tensor, ax int, isMax bool) []int {
	n, st := a.shape[ax], a.strides[ax]
	shape := append(cloneInts(a.shape[:ax]), a.shape[ax+1:]...)
	strides := append(cloneInts(a.strides[:ax]), a.strides[ax+1:]...)
	res := make([]int, 0, shapeSize(shape))
	x := storage[T](a)
	if shapeSize(shape) == 0 {
		return res
	}
	walk(shape, 1, [maxOperands]int{a.offset}, [maxOperands][]int{strides}, func(o [maxOperands]int, m int, s [maxOperands]int) {
		for r := 0; r < m; r++ {
			off := o[0] + r*s[0]
			best, bi := x[off], 0
			if best == best {
				for i := 1; i < n; i++ {
					v := x[off+i*st]
					if v != v {
						bi = i
						break
					}
					if (isMax && v > best) || (!isMax && v < best) {
						best, bi = v, i
					}
				}
			}
			res = append(res, bi)
		}
	})
	return res
}

// SumTo sums a down to shape, which must broadcast to a's shape: leading
// axes that shape lacks are summed away and axes where shape has size 1 are
// summed with keepdims. It is the vector-Jacobian product of broadcasting
// (Expand) and always returns a new tensor. It panics if shape does not
// broadcast to a's shape.
func SumTo(a *Tensor, shape ...int) *Tensor {
	return sumTo(nil, a, shape)
}

// SumToInto is SumTo with the target shape taken from dst, writing into dst
// (which must have a's dtype and not overlap a). It returns dst.
func SumToInto(dst, a *Tensor) *Tensor {
	return sumTo(dst, a, dst.shape)
}

func sumTo(dst, a *Tensor, shape []int) *Tensor {
	var axesBuf [8]int
	axes, ok := sumToAxes(a, shape, axesBuf[:0])
	if !ok {
		Fail("SumTo", "shape %v does not broadcast to %v", fmtShape(shape), fmtShape(a.shape))
	}
	if dst == nil {
		dst = New(a.dtype, shape...)
	} else if dst.dtype != a.dtype {
		Fail("SumTo", "destination %s does not match source %s", describe(dst), describe(a))
	}
	v := sumToView(dst, a.Dim()-len(shape))
	reduce(redSum, &v, a, axes, true, 0)
	return dst
}

// sumToTrusted is SumToInto after validation, the trusted kernel graph
// calls (internal/unchecked): dst's shape broadcasts to a's, dst has a's
// dtype and does not overlap a.
func sumToTrusted(dst, a *Tensor) *Tensor {
	var axesBuf [8]int
	axes, _ := sumToAxes(a, dst.shape, axesBuf[:0])
	if dst.dev != nil || a.dev != nil {
		gpuSum("SumTo", dst, a, axes, false)
		return dst
	}
	v := sumToView(dst, a.Dim()-len(dst.shape))
	var bufs planBufs
	p := planAxes(a, axes, true, &bufs)
	reduceRun(redSum, &v, a, &p, 0)
	return dst
}

// sumToAxes appends to axes the axes of a that summing down to shape
// reduces; ok is false when shape does not broadcast to a's shape.
func sumToAxes(a *Tensor, shape, axes []int) (_ []int, ok bool) {
	lead := a.Dim() - len(shape)
	if lead < 0 {
		return axes, false
	}
	for i := 0; i < a.Dim(); i++ {
		switch {
		case i < lead:
			axes = append(axes, i)
		case shape[i-lead] == a.shape[i]:
		case shape[i-lead] == 1:
			axes = append(axes, i)
		default:
			return axes, false
		}
	}
	return axes, true
}

// sumToView returns dst seen with lead leading axes of size 1, the
// keepdims shape of the sum (any stride suits a size-1 axis).
func sumToView(dst *Tensor, lead int) Tensor {
	v := *dst
	v.shape = append(make([]int, lead), dst.shape...)
	v.strides = append(make([]int, lead), dst.strides...)
	for i := 0; i < lead; i++ {
		v.shape[i] = 1
	}
	return v
}
