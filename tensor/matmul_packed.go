package tensor

import "github.com/gradus-ml/gradus/tensor/internal/gemm"

// Packed right operands: a captured program whose matmuls share a right
// operand (an RNN's recurrent weight, read by every step of the forward
// sequence and, transposed, of the backward one) packs it once per run
// into the GEMM's panel layout and multiplies every step against the
// packed copy (graph's capture_pack.go). The products are the plain ones
// bit for bit: the same kernel, blocks and order, minus the packing.

// packedB is op(b) of a 2-D host matrix packed by packBTrusted.
type packedB struct {
	dt  DType
	f32 gemm.Packed[float32]
	f64 gemm.Packed[float64]
}

// dims returns op(b)'s rows and columns.
func (pk *packedB) dims() (k, n int) {
	if pk.dt == Float32 {
		return pk.f32.Dims()
	}
	return pk.f64.Dims()
}

// packBTrusted packs op(b) of the 2-D b (transposed when transB) for
// matmulPackedTrusted, reusing old (an earlier result, or nil) when it is
// one. It returns nil where no packed product applies: a device tensor,
// a b that is not 2-D, fewer than two columns (a row times one column is
// an inner product, which takes another path, and matrix-vector products
// gain nothing from a packing) or an inner dimension below 2 (the rank-1
// products take another path).
func packBTrusted(old any, b *Tensor, transB bool) any {
	if b.dev != nil || len(b.shape) != 2 {
		return nil
	}
	k, n, _, _ := logicalMatrix(b, asMatrix, transB)
	if k < 2 || n < 2 {
		return nil
	}
	pk, _ := old.(*packedB)
	if pk == nil {
		pk = new(packedB)
	}
	ob := prepOperand(b, asMatrix, transB, nil)
	pk.dt = b.dtype
	if b.dtype == Float32 {
		gemm.PackS(&pk.f32, ob.trans, k, n, storage32(ob.t)[ob.t.offset:], ob.ld)
	} else {
		gemm.PackD(&pk.f64, ob.trans, k, n, storage64(ob.t)[ob.t.offset:], ob.ld)
	}
	return pk
}

// matmulPackedTrusted is matmulTrusted(dst, a, b, transA, transB) computed
// against packed, b's packing by packBTrusted, when the product is one
// GEMM (a 2-D a, or a batch of a's matrices stacked into one tall one);
// otherwise, or with packed nil, it is matmulTrusted.
func matmulPackedTrusted(dst, a, b *Tensor, transA, transB bool, packed any) *Tensor {
	pk, oa, m, ok := packedPlan(dst, a, transA, packed)
	if !ok {
		return matmulTrusted(dst, a, b, transA, transB)
	}
	pk.multiply(oa, m, 0, dst)
	return dst
}

// matmulBiasPackedTrusted is matmulBiasTrusted(dst, a, b, bias, transA,
// transB) against packed, as matmulPackedTrusted is matmulTrusted: dst's
// rows start as the bias and the product adds to them, which gives the
// bits of the GEMM that writes the bias as it goes (biasGemm).
func matmulBiasPackedTrusted(dst, a, b, bias *Tensor, transA, transB bool, packed any) *Tensor {
	pk, oa, m, ok := packedPlan(dst, a, transA, packed)
	if !ok || bias.dev != nil {
		return matmulBiasTrusted(dst, a, b, bias, transA, transB)
	}
	if dst.dtype == Float32 {
		fillRows(storage32(dst)[dst.offset:dst.offset+dst.Size()], bias)
	} else {
		fillRows(storage64(dst)[dst.offset:dst.offset+dst.Size()], bias)
	}
	pk.multiply(oa, m, 1, dst)
	return dst
}

// packedPlan reports whether op(a)·(packed op(b)) into dst is one GEMM
// against the packing, and returns the packing, op(a) as GEMM reads it
// and its rows (a stacked batch counted in).
func packedPlan(dst, a *Tensor, transA bool, packed any) (pk *packedB, oa matOperand, m int, ok bool) {
	pk, _ = packed.(*packedB)
	if pk == nil || dst.Size() == 0 || dst.dev != nil || a.dev != nil || a.dtype != pk.dt {
		return nil, oa, 0, false
	}
	m, k, _, _ := logicalMatrix(a, asMatrix, transA)
	kb, n := pk.dims()
	if k != kb || dst.shape[len(dst.shape)-1] != n {
		return nil, oa, 0, false
	}
	batch := dst.shape[:len(dst.shape)-2]
	oa = prepOperand(a, asMatrix, transA, batch)
	if nb := shapeSize(batch); nb > 1 {
		if oa.trans || !stacked(oa, batch, m) {
			return nil, oa, 0, false
		}
		m *= nb
	}
	if m == 1 {
		return nil, oa, 0, false // a row times a matrix: gemv's, not GEMM's
	}
	return pk, oa, m, true
}

// multiply sets dst = op(a)·op(b) + beta·dst for the m rows of op(a).
func (pk *packedB) multiply(oa matOperand, m int, beta float64, dst *Tensor) {
	n := dst.shape[len(dst.shape)-1]
	if pk.dt == Float32 {
		gemm.SgemmPacked(oa.trans, m, 1, storage32(oa.t)[oa.t.offset:], oa.ld, &pk.f32, float32(beta), storage32(dst)[dst.offset:], n)
	} else {
		gemm.DgemmPacked(oa.trans, m, 1, storage64(oa.t)[oa.t.offset:], oa.ld, &pk.f64, beta, storage64(dst)[dst.offset:], n)
	}
}
