package ppl

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/hmm"
	"github.com/gradus-ml/gradus/tensor"
)

// logSumExp of plain numbers.
func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// assignments calls f with every assignment of n variables to 0…k−1.
func assignments(n, k int, f func(z []int)) {
	z := make([]int, n)
	for {
		f(z)
		i := 0
		for i < n && z[i] == k-1 {
			z[i] = 0
			i++
		}
		if i == n {
			return
		}
		z[i]++
	}
}

var (
	mixY     = []float64{-1.3, 0.2, 2.4, 1.7, -0.4}
	mixW     = []float64{0.2, 0.3, 0.5}
	mixLocs  = []float64{-1, 0.5, 2}
	mixSigma = 0.8
)

// mixture is a 3-component Gaussian mixture with its assignments
// enumerated inside the data plate; with regime set, a global Bernoulli
// g (P(g = 1) = 0.3), also enumerated, picks the noise scale from
// (0.8, 1.5).
func mixture(regime bool) Model {
	return func(c *Ctx) {
		locs := Sample(c, "locs", probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, 3)), c.Scalar(3)))
		sigma := c.Scalar(mixSigma)
		if regime {
			g := Enumerated(c, "g", probabilistic.NewBernoulliProbs(c.Scalar(0.3)))
			sigma = Index(c.Const(tensor.FromValues(tensor.Float64, []float64{0.8, 1.5}, 2)), g)
		}
		Plate(c, "data", len(mixY), PlateOptions{}, func([]int) {
			z := Enumerated(c, "z", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, mixW, 3))))
			Observe(c, "y", probabilistic.NewNormal(Index(locs, z), sigma), tensor.FromValues(tensor.Float64, mixY, len(mixY)))
		})
	}
}

// enumLogJointAt runs m under Enum with the continuous sites substituted.
func enumLogJointAt(m Model, nesting int, vals map[string]*tensor.Tensor) float64 {
	g := graph.New()
	nodes := map[string]*graph.Node{}
	for k, v := range vals {
		nodes[k] = g.Const(v)
	}
	tr := &Trace{}
	Run(g, Record(Enum(Substitute(m, nodes), nesting), tr))
	return tr.LogJoint().Item()
}

// TestEnumeratedMixtureIsBruteForce: the log joint of the mixture with
// z₁…z₅ enumerated equals the sum over all 3⁵ assignments (and, with the
// global regime g, over all 2·3⁵), worked out term by term.
func TestEnumeratedMixtureIsBruteForce(t *testing.T) {
	prior := 0.0
	for _, l := range mixLocs {
		prior += logN(l, 0, 3)
	}
	vals := map[string]*tensor.Tensor{"locs": tensor.FromValues(tensor.Float64, mixLocs, 3)}
	joint := func(sigma float64) []float64 {
		var terms []float64
		assignments(len(mixY), 3, func(z []int) {
			s := 0.0
			for i, k := range z {
				s += math.Log(mixW[k]) + logN(mixY[i], mixLocs[k], sigma)
			}
			terms = append(terms, s)
		})
		return terms
	}
	want := prior + logSumExp(joint(mixSigma))
	if got := enumLogJointAt(mixture(false), 1, vals); math.Abs(got-want) > 1e-10 {
		t.Errorf("mixture: enumerated log joint %.15g, brute force over 3^5 %.15g", got, want)
	}
	var both []float64
	for g, sigma := range []float64{0.8, 1.5} {
		pg := []float64{0.7, 0.3}[g]
		for _, s := range joint(sigma) {
			both = append(both, math.Log(pg)+s)
		}
	}
	want = prior + logSumExp(both)
	if got := enumLogJointAt(mixture(true), 1, vals); math.Abs(got-want) > 1e-10 {
		t.Errorf("mixture with a global regime: enumerated log joint %.15g, brute force over 2·3^5 %.15g", got, want)
	}
	// Conditioned on labels (semi-supervised), z is observed, not summed.
	labels := []float64{0, 1, 2, 2, 1}
	cond := 0.0
	for i, k := range labels {
		cond += math.Log(mixW[int(k)]) + logN(mixY[i], mixLocs[int(k)], mixSigma)
	}
	if got := enumLogJointAt(Condition(mixture(false), map[string]*tensor.Tensor{"z": tensor.FromValues(tensor.Float64, labels, 5)}), 1, vals); math.Abs(got-(prior+cond)) > 1e-10 {
		t.Errorf("mixture with z observed: %.15g, want %.15g", got, prior+cond)
	}
	// Without Enum the sites are drawn: the model is an ordinary one.
	tr := &Trace{}
	Run(graph.New(), Record(Seed(mixture(true), 1), tr))
	if z := tr.Site("z"); z.EnumDim != 0 || len(z.Value.Shape()) != 1 || len(tr.Latent()) != 1 {
		t.Errorf("unenumerated run: z shape %v, latent sites %d", z.Value.Shape(), len(tr.Latent()))
	}
}

// hmmModel is a hidden Markov chain z₀…z_{T−1} with Gaussian emissions,
// every state enumerated.
func hmmModel(init []float64, trans []float64, locs []float64, sigma float64, y []float64) Model {
	k := len(init)
	return func(c *Ctx) {
		tr := c.Const(tensor.FromValues(tensor.Float64, trans, k, k))
		mu := c.Const(tensor.FromValues(tensor.Float64, locs, k))
		var z *graph.Node
		for t, yt := range y {
			var d probabilistic.Distribution
			if t == 0 {
				d = probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, init, k)))
			} else {
				d = probabilistic.NewCategoricalProbs(Index(tr, z))
			}
			z = Enumerated(c, fmt.Sprintf("z%d", t), d)
			Observe(c, fmt.Sprintf("y%d", t), probabilistic.NewNormal(Index(mu, z), c.Scalar(sigma)), tensor.FromValues(tensor.Float64, []float64{yt}))
		}
	}
}

// TestEnumeratedHMMIsBruteForce: for K = 2 and 3 states and T = 5, the
// enumerated log joint equals the sum over all Kᵀ paths and package hmm's
// forward algorithm.
func TestEnumeratedHMMIsBruteForce(t *testing.T) {
	y := []float64{0.3, -1.2, 2.1, 1.4, -0.2}
	cases := []struct {
		init, trans, locs []float64
	}{
		{[]float64{0.6, 0.4}, []float64{0.9, 0.1, 0.25, 0.75}, []float64{-1, 1.5}},
		{[]float64{0.5, 0.3, 0.2}, []float64{0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.3, 0.3, 0.4}, []float64{-1, 0.5, 2}},
	}
	const sigma = 0.9
	for _, tc := range cases {
		k := len(tc.init)
		var paths []float64
		assignments(len(y), k, func(z []int) {
			s := math.Log(tc.init[z[0]])
			for i, zi := range z {
				if i > 0 {
					s += math.Log(tc.trans[z[i-1]*k+zi])
				}
				s += logN(y[i], tc.locs[zi], sigma)
			}
			paths = append(paths, s)
		})
		want := logSumExp(paths)
		got := enumLogJointAt(hmmModel(tc.init, tc.trans, tc.locs, sigma, y), 0, nil)
		if math.Abs(got-want) > 1e-10 {
			t.Errorf("K = %d: enumerated log joint %.15g, brute force over %d paths %.15g", k, got, len(paths), want)
		}
		g := graph.New()
		logs := func(v []float64, shape ...int) *graph.Node {
			return graph.Log(g.Const(tensor.FromValues(tensor.Float64, v, shape...)))
		}
		emit := hmm.GaussianEmissions(g.Const(tensor.FromValues(tensor.Float64, y, len(y))),
			g.Const(tensor.FromValues(tensor.Float64, tc.locs, k)), g.Const(tensor.Full(tensor.Float64, sigma, k)))
		if fw := hmm.LogLikelihood(logs(tc.init, k), logs(tc.trans, k, k), emit).Item(); math.Abs(got-fw) > 1e-10 {
			t.Errorf("K = %d: enumerated log joint %.15g, hmm.LogLikelihood %.15g", k, got, fw)
		}
	}
}

// TestInferDiscrete: the posteriors of the enumerated sites at fixed
// continuous values equal the brute-force ones (mixture with a global
// regime: sums over all 2·3⁵ assignments) and package hmm's
// forward–backward marginals (HMM), to 1e-10.
func TestInferDiscrete(t *testing.T) {
	post := Samples{"locs": tensor.FromValues(tensor.Float64, mixLocs, 1, 3)}
	got, err := InferDiscrete(mixture(true), post)
	if err != nil {
		t.Fatal(err)
	}
	n := len(mixY)
	pz := make([]float64, n*3) // p(z_i = k), row-major (i, k)
	pg := make([]float64, 2)
	var total float64
	for g, sigma := range []float64{0.8, 1.5} {
		assignments(n, 3, func(z []int) {
			s := math.Log([]float64{0.7, 0.3}[g])
			for i, k := range z {
				s += math.Log(mixW[k]) + logN(mixY[i], mixLocs[k], sigma)
			}
			w := math.Exp(s)
			total += w
			pg[g] += w
			for i, k := range z {
				pz[i*3+k] += w
			}
		})
	}
	check := func(name string, want []float64, shape ...int) {
		v := got[name]
		if v == nil || !slices.Equal(v.Shape(), shape) {
			t.Fatalf("%s: got %v, want shape %v", name, v, shape)
		}
		for i, w := range want {
			if d := math.Abs(v.Values()[i] - w/total); d > 1e-10 {
				t.Errorf("%s element %d: %.15g, brute force %.15g", name, i, v.Values()[i], w/total)
			}
		}
	}
	check("z", pz, 1, n, 3)
	check("g", pg, 1, 2)

	init, trans, locs := []float64{0.5, 0.3, 0.2}, []float64{0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.3, 0.3, 0.4}, []float64{-1, 0.5, 2}
	y := []float64{0.3, -1.2, 2.1, 1.4, -0.2}
	got, err = InferDiscrete(hmmModel(init, trans, locs, 0.9, y), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	emit := hmm.GaussianEmissions(g.Const(tensor.FromValues(tensor.Float64, y, len(y))), g.Const(tensor.FromValues(tensor.Float64, locs, 3)), g.Const(tensor.Full(tensor.Float64, 0.9, 3)))
	fb := hmm.Marginals(graph.Log(g.Const(tensor.FromValues(tensor.Float64, init, 3))), graph.Log(g.Const(tensor.FromValues(tensor.Float64, trans, 3, 3))), emit).Value().Values()
	for s := range y {
		v := got[fmt.Sprintf("z%d", s)].Values()
		for k := range 3 {
			if d := math.Abs(v[k] - fb[s*3+k]); d > 1e-10 {
				t.Errorf("p(z%d = %d): %.15g, forward–backward %.15g", s, k, v[k], fb[s*3+k])
			}
		}
	}
	if _, err := InferDiscrete(twoMixture, nil); err == nil || !strings.Contains(err.Error(), "no Seed handler") {
		t.Errorf("InferDiscrete without the continuous draws: %v", err)
	}
}

// TestEnumeratedHMMInPlate: three sequences in a plate, each a K = 2
// chain of T = 4 enumerated states: the log joint equals the sum over the
// sequences of the brute-force sums over 2⁴ paths, and package hmm's
// batched forward algorithm; the same chain written with Factor and
// hmm.LogLikelihood gives the same value.
func TestEnumeratedHMMInPlate(t *testing.T) {
	init, trans, locs := []float64{0.6, 0.4}, []float64{0.9, 0.1, 0.25, 0.75}, []float64{-1, 1.5}
	const sigma, n, steps = 0.7, 3, 4
	ys := []float64{ // (n, steps)
		0.3, -1.2, 2.1, 1.4,
		-0.8, -1.1, 0.2, 1.9,
		1.6, 1.2, -0.5, -1.3,
	}
	col := func(s int) *tensor.Tensor {
		v := make([]float64, n)
		for i := range v {
			v[i] = ys[i*steps+s]
		}
		return tensor.FromValues(tensor.Float64, v, n)
	}
	model := func(c *Ctx) {
		tr := c.Const(tensor.FromValues(tensor.Float64, trans, 2, 2))
		mu := c.Const(tensor.FromValues(tensor.Float64, locs, 2))
		Plate(c, "seq", n, PlateOptions{}, func([]int) {
			z := Enumerated(c, "z0", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, init, 2))))
			Observe(c, "y0", probabilistic.NewNormal(Index(mu, z), c.Scalar(sigma)), col(0))
			for s := 1; s < steps; s++ {
				z = Enumerated(c, fmt.Sprintf("z%d", s), probabilistic.NewCategoricalProbs(Index(tr, z)))
				Observe(c, fmt.Sprintf("y%d", s), probabilistic.NewNormal(Index(mu, z), c.Scalar(sigma)), col(s))
			}
		})
	}
	want := 0.0
	for i := range n {
		var paths []float64
		assignments(steps, 2, func(z []int) {
			s := math.Log(init[z[0]])
			for j, zj := range z {
				if j > 0 {
					s += math.Log(trans[z[j-1]*2+zj])
				}
				s += logN(ys[i*steps+j], locs[zj], sigma)
			}
			paths = append(paths, s)
		})
		want += logSumExp(paths)
	}
	got := enumLogJointAt(model, 1, nil)
	if math.Abs(got-want) > 1e-10 {
		t.Errorf("enumerated log joint %.15g, brute force %.15g", got, want)
	}
	factored := func(c *Ctx) {
		g := c.Graph()
		emit := hmm.GaussianEmissions(c.Const(tensor.FromValues(tensor.Float64, ys, n, steps)), g.Const(tensor.FromValues(tensor.Float64, locs, 2)), g.Const(tensor.Full(tensor.Float64, sigma, 2)))
		ll := hmm.LogLikelihood(graph.Log(c.Const(tensor.FromValues(tensor.Float64, init, 2))), graph.Log(c.Const(tensor.FromValues(tensor.Float64, trans, 2, 2))), emit)
		Plate(c, "seq", n, PlateOptions{}, func([]int) { Factor(c, "chains", ll) })
	}
	tr := &Trace{}
	Run(graph.New(), Record(factored, tr))
	if f := tr.LogJoint().Item(); math.Abs(f-want) > 1e-10 {
		t.Errorf("Factor(hmm.LogLikelihood) %.15g, brute force %.15g", f, want)
	}
}

// TestEnumeratedSubsample: in a plate that subsamples 2 of 5 rows, the
// enumerated log joint is 5/2 times the sum over the rows in play of each
// row's brute-force log-marginal (the unbiased estimate SVI follows).
func TestEnumeratedSubsample(t *testing.T) {
	model := func(c *Ctx) {
		locs := c.Const(tensor.FromValues(tensor.Float64, mixLocs, 3))
		Plate(c, "data", len(mixY), PlateOptions{Subsample: 2}, func(idx []int) {
			y := make([]float64, len(idx))
			for i, r := range idx {
				y[i] = mixY[r]
			}
			z := Enumerated(c, "z", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, mixW, 3))))
			Observe(c, "y", probabilistic.NewNormal(Index(locs, z), c.Scalar(mixSigma)), tensor.FromValues(tensor.Float64, y, len(y)))
		})
	}
	tr := &Trace{}
	Run(graph.New(), Record(Enum(Seed(model, 4), 1), tr))
	want := 0.0
	for _, r := range tr.Site("data").Indices {
		var ks []float64
		for k := range 3 {
			ks = append(ks, math.Log(mixW[k])+logN(mixY[r], mixLocs[k], mixSigma))
		}
		want += 2.5 * logSumExp(ks)
	}
	if got := tr.LogJoint().Item(); math.Abs(got-want) > 1e-10 {
		t.Errorf("subsampled enumerated log joint %.15g, want %.15g (rows %v)", got, want, tr.Site("data").Indices)
	}
}

// TestEnumeratedBesideMatrixSite: a global site with batch axes of its
// own (a 3 × 2 weight matrix, declared before the enumerated sites)
// keeps its plain log-density even where its axes meet the enumerated
// dimensions.
func TestEnumeratedBesideMatrixSite(t *testing.T) {
	wv := []float64{0.1, -0.2, 0.3, 0.4, -0.5, 0.6}
	model := func(c *Ctx) {
		Sample(c, "w", probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, 3, 2)), c.Scalar(1)))
		mixture(false)(c)
	}
	vals := map[string]*tensor.Tensor{"locs": tensor.FromValues(tensor.Float64, mixLocs, 3), "w": tensor.FromValues(tensor.Float64, wv, 3, 2)}
	want := enumLogJointAt(mixture(false), 1, vals)
	for _, x := range wv {
		want += logN(x, 0, 1)
	}
	if got := enumLogJointAt(model, 1, vals); math.Abs(got-want) > 1e-10 {
		t.Errorf("with a 3 × 2 global site: %.15g, want %.15g", got, want)
	}
}

// markovHMM is hmmModel written with a Markov loop of order 1.
func markovHMM(init, trans, locs []float64, sigma float64, y []float64) Model {
	k := len(init)
	return func(c *Ctx) {
		tr := c.Const(tensor.FromValues(tensor.Float64, trans, k, k))
		mu := c.Const(tensor.FromValues(tensor.Float64, locs, k))
		var z *graph.Node
		Markov(c, len(y), 1, func(t int) {
			d := probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, init, k)))
			if t > 0 {
				d = probabilistic.NewCategoricalProbs(Index(tr, z))
			}
			z = Enumerated(c, fmt.Sprintf("z%d", t), d)
			Observe(c, fmt.Sprintf("y%d", t), probabilistic.NewNormal(Index(mu, z), c.Scalar(sigma)), tensor.FromValues(tensor.Float64, []float64{y[t]}))
		})
	}
}

// TestMarkovHMM: with a Markov loop the chain takes two enumerated
// dimensions whatever its length; its log joint equals the brute-force
// sum over 3⁵ paths (T = 5) and package hmm's forward algorithm
// (T = 200), to 1e-10, and InferDiscrete gives hmm.Marginals.
func TestMarkovHMM(t *testing.T) {
	init, trans, locs := []float64{0.5, 0.3, 0.2}, []float64{0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.3, 0.3, 0.4}, []float64{-1, 0.5, 2}
	const sigma = 0.9
	y := []float64{0.3, -1.2, 2.1, 1.4, -0.2}
	var paths []float64
	assignments(len(y), 3, func(z []int) {
		s := math.Log(init[z[0]])
		for i, zi := range z {
			if i > 0 {
				s += math.Log(trans[z[i-1]*3+zi])
			}
			s += logN(y[i], locs[zi], sigma)
		}
		paths = append(paths, s)
	})
	if got, want := enumLogJointAt(markovHMM(init, trans, locs, sigma, y), 0, nil), logSumExp(paths); math.Abs(got-want) > 1e-10 {
		t.Errorf("T = 5: %.15g, brute force %.15g", got, want)
	}
	long := make([]float64, 200)
	for i := range long {
		long[i] = math.Sin(float64(i)*0.7) * 2
	}
	g := graph.New()
	tr := &Trace{}
	Run(g, Record(Enum(markovHMM(init, trans, locs, sigma, long), 0), tr))
	dims := map[int]bool{}
	for _, s := range tr.Sites {
		if s.EnumDim != 0 {
			dims[s.EnumDim] = true
		}
	}
	emit := hmm.GaussianEmissions(g.Const(tensor.FromValues(tensor.Float64, long, len(long))), g.Const(tensor.FromValues(tensor.Float64, locs, 3)), g.Const(tensor.Full(tensor.Float64, sigma, 3)))
	logInit, logTrans := graph.Log(g.Const(tensor.FromValues(tensor.Float64, init, 3))), graph.Log(g.Const(tensor.FromValues(tensor.Float64, trans, 3, 3)))
	if got, want := tr.LogJoint().Item(), hmm.LogLikelihood(logInit, logTrans, emit).Item(); math.Abs(got-want) > 1e-10 || len(dims) != 2 {
		t.Errorf("T = 200: %.15g, hmm.LogLikelihood %.15g; enumerated dimensions %v", got, want, dims)
	}
	post, err := InferDiscrete(markovHMM(init, trans, locs, sigma, long), nil)
	if err != nil {
		t.Fatal(err)
	}
	fb := hmm.Marginals(logInit, logTrans, emit).Value().Values()
	for s := range long {
		v := post[fmt.Sprintf("z%d", s)].Values()
		for k := range 3 {
			if math.Abs(v[k]-fb[s*3+k]) > 1e-10 {
				t.Fatalf("p(z%d = %d): %.15g, forward–backward %.15g", s, k, v[k], fb[s*3+k])
			}
		}
	}
}
