//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"math"
)

// ConvGeom is a resolved 2-D convolution or pooling window geometry: the
// input (N, C, H, W), the window KH × KW, the output HO × WO, the strides
// SH, SW, the padding PH, PW on both sides and the dilation DH, DW.
// HO must be (H + 2·PH − DH·(KH−1) − 1)/SH + 1, and WO likewise, as
// tensor.Conv2DShape and tensor.Pool2DShape give them.
type ConvGeom struct{ N, C, H, W, KH, KW, HO, WO, SH, SW, PH, PW, DH, DW int }

// geomArg has the layout of struct Geom in kernels/conv.cu: it is passed
// to the convolution and pooling kernels by value.
type geomArg struct {
	n, c, h, w, kh, kw, ho, wo, sh, sw, ph, pw, dh, dw int64
}

func (g ConvGeom) arg() *geomArg {
	return &geomArg{int64(g.N), int64(g.C), int64(g.H), int64(g.W), int64(g.KH), int64(g.KW),
		int64(g.HO), int64(g.WO), int64(g.SH), int64(g.SW), int64(g.PH), int64(g.PW), int64(g.DH), int64(g.DW)}
}

// check validates g for op: N, C ≥ 0, the other sizes, strides and
// dilations ≥ 1, padding ≥ 0, HO and WO as the formula gives them, and a
// plane small enough for the int32 indices of max pooling. Pooling (pool
// set) also needs DH = DW = 1 and padding at most half the window, as
// tensor.Pool2DShape requires, so every window holds a real element.
func (g ConvGeom) check(op string, pool bool) error {
	if g.N < 0 || g.C < 0 || g.H < 1 || g.W < 1 || g.KH < 1 || g.KW < 1 || g.SH < 1 || g.SW < 1 ||
		g.DH < 1 || g.DW < 1 || g.PH < 0 || g.PW < 0 {
		return fmt.Errorf("cuda: %s: geometry %+v: N and C must be >= 0, H, W, KH, KW, strides and dilations >= 1, padding >= 0", op, g)
	}
	if pool && (g.DH != 1 || g.DW != 1 || 2*g.PH > g.KH || 2*g.PW > g.KW) {
		return fmt.Errorf("cuda: %s: geometry %+v: pooling needs dilation 1 and padding at most half the window", op, g)
	}
	if g.H > math.MaxInt32/g.W {
		return fmt.Errorf("cuda: %s: geometry %+v: an H×W plane over 2³¹−1 elements", op, g)
	}
	eh, ew := g.DH*(g.KH-1)+1, g.DW*(g.KW-1)+1
	if g.H+2*g.PH < eh || g.W+2*g.PW < ew {
		return fmt.Errorf("cuda: %s: geometry %+v: the %d×%d input padded by (%d, %d) is smaller than the dilated %d×%d window", op, g, g.H, g.W, g.PH, g.PW, eh, ew)
	}
	if ho, wo := (g.H+2*g.PH-eh)/g.SH+1, (g.W+2*g.PW-ew)/g.SW+1; g.HO != ho || g.WO != wo {
		return fmt.Errorf("cuda: %s: geometry %+v: the output is %d×%d, not %d×%d", op, g, ho, wo, g.HO, g.WO)
	}
	return nil
}

// sizes returns the element counts of the input (N·C·H·W), of the output
// (N·C·HO·WO) and of the column matrix (N·C·KH·KW·HO·WO).
func (g ConvGeom) sizes() (in, out, cols int) {
	nc := g.N * g.C
	return nc * g.H * g.W, nc * g.HO * g.WO, nc * g.KH * g.KW * g.HO * g.WO
}

// geomLaunch checks g and the buffers, then launches op over n elements
// with the arguments n, bufs…, g. Each buffer must hold its count of dt
// elements (int32 for the one at index idxAt; −1 for none).
func (k *Kernels) geomLaunch(op string, dt DType, g ConvGeom, pool bool, n int, bufs []*Buffer, counts []int, idxAt int) error {
	if err := g.check(op, pool); err != nil {
		return err
	}
	if !dt.valid() {
		return fmt.Errorf("cuda: %s: invalid dtype %d", op, dt)
	}
	for i, b := range bufs {
		if i == idxAt {
			if err := fitsIndices(op, counts[i], b); err != nil {
				return err
			}
		} else if err := fits(op, dt, counts[i], b); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	args := []any{n}
	for _, b := range bufs {
		args = append(args, b)
	}
	return k.launch(op, dt, elemGrid(n), append(args, g.arg())...)
}

// fitsIndices checks that b holds n int32 indices and is 4-byte aligned.
func fitsIndices(op string, n int, b *Buffer) error {
	if b == nil || b.size < 4*n {
		have := 0
		if b != nil {
			have = b.size
		}
		return fmt.Errorf("cuda: %s: the int32 indices need %d bytes, their buffer has %d", op, 4*n, have)
	}
	if b.ptr%4 != 0 {
		return fmt.Errorf("cuda: %s: the int32 indices start at %#x, not a multiple of 4 (a Buffer.Slice offset?)", op, b.ptr)
	}
	return nil
}

// Im2Col writes cols, contiguous (N, C·KH·KW, HO·WO), from x, contiguous
// (N, C, H, W): cols[n][(c·KH+i)·KW+j][oh·WO+ow] =
// x[n][c][oh·SH−PH+i·DH][ow·SW−PW+j·DW], 0 outside the image (Chellapilla,
// Puri and Simard, 2006, "High Performance Convolutional Neural Networks
// for Document Processing"). A convolution with G groups is then, per
// image and group g, the GEMM of weight rows g·O/G… by the column rows
// g·(C/G)·KH·KW…. Copies only: exact.
func (k *Kernels) Im2Col(dt DType, g ConvGeom, cols, x *Buffer) error {
	in, _, nc := g.sizes()
	return k.geomLaunch("im2col", dt, g, false, nc, []*Buffer{cols, x}, []int{nc, in}, -1)
}

// Col2Im is Im2Col's transpose: dx, contiguous (N, C, H, W), gets at each
// element the sum of the cols entries that Im2Col would read from it. It
// is written, not accumulated: each thread gathers one element's terms
// over the taps (i, j) in order, so the result is deterministic and no
// atomics are used. dx must not overlap cols.
func (k *Kernels) Col2Im(dt DType, g ConvGeom, dx, cols *Buffer) error {
	in, _, nc := g.sizes()
	return k.geomLaunch("col2im", dt, g, false, in, []*Buffer{dx, cols}, []int{in, nc}, -1)
}

// MaxPool writes y, contiguous (N, C, HO, WO), the maximum of each window
// of x, contiguous (N, C, H, W), and idx, N·C·HO·WO int32 the caller
// allocates with Driver.Alloc, the flat index h·W+w of the chosen element
// within its (n, c) plane. It picks as tensor.MaxPool2D does: padding
// never wins, the first maximum in row-major window order, or the first
// NaN. g needs DH = DW = 1 and padding at most half the window.
func (k *Kernels) MaxPool(dt DType, g ConvGeom, y, idx, x *Buffer) error {
	in, out, _ := g.sizes()
	return k.geomLaunch("max_pool", dt, g, true, out, []*Buffer{y, idx, x}, []int{out, out, in}, 1)
}

// MaxPoolGrad writes dx, contiguous (N, C, H, W): at each element the sum
// of dy over the outputs whose idx (from MaxPool) is that element, in
// row-major output order as tensor.MaxPool2DGrad adds them, gathered per
// element over the windows that cover it (deterministic; exact where each
// element is chosen at most once). Indices outside the window are never
// read as such: an element only collects outputs whose window covers it.
func (k *Kernels) MaxPoolGrad(dt DType, g ConvGeom, dx, dy, idx *Buffer) error {
	in, out, _ := g.sizes()
	return k.geomLaunch("max_pool_grad", dt, g, true, in, []*Buffer{dx, dy, idx}, []int{in, out, out}, 2)
}

// AvgPool writes y, contiguous (N, C, HO, WO), the mean of each window of
// x as tensor.AvgPool2D computes it: the sum of the window clipped to the
// image, in row-major order, times 1/(KH·KW), padding counting as zeros.
func (k *Kernels) AvgPool(dt DType, g ConvGeom, y, x *Buffer) error {
	in, out, _ := g.sizes()
	return k.geomLaunch("avg_pool", dt, g, true, out, []*Buffer{y, x}, []int{out, in}, -1)
}

// AvgPoolGrad writes dx, contiguous (N, C, H, W), the gradient of AvgPool
// as tensor.AvgPool2DGrad computes it: at each element the sum of
// dy·(1/(KH·KW)) over the windows covering it, in row-major output order.
func (k *Kernels) AvgPoolGrad(dt DType, g ConvGeom, dx, dy *Buffer) error {
	in, out, _ := g.sizes()
	return k.geomLaunch("avg_pool_grad", dt, g, true, in, []*Buffer{dx, dy}, []int{in, out}, -1)
}
