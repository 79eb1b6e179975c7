package ppl

import (
	"sync"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// AutoGuideOptions configures an automatic guide. The zero value means
// the defaults given.
type AutoGuideOptions struct {
	// InitScale is the initial standard deviation of the Gaussian guides
	// in the unconstrained space (default 0.1).
	InitScale float64
	// Rank is the rank of AutoLowRankMultivariateNormal's factor (default
	// the square root of the latent dimension, rounded up).
	Rank int
	// Seed seeds the one run of the model that finds its latent sites.
	Seed uint64
}

// autoSite is a latent site of the model as the automatic guides see it:
// its shapes and the bijector onto its support (rebuilt per graph).
type autoSite struct {
	name       string
	shape      []int
	unconShape []int
	sp         support
	lo, hi     *tensor.Tensor // interval bounds, as tensors to rebind per graph
	init       *tensor.Tensor // unconstrained initial value: the prior mean mapped back
}

func (a autoSite) bijector(g *graph.Graph) probabilistic.Bijector {
	if a.sp.kind == intervalSupport {
		return probabilistic.Interval{Low: g.Const(a.lo), High: g.Const(a.hi)}
	}
	return a.sp.bijector()
}

// autoSites runs the model once (on its own graph) and lists its latent
// sites. It panics as the model does, and for discrete latent sites.
func autoSites(model Model, seed uint64) []autoSite {
	tr := &Trace{}
	g := graph.New()
	Run(g, Record(Seed(model, seed), tr))
	var out []autoSite
	for _, s := range tr.Latent() {
		b := bijectorOf(s)
		sp, _ := supportOf(s.Dist)
		a := autoSite{name: s.Name, shape: s.Value.Shape(), sp: sp}
		if sp.kind == intervalSupport {
			a.lo, a.hi = sp.lo.Value().Clone(), sp.hi.Value().Clone()
		}
		mean := graph.BroadcastTo(s.Dist.Mean(), s.Value.Shape()...)
		if b != nil {
			mean = b.Inverse(mean)
		}
		a.unconShape, a.init = mean.Shape(), mean.Value().Clone()
		out = append(out, a)
	}
	return out
}

// lazySites finds the model's latent sites on the guide's first run.
func lazySites(model Model, opts AutoGuideOptions) func() []autoSite {
	var (
		once  sync.Once
		sites []autoSite
	)
	return func() []autoSite {
		once.Do(func() { sites = autoSites(model, opts.Seed) })
		return sites
	}
}

func initScale(opts AutoGuideOptions) float64 {
	if opts.InitScale > 0 {
		return opts.InitScale
	}
	return 0.1
}

// AutoNormal returns the mean-field guide of model: an independent normal
// N(loc, scale²) on every element of every latent site in the
// unconstrained space of its support (Kucukelbir et al. 2017, "Automatic
// differentiation variational inference"), with parameters
// "<site>_auto_loc" and "<site>_auto_scale". Sites on the real line are
// sampled from the normal itself, so MeanFieldELBO uses its closed-form KL
// against a normal prior; the others go through their bijector with the
// log-Jacobian in the guide's density. The model is run once, on the
// guide's first run, to find the sites; their supports must not depend on
// other latent sites.
func AutoNormal(model Model, opts AutoGuideOptions) Model {
	sites := lazySites(model, opts)
	return func(c *Ctx) {
		for _, a := range sites() {
			loc := Param(c, a.name+"_auto_loc", a.init, nil)
			scale := Param(c, a.name+"_auto_scale", tensor.Full(tensor.Float64, initScale(opts), a.unconShape...), probabilistic.Softplus{})
			q := probabilistic.NewNormal(loc, scale)
			b := a.bijector(c.g)
			if b == nil {
				Sample(c, a.name, q)
				continue
			}
			u := sampleAux(c, a.name+"_unconstrained", q)
			Sample(c, a.name, pushForward(b, u))
		}
	}
}

// AutoDelta returns the guide that puts a point mass on every latent
// site, at a parameter "<site>_auto_loc" kept on the site's support: SVI
// with it finds the maximum a posteriori point (in the constrained space,
// with no Jacobian, as NumPyro's AutoDelta).
func AutoDelta(model Model, opts AutoGuideOptions) Model {
	sites := lazySites(model, opts)
	return func(c *Ctx) {
		for _, a := range sites() {
			b := a.bijector(c.g)
			init := c.g.Const(a.init)
			if b != nil {
				init = b.Forward(init)
			}
			v := Param(c, a.name+"_auto_loc", init.Value().Clone(), b)
			Sample(c, a.name, pointMass{v: v})
		}
	}
}

// AutoMultivariateNormal returns the full-rank guide of model: one
// multivariate normal N(loc, LLᵀ) over all latent sites' unconstrained
// elements, concatenated in the model's order, with parameters
// "auto_loc" and "auto_scale_tril" (L kept lower triangular with a
// positive diagonal by probabilistic.CholeskyFactor). It captures the
// posterior's correlations, at O(D²) parameters.
func AutoMultivariateNormal(model Model, opts AutoGuideOptions) Model {
	sites := lazySites(model, opts)
	return func(c *Ctx) {
		as := sites()
		loc, d := jointInit(as)
		l := Param(c, "auto_loc", loc, nil)
		eye := tensor.Zeros(tensor.Float64, d, d)
		for i := range d {
			eye.Float64s()[i*d+i] = initScale(opts)
		}
		tril := Param(c, "auto_scale_tril", eye, probabilistic.NewCholeskyFactor(d, true))
		u := sampleAux(c, "_auto_latent", probabilistic.NewMVNFromScaleTril(l, tril))
		unpack(c, as, u)
	}
}

// AutoLowRankMultivariateNormal returns the guide N(loc, WWᵀ + diag(σ²))
// over all latent sites' unconstrained elements, with W of shape (D,
// Rank): correlations at O(D·Rank) parameters (Ong, Nott and Smith 2018,
// "Gaussian variational approximation with a factor covariance
// structure"). Parameters: "auto_loc", "auto_cov_factor" and
// "auto_scale".
func AutoLowRankMultivariateNormal(model Model, opts AutoGuideOptions) Model {
	sites := lazySites(model, opts)
	return func(c *Ctx) {
		as := sites()
		loc, d := jointInit(as)
		rank := opts.Rank
		if rank <= 0 {
			for rank*rank < d {
				rank++
			}
		}
		l := Param(c, "auto_loc", loc, nil)
		w := Param(c, "auto_cov_factor", tensor.Full(tensor.Float64, 0.01, d, rank), nil)
		sd := Param(c, "auto_scale", tensor.Full(tensor.Float64, initScale(opts), d), probabilistic.Softplus{})
		cov := graph.AddDiag(graph.MatMulT(w, w, false, true), graph.Square(sd))
		q, err := probabilistic.NewMVNFromCovariance(l, cov)
		if err != nil {
			tensor.Fail("ppl.AutoLowRankMultivariateNormal", "the covariance is not positive definite: %v", err)
		}
		u := sampleAux(c, "_auto_latent", q)
		unpack(c, as, u)
	}
}

// jointInit concatenates the sites' unconstrained initial values.
func jointInit(as []autoSite) (*tensor.Tensor, int) {
	var v []float64
	for _, a := range as {
		v = append(v, a.init.Values()...)
	}
	return tensor.FromValues(tensor.Float64, v, len(v)), len(v)
}

// unpack slices the joint unconstrained draw u into the sites, maps each
// onto its support and declares it as a point mass carrying −log|J|, so
// that the guide's density is that of the constrained values.
func unpack(c *Ctx, as []autoSite, u *graph.Node) {
	off := 0
	for _, a := range as {
		n := size(a.unconShape)
		part := graph.Reshape(graph.Slice(u, 0, off, off+n, 1), a.unconShape...)
		off += n
		b := a.bijector(c.g)
		if b == nil {
			Sample(c, a.name, pointMass{v: part})
			continue
		}
		Sample(c, a.name, pushForward(b, part))
	}
}

// pushForward returns the point mass at b(u) whose log-density is
// −log|det J_b(u)|: with the auxiliary site of u, the guide's density of
// the constrained value by the change of variables.
func pushForward(b probabilistic.Bijector, u *graph.Node) pointMass {
	return pointMass{v: b.Forward(u), logDensity: graph.Neg(graph.Sum(b.LogDetJacobian(u), nil, false))}
}

// sampleAux declares a guide's site that the model does not have (the
// unconstrained draw behind an automatic guide's sites).
func sampleAux(c *Ctx, name string, d probabilistic.Distribution) *graph.Node {
	s := &Site{Name: name, Kind: SampleSite, Dist: d, auxiliary: true}
	c.apply(s)
	return s.Value
}

// pointMass is the distribution of one value, with the log-density given
// (zero when nil) for the value it holds, whatever LogProb is asked.
type pointMass struct{ v, logDensity *graph.Node }

func (d pointMass) LogProb(*graph.Node) *graph.Node {
	if d.logDensity == nil {
		return d.v.Graph().Scalar(d.v.DType(), 0)
	}
	return d.logDensity
}
func (d pointMass) Sample(*tensor.RNG, int) *tensor.Tensor { return d.v.Value() }
func (d pointMass) RSample(*tensor.RNG, int) *graph.Node   { return d.v }
func (d pointMass) Entropy() *graph.Node                   { return d.v.Graph().Scalar(d.v.DType(), 0) }
func (d pointMass) Mean() *graph.Node                      { return d.v }
func (d pointMass) Variance() *graph.Node                  { return graph.MulScalar(d.v, 0) }
func (d pointMass) BatchShape() []int                      { return d.v.Shape() }
func (d pointMass) EventShape() []int                      { return []int{} }
