package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// Packing a shared right operand once. A recurrence multiplies the same
// weight by every step's state: an LSTM of 50 steps makes 50 matmuls by
// W_h forwards and 50 by W_hᵀ backwards, and each GEMM packs its right
// operand into the kernels' panels again, which for products of a few
// dozen rows takes about as long as the multiply-adds (tensor's
// matmul_packed.go). Capture sees every use, so it gives the matmul steps
// that share a right operand and its transposition one packing: the
// group's first step packs it on every Run (the operand's values may
// change between runs, never within one), and every step of the group
// multiplies against the packed copy (a constant operand is packed on
// the first Run only). A linear step, x·wᵀ + b, shares the packing of wᵀ
// with the matmuls that read w transposed: a GRU projects every step's
// state by W_h that way. The products are bit for bit the plain ones. The
// packed copy is held by the program besides its arenas.

// packMinUses is the fewest matmuls sharing a right operand that are
// worth a packing of their own; packMaxElems bounds the operands packed
// whole: a large weight is packed a cache block at a time by each product
// anyway, and that time is small against its multiply-adds.
const (
	packMinUses  = 2
	packMaxElems = 1 << 20
)

// packShare is the packing a group of matmul steps shares.
type packShare struct{ packed any }

// packedMatmul is a matmul step of a group sharing its right operand.
type packedMatmul struct {
	matmulOp
	share *packShare
	pack  bool // the group's first step: packs the operand
	once  bool // the operand is a constant: packed on the first Run only
}

func (o *packedMatmul) Name() string { return "matmul_packed" }

func (o *packedMatmul) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	a, b := in[0], in[1]
	packed := o.share.get(o.pack, o.once, b, o.transB)
	return kern.MatMulPacked(o.alloc(g, a, b), a, b, o.transA, o.transB, packed)
}

// get returns the group's packing of op(b), packing it first when the
// step is the group's first (pack) and the operand is not a constant
// packed already (once).
func (s *packShare) get(pack, once bool, b *tensor.Tensor, transB bool) any {
	if pack && (!once || s.packed == nil) {
		s.packed = kern.PackB(s.packed, b, transB)
	}
	return s.packed
}

// packedLinear is a linear step (x·wᵀ + b) of a group sharing w: a GRU's
// recurrent projection of every step's state.
type packedLinear struct {
	linearOp
	share      *packShare
	pack, once bool
}

func (o *packedLinear) Name() string { return "linear_packed" }

func (o *packedLinear) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x, w, b := in[0], in[1], in[2]
	packed := o.share.get(o.pack, o.once, w, true)
	sx := x.Shape()
	shape := g.AllocInts(len(sx))
	copy(shape, sx)
	shape[len(sx)-1] = w.Shape()[0]
	return kern.MatMulBiasPacked(g.AllocUninit(x.DType(), shape...), x, w, b, false, true, packed)
}

// packShared groups the matmul steps by right operand and transposition
// and turns each group of at least packMinUses into packedMatmul steps.
func (p *Program) packShared() {
	type key struct {
		slot   int
		transB bool
	}
	groups := map[key][]int{}
	var order []key
	for i := range p.steps {
		var transB bool
		switch o := p.steps[i].op.(type) {
		case matmulOp:
			transB = o.transB
		case linearOp:
			transB = true // x·wᵀ + b
		default:
			continue
		}
		b := p.slots[p.steps[i].in[1]]
		if len(b.shape) != 2 || b.shape[0]*b.shape[1] > packMaxElems {
			continue
		}
		depth, width := b.shape[0], b.shape[1]
		if transB {
			depth, width = width, depth
		}
		if depth < 2 || width < 2 {
			continue // tensor's PackB packs neither (rank 1, one column)
		}
		k := key{p.steps[i].in[1], transB}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		steps := groups[k]
		if len(steps) < packMinUses {
			continue
		}
		share := &packShare{}
		p.stats.Packed += len(steps)
		once := p.slots[k.slot].kind == slotConst
		for j, i := range steps {
			switch o := p.steps[i].op.(type) {
			case matmulOp:
				p.steps[i].op = &packedMatmul{matmulOp: o, share: share, pack: j == 0, once: once}
			case linearOp:
				p.steps[i].op = &packedLinear{linearOp: o, share: share, pack: j == 0, once: once}
			}
		}
	}
}
