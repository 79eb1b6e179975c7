//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// TestDistributionsOnGPU evaluates distributions of package probabilistic
// with parameters on the GPU and on the CPU: log-densities at points of
// their support, entropies, means and variances, the gradients of the
// summed log-density with respect to the parameters, and samples drawn
// from the same seed agree within float32 rounding.
func TestDistributionsOnGPU(t *testing.T) {
	dev := device(t)
	type built struct {
		d probabilistic.Distribution
		x *graph.Node // a point of the support
	}
	// counts is a constant (4, 3) of counts 0…5, made on the host.
	counts := func(a *graph.Node) *graph.Node {
		return a.Graph().Const(tensor.FromValues(tensor.Float32, []float64{0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 5}, 4, 3))
	}
	pos := func(n *graph.Node) *graph.Node { return graph.AddScalar(graph.Softplus(n), 0.1) }
	unit := graph.Sigmoid
	cases := []struct {
		name  string
		build func(a, b *graph.Node) built
	}{
		{"Normal", func(a, b *graph.Node) built { return built{probabilistic.NewNormal(a, pos(b)), graph.Tanh(b)} }},
		{"LogNormal", func(a, b *graph.Node) built { return built{probabilistic.NewLogNormal(a, pos(b)), pos(a)} }},
		{"Laplace", func(a, b *graph.Node) built { return built{probabilistic.NewLaplace(a, pos(b)), b} }},
		{"StudentT", func(a, b *graph.Node) built {
			return built{probabilistic.NewStudentT(graph.AddScalar(pos(a), 2), b, pos(b)), a}
		}},
		{"Cauchy", func(a, b *graph.Node) built { return built{probabilistic.NewCauchy(a, pos(b)), b} }},
		{"HalfNormal", func(a, b *graph.Node) built { return built{probabilistic.NewHalfNormal(pos(a)), pos(b)} }},
		{"Gamma", func(a, b *graph.Node) built { return built{probabilistic.NewGamma(pos(a), pos(b)), pos(graph.Neg(a))} }},
		{"InverseGamma", func(a, b *graph.Node) built { return built{probabilistic.NewInverseGamma(pos(a), pos(b)), pos(b)} }},
		{"Exponential", func(a, b *graph.Node) built { return built{probabilistic.NewExponential(pos(a)), pos(b)} }},
		{"Beta", func(a, b *graph.Node) built { return built{probabilistic.NewBeta(pos(a), pos(b)), unit(b)} }},
		{"Uniform", func(a, b *graph.Node) built {
			return built{probabilistic.NewUniform(graph.AddScalar(a, -4), graph.AddScalar(a, 4)), graph.Add(a, graph.Tanh(b))}
		}},
		{"Bernoulli", func(a, b *graph.Node) built {
			return built{probabilistic.NewBernoulliLogits(a), graph.Relu(graph.Sign(b))}
		}},
		{"HalfCauchy", func(a, b *graph.Node) built { return built{probabilistic.NewHalfCauchy(pos(a)), pos(b)} }},
		{"Poisson", func(a, b *graph.Node) built {
			return built{probabilistic.NewPoisson(pos(a)), counts(a)}
		}},
		{"Geometric", func(a, b *graph.Node) built {
			return built{probabilistic.NewGeometricLogits(a), counts(a)}
		}},
		{"RelaxedBernoulli", func(a, b *graph.Node) built {
			return built{probabilistic.NewRelaxedBernoulli(graph.AddScalar(graph.MulScalar(a, 0), 0.5), b), unit(a)}
		}},
		{"Dirichlet (rows)", func(a, b *graph.Node) built {
			return built{probabilistic.NewDirichlet(pos(a)), graph.Softmax(b, -1)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				vals, grads []*tensor.Tensor
				sample      *tensor.Tensor
			}
			run := func(d tensor.Device) result {
				g := graph.New()
				a := g.Var(randn(tensor.Float32, 31, 4, 3).To(d))
				b := g.Var(randn(tensor.Float32, 32, 4, 3).To(d))
				bt := c.build(a, b)
				lp := bt.d.LogProb(bt.x)
				var r result
				for _, f := range []func() *graph.Node{func() *graph.Node { return lp }, bt.d.Entropy, bt.d.Mean, bt.d.Variance} {
					r.vals = append(r.vals, valueOrNil(f))
				}
				for _, n := range autodiff.Grad(graph.Sum(lp, nil, false), a, b) {
					r.grads = append(r.grads, n.Value())
				}
				r.sample = bt.d.Sample(tensor.NewRNG(5), 2)
				return r
			}
			gr, cr := run(dev), run(tensor.CPU)
			for i, what := range []string{"log-density", "entropy", "mean", "variance"} {
				if (gr.vals[i] == nil) != (cr.vals[i] == nil) {
					t.Fatalf("%s: refused on one device only", what)
				}
				if cr.vals[i] != nil {
					near(t, what, gr.vals[i], cr.vals[i], 1e-4)
				}
			}
			for i := range cr.grads {
				near(t, "gradient", gr.grads[i], cr.grads[i], 1e-4)
			}
			near(t, "sample", gr.sample, cr.sample, 1e-4)
		})
	}
}

// valueOrNil is f's value, or nil where f refuses (panics with a
// *tensor.Error: a statistic without a closed form).
func valueOrNil(f func() *graph.Node) (v *tensor.Tensor) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*tensor.Error); !ok {
				panic(r)
			}
			v = nil
		}
	}()
	return f().Value()
}
