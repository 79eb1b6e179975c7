package losses_test

import (
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// crossEntropyOneHot is the alternative CrossEntropy is benchmarked
// against: the mean of −Σ onehot⊙logsoftmax, with the one-hot labels as a
// constant matrix.
func crossEntropyOneHot(logits *graph.Node, labels []int) *graph.Node {
	n, c := logits.Shape()[0], logits.Shape()[1]
	oh := graph.OneHot(logits.Graph(), logits.DType(), labels, c)
	return graph.MulScalar(graph.Sum(graph.Mul(oh, graph.LogSoftmax(logits, 1)), nil, false), -1/float64(n))
}

// BenchmarkCrossEntropy times one training step's loss, forward and
// backward, at batch 128 × 10 classes: CrossEntropy, which gathers with
// IndexSelect, against the product with a one-hot matrix.
func BenchmarkCrossEntropy(b *testing.B) {
	const n, c = 128, 10
	rng := tensor.NewRNG(1)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = rng.Intn(c)
	}
	for _, dt := range numtest.DTypes {
		x := rng.Normal(dt, 0, 1, n, c)
		for _, v := range []struct {
			name string
			f    func(*graph.Node) *graph.Node
		}{
			{"indexselect", func(l *graph.Node) *graph.Node { return losses.CrossEntropy(l, labels, losses.CrossEntropyOptions{}) }},
			{"onehot", func(l *graph.Node) *graph.Node { return crossEntropyOneHot(l, labels) }},
		} {
			b.Run(v.name+"/"+dt.String(), func(b *testing.B) {
				g := graph.New()
				b.ReportAllocs()
				for b.Loop() {
					g.Reset()
					l := g.Var(x)
					autodiff.Grad(v.f(l), l)
				}
			})
		}
	}
}
