package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/ppl"
	"github.com/gradus-ml/gradus/tensor"
)

// corpus is a document-term count matrix with its names.
type corpus struct {
	Names  []string    // one per document
	Vocab  []string    // one per word
	Counts [][]float64 // Counts[d][v]: times word v occurs in document d
}

// readCorpus reads the gzip-compressed format written by
// testdata/make_corpus.py: comment lines, "documents D" and D names,
// "vocabulary V" and V words, "counts N" and N lines "d v n".
func readCorpus(r io.Reader) (*corpus, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	next := func() (string, bool) {
		for sc.Scan() {
			if line := sc.Text(); !strings.HasPrefix(line, "#") {
				return line, true
			}
		}
		return "", false
	}
	header := func(name string) (int, error) {
		line, ok := next()
		f := strings.Fields(line)
		if !ok || len(f) != 2 || f[0] != name {
			return 0, fmt.Errorf("corpus: want %q header, got %q", name, line)
		}
		return strconv.Atoi(f[1])
	}
	list := func(name string) ([]string, error) {
		n, err := header(name)
		if err != nil {
			return nil, err
		}
		out := make([]string, n)
		for i := range out {
			var ok bool
			if out[i], ok = next(); !ok {
				return nil, fmt.Errorf("corpus: %s ends after %d of %d lines", name, i, n)
			}
		}
		return out, nil
	}
	c := &corpus{}
	if c.Names, err = list("documents"); err != nil {
		return nil, err
	}
	if c.Vocab, err = list("vocabulary"); err != nil {
		return nil, err
	}
	n, err := header("counts")
	if err != nil {
		return nil, err
	}
	c.Counts = make([][]float64, len(c.Names))
	for d := range c.Counts {
		c.Counts[d] = make([]float64, len(c.Vocab))
	}
	for i := range n {
		line, ok := next()
		var d, v, k int
		if _, err := fmt.Sscan(line, &d, &v, &k); !ok || err != nil || d < 0 || d >= len(c.Names) || v < 0 || v >= len(c.Vocab) || k < 1 {
			return nil, fmt.Errorf("corpus: count line %d of %d: %q", i+1, n, line)
		}
		c.Counts[d][v] += float64(k)
	}
	return c, sc.Err()
}

// subset returns the documents at idx.
func (c *corpus) subset(idx []int) *corpus {
	out := &corpus{Vocab: c.Vocab}
	for _, d := range idx {
		out.Names = append(out.Names, c.Names[d])
		out.Counts = append(out.Counts, c.Counts[d])
	}
	return out
}

// rows returns the count rows at idx as a (len(idx), V) tensor.
func rows(counts [][]float64, idx []int) *tensor.Tensor {
	v := len(counts[0])
	flat := make([]float64, 0, len(idx)*v)
	for _, d := range idx {
		flat = append(flat, counts[d]...)
	}
	return tensor.FromFloat64s(flat, len(idx), v)
}

// ldaOptions are the model's sizes and priors.
type ldaOptions struct {
	Topics int     // K
	Alpha  float64 // θ_d ~ Dirichlet(α·1_K)
	Eta    float64 // β_k ~ Dirichlet(η·1_V)
	Batch  int     // documents per step (0: all)
}

// ldaModel is latent Dirichlet allocation (Blei, Ng and Jordan 2003) with
// the topic assignments summed out: β_k ~ Dirichlet(η) for the K topics;
// for each document, in a plate that subsamples opts.Batch of them,
// θ_d ~ Dirichlet(α) and the counts n_d ~ Multinomial(N_d, θ_dᵀβ), so
// log p(n_d | θ_d, β) = Σ_v n_dv log Σ_k θ_dk β_kv + const. When beta is
// not nil the topics are that constant instead of a latent site (the
// held-out documents' model).
func ldaModel(counts [][]float64, opts ldaOptions, beta *tensor.Tensor) ppl.Model {
	d, v := len(counts), len(counts[0])
	return func(c *ppl.Ctx) {
		var b *graph.Node
		if beta != nil {
			b = c.Const(beta)
		} else {
			b = ppl.Sample(c, "beta", probabilistic.NewDirichlet(c.Const(tensor.Full(tensor.Float64, opts.Eta, opts.Topics, v))))
		}
		ppl.Plate(c, "documents", d, ppl.PlateOptions{Subsample: opts.Batch}, func(idx []int) {
			theta := ppl.Sample(c, "theta", probabilistic.NewDirichlet(c.Const(tensor.Full(tensor.Float64, opts.Alpha, len(idx), opts.Topics))))
			ppl.Observe(c, "words", newMixedMultinomial(graph.MatMul(theta, b)), rows(counts, idx))
		})
	}
}

// ldaGuide is the mean-field family of Blei, Ng and Jordan (2003) and
// Hoffman et al. (2013): q(β_k) = Dirichlet(λ_k) and, per document,
// q(θ_d) = Dirichlet(γ_d) with γ_d the document's own (local) parameters,
// selected by the plate's indices. Both are reparameterised through
// Dirichlet.RSample's implicit gradients, and MeanFieldELBO takes their
// KL terms to the Dirichlet priors in closed form. lambda0 (K, V) and
// gamma0 (D, K) are the starting values; nil lambda0 leaves β out (the
// held-out documents' guide).
func ldaGuide(d int, opts ldaOptions, lambda0, gamma0 *tensor.Tensor) ppl.Model {
	return func(c *ppl.Ctx) {
		if lambda0 != nil {
			lambda := ppl.Param(c, "lambda", lambda0, probabilistic.Exp{})
			ppl.Sample(c, "beta", probabilistic.NewDirichlet(lambda))
		}
		gamma := ppl.Param(c, "gamma", gamma0, probabilistic.Exp{})
		ppl.Plate(c, "documents", d, ppl.PlateOptions{Subsample: opts.Batch}, func(idx []int) {
			g := gamma
			if len(idx) < d {
				g = graph.IndexSelect(gamma, 0, idx)
			}
			ppl.Sample(c, "theta", probabilistic.NewDirichlet(g))
		})
	}
}

// mixedMultinomial is the multinomial of each row's own total count over
// the categories with probabilities P (rows of θᵀβ, already normalised).
// LogProb leaves out the multinomial coefficient, which does not depend
// on the parameters: Σ_v n_v log P_v.
type mixedMultinomial struct {
	P     *graph.Node // (batch, V)
	batch []int
}

func newMixedMultinomial(p *graph.Node) *mixedMultinomial {
	s := p.Shape()
	return &mixedMultinomial{P: p, batch: s[:len(s)-1]}
}

func (m *mixedMultinomial) LogProb(x *graph.Node) *graph.Node {
	return graph.Sum(graph.Mul(x, graph.Log(m.P)), []int{-1}, false)
}

// Sample is not needed to fit: the words are always observed.
func (m *mixedMultinomial) Sample(*tensor.RNG, int) *tensor.Tensor {
	tensor.Fail("ppl-lda", "the words' distribution is for observed counts only")
	return nil
}
func (m *mixedMultinomial) Entropy() *graph.Node  { return nil }
func (m *mixedMultinomial) Mean() *graph.Node     { return m.P }
func (m *mixedMultinomial) Variance() *graph.Node { return nil }
func (m *mixedMultinomial) BatchShape() []int     { return append([]int{}, m.batch...) }
func (m *mixedMultinomial) EventShape() []int     { return []int{m.P.Shape()[len(m.P.Shape())-1]} }

// normRows returns the rows of the (r, c) tensor divided by their sums,
// as slices: the means of Dirichlet(λ) rows.
func normRows(t *tensor.Tensor) [][]float64 {
	s := t.Shape()
	vals := t.Values()
	out := make([][]float64, s[0])
	for i := range out {
		row := append([]float64(nil), vals[i*s[1]:(i+1)*s[1]]...)
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		for j := range row {
			row[j] /= sum
		}
		out[i] = row
	}
	return out
}

// logPerplexity returns −Σ_d Σ_v n_dv log Σ_k θ_dk β_kv / Σ n_dv, the log
// of the perplexity of the counts under the topic mixtures theta (D, K)
// and topics beta (K, V).
func logPerplexity(counts, theta, beta [][]float64) float64 {
	var ll, n float64
	for d, row := range counts {
		for v, c := range row {
			if c == 0 {
				continue
			}
			p := 0.0
			for k, t := range theta[d] {
				p += t * beta[k][v]
			}
			ll += c * math.Log(p)
			n += c
		}
	}
	return -ll / n
}

// splitCounts divides each document's tokens at random into two halves
// (each token to the first with probability 1/2, by its own seed): the
// observed half infers θ_d, the other is scored ("document completion",
// Wallach et al. 2009, "Evaluation methods for topic models").
func splitCounts(counts [][]float64, seed uint64) (obs, eval [][]float64) {
	rng := tensor.NewRNG(seed)
	for _, row := range counts {
		o, e := make([]float64, len(row)), make([]float64, len(row))
		for v, c := range row {
			for range int(c) {
				if rng.Float64() < 0.5 {
					o[v]++
				} else {
					e[v]++
				}
			}
		}
		obs, eval = append(obs, o), append(eval, e)
	}
	return obs, eval
}

// topWords returns the indices of the n largest entries of p, largest
// first.
func topWords(p []float64, n int) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	return idx[:min(n, len(idx))]
}

// umass returns the UMass coherence of Mimno et al. (2011, "Optimizing
// semantic coherence in topic models", eq. 1) of a topic's top words
// v_1, …, v_M (most probable first) on the documents' counts:
//
//	C = Σ_{m=2..M} Σ_{l<m} log((D(v_m, v_l) + 1) / D(v_l)),
//
// with D(v) the number of documents containing v and D(v, v') the number
// containing both. Every top word must occur in some document. Higher
// (closer to 0) is more coherent.
func umass(counts [][]float64, top []int) float64 {
	df := make([]float64, len(top))
	co := make([][]float64, len(top))
	for i := range co {
		co[i] = make([]float64, len(top))
	}
	for _, row := range counts {
		for m, vm := range top {
			if row[vm] == 0 {
				continue
			}
			df[m]++
			for l, vl := range top[:m] {
				if row[vl] > 0 {
					co[m][l]++
				}
			}
		}
	}
	c := 0.0
	for m := 1; m < len(top); m++ {
		for l := range m {
			c += math.Log((co[m][l] + 1) / df[l])
		}
	}
	return c
}
