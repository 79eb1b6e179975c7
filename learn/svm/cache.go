package svm

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// colCache is LIBSVM's kernel cache: partial columns (the first len
// entries, in the solver's current order of the variables) kept in least-
// recently-used order within a budget of floats. Shrinking only ever asks
// for the active prefix of a column, so a column computed while few
// variables were active is extended, not recomputed, when more are needed.
type colCache struct {
	n          int
	data       [][]float64 // data[i][:len] is valid
	prev, next []int       // LRU ring through the cached columns; sentinel n, oldest next[n]
	budget     int         // floats still free
}

func newColCache(n, floats int) *colCache {
	c := &colCache{n: n, data: make([][]float64, n), prev: make([]int, n+1), next: make([]int, n+1)}
	c.budget = max(floats, 2*n) // two full columns, the most the solver holds at once
	c.prev[n], c.next[n] = n, n
	return c
}

func (c *colCache) unlink(i int) {
	c.next[c.prev[i]] = c.next[i]
	c.prev[c.next[i]] = c.prev[i]
}

func (c *colCache) link(i int) {
	last := c.prev[c.n]
	c.prev[i], c.next[i] = last, c.n
	c.next[last] = i
	c.prev[c.n] = i
}

// get returns column i with at least length entries and how many of them
// were already filled; the caller fills the rest. The column becomes the
// most recently used, so fetching a second column never evicts it.
func (c *colCache) get(i, length int) ([]float64, int) {
	h := c.data[i]
	if len(h) > 0 {
		c.unlink(i)
	}
	start := len(h)
	if more := length - start; more > 0 {
		for c.budget < more {
			old := c.next[c.n]
			c.unlink(old)
			c.budget += len(c.data[old])
			c.data[old] = nil
		}
		var grown []float64
		if cap(h) >= length {
			grown = h[:length]
		} else {
			grown = make([]float64, length)
			copy(grown, h)
		}
		c.data[i] = grown
		c.budget -= more
	}
	c.link(i)
	return c.data[i], start
}

// swap exchanges variables i and j in every cached column, dropping the
// columns that hold only one of the two, as LIBSVM's Cache::swap_index.
func (c *colCache) swap(i, j int) {
	if i == j {
		return
	}
	if len(c.data[i]) > 0 {
		c.unlink(i)
	}
	if len(c.data[j]) > 0 {
		c.unlink(j)
	}
	c.data[i], c.data[j] = c.data[j], c.data[i]
	if len(c.data[i]) > 0 {
		c.link(i)
	}
	if len(c.data[j]) > 0 {
		c.link(j)
	}
	i, j = min(i, j), max(i, j)
	for h := c.next[c.n]; h != c.n; {
		nx := c.next[h]
		if col := c.data[h]; len(col) > i {
			if len(col) > j {
				col[i], col[j] = col[j], col[i]
			} else {
				c.unlink(h)
				c.budget += len(col)
				c.data[h] = nil
			}
		}
		h = nx
	}
}

// svcQ serves Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ) of classification problems (C-SVC and
// ν-SVC), in the solver's order of the variables, which shrinking permutes.
type svcQ struct {
	ev       kernelEval
	y, qd    []float64
	cache    *colCache
	computed int  // kernel columns (or column extensions) evaluated
	f32      bool // round to float32 (Options.float32Q)
}

func newSVCQ(k kernel.Kernel, x *tensor.Tensor, y []float64, cacheBytes int, f32 bool) (*svcQ, error) {
	kd, err := kernelDiag(k, x)
	if err != nil {
		return nil, err
	}
	n := len(y)
	return &svcQ{ev: newKernelEval(k, x), y: append([]float64(nil), y...), qd: kd, cache: newColCache(n, cacheBytes/8), f32: f32}, nil
}

func (q *svcQ) diag() []float64 { return q.qd }

func (q *svcQ) column(i, length int) []float64 {
	col, start := q.cache.get(i, length)
	if start < length {
		q.ev.fill(i, start, length, col)
		yi := q.y[i]
		for j := start; j < length; j++ {
			col[j] *= yi * q.y[j]
		}
		if q.f32 {
			round32(col[start:length])
		}
		q.computed++
	}
	return col[:length]
}

func (q *svcQ) swap(i, j int) {
	q.cache.swap(i, j)
	q.ev.swap(i, j)
	q.y[i], q.y[j] = q.y[j], q.y[i]
	q.qd[i], q.qd[j] = q.qd[j], q.qd[i]
}

// svrQ serves Q of the regression duals over 2n variables (α⁺ then α⁻),
// Qₛₜ = sₛsₜK(x_{s mod n}, x_{t mod n}), as LIBSVM's SVR_Q: the cache holds
// whole kernel columns of the n rows, and each request builds the signed,
// permuted column in one of two buffers (valid until the call after next).
type svrQ struct {
	ev       kernelEval
	n        int
	sign, qd []float64
	index    []int
	cache    *colCache
	bufs     [2][]float64
	next     int
	computed int
	f32      bool
}

func newSVRQ(k kernel.Kernel, x *tensor.Tensor, cacheBytes int, f32 bool) (*svrQ, error) {
	kd, err := kernelDiag(k, x)
	if err != nil {
		return nil, err
	}
	n := len(kd)
	q := &svrQ{ev: newKernelEval(k, x), n: n, cache: newColCache(n, cacheBytes/8), f32: f32}
	q.sign, q.qd, q.index = make([]float64, 2*n), make([]float64, 2*n), make([]int, 2*n)
	for t := range n {
		q.sign[t], q.sign[n+t] = 1, -1
		q.index[t], q.index[n+t] = t, t
		q.qd[t], q.qd[n+t] = kd[t], kd[t]
	}
	q.bufs[0], q.bufs[1] = make([]float64, 2*n), make([]float64, 2*n)
	return q, nil
}

func (q *svrQ) diag() []float64 { return q.qd }

func (q *svrQ) column(i, length int) []float64 {
	r := q.index[i]
	col, start := q.cache.get(r, q.n)
	if start < q.n {
		q.ev.fill(r, start, q.n, col)
		if q.f32 {
			round32(col)
		}
		q.computed++
	}
	out := q.bufs[q.next][:length]
	q.next ^= 1
	si := q.sign[i]
	for t := range out {
		out[t] = si * q.sign[t] * col[q.index[t]]
	}
	return out
}

func (q *svrQ) swap(i, j int) {
	q.sign[i], q.sign[j] = q.sign[j], q.sign[i]
	q.index[i], q.index[j] = q.index[j], q.index[i]
	q.qd[i], q.qd[j] = q.qd[j], q.qd[i]
}

func round32(v []float64) {
	for i, e := range v {
		v[i] = float64(float32(e))
	}
}

// kernelEval computes kernel values between the training rows in an order
// that swap permutes: fill sets out[j] = K(row i, row j) for j in
// [start, end).
type kernelEval interface {
	fill(i, start, end int, out []float64)
	swap(i, j int)
}

// graphEval evaluates any kernel through its graph, one full column of the
// rows in their original order at a time.
type graphEval struct {
	k    kernel.Kernel
	x    *tensor.Tensor
	perm []int
}

func (e *graphEval) fill(i, start, end int, out []float64) {
	full, err := kernelRows(e.k, tensor.Slice(e.x, 0, e.perm[i], e.perm[i]+1, 1), e.x)
	if err != nil {
		panic(err) // kernels of finite inputs do not fail; checked at fit time
	}
	for j := start; j < end; j++ {
		out[j] = full[e.perm[j]]
	}
}

func (e *graphEval) swap(i, j int) { e.perm[i], e.perm[j] = e.perm[j], e.perm[i] }

func newKernelEval(k kernel.Kernel, x *tensor.Tensor) kernelEval {
	if ev := newDenseEval(k, x); ev != nil {
		return ev
	}
	n := x.Shape()[0]
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return &graphEval{k: k, x: x, perm: perm}
}

// kernelRows evaluates K(a, b) (a's rows by b's) through the kernel's graph.
func kernelRows(k kernel.Kernel, a, b *tensor.Tensor) (vals []float64, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	return k.K(g.Const(a), g.Const(b)).Value().Values(), nil
}

func kernelDiag(k kernel.Kernel, x *tensor.Tensor) (vals []float64, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	return k.Diag(g.Const(x)).Value().Values(), nil
}
