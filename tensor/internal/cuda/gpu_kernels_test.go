//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// The CPU operation each kernel must equal, with its input domain and
// tolerance; every name of cuda.UnaryOps and cuda.BinaryOps needs a row.
var unaryCases = map[string]struct {
	cpu    func(*tensor.Tensor) *tensor.Tensor
	lo, hi float64
	exact  bool // the operations are correctly rounded on both sides
	// cond, if set, is the condition factor at x: the rounding of an
	// intermediate result (here −x/√2 in erfc(−x/√2)) is amplified by
	// about x²/2, on the CPU as on the GPU, so the tolerance scales by it.
	cond func(x float64) float64
}{
	"neg":     {cpu: tensor.Neg, lo: -10, hi: 10, exact: true},
	"exp":     {cpu: tensor.Exp, lo: -80, hi: 80},
	"log":     {cpu: tensor.Log, lo: 1e-30, hi: 1e30},
	"tanh":    {cpu: tensor.Tanh, lo: -20, hi: 20},
	"relu":    {cpu: tensor.Relu, lo: -10, hi: 10, exact: true},
	"sigmoid": {cpu: tensor.Sigmoid, lo: -80, hi: 80},
	"gelu":    {cpu: tensor.Gelu, lo: -12, hi: 12, cond: geluCond},
	"square":  {cpu: tensor.Square, lo: -1e3, hi: 1e3, exact: true},
	"sqrt":    {cpu: tensor.Sqrt, lo: 0, hi: 1e6, exact: true},
	"abs":     {cpu: tensor.Abs, lo: -10, hi: 10, exact: true},
	// 1/x is correctly rounded on both sides (no fast-math reciprocal).
	"reciprocal": {cpu: tensor.Reciprocal, lo: 0.01, hi: 100, exact: true},
	"log1p":      {cpu: tensor.Log1p, lo: -0.999, hi: 100},
	"expm1":      {cpu: tensor.Expm1, lo: -20, hi: 20},
	"softplus":   {cpu: tensor.Softplus, lo: -80, hi: 80},
}

// geluCond is the condition factor of the GELU and its derivative in the
// left tail, 1 + x²/4 (erfc(z)'s relative sensitivity to z is about 2z,
// z = x/√2, so a rounding of z costs about x² roundings of the result).
func geluCond(x float64) float64 { return 1 + x*x/4 }

type binaryCase struct {
	cpu    func(a, b *tensor.Tensor) *tensor.Tensor
	lo, hi float64 // b's domain; a's is [-10, 10]
	exact  bool
	// mag, if set, is the magnitude of the terms of op(a, b): where the
	// result cancels, rounding errors scale with it and not with the
	// result. Otherwise the result's magnitude is used.
	mag func(a, b float64) float64
}

var binaryCases = map[string]binaryCase{
	"add":       {cpu: tensor.Add, lo: -10, hi: 10, exact: true},
	"sub":       {cpu: tensor.Sub, lo: -10, hi: 10, exact: true},
	"mul":       {cpu: tensor.Mul, lo: -10, hi: 10, exact: true},
	"div":       {cpu: tensor.Div, lo: 0.1, hi: 10, exact: true},
	"relu_grad": {cpu: tensor.ReluGrad, lo: -10, hi: 10, exact: true},
	// v·(Φ(x) + x·φ(x)) cancels for x < 0.
	// v·(Φ(x) + x·φ(x)) cancels for x < 0, and is conditioned as gelu.
	"gelu_grad": {cpu: tensor.GeluGrad, lo: -12, hi: 12, mag: func(v, x float64) float64 {
		return geluCond(x) * math.Abs(v) * (0.5*math.Erfc(-x/math.Sqrt2) + math.Abs(x)*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi))
	}},
	"sigmoid_grad": {cpu: tensor.SigmoidGrad, lo: -30, hi: 30},
	// v·(1 − y²) cancels as |y| → 1: its rounding scales with |v|, not the result.
	"tanh_grad": {cpu: tensor.TanhGrad, lo: -1, hi: 1, mag: func(v, y float64) float64 { return math.Abs(v) }},
}

func TestUnaryKernels(t *testing.T) {
	d, k := kernels(t)
	for _, op := range cuda.UnaryOps {
		c, ok := unaryCases[op]
		if !ok {
			t.Errorf("unary kernel %s has no test case", op)
			continue
		}
		for _, ty := range dtypes {
			const n = 70001 // not a multiple of the block
			x := sample(ty, n, c.lo, c.hi, n)
			if op == "log" { // spread over the exponents, not linearly
				x = tensor.Exp(sample(ty, n, math.Log(c.lo), math.Log(c.hi), n))
			}
			xb := upload(t, d, x)
			out, err := d.Alloc(n * ty.Size())
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Unary(op, dt(ty), n, out, xb); err != nil {
				t.Fatal(err)
			}
			what, got, want := fmt.Sprintf("%s %v", op, ty), download(t, d, out, ty, n), c.cpu(x)
			switch {
			case c.exact:
				compare(t, what, got, want, exact)
			case c.cond != nil:
				xs, ws := x.Values(), want.Values()
				bound := make([]float64, n)
				for i := range bound {
					bound[i] = tolMath[ty].atol + tolMath[ty].rtol*c.cond(xs[i])*math.Abs(ws[i])
				}
				compareBound(t, what, got, want, bound)
			default:
				compare(t, what, got, want, tolMath[ty])
			}
			d.Release(xb)
			d.Release(out)
		}
	}
}

// TestBinaryKernels checks every binary kernel on operands of one shape,
// broadcast ones, and a transposed (strided) view.
func TestBinaryKernels(t *testing.T) {
	d, k := kernels(t)
	out := []int{6, 40, 33}
	for _, op := range cuda.BinaryOps {
		c, ok := binaryCases[op]
		if !ok {
			t.Errorf("binary kernel %s has no test case", op)
			continue
		}
		for _, ty := range dtypes {
			for _, bShape := range [][]int{{6, 40, 33}, {40, 1}, {33}, {6, 1, 33}, {1}} {
				a := sample(ty, 6*40*33, -10, 10, out...)
				n := 1
				for _, s := range bShape {
					n *= s
				}
				b := sample(ty, n, c.lo, c.hi, bShape...)
				if op == "relu_grad" { // y = relu(x) ≥ 0 with zeros
					b = tensor.Relu(b)
				}
				as, err := cuda.BroadcastStrides(a.Shape(), out)
				if err != nil {
					t.Fatal(err)
				}
				bs, err := cuda.BroadcastStrides(b.Shape(), out)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s %v %v with %v", op, ty, a.Shape(), b.Shape())
				checkBinary(t, d, k, what, op, c, a, a, as, b, bs, out)
			}
			// a read through a transpose: a (33, 40) viewed as (40, 33).
			at := sample(ty, 33*40, -10, 10, 33, 40)
			b := sample(ty, 40*33, c.lo, c.hi, 40, 33)
			what := fmt.Sprintf("%s %v transposed", op, ty)
			checkBinary(t, d, k, what, op, c, at, tensor.Transpose(at), []int{1, 40}, b, []int{33, 1}, []int{40, 33})
		}
	}
}

// checkBinary runs kernel op on a (stored) read with strides as and b
// with bs over shape, and compares with c.cpu(aView, b).
func checkBinary(t *testing.T, d *cuda.Driver, k *cuda.Kernels, what, op string, c binaryCase, a, aView *tensor.Tensor, as []int, b *tensor.Tensor, bs []int, shape []int) {
	t.Helper()
	ty := a.DType()
	want := c.cpu(aView, b)
	ab, bb := upload(t, d, a), upload(t, d, b)
	res, _ := d.Alloc(want.Size() * ty.Size())
	if err := k.Binary(op, dt(ty), shape, res, ab, as, bb, bs); err != nil {
		t.Fatal(err)
	}
	got := download(t, d, res, ty, shape...)
	d.Release(ab)
	d.Release(bb)
	d.Release(res)
	switch {
	case c.exact:
		compare(t, what, got, want, exact)
	case c.mag != nil:
		av := tensor.Expand(aView, shape...).Contiguous().Values()
		bv := tensor.Expand(b, shape...).Contiguous().Values()
		bound := make([]float64, len(av))
		for i := range av {
			bound[i] = tolMath[ty].atol + tolMath[ty].rtol*c.mag(av[i], bv[i])
		}
		compareBound(t, what, got, want, bound)
	default:
		compare(t, what, got, want, tolMath[ty])
	}
}

// logSoftmaxGrad is v − exp(y)·Σ v per row, y = LogSoftmax(x): the
// reference in plain Go (tensor has no fused kernel for it).
func logSoftmaxGrad(y, v *tensor.Tensor) *tensor.Tensor {
	rows, cols := y.Shape()[0], y.Shape()[1]
	out := tensor.New(tensor.Float64, rows, cols)
	for r := range rows {
		s := 0.0
		for j := range cols {
			s += v.At(r, j)
		}
		for j := range cols {
			out.SetAt(v.At(r, j)-math.Exp(y.At(r, j))*s, r, j)
		}
	}
	return out.Cast(y.DType())
}

// eps is the unit roundoff of t.
func eps(t tensor.DType) float64 {
	if t == tensor.Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// TestRowKernels compares the row kernels with the CPU's in dtype. The
// tolerances are error bounds in units of the roundoff ε: a sum over cols
// terms in another order differs by about √cols·ε of the sum of the
// magnitudes (4√cols + 16 is taken), and exp(z) inherits z's rounding
// times |z|, so softmax and log-softmax get (8 + 2·max|x|)·ε of their
// magnitudes, four times over.
func TestRowKernels(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		for _, cols := range []int{1, 3, 256, 1000} {
			const rows = 37
			x := sample(ty, rows*cols, -30, 30, rows, cols)
			v := sample(ty, rows*cols, -2, 3, rows, cols)
			xb, vb := upload(t, d, x), upload(t, d, v)
			res, _ := d.Alloc(rows * cols * ty.Size())
			name := func(op string) string { return fmt.Sprintf("%s %v %d×%d", op, ty, rows, cols) }
			e, sum := eps(ty), 16+4*math.Sqrt(float64(cols))
			tiny := 1e-35 // below every nonzero magnitude here
			xMax := 30.0
			bounds := func(f func(r, j int) float64) []float64 {
				b := make([]float64, 0, rows*cols)
				for r := range rows {
					for j := range cols {
						b = append(b, f(r, j)+tiny)
					}
				}
				return b
			}
			absRow := func(a *tensor.Tensor, r int) float64 {
				s := 0.0
				for j := range cols {
					s += math.Abs(a.At(r, j))
				}
				return s
			}
			for _, log := range []bool{false, true} {
				want, op := tensor.Softmax(x, -1), "softmax"
				bound := bounds(func(r, j int) float64 { return 4 * (8 + 2*xMax) * e * math.Abs(want.At(r, j)) })
				if log {
					want, op = tensor.LogSoftmax(x, -1), "log_softmax"
					bound = bounds(func(r, j int) float64 { return 16 * e * (math.Abs(want.At(r, j)) + 2*xMax) })
				}
				if err := k.Softmax(dt(ty), rows, cols, res, xb, log); err != nil {
					t.Fatal(err)
				}
				compareBound(t, name(op), download(t, d, res, ty, rows, cols), want, bound)
				// The gradient from the CPU's y, so only the kernel is compared.
				yb := upload(t, d, want)
				grad := tensor.SoftmaxGrad(want, v, -1)
				bound = bounds(func(r, j int) float64 {
					return sum * e * math.Abs(want.At(r, j)) * (math.Abs(v.At(r, j)) + 3)
				})
				if log {
					grad = logSoftmaxGrad(want, v)
					bound = bounds(func(r, j int) float64 {
						return sum * e * (math.Abs(v.At(r, j)) + math.Exp(want.At(r, j))*absRow(v, r))
					})
				}
				if err := k.SoftmaxGrad(dt(ty), rows, cols, res, yb, vb, log); err != nil {
					t.Fatal(err)
				}
				compareBound(t, name(op+"_grad"), download(t, d, res, ty, rows, cols), grad, bound)
				d.Release(yb)
			}
			if err := k.SumLast(dt(ty), rows, cols, res, xb); err != nil {
				t.Fatal(err)
			}
			sb := make([]float64, rows)
			for r := range sb {
				sb[r] = sum*e*absRow(x, r) + tiny
			}
			compareBound(t, name("sum_last"), download(t, d, res, ty, rows), tensor.Sum(x, []int{1}, false), sb)
			d.Release(xb)
			d.Release(vb)
			d.Release(res)
		}
	}
}
