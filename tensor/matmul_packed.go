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
// a b that is not 2-D, no columns, or an inner dimension below 2 (the
// rank-1 products take another path).
func packBTrusted(old any, b *Tensor, transB bool) any {
	if b.dev != nil || len(b.shape) != 2 {
		return nil
	}
	k, n, _, _ := logicalMatrix(b, asMatrix, transB)
	if k < 2 || n == 0 {
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
	pk, _ := packed.(*packedB)
	if pk == nil || dst.Size() == 0 || dst.dev != nil || a.dev != nil || a.dtype != pk.dt {
		return matmulTrusted(dst, a, b, transA, transB)
	}
	m, k, _, _ := logicalMatrix(a, asMatrix, transA)
	kb, n := pk.dims()
	if k != kb || dst.shape[len(dst.shape)-1] != n {
		return matmulTrusted(dst, a, b, transA, transB)
	}
	batch := dst.shape[:len(dst.shape)-2]
	oa := prepOperand(a, asMatrix, transA, batch)
	if nb := shapeSize(batch); nb > 1 {
		if oa.trans || !stacked(oa, batch, m) {
			return matmulTrusted(dst, a, b, transA, transB)
		}
		m *= nb
	}
	if a.dtype == Float32 {
		gemm.SgemmPacked(oa.trans, m, 1, storage32(oa.t)[oa.t.offset:], oa.ld, &pk.f32, 0, storage32(dst)[dst.offset:], n)
	} else {
		gemm.DgemmPacked(oa.trans, m, 1, storage64(oa.t)[oa.t.offset:], oa.ld, &pk.f64, 0, storage64(dst)[dst.offset:], n)
	}
	return dst
}
