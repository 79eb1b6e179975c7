package tensor

// The per-dtype kernels of the reductions in reduce.go: each reduces a
// strided run to one value, folds a contiguous row into a row of partial
// results, and merges partials. Sum-like kernels add pairwise.

// pairwise reduces the strided run with leaf on blocks of at most pairBlock
// elements, adding the block results in a balanced tree.
func pairwise[T Float](x []T, off, n, stride int, aux T, leaf func(x []T, off, n, stride int, aux T) T) T {
	if n <= pairBlock {
		return leaf(x, off, n, stride, aux)
	}
	h := n / 2
	return pairwise(x, off, h, stride, aux, leaf) + pairwise(x, off+h*stride, n-h, stride, aux, leaf)
}

// sumLeaf adds up to pairBlock elements with four accumulators.
func sumLeaf[T Float](x []T, off, n, stride int, _ T) T {
	if stride == 1 {
		v := x[off : off+n]
		var s0, s1, s2, s3 T
		i := 0
		for ; i+4 <= len(v); i += 4 {
			s0 += v[i]
			s1 += v[i+1]
			s2 += v[i+2]
			s3 += v[i+3]
		}
		for ; i < len(v); i++ {
			s0 += v[i]
		}
		return (s0 + s1) + (s2 + s3)
	}
	var s T
	for i := 0; i < n; i++ {
		s += x[off+i*stride]
	}
	return s
}

func sqDevLeaf[T Float](x []T, off, n, stride int, m T) T {
	var s T
	for i := 0; i < n; i++ {
		d := x[off+i*stride] - m
		s += d * d
	}
	return s
}

func sumParts[T Float](parts []T) T { return pairwise(parts, 0, len(parts), 1, 0, sumLeaf[T]) }

func sumKernel[T Float]() *redKernel[T] {
	return &redKernel[T]{
		run: func(x []T, off, n, stride int, aux T) T { return pairwise(x, off, n, stride, aux, sumLeaf[T]) },
		rows: func(dst, row, _ []T) {
			row = row[:len(dst)]
			addRun(dst, dst, row) // dst[j] += row[j], vectorised
		},
		merge:    sumParts[T],
		additive: true,
	}
}

func devLeaf[T Float](x []T, off, n, stride int, m T) T {
	var s T
	for i := 0; i < n; i++ {
		s += x[off+i*stride] - m
	}
	return s
}

// devKernel sums deviations from a per-output value, for the variance's
// correction term.
func devKernel[T Float]() *redKernel[T] {
	return &redKernel[T]{
		run: func(x []T, off, n, stride int, m T) T { return pairwise(x, off, n, stride, m, devLeaf[T]) },
		rows: func(dst, row, m []T) {
			row, m = row[:len(dst)], m[:len(dst)]
			for j := range dst {
				dst[j] += row[j] - m[j]
			}
		},
		merge:    sumParts[T],
		additive: true,
	}
}

func sqDevKernel[T Float]() *redKernel[T] {
	return &redKernel[T]{
		run: func(x []T, off, n, stride int, m T) T { return pairwise(x, off, n, stride, m, sqDevLeaf[T]) },
		rows: func(dst, row, m []T) {
			row, m = row[:len(dst)], m[:len(dst)]
			for j := range dst {
				d := row[j] - m[j]
				dst[j] += d * d
			}
		},
		merge:    sumParts[T],
		additive: true,
	}
}

func expKernel[T Float](exp func(T) T) *redKernel[T] {
	leaf := func(x []T, off, n, stride int, m T) T {
		var s T
		for i := 0; i < n; i++ {
			s += exp(x[off+i*stride] - m)
		}
		return s
	}
	return &redKernel[T]{
		run: func(x []T, off, n, stride int, m T) T { return pairwise(x, off, n, stride, m, leaf) },
		rows: func(dst, row, m []T) {
			row, m = row[:len(dst)], m[:len(dst)]
			for j := range dst {
				dst[j] += exp(row[j] - m[j])
			}
		},
		merge:    sumParts[T],
		additive: true,
	}
}

// maxRun is NaN-propagating: once m is NaN no comparison replaces it.
func maxRun[T Float](x []T, off, n, stride int, _ T) T {
	m := x[off]
	for i := 1; i < n; i++ {
		v := x[off+i*stride]
		if v > m || v != v {
			m = v
		}
	}
	return m
}

func minRun[T Float](x []T, off, n, stride int, _ T) T {
	m := x[off]
	for i := 1; i < n; i++ {
		v := x[off+i*stride]
		if v < m || v != v {
			m = v
		}
	}
	return m
}

func maxKernel[T Float](inf T) *redKernel[T] {
	return &redKernel[T]{
		identity: -inf,
		run:      maxRun[T],
		rows: func(dst, row, _ []T) {
			row = row[:len(dst)]
			for j, v := range row {
				if v > dst[j] || v != v {
					dst[j] = v
				}
			}
		},
		merge: func(p []T) T { return maxRun(p, 0, len(p), 1, 0) },
	}
}

func minKernel[T Float](inf T) *redKernel[T] {
	return &redKernel[T]{
		identity: inf,
		run:      minRun[T],
		rows: func(dst, row, _ []T) {
			row = row[:len(dst)]
			for j, v := range row {
				if v < dst[j] || v != v {
					dst[j] = v
				}
			}
		},
		merge: func(p []T) T { return minRun(p, 0, len(p), 1, 0) },
	}
}

func prodRun[T Float](x []T, off, n, stride int, _ T) T {
	var p T = 1
	for i := 0; i < n; i++ {
		p *= x[off+i*stride]
	}
	return p
}

func prodKernel[T Float]() *redKernel[T] {
	return &redKernel[T]{
		identity: 1,
		run:      prodRun[T],
		rows: func(dst, row, _ []T) {
			row = row[:len(dst)]
			for j := range dst {
				dst[j] *= row[j]
			}
		},
		merge: func(p []T) T { return prodRun(p, 0, len(p), 1, 0) },
	}
}
