package ppl

import (
	"fmt"
	"sort"

	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// Samples holds draws keyed by site name, each a tensor whose first axis
// indexes the draws and whose other axes are the site's shape.
type Samples map[string]*tensor.Tensor

// Len returns the number of draws (0 for no sites).
func (s Samples) Len() int {
	for _, t := range s {
		return t.Shape()[0]
	}
	return 0
}

// draw returns draw i of every site, as tensors of the sites' shapes.
func (s Samples) draw(i int) map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor, len(s))
	for name, t := range s {
		sh := t.Shape()[1:]
		n := size(sh)
		out[name] = tensor.FromValues(tensor.Float64, t.Values()[i*n:(i+1)*n], sh...)
	}
	return out
}

// Posterior is the result of NUTS through a model: the draws of every
// latent and deterministic site, on the sites' supports. The embedded
// inference.Result holds them flattened (Names such as "theta[3]",
// Draws[chain][draw]) with the sampler's step sizes, divergences and
// warnings, and its Summary prints the table; the methods below keep each
// site's shape.
type Posterior struct {
	*inference.Result
	// Sites are the latent then deterministic sites, in the model's order.
	Sites   []string
	shapes  map[string][]int
	offsets map[string]int
}

func (p *Posterior) register(name string, shape []int) {
	p.offsets[name] = len(p.Names)
	p.shapes[name] = shape
	p.Sites = append(p.Sites, name)
	if len(shape) == 0 {
		p.Names = append(p.Names, name)
		return
	}
	for k := range size(shape) {
		p.Names = append(p.Names, fmt.Sprintf("%s[%d]", name, k))
	}
}

// Shape returns the named site's shape; it panics with a *tensor.Error for
// a name that is not a site of the posterior.
func (p *Posterior) Shape(name string) []int {
	sh, ok := p.shapes[name]
	if !ok {
		tensor.Fail("ppl.Posterior", "no site %q (sites %v)", name, p.Sites)
	}
	return append([]int{}, sh...)
}

// element returns chains[c][i] of element k of the named site.
func (p *Posterior) element(name string, k int) [][]float64 {
	j := p.offsets[name] + k
	out := make([][]float64, len(p.Draws))
	for c, ch := range p.Draws {
		out[c] = make([]float64, len(ch))
		for i, d := range ch {
			out[c][i] = d[j]
		}
	}
	return out
}

// perElement applies f to each element's chains and returns the results
// shaped like the site.
func (p *Posterior) perElement(name string, f func(chains [][]float64) float64) *tensor.Tensor {
	sh := p.Shape(name)
	out := make([]float64, size(sh))
	for k := range out {
		out[k] = f(p.element(name, k))
	}
	return tensor.FromValues(tensor.Float64, out, sh...)
}

// Mean returns the posterior mean of the named site, shaped like it.
func (p *Posterior) Mean(name string) *tensor.Tensor {
	return p.perElement(name, func(ch [][]float64) float64 {
		s, n := 0.0, 0
		for _, c := range ch {
			for _, v := range c {
				s += v
			}
			n += len(c)
		}
		return s / float64(n)
	})
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1, linear interpolation between
// order statistics) of the named site over all chains.
func (p *Posterior) Quantile(name string, q float64) *tensor.Tensor {
	if !(q >= 0 && q <= 1) {
		tensor.Fail("ppl.Posterior.Quantile", "q = %v is not in [0, 1]", q)
	}
	return p.perElement(name, func(ch [][]float64) float64 {
		var all []float64
		for _, c := range ch {
			all = append(all, c...)
		}
		return quantile(all, q)
	})
}

// Rhat returns the rank-normalised split R̂ of each element of the named
// site (inference.Rhat).
func (p *Posterior) Rhat(name string) *tensor.Tensor { return p.perElement(name, inference.Rhat) }

// ESS returns the bulk effective sample size of each element of the named
// site (inference.BulkESS).
func (p *Posterior) ESS(name string) *tensor.Tensor { return p.perElement(name, inference.BulkESS) }

// Samples returns every site's draws with the chains one after another.
func (p *Posterior) Samples() Samples {
	out := Samples{}
	n := 0
	for _, ch := range p.Draws {
		n += len(ch)
	}
	for _, name := range p.Sites {
		sh := p.shapes[name]
		k := size(sh)
		vals := make([]float64, 0, n*k)
		for _, ch := range p.Draws {
			for _, d := range ch {
				vals = append(vals, d[p.offsets[name]:p.offsets[name]+k]...)
			}
		}
		out[name] = tensor.FromValues(tensor.Float64, vals, append([]int{n}, sh...)...)
	}
	return out
}

// DivergenceCount returns the divergent transitions after warm-up over all
// chains.
func (p *Posterior) DivergenceCount() int {
	n := 0
	for _, d := range p.Divergences {
		n += d
	}
	return n
}

func quantile(x []float64, q float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	lo := int(h)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
