package ppl

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Enumerated declares a discrete latent site name ~ d (Bernoulli or
// Categorical, or a zero-inflated or censored wrapper of one) to be
// summed out by enumeration rather than sampled, as Pyro's
// infer={"enumerate": "parallel"} (Obermeyer et al. 2019, "Tensor
// variable elimination for plated factor graphs"). Under the Enum handler
// (which NUTS, HMC, FitSVI and FitLaplace put around the model) its value
// is every value of its support at once, 0…K−1 along a new batch
// dimension to the left of the plates' dimensions and of the sites
// enumerated before it; what the model computes from it broadcasts along
// that dimension, and Trace.LogJoint sums it out. Without Enum (prior
// sampling, Predictive) the site is drawn like a Sample site.
//
// Index picks a table's rows by such a value. Enumerated panics with a
// *tensor.Error for a continuous distribution, a discrete one whose
// support is not a finite list (the counts of Poisson, binomial, …), or
// for the misuse Sample panics for.
func Enumerated(c *Ctx, name string, d probabilistic.Distribution) *graph.Node {
	if d == nil {
		tensor.Fail("ppl.Enumerated", "site %q has a nil distribution", name)
	}
	k := enumSize(name, d)
	s := &Site{Name: name, Kind: SampleSite, Dist: d, Enumerate: true, enumK: k}
	c.apply(s)
	return s.Value
}

// enumSize returns the number of values of a finite discrete support, or
// fails naming the site.
func enumSize(name string, d probabilistic.Distribution) int {
	sp, ok := supportOf(d)
	switch {
	case ok && sp.kind == binarySupport:
		return 2
	case ok && sp.kind == categorySupport:
		return sp.k
	case ok && sp.discrete:
		tensor.Fail("ppl.Enumerated", "site %q (%T) has the unbounded support %s: only a finite support (Bernoulli, Categorical) can be enumerated", name, d, sp.what())
	default:
		tensor.Fail("ppl.Enumerated", "site %q (%T) is %s, not discrete: only Bernoulli and Categorical sites can be enumerated; use Sample", name, d, sp.what())
	}
	return 0
}

// Enum returns m with each site declared by Enumerated (and not given a
// value by another handler) set to all of its support's values, 0…K−1,
// along its own batch dimension: the first such site takes dimension
// −(maxPlateNesting+1), the next one further left (inside a Markov loop,
// a step reuses older steps' dimensions), so that they broadcast against
// each other and against every plate. maxPlateNesting
// must be at least the number of plates the model nests (the engines take
// it from a run of the model). The distribution of an enumerated site may
// have batch axes only at its plates' dimensions or at the dimensions of
// sites enumerated before it (the logits of zₜ picked by zₜ₋₁ in a hidden
// Markov model). Enum panics with a *tensor.Error for a negative
// maxPlateNesting or a site whose batch shape does not fit.
func Enum(m Model, maxPlateNesting int) Model {
	if maxPlateNesting < 0 {
		tensor.Fail("ppl.Enum", "maxPlateNesting %d is negative", maxPlateNesting)
	}
	return func(c *Ctx) {
		next := -maxPlateNesting - 1
		// Inside a Markov loop, the i-th enumerated site of step t takes
		// the dimension of the i-th of step t − history − 1.
		type slot struct{ loop, phase, i int }
		reuse := map[slot]int{}
		counts := map[[2]int]int{}
		dim := func(s *Site) int {
			if f := s.markov; f != nil {
				i := counts[[2]int{f.loop, f.step}]
				counts[[2]int{f.loop, f.step}]++
				k := slot{f.loop, f.step % (f.history + 1), i}
				if d, ok := reuse[k]; ok {
					return d
				}
				reuse[k] = next
			}
			next--
			return next + 1
		}
		Handle(m, funcs{process: func(s *Site) {
			if s.Kind != SampleSite || !s.Enumerate || s.Value != nil {
				return
			}
			for _, p := range s.Plates {
				if -p.Dim > maxPlateNesting {
					tensor.Fail("ppl.Enum", "site %q is inside plate %q at dim %d, beyond maxPlateNesting %d", s.Name, p.Name, p.Dim, maxPlateNesting)
				}
			}
			d := dim(s)
			batch := s.Dist.BatchShape()
			if len(batch) > -(next+1) || (len(batch) >= -d && batch[len(batch)+d] != 1) {
				tensor.Fail("ppl.Enum", "enumerated site %q has batch shape %s, which reaches beyond its plates and the enumerated dimensions or has a size other than 1 at its own dimension %d", s.Name, tensor.FormatShape(batch), d)
			}
			for i := 1; i <= min(len(batch), maxPlateNesting); i++ {
				if b := batch[len(batch)-i]; b != 1 && !slices.ContainsFunc(s.Plates, func(p PlateFrame) bool { return p.Dim == -i && p.Sub == b }) {
					tensor.Fail("ppl.Enum", "enumerated site %q has batch shape %s: size %d at dim %d is not a plate of the site", s.Name, tensor.FormatShape(batch), b, -i)
				}
			}
			shape := make([]int, -d)
			for i := range shape {
				shape[i] = 1
			}
			shape[0] = s.enumK
			vals := make([]float64, s.enumK)
			for i := range vals {
				vals[i] = float64(i)
			}
			s.Value = c.g.Const(tensor.FromValues(s.Dist.Mean().DType(), vals, shape...))
			s.EnumDim, s.enumValue = d, s.Value
		}})(c)
	}
}

// maxPlateNesting returns how many plate dimensions the trace's sites use.
func maxPlateNesting(tr *Trace) int {
	n := 0
	for _, s := range tr.Sites {
		for _, p := range s.Plates {
			n = max(n, -p.Dim)
		}
	}
	return n
}

// enumerate returns m under Enum when the trace tr of m declares
// enumerated sites, m itself otherwise.
func enumerate(tr *Trace, m Model) Model {
	if !hasEnumerated(tr) {
		return m
	}
	return Enum(m, maxPlateNesting(tr))
}

// hasEnumerated reports whether the trace declares a site with Enumerated.
func hasEnumerated(tr *Trace) bool {
	return slices.ContainsFunc(tr.Sites, func(s *Site) bool { return s.Enumerate })
}

// Index returns table's rows picked by idx, which holds row numbers
// (integers 0…K−1 stored as floats, as the values of Categorical and
// Bernoulli sites are): shaped idx's shape followed by table's shape
// without its first axis, out[i…, r…] = table[idx[i…], r…]. It is how a
// model uses an enumerated (or sampled) discrete value: the component's
// mean locs[z], the transition row trans[zₜ₋₁]. It is differentiable in
// table, not in idx. It panics with a *tensor.Error for a nil operand, a
// table without axes, operands of different graphs or dtypes, or an index
// out of range.
func Index(table, idx *graph.Node) *graph.Node {
	const op = "ppl.Index"
	if table == nil || idx == nil {
		tensor.Fail(op, "nil operand (table, idx %s)", graph.Describe(table, idx))
	}
	if table.Graph() != idx.Graph() || table.DType() != idx.DType() || table.Dim() == 0 {
		tensor.Fail(op, "operands %s: want a table with a first axis, in the same graph and dtype as idx", graph.Describe(table, idx))
	}
	ts := table.Shape()
	k := ts[0]
	vals := idx.Value().Values()
	labels := make([]int, len(vals))
	for i, v := range vals {
		if v != math.Trunc(v) || v < 0 || v >= float64(k) {
			tensor.Fail(op, "index %g at flat position %d of %s is not a row of table %s", v, i, graph.Describe(idx), graph.Describe(table))
		}
		labels[i] = int(v)
	}
	rest := size(ts[1:])
	oh := idx.Graph().Const(tensor.OneHot(table.DType(), labels, k))
	out := graph.MatMul(oh, graph.Reshape(table, k, rest))
	return graph.Reshape(out, append(idx.Shape(), ts[1:]...)...)
}

// enumVar is an enumerated site as the elimination sees it.
type enumVar struct {
	site   *Site
	axis   int    // its axis in the rank-R layout
	plates string // the key of its plate set
}

// enumTerm is a log-factor in the rank-R layout, with the enumerated
// variables it depends on and the plates it lies in.
type enumTerm struct {
	lp     *graph.Node
	vars   []int  // indices into the variables
	plates string // the key of its plate set
}

func plateKey(ps []PlateFrame) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	slices.Sort(names)
	return strings.Join(names, "\x00")
}

func plateSet(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, "\x00")
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// enumLogJoint returns the log joint of a trace with enumerated sites,
// their values summed out: variable elimination in log space (Koller and
// Friedman 2009, "Probabilistic Graphical Models", ch. 9) inside each
// plate set, from the most deeply nested plate set out, summing a
// factor over a plate's dimension once the variables local to it are
// eliminated (Obermeyer et al. 2019). Sites that depend on no enumerated
// value add their ScaledLogProb as usual; skip drops such a site.
func enumLogJoint(t *Trace, skip func(*Site) bool) *graph.Node {
	const op = "ppl.Trace.LogJoint"
	var vars []enumVar
	r := 0
	frames := map[string]PlateFrame{}
	for _, s := range t.Sites {
		for _, p := range s.Plates {
			frames[p.Name] = p
		}
		if s.Kind == SampleSite && s.EnumDim != 0 {
			r = max(r, -s.EnumDim)
		}
	}
	for _, s := range t.Sites {
		if s.Kind == SampleSite && s.EnumDim != 0 {
			vars = append(vars, enumVar{site: s, axis: r + s.EnumDim, plates: plateKey(s.Plates)})
		}
	}
	order := map[*Site]int{}
	for i, s := range t.Sites {
		order[s] = i
	}
	// latest reports whether variable i is the last one declared at or
	// before position at on its axis (a Markov loop reuses axes).
	latest := func(i, at int) bool {
		for j, w := range vars {
			if j != i && w.axis == vars[i].axis && order[w.site] > order[vars[i].site] && order[w.site] <= at {
				return false
			}
		}
		return true
	}
	var total *graph.Node
	var terms []enumTerm
	for _, s := range t.Sites {
		if s.Kind != SampleSite {
			continue
		}
		lp := s.LogProb()
		shape := lp.Shape()
		var deps []int
		if len(shape) <= r {
			// A site depends on the enumerated sites declared before it (or
			// is one) whose axis it varies along; a site declared before an
			// enumerated one cannot use its value, whatever its shape.
			off := r - len(shape)
			for i, v := range vars {
				if v.axis < off || shape[v.axis-off] == 1 || order[v.site] > order[s] || !latest(i, order[s]) {
					continue
				}
				if shape[v.axis-off] != v.site.enumK {
					tensor.Fail(op, "site %q has log-probability shape %s, with size %d at the dimension of the enumerated site %q (%d values): give each batch axis a plate", s.Name, tensor.FormatShape(shape), shape[v.axis-off], v.site.Name, v.site.enumK)
				}
				deps = append(deps, i)
			}
		}
		if len(deps) == 0 {
			if skip == nil || !skip(s) {
				total = add(total, s.ScaledLogProb())
			}
			continue
		}
		sp := plateSet(plateKey(s.Plates))
		for _, v := range deps {
			if vs := plateSet(vars[v].plates); !subset(vs, sp) {
				tensor.Fail(op, "enumerated site %q (plates %v) is used by site %q in plates %v: use it only inside its own plates", vars[v].site.Name, vs, s.Name, sp)
			}
		}
		ratio := 1.0
		for _, p := range s.Plates {
			ratio *= float64(p.Size) / float64(p.Sub)
		}
		if math.Abs(s.Scale-ratio) > 1e-12*ratio {
			tensor.Fail(op, "site %q depends on an enumerated site and is scaled by %g besides its plates: a Scale handler cannot reach inside a sum over enumerated values", s.Name, s.Scale/ratio)
		}
		if s.LogJacobian != nil {
			total = add(total, s.LogJacobian)
		}
		full := make([]int, r)
		for i := range full {
			full[i] = 1
		}
		copy(full[r-len(shape):], shape)
		lp = graph.Reshape(lp, full...)
		want := make([]int, r) // the plates' sizes and the enumerated sites' K; 1 elsewhere
		for i := range want {
			want[i] = 1
		}
		for _, v := range deps {
			want[vars[v].axis] = vars[v].site.enumK
		}
		for _, p := range s.Plates {
			want[r+p.Dim] = p.Sub
		}
		for a := range r {
			if full[a] != want[a] && full[a] != 1 {
				tensor.Fail(op, "site %q has log-probability shape %s, which does not fit its plates and enumerated dimensions: give each batch axis a plate", s.Name, tensor.FormatShape(shape))
			}
		}
		if !slices.Equal(full, want) {
			lp = graph.BroadcastTo(lp, want...)
		}
		terms = append(terms, enumTerm{lp: lp, vars: deps, plates: plateKey(s.Plates)})
	}
	for len(terms) > 0 {
		// The deepest plate set left.
		p := terms[0].plates
		for _, tm := range terms {
			if len(plateSet(tm.plates)) > len(plateSet(p)) {
				p = tm.plates
			}
		}
		var here, rest []enumTerm
		for _, tm := range terms {
			if tm.plates == p {
				here = append(here, tm)
			} else {
				rest = append(rest, tm)
			}
		}
		pset := plateSet(p)
		for _, tm := range here {
			for _, v := range tm.vars {
				if vs := plateSet(vars[v].plates); !subset(vs, pset) {
					tensor.Fail(op, "enumerated site %q (plates %v) is used by a site in plates %v: use it only inside its own plates", vars[v].site.Name, vs, pset)
				}
			}
		}
		here = eliminate(here, vars, func(v int) bool { return vars[v].plates == p })
		f := here[0].lp
		left := here[0].vars
		for _, tm := range here[1:] {
			f = graph.Add(f, tm.lp)
			left = union(left, tm.vars)
		}
		for _, v := range left {
			if vars[v].plates == p {
				tensor.Fail(op, "enumerated site %q cannot be summed out: it shares a site with another enumerated site on the same dimension (a Markov loop whose history is shorter than the dependence)", vars[v].site.Name)
			}
		}
		if p == "" {
			total = add(total, graph.Sum(f, nil, false))
			terms = rest
			continue
		}
		var q []string
		for _, v := range left {
			for _, name := range plateSet(vars[v].plates) {
				if !slices.Contains(q, name) {
					q = append(q, name)
				}
			}
		}
		if len(q) == len(pset) {
			var names []string
			for _, v := range left {
				names = append(names, vars[v].site.Name)
			}
			tensor.Fail(op, "enumerated sites %v in plates %v are not tree-structured (each lies in a different plate of a site that uses them): variable elimination across plates supports only nested plates", names, pset)
		}
		var axes []int
		scale := 1.0
		for _, name := range pset {
			if !slices.Contains(q, name) {
				fr := frames[name]
				axes = append(axes, r+fr.Dim)
				scale *= float64(fr.Size) / float64(fr.Sub)
			}
		}
		f = graph.Sum(f, axes, true)
		if scale != 1 {
			f = graph.MulScalar(f, scale)
		}
		frs := make([]PlateFrame, len(q))
		for i, name := range q {
			frs[i] = frames[name]
		}
		terms = append(rest, enumTerm{lp: f, vars: left, plates: plateKey(frs)})
	}
	if total == nil {
		tensor.Fail(op, "the trace has no sample site")
	}
	return total
}

// eliminate sums out, one at a time, the variables for which local
// returns true: each time the one whose combined factor is smallest
// (the min-size heuristic), adding the factors that hold it and taking
// the log-sum-exp along its axis.
func eliminate(fs []enumTerm, vars []enumVar, local func(int) bool) []enumTerm {
	for {
		best, cost := -1, math.Inf(1)
		for v := range vars {
			if !local(v) {
				continue
			}
			var u []int
			for _, f := range fs {
				if slices.Contains(f.vars, v) {
					u = union(u, f.vars)
				}
			}
			if len(u) == 0 || sharesAxis(u, vars) {
				continue
			}
			c := 1.0
			for _, w := range u {
				c *= float64(vars[w].site.enumK)
			}
			if c < cost {
				best, cost = v, c
			}
		}
		if best < 0 {
			return fs
		}
		var keep []enumTerm
		var sum *graph.Node
		var u []int
		for _, f := range fs {
			if slices.Contains(f.vars, best) {
				sum = add(sum, f.lp)
				u = union(u, f.vars)
			} else {
				keep = append(keep, f)
			}
		}
		u = slices.DeleteFunc(u, func(w int) bool { return w == best })
		sum = graph.LogSumExp(sum, []int{vars[best].axis}, true)
		fs = append(keep, enumTerm{lp: sum, vars: u, plates: fs[0].plates})
	}
}

// sharesAxis reports whether two of the variables lie on one axis (a
// Markov loop's reused dimension): their factors must not be combined.
func sharesAxis(u []int, vars []enumVar) bool {
	for i, a := range u {
		for _, b := range u[:i] {
			if vars[a].axis == vars[b].axis {
				return true
			}
		}
	}
	return false
}

func union(a, b []int) []int {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// errEnumGuide is the error for a guide that samples an enumerated site.
func errEnumGuide(op, name string) error {
	return fmt.Errorf("%s: the guide samples %q, which the model sums out by enumeration (ppl.Enumerated): leave it out of the guide", op, name)
}

// InferDiscrete returns, for each draw of post (the continuous latent
// sites, as NUTS's Posterior.Samples or SVI.Sample give them), the
// posterior of every Enumerated site given that draw and the data:
// p(z = k | draw, data), keyed by site, shaped (draws, plate sizes…, K)
// (the plates' sizes in the order of their dimensions, leftmost first).
// Averaging over the draws gives p(z = k | data). The probabilities are
// the gradients of the enumerated log joint with respect to a zero
// offset added to each site's log-probability (the identity ∂log Z/∂θ =
// E[sufficient statistic] of exponential families; Darwiche 2003, "A
// differential approach to inference in Bayesian networks"), so they
// cost one backward pass per draw. With no draws (a model whose latent
// sites are all enumerated) it returns one row. It returns an error for
// a model without Enumerated sites, a plate that subsamples, a draw that
// misses a latent site, and the model's own faults.
func InferDiscrete(model Model, post Samples) (out Samples, err error) {
	const op = "ppl.InferDiscrete"
	tr, err := prototype(op, model, 0)
	if err != nil {
		return nil, err
	}
	if !hasEnumerated(tr) {
		return nil, fmt.Errorf("%s: the model has no Enumerated site", op)
	}
	for _, s := range tr.Sites {
		if s.Kind == PlateSite && len(s.Indices) != s.Size {
			return nil, fmt.Errorf("%s: plate %q subsamples %d of %d: the posterior of the enumerated sites needs the full data", op, s.Name, len(s.Indices), s.Size)
		}
	}
	defer catch(op, &err)
	n := max(post.Len(), 1)
	vals := map[string][]float64{}
	shapes := map[string][]int{}
	var order []string
	g := graph.New()
	m := enumerate(tr, model)
	for i := range n {
		g.Reset()
		nodes := map[string]*graph.Node{}
		if post.Len() > 0 {
			for name, t := range post.draw(i) {
				nodes[name] = g.Const(t)
			}
		}
		t := &Trace{}
		Run(g, Record(Substitute(m, nodes), t))
		var sites []*Site
		var offsets []*graph.Node
		for _, s := range t.Sites {
			if s.Kind != SampleSite || s.EnumDim == 0 {
				continue
			}
			shape := make([]int, -s.EnumDim)
			for j := range shape {
				shape[j] = 1
			}
			shape[0] = s.enumK
			for _, p := range s.Plates {
				shape[len(shape)+p.Dim] = p.Sub
			}
			e := g.Var(tensor.Zeros(s.Value.DType(), shape...))
			s.logDensity = graph.Add(s.LogProb(), e)
			sites, offsets = append(sites, s), append(offsets, e)
		}
		grads := autodiff.Grad(t.LogJoint(), offsets...)
		for j, s := range sites {
			gv := grads[j].Value().Values()
			k := s.enumK
			rows := len(gv) / k
			if _, ok := shapes[s.Name]; !ok {
				ps := slices.Clone(s.Plates)
				slices.SortFunc(ps, func(a, b PlateFrame) int { return a.Dim - b.Dim })
				var sh []int
				for _, p := range ps {
					sh = append(sh, p.Sub)
				}
				shapes[s.Name] = append(sh, k)
				order = append(order, s.Name)
			}
			row := make([]float64, len(gv))
			for a := range k {
				for b := range rows {
					row[b*k+a] = gv[a*rows+b]
				}
			}
			vals[s.Name] = append(vals[s.Name], row...)
		}
	}
	out = Samples{}
	for _, name := range order {
		out[name] = tensor.FromValues(tensor.Float64, vals[name], append([]int{n}, shapes[name]...)...)
	}
	return out, nil
}

// Factor adds logp to the model's log joint as an observed site named
// name, as Pyro's factor: a term computed by hand, such as
// hmm.LogLikelihood for a chain too long to enumerate step by step. logp
// must have the enclosing plates' sizes at their dimensions, like any
// site's batch shape; it may depend on Enumerated values, which then sum
// it out with the rest. It panics with a *tensor.Error for a nil logp and
// the misuse Sample panics for.
func Factor(c *Ctx, name string, logp *graph.Node) {
	if logp == nil {
		tensor.Fail("ppl.Factor", "site %q has a nil log-factor", name)
	}
	c.apply(&Site{Name: name, Kind: SampleSite, Dist: factorDist{logp}, Value: logp, Observed: true})
}

// factorDist is the distribution of a Factor site: its log-density is
// the factor, whatever value it is asked about.
type factorDist struct{ logp *graph.Node }

func (d factorDist) LogProb(*graph.Node) *graph.Node            { return d.logp }
func (d factorDist) Sample(_ *tensor.RNG, n int) *tensor.Tensor { return d.logp.Value() }
func (d factorDist) Entropy() *graph.Node                       { return graph.MulScalar(d.logp, 0) }
func (d factorDist) Mean() *graph.Node                          { return d.logp }
func (d factorDist) Variance() *graph.Node                      { return graph.MulScalar(d.logp, 0) }
func (d factorDist) BatchShape() []int                          { return d.logp.Shape() }
func (d factorDist) EventShape() []int                          { return []int{} }

// markovFrame is one step of a Markov loop.
type markovFrame struct{ loop, step, history int }

// Markov runs body(t) for t = 0, …, n−1 as the steps of a Markov chain of
// the given order, as Pyro's markov: under Enum, the enumerated sites of
// step t reuse the dimensions of those of step t − history − 1, so a chain
// of any length needs only history + 1 enumerated dimensions (per site of
// a step) and the elimination runs along the chain in O(n·K^(history+1)).
// The model must honour the order: a step may use the enumerated values
// of the history steps before it, no older ones (an older value shares a
// dimension with a newer one, and the sum would be wrong, as in Pyro).
// Markov panics with a *tensor.Error for n < 0, history < 0, a nil body or
// a Markov loop inside another.
func Markov(c *Ctx, n, history int, body func(t int)) {
	if n < 0 || history < 0 || body == nil {
		tensor.Fail("ppl.Markov", "n %d, history %d and body (nil: %v): want n ≥ 0, history ≥ 0 and a body", n, history, body == nil)
	}
	if c.markov != nil {
		tensor.Fail("ppl.Markov", "a Markov loop inside another is not supported")
	}
	c.loops++
	defer func() { c.markov = nil }()
	for t := range n {
		c.markov = &markovFrame{loop: c.loops, step: t, history: history}
		body(t)
	}
}
