//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// convGeom resolves a convolution of x over weight shape w with p as
// package tensor does (Conv2DShape), channels being all of x's.
func convGeom(x, w []int, p tensor.ConvParams) cuda.ConvGeom {
	out := tensor.Conv2DShape(x, w, p)
	or1 := func(v int) int { return max(v, 1) }
	return cuda.ConvGeom{N: x[0], C: x[1], H: x[2], W: x[3], KH: w[2], KW: w[3], HO: out[2], WO: out[3],
		SH: or1(p.Stride[0]), SW: or1(p.Stride[1]), PH: p.Padding[0], PW: p.Padding[1],
		DH: or1(p.Dilation[0]), DW: or1(p.Dilation[1])}
}

// poolGeom resolves a pooling of x with p as tensor.Pool2DShape does.
func poolGeom(x []int, p tensor.PoolParams) cuda.ConvGeom {
	out := tensor.Pool2DShape(x, p)
	sh, sw := p.Stride[0], p.Stride[1]
	if sh == 0 {
		sh = p.Kernel[0]
	}
	if sw == 0 {
		sw = p.Kernel[1]
	}
	return cuda.ConvGeom{N: x[0], C: x[1], H: x[2], W: x[3], KH: p.Kernel[0], KW: p.Kernel[1],
		HO: out[2], WO: out[3], SH: sh, SW: sw, PH: p.Padding[0], PW: p.Padding[1], DH: 1, DW: 1}
}

// forTaps calls f(col, in) for every entry of the column matrix, col its
// index in cols (N, C·KH·KW, HO·WO) and in the index in x (N, C, H, W) it
// reads, or −1 for padding: the definition of im2col, written out.
func forTaps(g cuda.ConvGeom, f func(col, in int)) {
	col := 0
	for n := range g.N {
		for c := range g.C {
			for i := range g.KH {
				for j := range g.KW {
					for oh := range g.HO {
						for ow := range g.WO {
							h, w := oh*g.SH-g.PH+i*g.DH, ow*g.SW-g.PW+j*g.DW
							in := -1
							if h >= 0 && h < g.H && w >= 0 && w < g.W {
								in = ((n*g.C+c)*g.H+h)*g.W + w
							}
							f(col, in)
							col++
						}
					}
				}
			}
		}
	}
}

func colCount(g cuda.ConvGeom) int { return g.N * g.C * g.KH * g.KW * g.HO * g.WO }

var convCases = []struct {
	name string
	x, w []int
	p    tensor.ConvParams
}{
	{"3×3 stride 1 pad 1", []int{2, 3, 7, 6}, []int{4, 3, 3, 3}, tensor.ConvParams{Padding: [2]int{1, 1}}},
	{"4×4 stride 2 pad 1", []int{2, 3, 9, 8}, []int{5, 3, 4, 4}, tensor.ConvParams{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
	{"3×3 dilation 2, stride (1, 2), pad (1, 2)", []int{1, 2, 9, 10}, []int{3, 2, 3, 3},
		tensor.ConvParams{Stride: [2]int{1, 2}, Padding: [2]int{1, 2}, Dilation: [2]int{2, 2}}},
	{"3×2 groups 2 pad 1", []int{2, 4, 6, 7}, []int{6, 2, 3, 2}, tensor.ConvParams{Padding: [2]int{1, 1}, Groups: 2}},
}

// TestIm2ColConv runs Im2Col and checks it against forTaps to the bit,
// then completes the convolution with one strided batched GEMM per group
// (the group's weights, stride 0, times each image's column rows of the
// group) and compares with tensor.Conv2D within the GEMM's forward error
// bound 2·k·(2ε)·(|w| ⋆ |x|) (Higham, 2002, §3.5; doubled for the CPU's
// own rounding). It also checks Col2Im against the transpose of forTaps,
// summed in float64, within 2·KH·KW·ε times the sum of the magnitudes.
func TestIm2ColConv(t *testing.T) {
	d, k := kernels(t)
	blas, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convCases {
		for _, ty := range dtypes {
			g := convGeom(c.x, c.w, c.p)
			x := sample(ty, c.x[0]*c.x[1]*c.x[2]*c.x[3], -2, 2, c.x...)
			w := sample(ty, c.w[0]*c.w[1]*c.w[2]*c.w[3], -1, 1, c.w...)
			xb, wb := upload(t, d, x), upload(t, d, w)
			cb, _ := d.Alloc(colCount(g) * ty.Size())
			if err := k.Im2Col(dt(ty), g, cb, xb); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			xv, want := x.Values(), make([]float64, colCount(g))
			forTaps(g, func(col, in int) {
				if in >= 0 {
					want[col] = xv[in]
				}
			})
			what := fmt.Sprintf("im2col %v %s", ty, c.name)
			cols := download(t, d, cb, ty, colCount(g))
			compare(t, what, cols, tensor.FromValues(ty, want, colCount(g)), exact)

			// The convolution: per group, y[n][grp·og…] = W_grp · cols[n][grp·kdim…].
			groups := max(c.p.Groups, 1)
			out := tensor.Conv2DShape(c.x, c.w, c.p)
			howo, og, kdim := g.HO*g.WO, c.w[0]/groups, c.w[1]*g.KH*g.KW
			yb, _ := d.Alloc(out[0] * out[1] * howo * ty.Size())
			for grp := range groups {
				gm := cuda.Gemm{M: og, N: howo, K: kdim, A: wb.Slice(grp * og * kdim * ty.Size()),
					B: cb.Slice(grp * kdim * howo * ty.Size()), C: yb.Slice(grp * og * howo * ty.Size())}
				strideB, strideC := g.C*g.KH*g.KW*howo, c.w[0]*howo
				if ty == tensor.Float32 {
					err = blas.SgemmStridedBatched(gm, g.N, 0, strideB, strideC, 1, 0)
				} else {
					err = blas.DgemmStridedBatched(gm, g.N, 0, strideB, strideC, 1, 0)
				}
				if err != nil {
					t.Fatalf("%s group %d: %v", c.name, grp, err)
				}
			}
			abs64 := func(v *tensor.Tensor) *tensor.Tensor {
				return tensor.Abs(tensor.FromValues(tensor.Float64, v.Values(), v.Shape()...))
			}
			bound := tensor.Conv2D(abs64(x), abs64(w), c.p).Values()
			for i := range bound {
				bound[i] = 2*float64(kdim)*2*eps(ty)*bound[i] + 1e-30
			}
			compareBound(t, fmt.Sprintf("conv %v %s", ty, c.name), download(t, d, yb, ty, out...), tensor.Conv2D(x, w, c.p), bound)

			// Col2Im of a column matrix of samples against the scatter.
			cols = sample(ty, colCount(g), -3, 3, colCount(g))
			d.Release(cb)
			cb = upload(t, d, cols)
			nx := c.x[0] * c.x[1] * c.x[2] * c.x[3]
			dxb, _ := d.Alloc(nx * ty.Size())
			if err := k.Col2Im(dt(ty), g, dxb, cb); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			cv, sum, mag := cols.Values(), make([]float64, nx), make([]float64, nx)
			forTaps(g, func(col, in int) {
				if in >= 0 {
					sum[in] += cv[col]
					mag[in] += math.Abs(cv[col])
				}
			})
			for i := range mag {
				mag[i] = 2*float64(g.KH*g.KW)*eps(ty)*mag[i] + 1e-30
			}
			compareBound(t, fmt.Sprintf("col2im %v %s", ty, c.name), download(t, d, dxb, ty, c.x...),
				tensor.FromValues(tensor.Float64, sum, c.x...), mag)
			for _, b := range []*cuda.Buffer{xb, wb, cb, yb, dxb} {
				d.Release(b)
			}
		}
	}
}

var poolCases = []struct {
	name string
	x    []int
	p    tensor.PoolParams
}{
	{"3×3 stride 2 pad 1", []int{2, 3, 9, 8}, tensor.PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
	{"3×3 stride 1", []int{1, 2, 6, 7}, tensor.PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}}},
	{"2×2 (odd size)", []int{2, 2, 7, 9}, tensor.PoolParams{Kernel: [2]int{2, 2}}},
	{"3×2 stride (2, 1) pad (1, 1)", []int{1, 3, 8, 6}, tensor.PoolParams{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}}},
}

// poolInput has few distinct values, so windows hold ties, and NaNs at a
// few places (several in the first windows, so that some window holds two
// and the first must win; one on a window's last element), so MaxPool's
// choice on ties and NaN is checked too.
func poolInput(ty tensor.DType, shape []int) *tensor.Tensor {
	n := shape[0] * shape[1] * shape[2] * shape[3]
	v := sample(tensor.Float64, n, -3, 3, n).Values()
	for i := range v {
		v[i] = math.Round(v[i])
	}
	v[1], v[shape[3]+1], v[shape[3]+2] = math.NaN(), math.NaN(), math.NaN()
	v[n/2] = math.NaN()
	v[n-1] = math.NaN()
	return tensor.FromValues(ty, v, shape...)
}

// TestMaxPool checks MaxPool against tensor.MaxPool2D (values to the
// bit, and the index of the chosen element among ties and NaNs) and
// MaxPoolGrad against tensor.MaxPool2DGrad: the same additions in the
// same order, so to the bit as well.
func TestMaxPool(t *testing.T) {
	d, k := kernels(t)
	for _, c := range poolCases {
		for _, ty := range dtypes {
			g := poolGeom(c.x, c.p)
			x := poolInput(ty, c.x)
			want, argmax := tensor.MaxPool2D(x, c.p)
			nOut, nIn := want.Size(), x.Size()
			xb := upload(t, d, x)
			yb, _ := d.Alloc(nOut * ty.Size())
			ib, _ := d.Alloc(nOut * 4)
			if err := k.MaxPool(dt(ty), g, yb, ib, xb); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			what := fmt.Sprintf("max pool %v %s", ty, c.name)
			compare(t, what, download(t, d, yb, ty, want.Shape()...), want, exact)
			idx := make([]int32, nOut)
			if err := cuda.Download(d, idx, ib); err != nil {
				t.Fatal(err)
			}
			for i, a := range argmax {
				plane := g.H * g.W
				if int(idx[i]) != a%plane {
					t.Fatalf("%s: output %d chose element %d of its plane, the CPU %d", what, i, idx[i], a%plane)
				}
			}

			dy := sample(ty, nOut, -1, 1, want.Shape()...)
			dyb := upload(t, d, dy)
			dxb, _ := d.Alloc(nIn * ty.Size())
			if err := k.MaxPoolGrad(dt(ty), g, dxb, dyb, ib); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			compare(t, what+" grad", download(t, d, dxb, ty, c.x...), tensor.MaxPool2DGrad(dy, argmax, c.x), exact)
			for _, b := range []*cuda.Buffer{xb, yb, ib, dyb, dxb} {
				d.Release(b)
			}
		}
	}
}

// TestAvgPool checks AvgPool against tensor.AvgPool2D (the same sum in
// the same order times the same reciprocal: to the bit) and AvgPoolGrad
// against tensor.AvgPool2DGrad, within 2·m·ε times the gradient of |dy|,
// m the most windows covering an element: the same operations, but Go may
// contract the CPU's dy·(1/k) + dx into an FMA (arm64), the device not.
func TestAvgPool(t *testing.T) {
	d, k := kernels(t)
	for _, c := range poolCases {
		for _, ty := range dtypes {
			g := poolGeom(c.x, c.p)
			x := sample(ty, c.x[0]*c.x[1]*c.x[2]*c.x[3], -4, 4, c.x...)
			want := tensor.AvgPool2D(x, c.p)
			xb := upload(t, d, x)
			yb, _ := d.Alloc(want.Size() * ty.Size())
			if err := k.AvgPool(dt(ty), g, yb, xb); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			what := fmt.Sprintf("avg pool %v %s", ty, c.name)
			compare(t, what, download(t, d, yb, ty, want.Shape()...), want, exact)

			dy := sample(ty, want.Size(), -1, 1, want.Shape()...)
			dyb := upload(t, d, dy)
			dxb, _ := d.Alloc(x.Size() * ty.Size())
			if err := k.AvgPoolGrad(dt(ty), g, dxb, dyb); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			m := ((g.KH + g.SH - 1) / g.SH) * ((g.KW + g.SW - 1) / g.SW)
			bound := tensor.AvgPool2DGrad(tensor.Abs(dy), c.x, c.p).Values()
			for i := range bound {
				bound[i] = 2*float64(m)*eps(ty)*bound[i] + 1e-30
			}
			compareBound(t, what+" grad", download(t, d, dxb, ty, c.x...), tensor.AvgPool2DGrad(dy, c.x, c.p), bound)
			for _, b := range []*cuda.Buffer{xb, yb, dyb, dxb} {
				d.Release(b)
			}
		}
	}
}

// TestGemmStridedBatched compares the strided batched GEMMs, alpha = 2
// and beta = ½, with tensor.MatMulT per matrix, for every combination of
// transposes; A or B repeats (stride 0) and C's matrices lie apart with a
// gap between them, which must stay untouched.
func TestGemmStridedBatched(t *testing.T) {
	d := device(t)
	blas, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	const m, n, k, batch = 13, 9, 21, 3
	for _, ty := range dtypes {
		for i, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			ta, tb := tr[0], tr[1]
			aShape, bShape := []int{m, k}, []int{k, n}
			if ta {
				aShape = []int{k, m}
			}
			if tb {
				bShape = []int{n, k}
			}
			sa, sb, sc := m*k, 0, m*n+5 // B repeats
			if i%2 == 1 {
				sa, sb = 0, k*n+2 // A repeats, B's matrices apart
			}
			na, nb, nc := (batch-1)*sa+m*k, (batch-1)*sb+k*n, (batch-1)*sc+m*n
			a, b, c0 := sample(ty, na, -1, 1, na), sample(ty, nb, -2, 1, nb), sample(ty, nc, -1, 1, nc)
			ab, bb, cb := upload(t, d, a), upload(t, d, b), upload(t, d, c0)
			g := cuda.Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, A: ab, B: bb, C: cb}
			if ty == tensor.Float32 {
				err = blas.SgemmStridedBatched(g, batch, sa, sb, sc, 2, 0.5)
			} else {
				err = blas.DgemmStridedBatched(g, batch, sa, sb, sc, 2, 0.5)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := download(t, d, cb, ty, nc).Values()
			want := c0.Values()
			bound := make([]float64, nc) // exact in the gaps
			for j := range batch {
				aj := tensor.FromValues(ty, a.Values()[j*sa:j*sa+m*k], aShape...)
				bj := tensor.FromValues(ty, b.Values()[j*sb:j*sb+k*n], bShape...)
				cj := tensor.FromValues(ty, c0.Values()[j*sc:j*sc+m*n], m, n)
				wj := tensor.Add(tensor.MulScalar(tensor.MatMulT(aj, bj, ta, tb), 2), tensor.MulScalar(cj, 0.5))
				copy(want[j*sc:], wj.Values())
				copy(bound[j*sc:], gemmBound(aj, bj, ta, tb, k, 2*eps(ty)))
			}
			what := fmt.Sprintf("gemm strided batched %v transA=%v transB=%v strides (%d, %d, %d)", ty, ta, tb, sa, sb, sc)
			compareBound(t, what, tensor.FromValues(ty, got, nc), tensor.FromValues(ty, want, nc), bound)
			d.Release(ab)
			d.Release(bb)
			d.Release(cb)
		}
	}
}

// TestConvErrors: a wrong output size, a buffer too small, pooling with
// dilation or too much padding, and indices too short are errors that say
// what is wrong, before any work is queued.
func TestConvErrors(t *testing.T) {
	d, k := kernels(t)
	b, _ := d.Alloc(1 << 16)
	small, _ := d.Alloc(64)
	defer d.Release(b)
	defer d.Release(small)
	g := cuda.ConvGeom{N: 2, C: 3, H: 8, W: 8, KH: 3, KW: 3, HO: 8, WO: 8, SH: 1, SW: 1, PH: 1, PW: 1, DH: 1, DW: 1}
	for _, c := range []struct {
		name, want string
		err        error
	}{
		{"wrong HO", "the output is 8×8, not 7×8", k.Im2Col(cuda.F32, func() cuda.ConvGeom { h := g; h.HO = 7; return h }(), b, b)},
		{"cols too small", "operand 0 needs 27648 bytes", k.Im2Col(cuda.F64, g, small, b)},
		{"zero stride", "strides and dilations >= 1", k.Col2Im(cuda.F32, func() cuda.ConvGeom { h := g; h.SW = 0; return h }(), b, b)},
		{"pool dilation", "dilation 1", k.MaxPool(cuda.F32, func() cuda.ConvGeom { h := g; h.DH, h.HO = 2, 6; return h }(), b, b, b)},
		{"pool padding", "padding at most half", k.AvgPool(cuda.F32, func() cuda.ConvGeom { h := g; h.KH, h.PH, h.HO = 2, 2, 11; return h }(), b, b)},
		{"short indices", "int32 indices need 1536 bytes", k.MaxPoolGrad(cuda.F32, g, b, b, small)},
		{"window too big", "smaller than the dilated", k.Im2Col(cuda.F32, func() cuda.ConvGeom { h := g; h.KH = 11; return h }(), b, b)},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, c.err, c.want)
		}
	}
	blas, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	gm := cuda.Gemm{M: 4, N: 4, K: 4, A: b, B: b, C: small}
	if err := blas.SgemmStridedBatched(gm, 40, 16, 16, 16, 1, 0); err == nil || !strings.Contains(err.Error(), "C with stride 16 needs 2560 bytes") {
		t.Errorf("SgemmStridedBatched past C's end = %v", err)
	}
	if err := blas.DgemmStridedBatched(gm, 2, 0, 0, 8, 1, 0); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("DgemmStridedBatched with overlapping C = %v", err)
	}
}
