package tensor

import (
	"math"
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// The Cholesky factorisation and its reverse sweep split their updates
// (triangular solves, symmetric rank-k updates) between the cores by rows
// themselves, each goroutine running the serial recursion with GEMM on
// one goroutine, instead of leaving the parallelism to GEMM: at order 500
// every product of the recursion is below GEMM's own threshold, so the
// factorisation ran on one core (2.0-2.2 ms, 19-21 GFLOP/s on the Zen 3).
// Rows are independent in every one of these updates, and each entry is
// the same product's sum whatever block of rows it falls in (the updates
// subtract with alpha −1 and beta 1, which the kernels' full and edge
// tiles round alike), so the results do not depend on the split.

// factSplitWork is the multiply-adds from which an update is split. At
// 1 << 17 the reverse sweep split the updates of its order-125 blocks and
// the order-500 symmetric mirror too, and ran 5-8 % slower at orders 125
// to 500 than at 1 << 19 (Zen 3, two cores, alternated in one process);
// the factorisation measured the same either way.
const factSplitWork = 1 << 19

// factSplitRows is the fewest rows a goroutine takes.
const factSplitRows = 8

// splitRows calls fn on blocks [r0, r1) covering the m rows of an update
// of work multiply-adds whose rows cost alike: on up to GOMAXPROCS
// goroutines when the work is large enough, else once.
func splitRows(m, work int, fn func(r0, r1 int)) {
	if work < factSplitWork {
		fn(0, m)
		return
	}
	linalgParallel(m, factSplitRows, fn)
}

// splitTriangle is splitRows for an update of a lower triangle of order n,
// whose row i costs in proportion to i: block t of p ends at row
// n·√((t+1)/p), so that the blocks' areas are equal.
func splitTriangle(n, work int, fn func(r0, r1 int)) {
	p := min(runtime.GOMAXPROCS(0), n/factSplitRows)
	bound := func(t int) int {
		if t >= p {
			return n
		}
		return int(float64(n) * math.Sqrt(float64(t)/float64(p)))
	}
	// The last block is the thinnest; keep every block's diagonal square
	// wider than minTriangleBlock.
	for p > 1 && n-bound(p-1) < minTriangleBlock {
		p--
	}
	if work < factSplitWork || p < 2 {
		fn(0, n)
		return
	}
	gemm.ParallelFor(p, p, func(t int) { fn(bound(t), bound(t+1)) })
}

// minTriangleBlock is the narrowest block splitTriangle makes. GEMM picks
// its kernel family by the product's width (on AVX-512 machines the AVX2
// kernel for products at most 16 columns wide), and the families' depth
// blocking can differ, which would change a sum's order; blocks wider than
// every family's switch keep the products of a split on the family the
// unsplit recursion uses.
const minTriangleBlock = 32
