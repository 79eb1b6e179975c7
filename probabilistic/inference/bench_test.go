package inference

import (
	"math"
	"testing"
	"time"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// logisticModel is a Bayesian logistic regression of the size of
// examples/nuts (569 rows, 31 weights including the intercept, N(0, I)
// prior) on synthetic standardised features, so that the benchmark needs
// no data files.
func logisticModel() Model {
	x, y := logisticData()
	return Model{
		Params: []Param{{Name: "w", Shape: []int{x.Shape()[1], 1}, Init: make([]float64, x.Shape()[1])}},
		LogDensity: func(g *graph.Graph, q map[string]*graph.Node) *graph.Node {
			eta := graph.MatMul(g.Const(x), q["w"])
			ll := graph.Sum(graph.Sub(graph.Mul(g.Const(y), eta), graph.Softplus(eta)), nil, false)
			return graph.Add(ll, graph.MulScalar(graph.Sum(graph.Square(q["w"]), nil, false), -0.5))
		},
	}
}

func logisticData() (x, y *tensor.Tensor) {
	const n, p = 569, 31
	rng := tensor.NewRNG(42)
	xv := make([]float64, n*p)
	yv := make([]float64, n)
	w := make([]float64, p)
	for j := range w {
		w[j] = 0.5 * rng.NormFloat64()
	}
	for i := range n {
		xv[i*p] = 1
		eta := w[0]
		for j := 1; j < p; j++ {
			xv[i*p+j] = rng.NormFloat64()
			eta += w[j] * xv[i*p+j]
		}
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			yv[i] = 1
		}
	}
	return tensor.FromFloat64s(xv, n, p), tensor.FromFloat64s(yv, n, 1)
}

// BenchmarkLogDensityGradient is the per-gradient overhead the samplers
// pay: one evaluation of log p and its gradient through the graph.
func BenchmarkLogDensityGradient(b *testing.B) {
	e, err := newEvaluator(logisticModel())
	if err != nil {
		b.Fatal(err)
	}
	theta, grad := make([]float64, e.dim), make([]float64, e.dim)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.logp(theta, grad)
	}
}

// BenchmarkLogDensityGradientByHand is the reference for the one above:
// the same log density and gradient written as plain loops (η = Xw,
// ∇ = Xᵀ(y − σ(η)) − w), so the ratio of the two is the graph's overhead.
func BenchmarkLogDensityGradientByHand(b *testing.B) {
	x, y := logisticData()
	n, p := x.Shape()[0], x.Shape()[1]
	xv, yv := x.Float64s(), y.Float64s()
	w, grad := make([]float64, p), make([]float64, p)
	b.ResetTimer()
	for range b.N {
		lp := 0.0
		for j := range grad {
			grad[j] = -w[j]
			lp -= 0.5 * w[j] * w[j]
		}
		for i := range n {
			row := xv[i*p : (i+1)*p]
			eta := 0.0
			for j, v := range row {
				eta += v * w[j]
			}
			sp := math.Max(eta, 0) + math.Log1p(math.Exp(-math.Abs(eta)))
			lp += yv[i]*eta - sp
			r := yv[i] - 1/(1+math.Exp(-eta))
			for j, v := range row {
				grad[j] += r * v
			}
		}
		if math.IsNaN(lp) {
			b.Fatal("NaN")
		}
	}
}

// BenchmarkNUTSvsRandomWalk reports the minimum bulk effective sample size
// per second over the 31 weights for NUTS and for a random-walk
// Metropolis baseline in the same run. The baseline is given NUTS's
// adapted diagonal metric as its proposal shape and tunes its scale to the
// optimal 0.234 acceptance during warm-up (Roberts, Gelman and Gilks 1997),
// and it evaluates the log density without the gradient.
func BenchmarkNUTSvsRandomWalk(b *testing.B) {
	m := logisticModel()
	for range b.N {
		start := time.Now()
		r, err := NUTS(ctx, m, NUTSOptions{Chains: 1, Warmup: 500, Draws: 1000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		nutsSec := time.Since(start).Seconds()
		nutsESS := minESS(r)

		start = time.Now()
		rw := randomWalk(m, r.InvMass[0], 5000, 50000, 2)
		rwSec := time.Since(start).Seconds()
		rwESS := minESS(rw)
		b.ReportMetric(nutsESS/nutsSec, "NUTS-ESS/s")
		b.ReportMetric(rwESS/rwSec, "RWM-ESS/s")
		b.ReportMetric((nutsESS/nutsSec)/(rwESS/rwSec), "NUTS/RWM")
	}
}

func minESS(r *Result) float64 {
	best := math.Inf(1)
	for _, name := range r.Names {
		best = min(best, BulkESS(r.Column(name)))
	}
	return best
}

// randomWalk is random-walk Metropolis with proposal N(θ, s²·diag(shape)),
// s adapted towards acceptance 0.234 during warm-up, one chain.
func randomWalk(m Model, shape []float64, warmup, draws int, seed uint64) *Result {
	e, err := newEvaluator(m)
	if err != nil {
		panic(err)
	}
	value := func(theta []float64) float64 {
		e.g.Reset()
		copy(e.flat.Float64s(), theta)
		return e.density(e.g.Const(e.flat)).Item()
	}
	rng := tensor.NewRNG(seed)
	theta := make([]float64, e.dim)
	prop := make([]float64, e.dim)
	lp := value(theta)
	logS := math.Log(2.38 / math.Sqrt(float64(e.dim)))
	res := &Result{Names: e.names(theta), Draws: [][][]float64{nil}}
	for it := range warmup + draws {
		s := math.Exp(logS)
		for j := range prop {
			prop[j] = theta[j] + s*math.Sqrt(shape[j])*rng.NormFloat64()
		}
		lq := value(prop)
		accept := math.Min(1, math.Exp(lq-lp))
		if rng.Float64() < accept {
			copy(theta, prop)
			lp = lq
		}
		if it < warmup {
			logS += (accept - 0.234) / math.Sqrt(float64(it+1))
		} else {
			res.Draws[0] = append(res.Draws[0], e.constrain(theta))
		}
	}
	return res
}
