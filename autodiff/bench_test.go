package autodiff_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkOpOverhead measures the fixed cost of an op: a chain of 1,000
// elementwise ops on a 1×1 tensor, forward and backward, rebuilt on a
// Reset graph each iteration as a training loop would. ns/node is the
// time per forward op including its share of the backward sweep.
func BenchmarkOpOverhead(b *testing.B) {
	const n = 1000
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		b.Run(dt.String(), func(b *testing.B) {
			g := graph.New()
			xt := tensor.Full(dt, 0.5, 1, 1)
			ct := tensor.Full(dt, 0.999, 1, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				g.Reset()
				x := g.Var(xt)
				c := g.Const(ct)
				y := x
				for i := 0; i < n/2; i++ {
					y = graph.Add(graph.Mul(y, c), x)
				}
				autodiff.Grad(y, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/node")
		})
	}
}

// BenchmarkMLPStep is one SGD step of a 784-512-512-10 ReLU network on a
// batch of 128 in float32: forward, softmax cross-entropy (LogSoftmax and
// one-hot labels), Grad, and an in-place update, with Reset each step.
// allocs/op is allocations per training step.
func BenchmarkMLPStep(b *testing.B) {
	const batch, lr = 128, 0.01
	sizes := []int{784, 512, 512, 10}
	rng := tensor.NewRNG(1)
	var params []*tensor.Tensor
	for l := 0; l+1 < len(sizes); l++ {
		params = append(params,
			rng.Normal(tensor.Float32, 0, math.Sqrt(2/float64(sizes[l])), sizes[l], sizes[l+1]),
			tensor.New(tensor.Float32, sizes[l+1]))
	}
	x := rng.Normal(tensor.Float32, 0, 1, batch, sizes[0])
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = rng.Intn(sizes[3])
	}
	onehot := tensor.OneHot(tensor.Float32, labels, sizes[3])
	g := graph.New()
	vars := make([]*graph.Node, len(params))
	step := func() float64 {
		g.Reset()
		for i, p := range params {
			vars[i] = g.Var(p)
		}
		h := g.Const(x)
		for l := 0; l < 3; l++ {
			h = graph.Add(graph.MatMul(h, vars[2*l]), vars[2*l+1])
			if l < 2 {
				h = graph.Relu(h)
			}
		}
		nll := graph.Mul(g.Const(onehot), graph.LogSoftmax(h, 1))
		loss := graph.MulScalar(graph.Sum(nll, nil, false), -1.0/batch)
		grads := autodiff.Grad(loss, vars...)
		for i, p := range params {
			sgd(p.Float32s(), grads[i].Value(), lr)
		}
		return loss.Item()
	}
	first := step()
	b.ReportAllocs()
	b.ResetTimer()
	var last float64
	for it := 0; it < b.N; it++ {
		last = step()
	}
	b.StopTimer()
	if !(last < first) && b.N > 5 {
		b.Fatalf("loss did not decrease: %g then %g", first, last)
	}
}

// sgd does p -= lr·grad in place.
func sgd(p []float32, grad *tensor.Tensor, lr float32) {
	if !grad.IsContiguous() {
		grad = grad.Contiguous()
	}
	for i, v := range grad.Float32s() {
		p[i] -= lr * v
	}
}

// mlpLoss is one example's (or, with x (B, 784) and onehot (B, 10), the
// batch's summed) cross-entropy under a 784-128-10 ReLU MLP.
func mlpLoss(ps []*graph.Node, x, onehot *graph.Node) *graph.Node {
	h := graph.Relu(graph.Linear(x, ps[0], ps[1]))
	logp := graph.LogSoftmax(graph.Linear(h, ps[2], ps[3]), -1)
	return graph.Neg(graph.Sum(graph.Mul(onehot, logp), nil, false))
}

// BenchmarkPerExampleGrads compares, for the 784-128-10 MLP on a batch of
// 128 in float32, per-example gradients by Vmap (PerExampleGrads) with one
// batch gradient (the reference: the target is at most 3× its time) and
// with a loop computing each example's gradient on its own.
func BenchmarkPerExampleGrads(b *testing.B) {
	const batch = 128
	rng := tensor.NewRNG(1)
	pt := []*tensor.Tensor{
		rng.Normal(tensor.Float32, 0, 0.05, 128, 784), tensor.New(tensor.Float32, 128),
		rng.Normal(tensor.Float32, 0, 0.1, 10, 128), tensor.New(tensor.Float32, 10),
	}
	x := rng.Normal(tensor.Float32, 0, 1, batch, 784)
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = rng.Intn(10)
	}
	y := tensor.OneHot(tensor.Float32, labels, 10)
	vars := func(g *graph.Graph) []*graph.Node {
		ps := make([]*graph.Node, len(pt))
		for i, p := range pt {
			ps[i] = g.Var(p)
		}
		return ps
	}
	run := func(b *testing.B, step func(g *graph.Graph)) {
		g := graph.New()
		b.ReportAllocs()
		for range b.N {
			g.Reset()
			step(g)
		}
	}
	batchGrad := func(g *graph.Graph) {
		ps := vars(g)
		autodiff.Grad(mlpLoss(ps, g.Const(x), g.Const(y)), ps...)
	}
	perExample := func(g *graph.Graph) {
		autodiff.PerExampleGrads(func(ps, ex []*graph.Node) *graph.Node { return mlpLoss(ps, ex[0], ex[1]) },
			vars(g), []*graph.Node{g.Const(x), g.Const(y)})
	}
	b.Run("batch_grad", func(b *testing.B) { run(b, batchGrad) })
	b.Run("vmap", func(b *testing.B) { run(b, perExample) })
	// The floor: per-example gradients must write B copies of the 128×784
	// weight gradient (51 MB in float32), which memory bandwidth bounds.
	// clear is Go's memset (non-temporal stores at this size), copy its
	// memmove, both on one goroutine; weight_grad_write is that write as
	// per-example gradients do it, the batch of outer products
	// (128, 1, 128)ᵀ·(128, 1, 784), alone, into a reused buffer. The
	// copy's source is not zero: the Zen 3 host of 2026-11-29 wrote zeros
	// twice as fast as other values (memset 53 GB/s, the same streaming
	// stores of ones 25 GB/s), so memset's floor is only a floor for zeros.
	floor := make([]float32, batch*128*784)
	src := make([]float32, len(floor))
	for i := range src {
		src[i] = 1
	}
	memset := func() { clear(floor) }
	memmove := func() { copy(floor, src) }
	ct, xs := rng.Normal(tensor.Float32, 0, 1, batch, 1, 128), tensor.Reshape(x, batch, 1, 784)
	dst := tensor.New(tensor.Float32, batch, 128, 784)
	outer := func() { tensor.MatMulTTo(dst, ct, xs, true, false) }
	for _, w := range []struct {
		name string
		f    func()
	}{{"write_floor_memset", memset}, {"write_floor_copy", memmove}, {"weight_grad_write", outer}} {
		b.Run(w.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(floor)))
			for range b.N {
				w.f()
			}
		})
	}
	// On a shared machine the load changes between sub-benchmarks, so the
	// figures to read are these: each iteration runs a batch gradient, the
	// per-example gradients, the memset floor and the outer products alone
	// one after the other, and the metrics are the medians of their times
	// and of the per-iteration ratios to the batch gradient.
	b.Run("interleaved", func(b *testing.B) {
		g1, g2 := graph.New(), graph.New()
		var times [4][]float64
		var ratios [3][]float64
		for range b.N {
			g1.Reset()
			g2.Reset()
			var t [5]time.Time
			t[0] = time.Now()
			batchGrad(g1)
			t[1] = time.Now()
			perExample(g2)
			t[2] = time.Now()
			memset()
			t[3] = time.Now()
			outer()
			t[4] = time.Now()
			for k := range times {
				times[k] = append(times[k], float64(t[k+1].Sub(t[k])))
				if k > 0 {
					ratios[k-1] = append(ratios[k-1], times[k][len(times[k])-1]/times[0][len(times[0])-1])
				}
			}
		}
		median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
		for k, name := range []string{"batch", "vmap", "memset", "outer"} {
			b.ReportMetric(median(times[k])/1e3, name+"-µs")
			if k > 0 {
				b.ReportMetric(median(ratios[k-1]), name+"/batch")
			}
		}
	})
	b.Run("loop", func(b *testing.B) {
		run(b, func(g *graph.Graph) {
			ps := vars(g)
			xs, ys := g.Const(x), g.Const(y)
			for k := range batch {
				xk := graph.Squeeze(graph.Slice(xs, 0, k, k+1, 1), 0)
				yk := graph.Squeeze(graph.Slice(ys, 0, k, k+1, 1), 0)
				autodiff.Grad(mlpLoss(ps, xk, yk), ps...)
			}
		})
	})
}
