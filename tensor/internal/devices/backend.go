package devices

// DType is the element type of device memory: F32 or F64.
type DType uint8

// The element types.
const (
	F32 DType = iota + 1
	F64
)

// Size returns the bytes of one element.
func (t DType) Size() int {
	if t == F64 {
		return 8
	}
	return 4
}

// Mem is a span of device memory. Slice views part of it; only what Alloc
// returned may be passed to Free.
type Mem interface {
	Bytes() int
}

// View is a strided operand in device memory: the element at index i
// lives at Mem's element Σ i[d]·Strides[d] (Mem already points at the
// view's first element; a stride of 0 broadcasts).
type View struct {
	Mem     Mem
	Strides []int
}

// ConvGeom is a resolved 2-D convolution or pooling window: input (N, C,
// H, W), kernel KH × KW, output HO × WO, strides, padding and dilation.
type ConvGeom struct{ N, C, H, W, KH, KW, HO, WO, SH, SW, PH, PW, DH, DW int }

// ConvLibrary is implemented by backends that can run a convolution's
// products in a vendor library (cuDNN on CUDA devices). Package tensor
// asks it first and falls back to Im2Col, Col2Im and Gemm when it
// declines.
type ConvLibrary interface {
	// Conv computes, into out (overwritten), product dir of the
	// convolution g with o output channels in groups groups: 0 y (N, O,
	// HO, WO) from x and the filters w (O, C/groups, KH, KW), 1 the input
	// gradient from w and dy, 2 the filter gradient from x and dy, every
	// array contiguous. It reports false, doing nothing, when the library
	// does not serve the call (not installed, turned off, or a dtype it
	// is not used for); a failure of the library is an error.
	Conv(dir int, dt DType, g ConvGeom, o, groups int, a, b, out Mem) (bool, error)
	// ConvServes reports whether Conv may serve convolutions of dt at
	// all, so that a caller prepares its operands only then.
	ConvServes(dt DType) bool
	// ConvLibrary describes the library the convolutions use, or why
	// none is, e.g. "cuDNN 91000 (/usr/lib/libcudnn.so.9)".
	ConvLibrary() string
}

// Backend is what package tensor asks of a device. Every method queues
// work on the device in order; Download and NonFinite wait for the work
// queued before them and report any failure of it. All shapes, sizes and
// operands are checked by package tensor before the call; a Backend still
// returns an error rather than corrupt memory when they are wrong.
type Backend interface {
	// Name is the device's product name, for messages.
	Name() string
	// Alloc returns n uninitialised elements of dt; Free gives them back.
	Alloc(dt DType, n int) (Mem, error)
	Free(m Mem)
	// Slice views m from element off (of dt) on.
	Slice(m Mem, dt DType, off int) Mem
	// Upload copies src ([]float32 or []float64) to the start of dst;
	// Download copies the first len(dst) elements of src into dst.
	Upload(dst Mem, src any) error
	Download(dst any, src Mem) error
	// Cast writes the n elements of x (of the other dtype) into dst as to.
	Cast(to DType, n int, dst, x Mem) error
	// Fill sets n elements of dst to v.
	Fill(dt DType, n int, dst Mem, v float64) error
	// Copy writes the strided x into dst of shape (strided too; nil
	// strides mean contiguous).
	Copy(dt DType, shape []int, dst View, x View) error
	// HasUnary and HasBinary say whether Unary and Binary have a kernel
	// for op, a name of package tensor's op tables in lower case with
	// underscores ("relu", "relu_grad").
	HasUnary(op string) bool
	HasBinary(op string) bool
	// Unary sets dst[i] = op(x[i]) for i < n (contiguous).
	Unary(op string, dt DType, n int, dst, x Mem) error
	// Binary sets the contiguous dst of shape to op(a, b) elementwise.
	Binary(op string, dt DType, shape []int, dst Mem, a, b View) error
	// Scalar sets dst[i] = op(x[i], s), op "add_scalar" or "mul_scalar".
	Scalar(op string, dt DType, n int, dst, x Mem, s float64) error
	// HasParam says whether Param has a kernel for op ("pow_scalar",
	// "leaky_relu", "elu", "clamp"); Param sets dst[i] = op(x[i]; p, q).
	HasParam(op string) bool
	Param(op string, dt DType, n int, dst, x Mem, p, q float64) error
	// ParamBinary is Binary for ops with a parameter ("leaky_relu_grad").
	ParamBinary(op string, dt DType, shape []int, dst Mem, a, b View, p float64) error
	// Where sets the contiguous dst of shape to a where cond ≠ 0, else b.
	Where(dt DType, shape []int, dst Mem, cond, a, b View) error
	// ReduceLast reduces each row of the rows × cols x into dst[r]: op is
	// "sum", "max", "min", "prod", "logsumexp" or "variance" (dividing by
	// cols − ddof).
	ReduceLast(op string, dt DType, rows, cols, ddof int, dst, x Mem) error
	// Gemm sets each of the batch contiguous m×n matrices of c to
	// alpha·op(a)·op(b) + beta·c; a's matrices are m×k (k×m with transA),
	// b's k×n (n×k with transB); each operand's matrices are contiguous
	// and strideA, strideB, strideC elements apart (0 repeats a matrix).
	Gemm(dt DType, transA, transB bool, batch, m, n, k int, a Mem, strideA int, b Mem, strideB int, c Mem, strideC int, alpha, beta float64) error
	// Softmax sets each row of the rows × cols dst to the (log-)softmax
	// of that row of x; SoftmaxGrad to its VJP with v, given its output y.
	Softmax(dt DType, rows, cols int, dst, x Mem, log bool) error
	SoftmaxGrad(dt DType, rows, cols int, dst, y, v Mem, log bool) error
	// SumLast sets dst[r] to the sum of row r of the rows × cols x.
	SumLast(dt DType, rows, cols int, dst, x Mem) error
	// Gather sets the (outer, len(idx), inner) dst to x (outer, axis,
	// inner) at idx along the middle axis; ScatterAdd adds src back.
	Gather(dt DType, outer, axis, inner int, dst, x Mem, idx []int) error
	ScatterAdd(dt DType, outer, axis, inner int, dst Mem, idx []int, src Mem) error
	// NonFinite reports whether any of n elements of x is NaN or ±Inf;
	// NonFiniteAll whether any of several buffers holds one, with one wait.
	NonFinite(dt DType, n int, x Mem) (bool, error)
	NonFiniteAll(dts []DType, ns []int, xs []Mem) (bool, error)
	// Update applies one step of an optimiser's rule ("adam", "sgd",
	// "rmsprop", "adagrad") in place to n parameters p with gradients g,
	// state buffers (nil where an option is off) and scalars h, in the
	// order package optim works them out (tensor/internal/cuda's
	// Kernels.Update lists them).
	Update(rule string, dt DType, n int, p, g Mem, state [3]Mem, h [8]float64) error
	// Im2Col writes cols (N, C·KH·KW, HO·WO) from x (N, C, H, W); Col2Im
	// writes its transpose, summing the columns that read each element.
	Im2Col(dt DType, g ConvGeom, cols, x Mem) error
	Col2Im(dt DType, g ConvGeom, dx, cols Mem) error
	// MaxPool writes y (N, C, HO, WO) and, per output, the int32 index
	// h·W+w of the input chosen in its plane; MaxPoolGrad sends dy back
	// to those inputs. AvgPool and AvgPoolGrad average.
	MaxPool(dt DType, g ConvGeom, y, idx, x Mem) error
	MaxPoolGrad(dt DType, g ConvGeom, dx, dy, idx Mem) error
	AvgPool(dt DType, g ConvGeom, y, x Mem) error
	AvgPoolGrad(dt DType, g ConvGeom, dx, dy Mem) error
	// UploadInt32 and DownloadInt32 copy int32 indices.
	UploadInt32(dst Mem, src []int32) error
	DownloadInt32(dst []int32, src Mem) error
	// SetMatMulPrecision sets how later float32 products are computed:
	// 0 float32, 1 TF32 tensor cores, 2 bfloat16 tensor cores (both
	// with float32 sums), as tensor.MatMulPrecision numbers them.
	SetMatMulPrecision(p int) error
	// Synchronize waits for all queued work and reports its failures.
	Synchronize() error

	// Cell runs a fused recurrent cell ("lstm_cell", "lstm_cell_grad",
	// "gru_cell", "gru_cell_grad"; graph/lstm.go and graph/gru.go) over
	// rows rows of h hidden units into the contiguous dst. Each operand's
	// rows hold contiguous units, row r at r·Strides[0] elements.
	Cell(op string, dt DType, rows, h int, dst Mem, in []View) error
	// Special sets the n contiguous elements of dst to a special function
	// of the contiguous operands in, with integer parameters p:
	// "gamma_p_deriv" (in a, x; p the orders n, m) and "gamma_p_inv" (in
	// a, u, z0), package tensor's GammaPDeriv and GammaPInv.
	Special(op string, dt DType, n int, dst Mem, in []Mem, p []int) error
	// Dense linear algebra on one contiguous row-major matrix at a time
	// (cuBLAS's trsm and trmm; cuSOLVER's potrf, getrf and getrs, loaded
	// on first use: where it is missing they return an error naming it).
	// Trsm overwrites the n×k x with op(A)⁻¹·x, A being the lower (or
	// upper) triangle of the n×n a and op(A) A or Aᵀ; Trmm sets c to
	// op(A)·x. Only that triangle of a is read.
	Trsm(dt DType, lower, trans bool, n, k int, a, x Mem) error
	Trmm(dt DType, lower, trans bool, n, k int, a, x, c Mem) error
	// Potrf factors a's lower triangle in place as L·Lᵀ, leaving the
	// strict upper triangle as it was. Getrf factors A in place as
	// P·A = L·U, a holding Aᵀ (A column-major: LAPACK's getrf), the n
	// int32 1-based pivots in piv. Each sets the int32 info to LAPACK's:
	// 0, or the 1-based order of the failing minor (Potrf) or zero pivot
	// (Getrf). Getrs solves A·X = B with Getrf's factors of A for the k
	// right-hand sides held as the rows of b (the k×n Bᵀ), in place.
	Potrf(dt DType, n int, a, info Mem) error
	Getrf(dt DType, n int, a, piv, info Mem) error
	Getrs(dt DType, n, k int, lu, piv, b, info Mem) error
	// Syevd overwrites the symmetric column-major n×n a (its upper
	// triangle read: a row-major matrix's lower one) with its orthonormal
	// eigenvectors as columns, the eigenvalues ascending in w. QR factors
	// the column-major m×n a as Q·R (k = min(m, n)): the column-major k×n
	// R into r, Q into a's first k columns; tau is k elements of scratch.
	// Gesvd (m ≥ n) writes the singular values of the column-major m×n a,
	// descending, into s, the column-major m×n U into u and n×n Vᵀ into
	// vt. Each sets the int32 info as LAPACK's routines do.
	Syevd(dt DType, n int, a, w, info Mem) error
	QR(dt DType, m, n int, a, r, tau, info Mem) error
	Gesvd(dt DType, m, n int, a, s, u, vt, info Mem) error
}
