package gp

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// tileRows and tileCols are the default tile: 64 rows of K̂ by 2048
// columns (1 MiB of float64), which stays in cache through the distance,
// exponential and GEMM passes over it.
const (
	tileRows = 64
	tileCols = 2048
)

// kernelOp is the training covariance K̂ = s·f(r²) + σ²I of a stationary
// kernel, held matrix-free: products with it compute the kernel in blocks
// of rows (never the n × n matrix), in parallel over goroutines, with
// tensor.SqDist for the distances and tensor's GEMM for the products.
type kernelOp struct {
	kind    kernel.Kind
	n, d    int
	xs      []float64 // inputs divided by the lengthscales, (n, d)
	ls      []float64 // lengthscales: one, or d (ARD)
	scale   float64   // output variance s (1 without a kernel.Scale)
	alpha   float64   // rational quadratic shape
	noise   float64   // σ²
	block   int       // rows per tile
	cols    int       // columns per tile
	workers int
	part    RowPartition // nil or size 1: the whole product on this process
	f32     *f32Tiles    // non-nil: products in float32 tiles (CGOptions.Float32)
	err     error        // the first failed all-reduce of a partitioned product

	scaleP, lsP, alphaP, noiseP *kernel.Hyperparam
}

// newKernelOp builds the operator for kernel, which must be a Stationary
// kernel or a Scale of one, at the current hyperparameter values.
func newKernelOp(op string, kern kernel.Kernel, x []float64, n, d int, noise *kernel.Hyperparam, blockRows int) (*kernelOp, error) {
	k := &kernelOp{n: n, d: d, scale: 1, noiseP: noise}
	st, ok := kern.(*kernel.Stationary)
	if sc, isScale := kern.(*kernel.Scale); isScale {
		k.scaleP = sc.Variance()
		k.scale = sc.Variance().Value()
		st, ok = sc.Kernel().(*kernel.Stationary)
	}
	if !ok {
		return nil, fmt.Errorf("%s: CG inference supports a kernel.Stationary kernel (RBF, Matérn, rational quadratic) or a kernel.Scale of one, got %T", op, kern)
	}
	k.kind, k.lsP, k.alphaP = st.Kind(), st.Lengthscale(), st.Alpha()
	k.ls = st.Lengthscale().Get()
	if len(k.ls) != 1 && len(k.ls) != d {
		return nil, fmt.Errorf("%s: %s has %d values but the inputs have %d columns", op, st.Lengthscale().Name(), len(k.ls), d)
	}
	if st.Alpha() != nil {
		k.alpha = st.Alpha().Value()
	}
	if noise != nil {
		k.noise = noise.Value()
	}
	k.xs = make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			k.xs[i*d+j] = x[i*d+j] / k.ls[j%len(k.ls)]
		}
	}
	k.block, k.cols = blockRows, tileCols
	if k.block <= 0 {
		k.block = tileRows
	}
	k.workers = runtime.GOMAXPROCS(0)
	return k, nil
}

// scaleInputs divides the rows of x (m, d) by the lengthscales.
func (k *kernelOp) scaleInputs(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v / k.ls[(i%k.d)%len(k.ls)]
	}
	return out
}

// profile overwrites r2 (squared scaled distances) with s·f(r²): one
// pass builds the exponent (with log s folded in), tensor's vector exp
// takes it, and a second pass multiplies the Matérn polynomials.
func (k *kernelOp) profile(r2 []float64) {
	t := tensor.FromFloat64s(r2)
	ls := math.Log(k.scale)
	switch k.kind {
	case kernel.KindRBF:
		for i, v := range r2 {
			r2[i] = ls - 0.5*v
		}
		tensor.ExpTo(t, t)
	case kernel.KindMatern12, kernel.KindMatern32, kernel.KindMatern52:
		c := [...]float64{kernel.KindMatern12: 1, kernel.KindMatern32: 3, kernel.KindMatern52: 5}[k.kind]
		poly := make([]float64, len(r2))
		for i, v := range r2 {
			s := math.Sqrt(c * v)
			switch k.kind {
			case kernel.KindMatern12:
				poly[i] = 1
			case kernel.KindMatern32:
				poly[i] = 1 + s
			default:
				poly[i] = 1 + s + s*s/3
			}
			r2[i] = ls - s
		}
		tensor.ExpTo(t, t)
		for i := range r2 {
			r2[i] *= poly[i]
		}
	default:
		for i, v := range r2 {
			r2[i] = ls - k.alpha*math.Log1p(v/(2*k.alpha))
		}
		tensor.ExpTo(t, t)
	}
}

// dProfile returns s·∂f/∂r² at r2 given kv = s·f(r²) (zero where the
// derivative is infinite at r = 0, whose factor ∂r²/∂ℓ is zero there).
func (k *kernelOp) dProfile(r2, kv float64) float64 {
	switch k.kind {
	case kernel.KindRBF:
		return -0.5 * kv
	case kernel.KindMatern12:
		if r2 == 0 {
			return 0
		}
		return -kv / (2 * math.Sqrt(r2))
	case kernel.KindMatern32:
		s := math.Sqrt(3 * r2)
		return -1.5 * kv / (1 + s)
	case kernel.KindMatern52:
		s := math.Sqrt(5 * r2)
		return -(5.0 / 6) * (1 + s) * kv / (1 + s + s*s/3)
	default:
		return -0.5 * kv / (1 + r2/(2*k.alpha))
	}
}

// tile writes s·f(r²) between the scaled rows a (b, d) and the training
// points c0 ≤ j < c1 into dst (b, c1 − c0), and the squared distances into
// r2 if it is not nil. The distances are summed directly (as tensor.SqDist
// does for few features), with three features unrolled.
func (k *kernelOp) tile(dst, r2, a []float64, b, c0, c1 int) {
	n, d, xs := c1-c0, k.d, k.xs[c0*k.d:c1*k.d]
	for i := 0; i < b; i++ {
		row := dst[i*n : (i+1)*n]
		ai := a[i*d : (i+1)*d]
		if d == 3 {
			a0, a1, a2 := ai[0], ai[1], ai[2]
			for j := range row {
				x := xs[3*j : 3*j+3 : 3*j+3]
				e0, e1, e2 := a0-x[0], a1-x[1], a2-x[2]
				row[j] = e0*e0 + e1*e1 + e2*e2
			}
			continue
		}
		for j := range row {
			x := xs[j*d : (j+1)*d]
			s := 0.0
			for q, v := range ai {
				e := v - x[q]
				s += e * e
			}
			row[j] = s
		}
	}
	if r2 != nil {
		copy(r2, dst[:b*n])
	}
	k.profile(dst[:b*n])
}

// forBlocks calls fn(w, i0, i1) for the row blocks [i0, i1) of m rows, on
// k.workers goroutines; w is the worker's index, for its buffers. Worker w
// takes blocks w, w + workers, …, so per-worker sums are reproducible for
// a given GOMAXPROCS.
func (k *kernelOp) forBlocks(m int, fn func(w, i0, i1 int)) {
	nb := (m + k.block - 1) / k.block
	workers := min(k.workers, nb)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			defer wg.Done()
			for b := w; b < nb; b += workers {
				fn(w, b*k.block, min(m, (b+1)*k.block))
			}
		}(w)
	}
	wg.Wait()
}

// crossMatMul returns K(xs, X)·v for scaled test rows xs (m, d) and v
// (n, t), without the noise: (m, t), tile by tile.
func (k *kernelOp) crossMatMul(xs []float64, m int, v []float64, t int) []float64 {
	if k.f32 != nil {
		return k.crossMatMul32(xs, m, v, t)
	}
	out := make([]float64, m*t)
	bufs := make([][]float64, k.workers)
	prods := make([][]float64, k.workers)
	k.forBlocks(m, func(w, i0, i1 int) {
		b := i1 - i0
		if bufs[w] == nil {
			bufs[w] = make([]float64, k.block*k.cols)
			prods[w] = make([]float64, k.block*t)
		}
		o := out[i0*t : i1*t]
		for c0 := 0; c0 < k.n; c0 += k.cols {
			c1 := min(k.n, c0+k.cols)
			buf, prod := bufs[w][:b*(c1-c0)], prods[w][:b*t]
			k.tile(buf, nil, xs[i0*k.d:i1*k.d], b, c0, c1)
			tensor.MatMulTo(tensor.FromFloat64s(prod, b, t), tensor.FromFloat64s(buf, b, c1-c0), tensor.FromFloat64s(v[c0*t:c1*t], c1-c0, t))
			for i, p := range prod {
				o[i] += p
			}
		}
	})
	return out
}

// MatMul sets dst = K̂·v for v and dst (n, t), row-major. With a
// partition, this rank computes its rows and an all-reduce sums the ranks'
// rows (a failure is kept in k.err).
func (k *kernelOp) MatMul(dst, v []float64, t int) {
	if k.partitioned() {
		lo, hi := k.rows()
		clear(dst)
		copy(dst[lo*t:hi*t], k.crossMatMul(k.xs[lo*k.d:hi*k.d], hi-lo, v, t))
		k.reduce(dst)
	} else {
		copy(dst, k.crossMatMul(k.xs, k.n, v, t))
	}
	for i := range dst {
		dst[i] += k.noise * v[i]
	}
}

// Size returns n.
func (k *kernelOp) Size() int { return k.n }

// row returns the kernel row k(x_i, X) without noise.
func (k *kernelOp) row(i int) []float64 {
	out := make([]float64, k.n)
	k.tile(out, nil, k.xs[i*k.d:(i+1)*k.d], 1, 0, k.n)
	return out
}

// kernelGrads holds Σᵢ aᵢᵀ (∂K̂/∂θ) bᵢ for each hyperparameter θ of the
// operator, in constrained units.
type kernelGrads struct {
	scale, alpha, noise float64
	ls                  []float64
}

// gradTerms returns Σᵢ aᵢᵀ (∂K̂/∂θ) bᵢ = Σⱼₖ Wⱼₖ ∂K̂ⱼₖ/∂θ with W = A·Bᵀ,
// for A and B (n, t), in one pass over row blocks: W's block by GEMM, the
// kernel's block and its derivatives alongside, never the whole W. With a
// partition, this rank passes over its rows and an all-reduce sums the
// kernel terms (the noise term, Σ aᵢᵀbᵢ, is computed on every rank).
func (k *kernelOp) gradTerms(a, b []float64, t int) (kernelGrads, error) {
	n, d := k.n, k.d
	ard := len(k.ls) > 1
	accs := make([]*gradAcc, k.workers)
	lo, hi := k.rows()
	var b32 []float32
	if k.f32 != nil {
		b32 = make([]float32, len(b))
		for i, v := range b {
			b32[i] = float32(v)
		}
	}
	k.forBlocks(hi-lo, func(w, i0, i1 int) {
		i0, i1 = i0+lo, i1+lo
		if accs[w] == nil {
			accs[w] = &gradAcc{ls: make([]float64, len(k.ls))}
			if k.f32 != nil {
				accs[w].f32 = k.newGradAcc32(t)
			} else {
				sz := k.block * k.cols
				accs[w].kb, accs[w].r2, accs[w].wb = make([]float64, sz), make([]float64, sz), make([]float64, sz)
			}
			if ard {
				accs[w].col = make([]float64, n)
			}
		}
		if k.f32 != nil {
			k.startBlock32(accs[w].f32, a, t, i0, i1)
		}
		for c0 := 0; c0 < n; c0 += k.cols {
			if k.f32 != nil {
				k.gradTile32(accs[w], b32, t, i0, i1, c0, min(n, c0+k.cols))
			} else {
				k.gradTile(accs[w], a, b, t, i0, i1, c0, min(n, c0+k.cols))
			}
		}
	})
	var out kernelGrads
	out.ls = make([]float64, len(k.ls))
	for _, ac := range accs {
		if ac == nil {
			continue
		}
		out.scale += ac.scale
		out.alpha += ac.alpha
		for q := range out.ls {
			out.ls[q] += ac.ls[q]
		}
		if ard {
			for c := 0; c < n; c++ {
				for q := 0; q < d; q++ {
					out.ls[q] += ac.col[c] * k.xs[c*d+q] * k.xs[c*d+q]
				}
			}
		}
	}
	if k.partitioned() {
		buf := append([]float64{out.scale, out.alpha}, out.ls...)
		k.reduce(buf)
		if k.err != nil {
			return kernelGrads{}, k.err
		}
		out.scale, out.alpha = buf[0], buf[1]
		copy(out.ls, buf[2:])
	}
	// ∂r²/∂ℓ = −2r²/ℓ (isotropic) or −2(x̃_q − x̃'_q)²/ℓ_q (ARD).
	for q := range out.ls {
		out.ls[q] *= -2 / k.ls[q]
	}
	for i := 0; i < n*t; i++ {
		out.noise += a[i] * b[i]
	}
	return out, nil
}

// gradAcc is one worker's share of gradTerms.
type gradAcc struct {
	scale, alpha float64
	ls           []float64
	col          []float64 // ARD: column sums of G
	kb, r2, wb   []float64
	f32          *gradAcc32 // float32 tiles' buffers instead of kb, r2, wb
}

// gradTile adds the tile of rows [i0, i1) and columns [c0, c1) to ac.
func (k *kernelOp) gradTile(ac *gradAcc, a, b []float64, t, i0, i1, c0, c1 int) {
	d, ard := k.d, len(k.ls) > 1
	nb, nc := i1-i0, c1-c0
	kb, r2, wb := ac.kb[:nb*nc], ac.r2[:nb*nc], ac.wb[:nb*nc]
	k.tile(kb, r2, k.xs[i0*d:i1*d], nb, c0, c1)
	tensor.MatMulTTo(tensor.FromFloat64s(wb, nb, nc), tensor.FromFloat64s(a[i0*t:i1*t], nb, t),
		tensor.FromFloat64s(b[c0*t:c1*t], nc, t), false, true)
	if k.kind == kernel.KindRBF && !ard {
		// s·f' = −½kv: Σ W·kv gives both the variance and, with r²,
		// the lengthscale term.
		sw, swr := 0.0, 0.0
		for e, wv := range wb {
			wk := wv * kb[e]
			sw += wk
			swr += wk * r2[e]
		}
		ac.scale += sw / k.scale
		ac.ls[0] += -0.5 * swr
		return
	}
	for j := 0; j < nb; j++ {
		xj := k.xs[(i0+j)*d : (i0+j+1)*d]
		rowG := 0.0
		for c := 0; c < nc; c++ {
			e := j*nc + c
			wv, kv, rv := wb[e], kb[e], r2[e]
			ac.scale += wv * kv / k.scale
			var gv float64
			if k.kind == kernel.KindRBF {
				gv = -0.5 * wv * kv
			} else {
				gv = wv * k.dProfile(rv, kv)
			}
			if k.kind == kernel.KindRationalQuadratic {
				u := rv / (2 * k.alpha)
				ac.alpha += wv * kv * (u/(1+u) - math.Log1p(u))
			}
			if !ard {
				ac.ls[0] += gv * rv
				continue
			}
			rowG += gv
			ac.col[c0+c] += gv
			wb[e] = gv // reuse W's tile for G = W ⊙ s·f'(r²)
		}
		if ard {
			for q := 0; q < d; q++ {
				// Σ_c G_jc (x̃_jq − x̃_cq)²: the row and cross parts here,
				// the column part from ac.col after the pass.
				cross := 0.0
				for c := 0; c < nc; c++ {
					cross += wb[j*nc+c] * k.xs[(c0+c)*d+q]
				}
				ac.ls[q] += xj[q]*xj[q]*rowG - 2*xj[q]*cross
			}
		}
	}
}
