package losses_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// gradCase checks a loss's derivatives with respect to every input with
// autodiff.GradCheck (float64, central differences), to second order
// unless the loss is piecewise linear.
type gradCase struct {
	name   string
	inputs func(rng *tensor.RNG) []*tensor.Tensor
	f      func(xs []*graph.Node, red losses.Reduction) *graph.Node
	// firstOrder skips the second-order modes for piecewise-linear losses,
	// whose second derivative is zero almost everywhere: there is nothing
	// to check and differences straddling a kink would only add noise.
	firstOrder bool
}

var f64 = tensor.Float64

func fixed(vals [][]float64, shapes [][]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(*tensor.RNG) []*tensor.Tensor {
		ts := make([]*tensor.Tensor, len(vals))
		for i := range vals {
			ts[i] = tensor.FromValues(f64, vals[i], shapes[i]...)
		}
		return ts
	}
}

func TestGradCheck(t *testing.T) {
	labels := []int{1, 4, 0, 4}
	w5 := []float64{0.5, 1, 2, 1.5, 3}
	normal := func(rng *tensor.RNG, shape ...int) *tensor.Tensor { return rng.Normal(f64, 0, 1, shape...) }
	ce := func(o losses.CrossEntropyOptions) func(xs []*graph.Node, red losses.Reduction) *graph.Node {
		return func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			o.Reduction = red
			return losses.CrossEntropy(xs[0], labels, o)
		}
	}
	logits45 := func(rng *tensor.RNG) []*tensor.Tensor { return []*tensor.Tensor{rng.Normal(f64, 0, 2, 4, 5)} }
	// Scores spaced 0.3 apart (plus noise below 0.05): with margin 0.5
	// every margin − s_y + s_j stays at least 0.05 away from the kink.
	spaced := func(rng *tensor.RNG) []*tensor.Tensor {
		vals := make([]float64, 20)
		for i, p := range rng.Perm(20) {
			vals[i] = 0.3*float64(p-10) + 0.05*rng.Float64()
		}
		return []*tensor.Tensor{tensor.FromValues(f64, vals, 4, 5)}
	}
	cases := []gradCase{
		{name: "mse", inputs: func(rng *tensor.RNG) []*tensor.Tensor { return []*tensor.Tensor{normal(rng, 2, 3), normal(rng, 2, 3)} },
			f: func(xs []*graph.Node, red losses.Reduction) *graph.Node { return losses.MSE(xs[0], xs[1], red) }},
		// Errors at least 0.3 from the kink at 0.
		{name: "l1", inputs: fixed([][]float64{{1, -2, 0.5, 3}, {0.2, -1.5, 1.5, -1}}, [][]int{{4}, {4}}), firstOrder: true,
			f: func(xs []*graph.Node, red losses.Reduction) *graph.Node { return losses.L1(xs[0], xs[1], red) }},
		// Errors (0.3, −0.7, 1.8, −2.6, 0) with delta 1: both branches and the
		// smooth point 0, away from |d| = delta.
		{name: "huber", inputs: fixed([][]float64{{0.5, -0.2, 2, -2, 1}, {0.2, 0.5, 0.2, 0.6, 1}}, [][]int{{5}, {5}}),
			f: func(xs []*graph.Node, red losses.Reduction) *graph.Node { return losses.Huber(xs[0], xs[1], 1, red) }},
		{name: "bce", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Uniform(f64, 0.05, 0.95, 2, 3), rng.Uniform(f64, 0, 1, 2, 3)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node { return losses.BCE(xs[0], xs[1], red) }},
		{name: "bcewithlogits", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Normal(f64, 0, 3, 2, 3), rng.Uniform(f64, 0, 1, 2, 3)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.BCEWithLogits(xs[0], xs[1], red)
		}},
		{name: "bernoullinll", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Normal(f64, 0, 3, 6), rng.Bernoulli(f64, 0.5, 6)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.BernoulliNLL(xs[0], xs[1], red)
		}},
		// y·s = (2, 0.4, −0.5, 1.6, 0.3): away from the kink at 1.
		{name: "hinge", inputs: fixed([][]float64{{2, 0.4, 0.5, -1.6, -0.3}, {1, 1, -1, -1, -1}}, [][]int{{5}, {5}}), firstOrder: true,
			f: func(xs []*graph.Node, red losses.Reduction) *graph.Node { return losses.Hinge(xs[0], xs[1], red) }},
		{name: "crossentropy", inputs: logits45, f: ce(losses.CrossEntropyOptions{})},
		{name: "crossentropy/weights", inputs: logits45, f: ce(losses.CrossEntropyOptions{Weights: w5})},
		{name: "crossentropy/smoothing", inputs: logits45, f: ce(losses.CrossEntropyOptions{LabelSmoothing: 0.2})},
		{name: "crossentropy/both", inputs: logits45, f: ce(losses.CrossEntropyOptions{LabelSmoothing: 0.1, Weights: w5})},
		{name: "nll", inputs: logits45, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.NLL(xs[0], labels, losses.CrossEntropyOptions{Weights: w5, LabelSmoothing: 0.1, Reduction: red})
		}},
		{name: "multimarginhinge", inputs: spaced, firstOrder: true, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.MultiMarginHinge(xs[0], labels, 0.5, red)
		}},
		// Variances above eps, where the clamp is the identity.
		{name: "gaussiannll", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{normal(rng, 2, 3), rng.Uniform(f64, 0.5, 2, 2, 3), normal(rng, 2, 3)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.GaussianNLL(xs[0], xs[1], xs[2], false, 1e-6, red)
		}},
		{name: "gaussiannll/full/per-row", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{normal(rng, 2, 3), rng.Uniform(f64, 0.5, 2, 2), normal(rng, 2, 3)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.GaussianNLL(xs[0], xs[1], xs[2], true, 1e-6, red)
		}},
		{name: "kldiaggaussian", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{normal(rng, 3, 4), rng.Normal(f64, 0, 0.5, 3, 4)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.KLDiagGaussian(xs[0], xs[1], red)
		}},
		{name: "kldiaggaussians", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{normal(rng, 3, 4), rng.Normal(f64, 0, 0.5, 3, 4), normal(rng, 3, 4), rng.Normal(f64, 0, 0.5, 3, 4)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.KLDiagGaussians(xs[0], xs[1], xs[2], xs[3], red)
		}},
		{name: "kldiaggaussians/broadcast", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{normal(rng, 3, 4), rng.Normal(f64, 0, 0.5, 3, 4), normal(rng, 4), rng.Normal(f64, 0, 0.5, 4)}
		}, f: func(xs []*graph.Node, red losses.Reduction) *graph.Node {
			return losses.KLDiagGaussians(xs[0], xs[1], xs[2], xs[3], red)
		}},
	}
	for _, c := range cases {
		for _, red := range []losses.Reduction{losses.Mean, losses.Sum, losses.None} {
			t.Run(c.name+"/"+red.String(), func(t *testing.T) {
				order := 2
				if c.firstOrder {
					order = 1
				}
				rep, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return c.f(xs, red) },
					c.inputs(tensor.NewRNG(7)), autodiff.GradCheckOptions{Name: c.name, Order: order, Seed: 3})
				require.NoError(t, err)
				require.True(t, rep.Passed)
				// Every input was compared in every mode run.
				require.Len(t, rep.Results, order*2*len(c.inputs(tensor.NewRNG(7))))
			})
		}
	}
}

// TestCrossEntropyGradient checks the textbook gradient softmax − onehot
// at logits (1, 2, 3) with label 2: softmax = (e¹, e², e³)/Σ.
func TestCrossEntropyGradient(t *testing.T) {
	z := 2.718281828459045 + 7.38905609893065 + 20.085536923187668
	want := []float64{2.718281828459045 / z, 7.38905609893065 / z, 20.085536923187668/z - 1}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3}, 1, 3))
			assertClose(t, dt, want, gradValue(losses.CrossEntropy(x, []int{2}, losses.CrossEntropyOptions{}), x))
		})
	}
}
