package ppl

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// catch turns the panics of a model run into an error naming op: misuse
// (*tensor.Error, with the model's line), data outside a support
// (*SupportError) and data failures inside ops (*graph.DataError). Other
// panics go on.
func catch(op string, errp *error) {
	switch r := recover().(type) {
	case nil:
	case *tensor.Error:
		*errp = fmt.Errorf("%s: %w", op, r)
	case *SupportError:
		*errp = fmt.Errorf("%s: %w", op, r)
	case *graph.DataError:
		*errp = fmt.Errorf("%s: %w", op, r)
	default:
		panic(r)
	}
}

// prototype runs m once, seeded, on a fresh graph: the engines' check of a
// model before any work, and their source of site names, shapes and
// supports. A model with Enumerated sites is run once more under Enum,
// and its log joint summed out, to report misuse of them.
func prototype(op string, m Model, seed uint64) (tr *Trace, err error) {
	if m == nil {
		return nil, fmt.Errorf("%s: nil model", op)
	}
	defer catch(op, &err)
	tr = &Trace{}
	Run(graph.New(), Record(Seed(m, seed), tr))
	if hasEnumerated(tr) { // the sum over the enumerated sites must be defined
		et := &Trace{}
		Run(graph.New(), Record(Seed(enumerate(tr, m), seed), et))
		et.LogJoint()
	}
	return tr, nil
}

// latentSite is what the samplers need of a latent site: its constrained
// and unconstrained shapes.
type latentSite struct {
	name        string
	shape       []int // constrained
	unconShape  []int
	unconstrain bool
}

// latents lists the model's latent sites for a sampler, failing for
// discrete ones and for plates that subsample (the samplers need the
// exact density).
func latents(op string, tr *Trace) (out []latentSite, err error) {
	defer catch(op, &err)
	for _, s := range tr.Sites {
		if s.Kind == PlateSite && len(s.Indices) != s.Size {
			return nil, fmt.Errorf("%s: plate %q subsamples %d of %d: the samplers need the full data (subsampling is for SVI)", op, s.Name, len(s.Indices), s.Size)
		}
	}
	for _, s := range tr.Latent() {
		b := bijectorOf(s)
		ls := latentSite{name: s.Name, shape: s.Value.Shape(), unconShape: s.Value.Shape()}
		if b != nil {
			ls.unconShape, ls.unconstrain = b.Inverse(s.Value).Shape(), true
		}
		out = append(out, ls)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the model has no latent site", op)
	}
	return out, nil
}

// NUTS samples the posterior of model with package inference's No-U-Turn
// sampler (or static HMC with opts.Steps > 0), through the handlers: each
// evaluation runs the model under Unconstrain, so every latent site moves
// in the unconstrained space of its support's bijector with the
// log-Jacobian added, and draws are reported on the sites' own supports,
// keyed by site, with the model's Deterministic sites alongside.
//
// The model is run once before sampling: a site name used twice, a plate
// whose size disagrees with a site, observed data outside their support,
// a discrete latent site, a subsampling plate or a model without latent
// sites return an error before any work. Cancellation returns what the
// chains kept, with ctx.Err() wrapped, as inference.NUTS does.
func NUTS(ctx context.Context, model Model, opts inference.NUTSOptions) (*Posterior, error) {
	const op = "ppl.NUTS"
	tr, err := prototype(op, model, opts.Seed)
	if err != nil {
		return nil, err
	}
	sites, err := latents(op, tr)
	if err != nil {
		return nil, err
	}
	enumerated := func(m Model) Model { return enumerate(tr, m) }
	im := inference.Model{LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
		t := &Trace{}
		Run(g, Record(enumerated(Unconstrain(model, p)), t))
		return t.LogJoint()
	}}
	for _, s := range sites {
		im.Params = append(im.Params, inference.Param{Name: s.name, Shape: s.unconShape})
	}
	res, err := inference.NUTS(ctx, im, opts)
	if res == nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	post, perr := newPosterior(model, enumerated, sites, res)
	if perr != nil {
		return nil, perr
	}
	return post, err
}

// newPosterior maps the unconstrained draws of res onto the sites'
// supports and adds the deterministic sites, by running the model once
// per draw.
func newPosterior(model Model, enumerated func(Model) Model, sites []latentSite, res *inference.Result) (p *Posterior, err error) {
	defer catch("ppl.NUTS", &err)
	p = &Posterior{Result: &inference.Result{
		StepSize: res.StepSize, InvMass: res.InvMass, DenseInvMass: res.DenseInvMass,
		Divergences: res.Divergences, MeanTreeDepth: res.MeanTreeDepth, Warnings: res.Warnings,
		Draws: make([][][]float64, len(res.Draws)),
	}, shapes: map[string][]int{}, offsets: map[string]int{}}
	g := graph.New()
	for c, chain := range res.Draws {
		for _, draw := range chain {
			g.Reset()
			vals := map[string]*graph.Node{}
			off := 0
			for _, s := range sites {
				n := size(s.unconShape)
				vals[s.name] = g.Const(tensor.FromValues(tensor.Float64, draw[off:off+n], s.unconShape...))
				off += n
			}
			t := &Trace{}
			Run(g, Record(enumerated(Unconstrain(model, vals)), t))
			var row []float64
			for _, s := range t.Sites {
				if (s.Kind == SampleSite && !s.Observed && !s.Enumerate) || s.Kind == DeterministicSite {
					if _, ok := p.shapes[s.Name]; !ok {
						p.register(s.Name, s.Value.Shape())
					}
					row = append(row, s.Value.Value().Values()...)
				}
			}
			p.Draws[c] = append(p.Draws[c], row)
		}
	}
	if len(p.Sites) == 0 { // no draw kept (cancelled in warm-up): names from the sites alone
		for _, s := range sites {
			p.register(s.name, s.shape)
		}
	}
	return p, nil
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
