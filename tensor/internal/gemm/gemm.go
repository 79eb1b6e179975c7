package gemm

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// parallelMinWork is the smallest m·n·k for which more than one goroutine is
// used; below it the call runs on the calling goroutine. A product timed
// in a loop on its own splits well from about 128³ (2-core Zen 4: two
// goroutines approach 2× when a core is free), but in a model its
// operands were just written on the caller's core and its result is read
// there next, so a helper first pulls its share across the caches: an
// LSTM's 32×128·128×512 step products (2.1·10⁶) ran no faster split than
// alone even in a loop (28 µs either way, Zen 5), and with the threshold
// raised from 96³ to 160³ the LSTM training step took 10 % less time
// eagerly and 13 % less captured, the GRU's 10 % less, and the MLP's
// (products of 33·10⁶ and more) the same (2026-11-29, two vCPUs, median
// of 8 rounds alternating the thresholds in one process).
const parallelMinWork = 160 * 160 * 160

var (
	maxThreads atomic.Int64
	portable   atomic.Bool
	narrow     atomic.Bool

	poolS wsPool[float32]
	poolD wsPool[float64]
)

func init() {
	maxThreads.Store(int64(runtime.GOMAXPROCS(0)))
}

// SetThreads sets the maximum number of goroutines a single Sgemm or Dgemm
// call may use and returns the previous value. The default is
// runtime.GOMAXPROCS(0) at package initialisation; n < 1 sets the current
// runtime.GOMAXPROCS(0). It is safe for concurrent use.
func SetThreads(n int) int {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return int(maxThreads.Swap(int64(n)))
}

// Threads returns the maximum number of goroutines one Sgemm or Dgemm call
// may use (see SetThreads).
func Threads() int { return int(maxThreads.Load()) }

// UsePortable forces the pure-Go micro-kernel when on is true (the assembly
// kernel is otherwise used when the CPU supports it) and returns the previous
// setting. It is meant for tests and benchmarks and is safe for concurrent use.
func UsePortable(on bool) bool {
	return portable.Swap(on)
}

// UseNarrow forces the AVX2 kernels on a CPU that also has AVX-512 when on
// is true and returns the previous setting. Like UsePortable it is meant for
// tests and benchmarks; it has no effect where there is no AVX-512 kernel.
func UseNarrow(on bool) bool {
	return narrow.Swap(on)
}

// kernelFamily is which micro-kernels a call uses: portable Go, the AVX2
// (or NEON) ones, or the AVX-512 ones.
type kernelFamily int

const (
	portableKernels kernelFamily = iota
	asmKernels
	wideKernels
)

// family is the widest kernel family the CPU runs, unless a test switch
// narrows the choice.
func family() kernelFamily {
	switch {
	case !hasAsm || portable.Load():
		return portableKernels
	case hasWide && !narrow.Load():
		return wideKernels
	}
	return asmKernels
}

// KernelName describes the micro-kernels the next call will use, for
// benchmark reports: the instruction set and the register tiles.
func KernelName() string {
	return [...]string{portableName, asmName, wideName}[family()]
}

// pick returns the blocking and kernel of the next call's family for a
// product with n columns. A product no wider than the narrow kernel's tile
// (a weight gradient with 9 or 16 columns, a 10-class output layer) takes
// the AVX2 kernel even where AVX-512 runs: the 32-wide tile would spend
// most of its lanes and of its packing writes on zero columns, and the
// narrow tile does the same useful multiply-adds per step.
func pick[T float](n int, portableP, asmP, wideP *params[T]) *params[T] {
	f := family()
	if f == wideKernels && n <= asmP.nr {
		f = asmKernels
	}
	return [...]*params[T]{portableP, asmP, wideP}[f]
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X or Xᵀ as selected by transA and transB. op(A) is
// m×k, op(B) is k×n and C is m×n; lda, ldb and ldc are the row strides of the
// stored A, B and C. When beta == 0, C is overwritten without being read;
// when alpha == 0 or k == 0, A and B are not read and C is only scaled by
// beta. It panics with a message starting with "gemm: " on invalid
// arguments.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(int(maxThreads.Load()), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmSerial is Sgemm on the calling goroutine alone, for callers that
// spread a batch of products over the cores themselves.
func SgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(1, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if k == 1 && alpha == 1 && rank1(threads, transA, transB, m, n, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	p := pick(n, portableParamsS, asmParamsS, wideParamsS)
	jb := job[float32]{p: p, transA: transA, transB: transB, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	execute(jb, &poolS, m, n, threads)
}

// SgemmBias computes C = op(A)·op(B) + bias for row-major float32
// matrices, bias (length n) added to every row of C, as a Linear layer
// does. It equals filling every row of C with bias and calling Sgemm with
// alpha = beta = 1, bit for bit, but fills each block of C just before the
// product first adds to it, while the block is in the cache, instead of in
// a pass over all of C first. It panics like Sgemm, and when len(bias) < n.
func SgemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
	gemmBias(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc, &poolS, portableParamsS, asmParamsS, wideParamsS, Sgemm)
}

// DgemmBias is SgemmBias for float64.
func DgemmBias(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, bias, c []float64, ldc int) {
	gemmBias(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc, &poolD, portableParamsD, asmParamsD, wideParamsD, Dgemm)
}

func gemmBias[T float](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, bias, c []T, ldc int,
	pool *wsPool[T], portableP, asmP, wideP *params[T],
	plain func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int)) {
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if len(bias) < n {
		panic(fmt.Sprintf("gemm: bias has %d elements for %d columns", len(bias), n))
	}
	if m == 0 || n == 0 {
		return
	}
	if k <= 1 {
		// Nothing to block: fill C, then add the product (rank 1 or none).
		for i := range m {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
		plain(transA, transB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
		return
	}
	jb := job[T]{p: pick(n, portableP, asmP, wideP), transA: transA, transB: transB, k: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, bias: bias[:n]}
	execute(jb, pool, m, n, int(maxThreads.Load()))
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float64
// matrices, where op(X) is X or Xᵀ as selected by transA and transB. op(A) is
// m×k, op(B) is k×n and C is m×n; lda, ldb and ldc are the row strides of the
// stored A, B and C. When beta == 0, C is overwritten without being read;
// when alpha == 0 or k == 0, A and B are not read and C is only scaled by
// beta. It panics with a message starting with "gemm: " on invalid
// arguments.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	dgemm(int(maxThreads.Load()), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// DgemmSerial is Dgemm on the calling goroutine alone, for callers that
// spread a batch of products over the cores themselves.
func DgemmSerial(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	dgemm(1, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if k == 1 && alpha == 1 && rank1(threads, transA, transB, m, n, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	p := pick(n, portableParamsD, asmParamsD, wideParamsD)
	jb := job[float64]{p: p, transA: transA, transB: transB, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	execute(jb, &poolD, m, n, threads)
}

// scaleC sets C = beta·C, writing zeros without reading C when beta == 0.
func scaleC[T float](m, n int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// checkArgs validates dimensions, leading dimensions and slice lengths.
func checkArgs(transA, transB bool, m, n, k, lenA, lda, lenB, ldb, lenC, ldc int) {
	if m < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d", m))
	}
	if n < 0 {
		panic(fmt.Sprintf("gemm: negative dimension n=%d", n))
	}
	if k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension k=%d", k))
	}
	// Stored shapes (rows × cols) of A and B.
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMat("a", "lda", ar, ac, lenA, lda)
	checkMat("b", "ldb", br, bc, lenB, ldb)
	checkMat("c", "ldc", m, n, lenC, ldc)
}

func checkMat(name, ldName string, rows, cols, length, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: %s=%d too small for %d columns of %s (need %s >= %d)", ldName, ld, cols, name, ldName, max(1, cols)))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; length < need {
		panic(fmt.Sprintf("gemm: len(%s)=%d too short for %d×%d matrix with %s=%d (need %d)", name, length, rows, cols, ldName, ld, need))
	}
}
