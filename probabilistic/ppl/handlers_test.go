package ppl

import (
	"math"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

func vec(v ...float64) *tensor.Tensor { return tensor.FromValues(tensor.Float64, v, len(v)) }

func normal(c *Ctx, loc, scale float64) *probabilistic.Normal {
	return probabilistic.NewNormal(c.Scalar(loc), c.Scalar(scale))
}

// logN is the normal log-density, written out.
func logN(x, mu, sd float64) float64 {
	z := (x - mu) / sd
	return -0.5*z*z - math.Log(sd) - 0.5*math.Log(2*math.Pi)
}

var toyY = []float64{1, 2, -1}

// toy is mu ~ N(0, 1), y_i ~ N(mu, 1) for three observations.
func toy(c *Ctx) {
	mu := Sample(c, "mu", normal(c, 0, 1))
	Plate(c, "data", 3, PlateOptions{}, func([]int) {
		Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(toyY...))
	})
}

// toyJoint is toy's log joint at mu, by hand, with the likelihood terms
// weighted by w.
func toyJoint(mu float64, w ...float64) float64 {
	lp := logN(mu, 0, 1)
	for i, y := range toyY {
		lp += w[i] * logN(y, mu, 1)
	}
	return lp
}

// maskedToy masks the second observation with a Mask handler written
// inside the model, around the plate only.
func maskedToy(c *Ctx) {
	mu := Sample(c, "mu", normal(c, 0, 1))
	Mask(func(c *Ctx) {
		Plate(c, "data", 3, PlateOptions{}, func([]int) {
			Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(toyY...))
		})
	}, vec(1, 0, 1))(c)
}

// positive is sigma ~ Gamma(2, 1), y ~ N(0, sigma).
func positive(c *Ctx) {
	s := Sample(c, "sigma", probabilistic.NewGamma(c.Scalar(2), c.Scalar(1)))
	Observe(c, "y", probabilistic.NewNormal(c.Scalar(0), s), tensor.Scalar(tensor.Float64, 0.5))
}

// TestHandlerStacks is the table of handler stacks and the traces they
// give: which sites reach the trace, which are observed, their values,
// scales and the log joint, each worked out by hand.
func TestHandlerStacks(t *testing.T) {
	half := map[string]*tensor.Tensor{"mu": tensor.Scalar(tensor.Float64, 0.5)}
	var fixed Trace // a trace to replay: mu = 0.3
	sub := func(m Model, g *graph.Graph, v float64) Model {
		return Substitute(m, map[string]*graph.Node{"mu": g.Scalar(tensor.Float64, v)})
	}
	lgGamma21 := func(x float64) float64 { return math.Log(x) - x } // Gamma(2, 1): x e^{-x}
	cases := []struct {
		name     string
		stack    func(g *graph.Graph, tr *Trace) Model
		sites    []string
		observed []string
		mu       float64 // NaN: not checked
		scaleY   float64
		joint    float64 // NaN: not checked
	}{
		{"Record(Substitute(m)): mu given, still latent", func(g *graph.Graph, tr *Trace) Model { return Record(sub(toy, g, 0.5), tr) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.5, 1, toyJoint(0.5, 1, 1, 1)},
		{"Record(Condition(m)): mu observed, no Seed needed", func(g *graph.Graph, tr *Trace) Model { return Record(Condition(toy, half), tr) },
			[]string{"mu", "data", "y"}, []string{"mu", "y"}, 0.5, 1, toyJoint(0.5, 1, 1, 1)},
		{"Record(Block(Condition(m), mu)): mu hidden", func(g *graph.Graph, tr *Trace) Model {
			return Record(Block(Condition(toy, half), func(n string) bool { return n == "mu" }), tr)
		}, []string{"data", "y"}, []string{"y"}, math.NaN(), 1, toyJoint(0.5, 1, 1, 1) - logN(0.5, 0, 1)},
		{"Block(Record(m)): the inner Record sees everything", func(g *graph.Graph, tr *Trace) Model { return Block(Record(sub(toy, g, 0.5), tr), nil) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.5, 1, toyJoint(0.5, 1, 1, 1)},
		{"Record(Block(m, nil)): nothing", func(g *graph.Graph, tr *Trace) Model { return Record(Block(sub(toy, g, 0.5), nil), tr) },
			nil, nil, math.NaN(), math.NaN(), math.NaN()},
		{"Record(Scale(Substitute(m), 2)): every term doubled", func(g *graph.Graph, tr *Trace) Model { return Record(Scale(sub(toy, g, 0.5), 2), tr) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.5, 2, 2 * toyJoint(0.5, 1, 1, 1)},
		{"Scale(Scale(·, 2), 3) inside Record: scales multiply", func(g *graph.Graph, tr *Trace) Model { return Record(Scale(Scale(sub(toy, g, 0.5), 2), 3), tr) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.5, 6, 6 * toyJoint(0.5, 1, 1, 1)},
		{"Mask around the plate, inside the model: y₂ dropped", func(g *graph.Graph, tr *Trace) Model { return Record(sub(maskedToy, g, 0.5), tr) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.5, 1, toyJoint(0.5, 1, 0, 1)},
		{"Record(Replay(Seed(m), tr₀)): mu from tr₀", func(g *graph.Graph, tr *Trace) Model { return Record(Replay(Seed(toy, 9), &fixed), tr) },
			[]string{"mu", "data", "y"}, []string{"y"}, 0.3, 1, toyJoint(0.3, 1, 1, 1)},
		{"Condition outside Substitute: the outer handler writes last", func(g *graph.Graph, tr *Trace) Model {
			return Record(Condition(sub(toy, g, 0.5), map[string]*tensor.Tensor{"mu": tensor.Scalar(tensor.Float64, 0.7)}), tr)
		}, []string{"mu", "data", "y"}, []string{"mu", "y"}, 0.7, 1, toyJoint(0.7, 1, 1, 1)},
		{"Record(Unconstrain(m, σ: u = 0.2)): σ = e^0.2, log J = 0.2 added", func(g *graph.Graph, tr *Trace) Model {
			return Record(Unconstrain(positive, map[string]*graph.Node{"sigma": g.Scalar(tensor.Float64, 0.2)}), tr)
		}, []string{"sigma", "y"}, []string{"y"}, math.NaN(), 1, lgGamma21(math.Exp(0.2)) + logN(0.5, 0, math.Exp(0.2)) + 0.2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New()
			Run(g, Record(sub(toy, g, 0.3), &fixed))
			tr := &Trace{}
			Run(g, tc.stack(g, tr))
			var names, obs []string
			for _, s := range tr.Sites {
				names = append(names, s.Name)
				if s.Observed {
					obs = append(obs, s.Name)
				}
			}
			if !slices.Equal(names, tc.sites) || !slices.Equal(obs, tc.observed) {
				t.Fatalf("sites %v observed %v, want %v and %v", names, obs, tc.sites, tc.observed)
			}
			if !math.IsNaN(tc.mu) {
				if got := tr.Site("mu").Value.Item(); math.Abs(got-tc.mu) > 1e-12 {
					t.Errorf("mu = %v, want %v", got, tc.mu)
				}
			}
			if y := tr.Site("y"); y != nil && y.Scale != tc.scaleY {
				t.Errorf("y's scale %v, want %v", y.Scale, tc.scaleY)
			}
			if !math.IsNaN(tc.joint) {
				if got := tr.LogJoint().Item(); math.Abs(got-tc.joint) > 1e-12 {
					t.Errorf("log joint %.15g, want %.15g", got, tc.joint)
				}
			}
		})
	}
}

// TestSeedAndSubsample: a seed fixes the draws and the subsample; a plate
// that subsamples scales its sites by size/subsample; Replay carries the
// subsample over.
func TestSeedAndSubsample(t *testing.T) {
	model := func(c *Ctx) {
		mu := Sample(c, "mu", normal(c, 0, 1))
		Plate(c, "data", 10, PlateOptions{Subsample: 4}, func(idx []int) {
			y := make([]float64, len(idx))
			for i, j := range idx {
				y[i] = float64(j)
			}
			Observe(c, "y", probabilistic.NewNormal(mu, c.Scalar(1)), vec(y...))
		})
	}
	g := graph.New()
	run := func(m Model) *Trace { tr := &Trace{}; Run(g, Record(m, tr)); return tr }
	a, b, other := run(Seed(model, 1)), run(Seed(model, 1)), run(Seed(model, 2))
	if a.Site("mu").Value.Item() != b.Site("mu").Value.Item() || !slices.Equal(a.Site("data").Indices, b.Site("data").Indices) {
		t.Errorf("the same seed gave different draws")
	}
	if a.Site("mu").Value.Item() == other.Site("mu").Value.Item() {
		t.Errorf("seeds 1 and 2 gave the same draw")
	}
	idx := a.Site("data").Indices
	if len(idx) != 4 || !slices.IsSorted(idx) || a.Site("y").Scale != 2.5 {
		t.Errorf("indices %v, scale %v: want 4 sorted indices and scale 10/4", idx, a.Site("y").Scale)
	}
	if got := a.Site("y").Value.Value().Values(); got[0] != float64(idx[0]) {
		t.Errorf("the body saw rows %v for indices %v", got, idx)
	}
	r := run(Replay(Seed(model, 7), a))
	if !slices.Equal(r.Site("data").Indices, idx) || r.Site("mu").Value.Item() != a.Site("mu").Value.Item() {
		t.Errorf("Replay did not carry the subsample %v and mu over: %v", idx, r.Site("data").Indices)
	}
	// Nested plates take dims −1 then −2, as in Pyro, and broadcast a
	// scalar distribution to their shape.
	nested := func(c *Ctx) {
		Plate(c, "cols", 3, PlateOptions{}, func([]int) {
			Plate(c, "rows", 2, PlateOptions{}, func([]int) {
				Sample(c, "z", normal(c, 0, 1))
				Sample(c, "w", probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, 3)), c.Scalar(1)))
			})
		})
	}
	tr := run(Seed(nested, 1))
	z, w := tr.Site("z"), tr.Site("w")
	if len(z.Plates) != 2 || z.Plates[0].Dim != -1 || z.Plates[1].Dim != -2 {
		t.Errorf("nested plates %+v, want dims −1 and −2", z.Plates)
	}
	if !slices.Equal(z.Value.Shape(), []int{2, 3}) || !slices.Equal(w.Value.Shape(), []int{2, 3}) {
		t.Errorf("z and w have shapes %v and %v inside plates of 3 and 2, want (2, 3)", z.Value.Shape(), w.Value.Shape())
	}
}

func nan() float64 { return math.NaN() }
