//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// TestLossesOnGPU computes every loss of package losses, with each of its
// reductions or options, on the GPU and on the CPU: the values and the
// gradients with respect to the inputs agree within float32 rounding.
func TestLossesOnGPU(t *testing.T) {
	dev := device(t)
	labels := []int{2, 0, 1, 2, 1, 0}
	type lossFn func(a, b, c *graph.Node) *graph.Node
	cases := []struct {
		name string
		f    lossFn
	}{
		{"MSE mean", func(a, b, _ *graph.Node) *graph.Node { return losses.MSE(a, b, losses.Mean) }},
		{"L1 sum", func(a, b, _ *graph.Node) *graph.Node { return losses.L1(a, b, losses.Sum) }},
		{"Huber none", func(a, b, _ *graph.Node) *graph.Node { return losses.Huber(a, b, 0.7, losses.None) }},
		{"GaussianNLL full", func(a, b, c *graph.Node) *graph.Node {
			return losses.GaussianNLL(a, graph.Exp(c), b, true, 1e-6, losses.Mean)
		}},
		{"BCE", func(a, b, _ *graph.Node) *graph.Node {
			return losses.BCE(graph.Sigmoid(a), graph.Sigmoid(b), losses.Mean)
		}},
		{"BCEWithLogits sum", func(a, b, _ *graph.Node) *graph.Node {
			return losses.BCEWithLogits(a, graph.Sigmoid(b), losses.Sum)
		}},
		{"BernoulliNLL", func(a, b, _ *graph.Node) *graph.Node {
			return losses.BernoulliNLL(a, graph.Sigmoid(b), losses.Mean)
		}},
		{"Hinge", func(a, b, _ *graph.Node) *graph.Node { return losses.Hinge(a, graph.Sign(b), losses.Mean) }},
		{"CrossEntropy, label smoothing and class weights", func(a, _, _ *graph.Node) *graph.Node {
			return losses.CrossEntropy(a, labels, losses.CrossEntropyOptions{LabelSmoothing: 0.1, Weights: []float64{1, 2, 0.5}})
		}},
		{"NLL sum", func(a, _, _ *graph.Node) *graph.Node {
			return losses.NLL(graph.LogSoftmax(a, 1), labels, losses.CrossEntropyOptions{Reduction: losses.Sum})
		}},
		{"MultiMarginHinge", func(a, _, _ *graph.Node) *graph.Node {
			return losses.MultiMarginHinge(a, labels, 1, losses.Mean)
		}},
		{"KLDiagGaussian", func(a, b, _ *graph.Node) *graph.Node { return losses.KLDiagGaussian(a, b, losses.Sum) }},
		{"KLDiagGaussians", func(a, b, c *graph.Node) *graph.Node {
			return losses.KLDiagGaussians(a, b, c, graph.Neg(a), losses.Mean)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(d tensor.Device) (*tensor.Tensor, []*tensor.Tensor) {
				g := graph.New()
				var in []*graph.Node
				for k := range 3 {
					in = append(in, g.Var(randn(tensor.Float32, uint64(70+k), 6, 3).To(d)))
				}
				l := c.f(in[0], in[1], in[2])
				if l.Size() > 1 {
					l = graph.Sum(graph.Mul(l, g.Const(randn(tensor.Float32, 77, l.Shape()...))), nil, false)
				}
				var grads []*tensor.Tensor
				for _, n := range autodiff.Grad(l, in...) {
					if n != nil {
						grads = append(grads, n.Value())
					} else {
						grads = append(grads, nil)
					}
				}
				return l.Value(), grads
			}
			gv, gg := run(dev)
			cv, cg := run(tensor.CPU)
			near(t, "value", gv, cv, 1e-5)
			for k := range cg {
				if (cg[k] == nil) != (gg[k] == nil) {
					t.Fatalf("input %d: a gradient on one device only", k)
				}
				if cg[k] != nil {
					near(t, "gradient", gg[k], cg[k], 1e-5)
				}
			}
		})
	}
}
