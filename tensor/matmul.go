package tensor

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/chewxy/math32"
	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// gemmT dispatches C = alpha·op(A)·op(B) + beta·C to the dtype's GEMM. All
// matrix products in this package go through it.
func gemmT[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		gemm.Sgemm(transA, transB, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		gemm.Dgemm(transA, transB, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// gemmSerialT is gemmT on the calling goroutine alone.
func gemmSerialT[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		gemm.SgemmSerial(transA, transB, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		gemm.DgemmSerial(transA, transB, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// MatMulKernel describes the GEMM that MatMul and the factorisations use
// on this machine, such as "avx512f 6x32 (f32), 6x16 (f64); f32 mc 204 kc
// 320 nc 4096, f64 mc 126 kc 256 nc 2048; L1d 48 KiB, L2 1 MiB (cpuid
// 0x80000005/6)": the instruction set and register tiles, chosen at
// start-up from the CPU's features, and the cache blocking, chosen from
// the cache sizes the CPU reports. Benchmark reports print it so that a
// figure says which code produced it.
func MatMulKernel() string { return gemm.KernelName() + "; " + gemm.Blocking() }

// MatMul returns the matrix product of a and b with NumPy matmul semantics:
// a 1-D a is treated as a row vector (1, k) and a 1-D b as a column vector
// (k, 1), the added dimension being removed from the result; the leading
// (batch) dimensions of both operands broadcast, so (b, m, k)@(k, n) gives
// (b, m, n) and (2, 1, m, k)@(3, k, n) gives (2, 3, m, n). It panics with a
// *Error when the inner dimensions differ, the batch dimensions do not
// broadcast, an operand is a scalar or the dtypes differ.
func MatMul(a, b *Tensor) *Tensor { return matmul("MatMul", nil, a, b, false, false) }

// MatMulTo stores MatMul(a, b) in dst (nil allocates) and returns it. dst
// must have the result's shape and dtype; it may share memory with a or b
// (the product is then computed in a temporary first).
func MatMulTo(dst, a, b *Tensor) *Tensor { return matmul("MatMulTo", dst, a, b, false, false) }

// MatMulT returns op(a)·op(b), where op transposes the last two axes of an
// operand when its flag is set, without copying it (the transposition is
// folded into the GEMM). A 1-D operand is left as it is, as NumPy's .T
// leaves a vector; otherwise the semantics are MatMul's. Backward passes use
// it for dA = dC·Bᵀ and dB = Aᵀ·dC.
func MatMulT(a, b *Tensor, transA, transB bool) *Tensor {
	return matmul("MatMulT", nil, a, b, transA, transB)
}

// MatMulTTo is MatMulT writing into dst (nil allocates).
func MatMulTTo(dst, a, b *Tensor, transA, transB bool) *Tensor {
	return matmul("MatMulTTo", dst, a, b, transA, transB)
}

// matOperand describes how one operand's matrices are handed to GEMM.
type matOperand struct {
	t     *Tensor // the operand, or a contiguous copy of it
	trans bool    // pass to GEMM transposed
	ld    int     // leading dimension of the stored matrix
	bstr  []int   // strides over the broadcast batch dimensions (0 where broadcast)
}

// How matmul reads an operand: a matrix (or batch of them), or a 1-D
// operand promoted to a row (1, k) or a column (k, 1).
const (
	asMatrix = iota
	asRow
	asColumn
)

// logicalMatrix returns the shape and strides of the matrix matmul reads
// from t, after the optional transposition of its last two axes.
func logicalMatrix(t *Tensor, kind int, trans bool) (r, c, sr, sc int) {
	switch kind {
	case asRow:
		return 1, t.shape[0], 0, t.strides[0]
	case asColumn:
		return t.shape[0], 1, t.strides[0], 0
	}
	nd := len(t.shape)
	r, c, sr, sc = t.shape[nd-2], t.shape[nd-1], t.strides[nd-2], t.strides[nd-1]
	if trans {
		return c, r, sc, sr
	}
	return r, c, sr, sc
}

// layoutOf reports how the r×c matrix with strides (sr, sc) can be read by
// GEMM: as row-major (trans false) or as the transpose of a row-major
// matrix (trans true), with its leading dimension. ok is false when neither
// fits and the operand must be copied.
func layoutOf(r, c, sr, sc int) (trans bool, ld int, ok bool) {
	if (sc == 1 || c == 1) && (r == 1 || sr >= max(1, c)) {
		if r == 1 {
			return false, max(1, c), true
		}
		return false, sr, true
	}
	if (sr == 1 || r == 1) && (c == 1 || sc >= max(1, r)) {
		if c == 1 {
			return true, max(1, r), true
		}
		return true, sc, true
	}
	return false, 0, false
}

// prepOperand decides how GEMM reads t: in place when its matrices are
// row-major or transposed row-major with any row stride, else from a
// contiguous copy (which always fits). batch is the broadcast batch shape.
func prepOperand(t *Tensor, kind int, trans bool, batch []int) matOperand {
	tr, ld, ok := layoutOf(logicalMatrix(t, kind, trans))
	if !ok {
		t = t.Clone()
		tr, ld, _ = layoutOf(logicalMatrix(t, kind, trans))
	}
	o := matOperand{t: t, trans: tr, ld: ld}
	if len(batch) > 0 {
		// Strides over the output batch dims; missing or size-1 dims
		// broadcast. A promoted vector has no batch dims.
		o.bstr = make([]int, len(batch))
		tb := 0
		if kind == asMatrix {
			tb = len(t.shape) - 2
		}
		lead := len(batch) - tb
		for i := range batch {
			if j := i - lead; j >= 0 && t.shape[j] != 1 {
				o.bstr[i] = t.strides[j]
			}
		}
	}
	return o
}

func matmul(op string, dst, a, b *Tensor, transA, transB bool) *Tensor {
	sameDType(op, a, b)
	na, nb := len(a.shape), len(b.shape)
	if na == 0 || nb == 0 {
		Fail(op, "operands must have at least 1 dimension: %s", describe(a, b))
	}
	ka, kb := asMatrix, asMatrix
	var abatch, bbatch []int
	if na == 1 {
		ka = asRow
	} else {
		abatch = a.shape[:na-2]
	}
	if nb == 1 {
		kb = asColumn
	} else {
		bbatch = b.shape[:nb-2]
	}
	m, k, _, _ := logicalMatrix(a, ka, transA)
	k2, n, _, _ := logicalMatrix(b, kb, transB)
	if k != k2 {
		flags := ""
		if transA || transB {
			flags = fmt.Sprintf(" (transA=%v, transB=%v)", transA, transB)
		}
		Fail(op, "inner dimensions differ: %s%s: %d vs %d", describe(a, b), flags, k, k2)
	}
	var batch []int
	if len(abatch) > 0 || len(bbatch) > 0 {
		batch = BroadcastShapes(op, abatch, bbatch)
	}
	var shapeBuf [8]int
	outShape := append(shapeBuf[:0], batch...)
	if na > 1 {
		outShape = append(outShape, m)
	}
	if nb > 1 {
		outShape = append(outShape, n)
	}
	// outShape lives on this stack: copy it wherever it could be kept.
	if dst == nil {
		dst = newUninitOn(op, a.Device(), a.dtype, cloneInts(outShape)...)
	} else if dst.dtype != a.dtype || !slices.Equal(dst.shape, outShape) {
		Fail(op, "destination %v does not match result %v %v (operands %s)", describe(dst), fmtShape(cloneInts(outShape)), a.dtype, describe(a, b))
	}
	if dst.Size() == 0 {
		return dst
	}
	if dst.dev != nil || a.dev != nil || b.dev != nil {
		if ka != asMatrix || kb != asMatrix {
			Fail(op, "no GPU kernel yet for vector operands (%s); reshape them to matrices", describe(a, b))
		}
		if sharesStorage(dst, a) || sharesStorage(dst, b) { // cuBLAS must not write an operand
			tmp := newUninitOn(op, dst.Device(), dst.dtype, dst.shape...)
			gpuMatMul(op, tmp, a, b, nil, transA, transB)
			gpuCopy(op, dst, tmp)
			tmp.release()
			return dst
		}
		gpuMatMul(op, dst, a, b, nil, transA, transB)
		return dst
	}
	out := dst
	if !dst.IsContiguous() || sharesStorage(dst, a) || sharesStorage(dst, b) {
		out = New(a.dtype, cloneInts(outShape)...)
	}
	gemmInto(out, a, b, ka, kb, transA, transB, batch, m, n, k, false)
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// matmulTrusted is matmul after validation, the trusted kernel graph
// calls (internal/unchecked): a and b have at least two dimensions whose
// inner sizes agree and whose batch dimensions broadcast to dst's, and dst
// is contiguous, of the result's shape and dtype, and overlaps neither.
func matmulTrusted(dst, a, b *Tensor, transA, transB bool) *Tensor {
	if dst.Size() == 0 {
		return dst
	}
	if dst.dev != nil || a.dev != nil || b.dev != nil {
		gpuMatMul("MatMul", dst, a, b, nil, transA, transB)
		return dst
	}
	m, k, _, _ := logicalMatrix(a, asMatrix, transA)
	_, n, _, _ := logicalMatrix(b, asMatrix, transB)
	gemmInto(dst, a, b, asMatrix, asMatrix, transA, transB, dst.shape[:len(dst.shape)-2], m, n, k, false)
	return dst
}

// matmulBiasTrusted is op(a)·op(b) + bias in one pass over dst (the
// trusted kernel of graph's linear op): dst's rows start as copies of the
// 1-D bias, which the GEMM then accumulates into. The operands are as for
// matmulTrusted, and bias has dst's last dimension and dtype.
func matmulBiasTrusted(dst, a, b, bias *Tensor, transA, transB bool) *Tensor {
	if dst.Size() == 0 {
		return dst
	}
	if dst.dev != nil || a.dev != nil || b.dev != nil || bias.dev != nil {
		gpuMatMul("MatMulBias", dst, a, b, bias, transA, transB)
		return dst
	}
	m, k, _, _ := logicalMatrix(a, asMatrix, transA)
	_, n, _, _ := logicalMatrix(b, asMatrix, transB)
	batch := dst.shape[:len(dst.shape)-2]
	if a.dtype == Float32 {
		biasGemm[float32](dst, a, b, bias, transA, transB, batch, m, n, k)
	} else {
		biasGemm[float64](dst, a, b, bias, transA, transB, batch, m, n, k)
	}
	return dst
}

// biasGemm computes dst = op(a)·op(b) + bias. Where the product is one
// GEMM (a single matrix, or a batch of a's matrices stacked into one tall
// one against a shared b), the GEMM writes the bias into each block of
// dst as it gets to it (gemm.SgemmBias); otherwise every row of dst is
// filled with the bias first and the products add to it. Both give the
// same bits. A single product with one row or one column (an inner,
// matrix-vector or vector-matrix product, such as a Linear layer on one
// example) is the bias plus batchedGemm's product either way.
func biasGemm[T Float](dst, a, b, bias *Tensor, transA, transB bool, batch []int, m, n, k int) {
	c := storage[T](dst)[dst.offset : dst.offset+dst.Size()]
	nb := shapeSize(batch)
	oa, ob := prepOperand(a, asMatrix, transA, batch), prepOperand(b, asMatrix, transB, batch)
	single := nb == 1 || (!oa.trans && allZero(ob.bstr) && stacked(oa, batch, m))
	if !single || bias.strides[0] != 1 || nb == 1 && (m == 1 || n == 1) {
		fillRows(c, bias)
		batchedGemm[T](dst, oa, ob, batch, m, n, k, true)
		return
	}
	A, B := storage[T](oa.t)[oa.t.offset:], storage[T](ob.t)[ob.t.offset:]
	bv := storage[T](bias)[bias.offset : bias.offset+n]
	switch a := any(A).(type) {
	case []float32:
		gemm.SgemmBias(oa.trans, ob.trans, nb*m, n, k, a, oa.ld, any(B).([]float32), ob.ld, any(bv).([]float32), any(c).([]float32), n)
	case []float64:
		gemm.DgemmBias(oa.trans, ob.trans, nb*m, n, k, a, oa.ld, any(B).([]float64), ob.ld, any(bv).([]float64), any(c).([]float64), n)
	}
}

// fillRows copies the 1-D v into every len(v)-long row of d.
func fillRows[T Float](d []T, v *Tensor) {
	row := d[:v.shape[0]]
	for i := range row {
		row[i] = storage[T](v)[v.offset+i*v.strides[0]]
	}
	for off := len(row); off < len(d); off += len(row) {
		copy(d[off:off+len(row)], row)
	}
}

// gemmInto computes the product into the contiguous out, which overlaps
// neither operand.
func gemmInto(out, a, b *Tensor, ka, kb int, transA, transB bool, batch []int, m, n, k int, accumulate bool) {
	oa, ob := prepOperand(a, ka, transA, batch), prepOperand(b, kb, transB, batch)
	if a.dtype == Float32 {
		batchedGemm[float32](out, oa, ob, batch, m, n, k, accumulate)
	} else {
		batchedGemm[float64](out, oa, ob, batch, m, n, k, accumulate)
	}
}

// sharesStorage reports whether x and y may overlap in memory: they view
// the same backing array and the spans of elements they can reach meet.
func sharesStorage(x, y *Tensor) bool {
	if x.dtype != y.dtype || x.Size() == 0 || y.Size() == 0 {
		return false
	}
	if x.dev != nil || y.dev != nil { // offsets count from the allocation's start
		if x.dev == nil || y.dev == nil || x.dev.h != y.dev.h {
			return false
		}
		xlo, xhi := span(x)
		ylo, yhi := span(y)
		return xlo <= yhi && ylo <= xhi
	}
	var cx, cy int
	if x.dtype == Float32 {
		if !sameArray(x.f32, y.f32) {
			return false
		}
		cx, cy = cap(x.f32), cap(y.f32)
	} else {
		if !sameArray(x.f64, y.f64) {
			return false
		}
		cx, cy = cap(x.f64), cap(y.f64)
	}
	// Positions are counted from the shared end of the array, since the two
	// slices may start at different elements of it.
	xlo, xhi := span(x)
	ylo, yhi := span(y)
	xlo, xhi = xlo-cx, xhi-cx
	ylo, yhi = ylo-cy, yhi-cy
	return xlo <= yhi && ylo <= xhi
}

// span returns the lowest and highest storage index t can reach.
func span(t *Tensor) (lo, hi int) {
	lo, hi = t.offset, t.offset
	for i, d := range t.shape {
		if s := (d - 1) * t.strides[i]; s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	return lo, hi
}

func sameArray[T Float](x, y []T) bool {
	if cap(x) == 0 || cap(y) == 0 {
		return false
	}
	// Two slices of one array share its last element.
	return &x[:cap(x)][cap(x)-1] == &y[:cap(y)][cap(y)-1]
}

// batchedGemm computes out[batch] = A[batch]·B[batch] for a contiguous out,
// or adds the products to out's values when accumulate is set.
func batchedGemm[T Float](out *Tensor, oa, ob matOperand, batch []int, m, n, k int, accumulate bool) {
	c := storage[T](out)[out.offset:]
	A, B := storage[T](oa.t), storage[T](ob.t)
	nb := shapeSize(batch)
	var beta T
	if accumulate {
		beta = 1
	}
	if k == 0 {
		if !accumulate {
			clear(c[:nb*m*n])
		}
		return
	}
	if nb == 1 && m == 1 && n == 1 {
		// An inner product: GEMM would pad both operands out to its
		// register tiles and pack them (about 27 times slower at k = 250,000).
		sa, sb := 1, ob.ld // the strides along k of op(A)'s row and op(B)'s column
		if oa.trans {
			sa = oa.ld
		}
		if ob.trans {
			sb = 1
		}
		s := dotStrided(A, oa.t.offset, sa, B, ob.t.offset, sb, k)
		if accumulate {
			s += c[0]
		}
		c[0] = s
		return
	}
	if nb == 1 && gemv(c, A, B, oa, ob, m, n, k, accumulate) {
		return
	}
	if nb == 1 {
		gemmT(oa.trans, ob.trans, m, n, k, 1, A[oa.t.offset:], oa.ld, B[ob.t.offset:], ob.ld, beta, c, n)
		return
	}
	// Fold the batch into the rows of one GEMM when B is shared by every
	// batch entry and A's matrices are stacked contiguously: (b, m, k)@(k, n).
	if nb > 1 && !oa.trans && allZero(ob.bstr) && stacked(oa, batch, m) {
		gemmT(false, ob.trans, nb*m, n, k, 1, A[oa.t.offset:], oa.ld, B[ob.t.offset:], ob.ld, beta, c, n)
		return
	}
	offA, offB := batchOffsets(oa, batch), batchOffsets(ob, batch)
	if k == 1 && (!ob.trans || n == 1) {
		batchedOuter(c, A, B, oa, offA, offB, nb, m, n, accumulate)
		return
	}
	product := func(bi int, gemm func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int)) {
		gemm(oa.trans, ob.trans, m, n, k, 1, A[offA[bi]:], oa.ld, B[offB[bi]:], ob.ld, beta, c[bi*m*n:], n)
	}
	work := m * n * k
	threads := min(gemm.Threads(), runtime.GOMAXPROCS(0), nb, max(1, nb*work/gemmParallelWork))
	if threads < 2 || !spreadBatch(nb, threads, work) {
		// GEMM spreads each large product over the cores itself.
		for bi := range nb {
			product(bi, gemmT[T])
		}
		return
	}
	spreadProducts(nb, threads, func(bi int) { product(bi, gemmSerialT[T]) })
}

// batchedOuter computes a batch of nb products of depth 1 (outer products,
// such as per-example weight gradients) with gemm's rank-1 kernels, whole
// products per goroutine, streaming the stores past the caches when the
// batch's output is larger than them. op(B)'s rows must be contiguous.
func batchedOuter[T Float](c, A, B []T, oa matOperand, offA, offB []int, nb, m, n int, accumulate bool) {
	incx := oa.ld // op(A) is an m×1 column of A, or A's single row
	if oa.trans {
		incx = 1
	}
	var z T
	stream := nb*m*n*int(unsafe.Sizeof(z)) >= gemm.StreamBytes
	// One conversion per batch, not per product: each would allocate.
	var outer func(m, n int, x []T, incx int, y, c []T, ldc int, accumulate, stream bool)
	switch f := any(&outer).(type) {
	case *func(int, int, []float32, int, []float32, []float32, int, bool, bool):
		*f = gemm.SouterSerial
	case *func(int, int, []float64, int, []float64, []float64, int, bool, bool):
		*f = gemm.DouterSerial
	}
	product := func(bi int) {
		outer(m, n, A[offA[bi]:], incx, B[offB[bi]:], c[bi*m*n:], n, accumulate, stream)
	}
	threads := min(gemm.Threads(), runtime.GOMAXPROCS(0), nb, max(1, nb*m*n/outerParallelWork))
	if threads < 2 {
		for bi := range nb {
			product(bi)
		}
		return
	}
	spreadProducts(nb, threads, product)
}

// outerParallelWork is the number of output elements from which a batch of
// outer products is spread over goroutines (gemm's threshold for one).
const outerParallelWork = 1 << 16

// spreadProducts runs product(bi) for every bi < nb on threads goroutines,
// whole products per goroutine (spreadTasks).
func spreadProducts(nb, threads int, product func(bi int)) {
	spreadTasks(nb, threads, func(_, bi int) { product(bi) })
}

// spreadTasks runs task(w, t) for every t < tasks on threads goroutines,
// w (< threads) naming the goroutine, for buffers of its own: no
// synchronisation inside a task, and claiming them from a counter keeps a
// late goroutine from holding the others up. Which goroutine computes a
// task must not change its result.
func spreadTasks(tasks, threads int, task func(w, t int)) {
	var next atomic.Int64
	claim := func(w int) {
		for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
			task(w, t)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < threads; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); claim(w) }()
	}
	claim(0)
	wg.Wait()
}

// spreadBatch reports whether a batch of nb products of m·n·k = work each
// is better spread over threads goroutines one whole product at a time than
// computed one after another with each product spread by GEMM. Small
// products always are (GEMM would not split them); larger ones when the
// batch divides evenly or is long enough that the last, unshared round of
// products costs little.
func spreadBatch(nb, threads, work int) bool {
	return work < gemmSpreadWork || nb%threads == 0 || nb >= 4*threads
}

// gemmSpreadWork is the m·n·k below which a lone product runs on one
// goroutine (gemm's own threshold, parallelMinWork).
const gemmSpreadWork = 160 * 160 * 160

// gemmParallelWork is about the m·n·k below which one GEMM call runs on a
// single goroutine (gemm's own threshold).
const gemmParallelWork = 64 * 64 * 64

// batchOffsets lists the storage offset of the operand's matrix for each
// index of batch, in row-major order.
func batchOffsets(o matOperand, batch []int) []int {
	nb := shapeSize(batch)
	offs := make([]int, nb)
	idx := make([]int, len(batch))
	off := o.t.offset
	for bi := range offs {
		offs[bi] = off
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d]++
			off += o.bstr[d]
			if idx[d] < batch[d] {
				break
			}
			off -= o.bstr[d] * batch[d]
			idx[d] = 0
		}
	}
	return offs
}

func allZero(s []int) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// stacked reports whether the operand's batch of row-major m-row matrices
// forms one tall matrix: consecutive batch entries m·ld elements apart.
func stacked(o matOperand, batch []int, m int) bool {
	want := m * o.ld
	for d := len(batch) - 1; d >= 0; d-- {
		if batch[d] == 1 {
			continue
		}
		if o.bstr[d] != want {
			return false
		}
		want *= batch[d]
	}
	return true
}

// Generic scalar maths: float32 goes through math32, never via float64.

func sqrtT[T Float](x T) T {
	switch v := any(x).(type) {
	case float32:
		return T(math32.Sqrt(v))
	default:
		return T(math.Sqrt(float64(x)))
	}
}

// absT is |x|: the sign bit cleared (math.Abs, exact through float64 for
// float32 too), without the branch of x < 0, which mispredicted on half of
// the entries of a random matrix (a 256×256 SVD's sign pass took 571 µs
// with it, 208 without).
func absT[T Float](x T) T { return T(math.Abs(float64(x))) }

func logT[T Float](x T) T {
	switch v := any(x).(type) {
	case float32:
		return T(math32.Log(v))
	default:
		return T(math.Log(float64(x)))
	}
}

func hypotT[T Float](x, y T) T {
	// Where the squares can neither overflow nor lose the larger one to
	// underflow, √(x²+y²) is as accurate as Hypot (within an ulp) and
	// several times faster; the rotations of the eigen- and singular
	// value iterations call this once each.
	hi := float64(max(absT(x), absT(y)))
	if dtypeOf[T]() == Float32 {
		if hi >= 0x1p-60 && hi <= 0x1p60 {
			return T(math32.Sqrt(float32(x*x + y*y)))
		}
		return T(math32.Hypot(float32(x), float32(y)))
	}
	if hi >= 0x1p-500 && hi <= 0x1p500 {
		return T(math.Sqrt(float64(x*x + y*y)))
	}
	return T(math.Hypot(float64(x), float64(y)))
}
