package ppl

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// PredictiveOptions configures Predictive. The zero value means the
// defaults given.
type PredictiveOptions struct {
	// Draws is the number of prior predictive draws when Predictive is
	// given no posterior draws (default 1000); with posterior draws there
	// is one predictive draw per posterior draw.
	Draws int
	Seed  uint64
}

// unobserve returns m with its observed sites drawn afresh: predictive
// sampling of the data.
func unobserve(m Model) Model {
	return Handle(m, funcs{process: func(s *Site) {
		if s.Kind == SampleSite && s.Observed {
			s.Value, s.Observed = nil, false
		}
	}})
}

// Predictive draws from the model's predictive distribution: for each
// posterior draw in post (keyed by site, as Posterior.Samples and
// SVI.Sample give them) the model runs with those sites substituted and
// every other sample site, the observed ones included, drawn afresh. With
// no posterior draws (nil or empty post) it draws opts.Draws times from
// the prior predictive. The result has every sample and deterministic
// site, the posterior's own draws included. Errors are the model's
// (misuse, data outside a support), reported before any draw.
func Predictive(model Model, post Samples, opts PredictiveOptions) (Samples, error) {
	const op = "ppl.Predictive"
	if _, err := prototype(op, model, opts.Seed); err != nil {
		return nil, err
	}
	if opts.Draws < 0 {
		return nil, fmt.Errorf("%s: Draws %d is negative", op, opts.Draws)
	}
	n := post.Len()
	if n == 0 {
		n = opts.Draws
		if n == 0 {
			n = 1000
		}
	}
	return collect(op, n, func(g *graph.Graph, i int) *Trace {
		vals := map[string]*graph.Node{}
		if post.Len() > 0 {
			for name, t := range post.draw(i) {
				vals[name] = g.Const(t)
			}
		}
		tr := &Trace{}
		Run(g, Record(unobserve(Substitute(Seed(model, opts.Seed+uint64(i)*0x9e3779b97f4a7c15), vals)), tr))
		return tr
	}, func(s *Site) *graph.Node {
		if s.Kind == SampleSite || s.Kind == DeterministicSite {
			return s.Value
		}
		return nil
	})
}

// LogLikelihood returns, for every observed site of the model, the
// log-likelihood of each observation under each posterior draw: a tensor
// (draws, batch...) per site, unscaled by plates, the input of WAIC and
// PSIS-LOO (Vehtari, Gelman and Gabry 2017, "Practical Bayesian model
// evaluation using leave-one-out cross-validation and WAIC"). Plates must
// not subsample, and the model must have no Enumerated site.
func LogLikelihood(model Model, post Samples) (Samples, error) {
	const op = "ppl.LogLikelihood"
	if post.Len() == 0 {
		return nil, fmt.Errorf("%s: no posterior draws", op)
	}
	tr, err := prototype(op, model, 0)
	if err != nil {
		return nil, err
	}
	if hasEnumerated(tr) {
		return nil, fmt.Errorf("%s: the model sums out Enumerated sites, and the log-likelihood per observation with them summed out is not implemented (a draw of them would give the likelihood given that draw)", op)
	}
	return collect(op, post.Len(), func(g *graph.Graph, i int) *Trace {
		vals := map[string]*graph.Node{}
		for name, t := range post.draw(i) {
			vals[name] = g.Const(t)
		}
		tr := &Trace{}
		Run(g, Record(Substitute(Seed(model, uint64(i)), vals), tr))
		return tr
	}, func(s *Site) *graph.Node {
		if s.Kind == SampleSite && s.Observed {
			return s.LogProb()
		}
		if s.Kind == PlateSite && len(s.Indices) != s.Size {
			tensor.Fail(op, "plate %q subsamples: the log-likelihood per observation needs every row", s.Name)
		}
		return nil
	})
}

// collect runs n traces and stacks, per site, the nodes pick returns; a
// run that returns nil ends it early, with the draws so far.
func collect(op string, n int, run func(g *graph.Graph, i int) *Trace, pick func(*Site) *graph.Node) (out Samples, err error) {
	defer catch(op, &err)
	g := graph.New()
	vals := map[string][]float64{}
	shapes := map[string][]int{}
	var order []string
	for i := range n {
		g.Reset()
		tr := run(g, i)
		if tr == nil {
			n = i
			break
		}
		for _, s := range tr.Sites {
			v := pick(s)
			if v == nil {
				continue
			}
			if _, ok := shapes[s.Name]; !ok {
				shapes[s.Name] = v.Shape()
				order = append(order, s.Name)
			}
			vals[s.Name] = append(vals[s.Name], v.Value().Values()...)
		}
	}
	out = Samples{}
	for _, name := range order {
		out[name] = tensor.FromValues(tensor.Float64, vals[name], append([]int{n}, shapes[name]...)...)
	}
	return out, nil
}

// Sample draws n times from the fitted guide and returns its sites (the
// latent sites of the model, and the guide's deterministic sites), keyed
// by name: the posterior draws Predictive and LogLikelihood take.
func (s *SVI) Sample(n int, seed uint64) (Samples, error) {
	if n < 1 {
		return nil, fmt.Errorf("ppl.SVI.Sample: n = %d, want ≥ 1", n)
	}
	return collect("ppl.SVI.Sample", n, func(g *graph.Graph, i int) *Trace {
		tr := &Trace{}
		Run(g, Record(Seed(WithParams(s.guide, s.Params), seed+uint64(i)*0x9e3779b97f4a7c15), tr))
		return tr
	}, func(q *Site) *graph.Node {
		if (q.Kind == SampleSite && !q.auxiliary) || q.Kind == DeterministicSite {
			return q.Value
		}
		return nil
	})
}

// Median returns the guide's point estimate of each latent site: the
// value at zero noise is not available for every guide, so it is the
// elementwise median of 201 draws (seed 0), exact for AutoDelta.
func (s *SVI) Median() (map[string]*tensor.Tensor, error) {
	d, err := s.Sample(201, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]*tensor.Tensor{}
	for name, t := range d {
		sh := t.Shape()[1:]
		k := size(sh)
		med := make([]float64, k)
		vals := t.Values()
		col := make([]float64, 201)
		for j := range k {
			for i := range 201 {
				col[i] = vals[i*k+j]
			}
			med[j] = quantile(col, 0.5)
		}
		out[name] = tensor.FromValues(tensor.Float64, med, sh...)
	}
	return out, nil
}

// PointwiseLPD returns, for a log-likelihood tensor (draws, observations…)
// from LogLikelihood, the log pointwise predictive density of each
// observation, log (1/S) Σₛ p(yᵢ | θₛ), computed stably; its sum is the
// lppd of Gelman, Hwang and Vehtari (2014, "Understanding predictive
// information criteria for Bayesian models"). It panics with a
// *tensor.Error for a tensor without a draw axis.
func PointwiseLPD(ll *tensor.Tensor) *tensor.Tensor {
	if ll == nil || ll.Dim() < 1 || ll.Shape()[0] < 1 {
		tensor.Fail("ppl.PointwiseLPD", "want a (draws, observations…) tensor with at least one draw")
	}
	s := ll.Shape()[0]
	k := ll.Size() / s
	v := ll.Values()
	out := make([]float64, k)
	for j := range k {
		top := math.Inf(-1)
		for i := range s {
			top = math.Max(top, v[i*k+j])
		}
		sum := 0.0
		for i := range s {
			sum += math.Exp(v[i*k+j] - top)
		}
		out[j] = top + math.Log(sum/float64(s))
	}
	return tensor.FromValues(tensor.Float64, out, ll.Shape()[1:]...)
}
