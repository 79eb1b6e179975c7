// Command ppl-lda fits latent Dirichlet allocation (Blei, Ng and Jordan
// 2003, "Latent Dirichlet allocation") by stochastic variational inference
// on minibatches of documents (Hoffman, Blei, Wang and Paisley 2013,
// "Stochastic variational inference"), written as a package ppl model, on
// 333 chapters of the World English Bible (public domain; the counts and
// the script that made them are in testdata, see testdata/SOURCE.md).
//
// Model: topics β_k ~ Dirichlet(η) (k = 1…K, global); in a plate over the
// documents that draws -batch of them per step, θ_d ~ Dirichlet(α) and
// the document's word counts n_d ~ Multinomial(N_d, θ_dᵀβ): the topic
// assignments z are summed out analytically,
// log p(n_d | θ_d, β) = Σ_v n_dv log Σ_k θ_dk β_kv, so no discrete latent
// is sampled. Guide: the mean-field family of the papers, q(β_k) =
// Dirichlet(λ_k) and q(θ_d) = Dirichlet(γ_d) with γ_d local parameters
// indexed by document (not an amortised encoder as in Srivastava and
// Sutton 2017: with a few hundred documents each γ_d is cheap, the family
// is the one LDA's variational bound is usually stated for, and there is
// no amortisation gap). Both are reparameterised by Dirichlet.RSample's
// implicit gradients and the KL terms to the priors are in closed form
// (ppl.MeanFieldELBO); Adam follows the gradient in log λ, log γ.
//
// About -heldout of the documents are kept out of the fit. For each the
// tokens are split at random into halves; θ_d is inferred from the first
// half by SVI with the topics fixed at E_q[β], and the perplexity is
// exp(−Σ n_dv log Σ_k E[θ_dk] E[β_kv] / Σ n_dv) over the second halves
// (document completion, Wallach et al. 2009). It prints the −ELBO along
// the fit, the held-out perplexity beside that of the unigram model (the
// training word frequencies), the top -top words of each topic with its
// UMass coherence (Mimno et al. 2011, "Optimizing semantic coherence in
// topic models") on the training documents and the chapter that uses
// the topic most, and writes -out/elbo.csv (every step's ELBO estimate),
// -out/elbo.png, -out/topics.png (E[θ_d] of every chapter, in canonical
// order, with the book boundaries) and -out/topics.txt.
//
//	go run ./examples/ppl-lda [-topics 10] [-batch 32] [-steps 3000] [-lr 0.1] [-alpha 0.5] [-eta 0.1] [-heldout 0.1] [-infer-steps 500] [-top 10] [-seed 1] [-data corpus.txt.gz] [-out out/ppl-lda] [-json] [-quiet]
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/ppl"
	"github.com/gradus-ml/gradus/tensor"
)

//go:embed testdata/corpus.txt.gz
var bible []byte

// config holds the settings; the tagged fields are its flags.
type config struct {
	Topics     int     `flag:"topics" help:"number of topics K"`
	Batch      int     `flag:"batch" help:"documents per SVI step (the plate's subsample; 0: all)"`
	Steps      int     `flag:"steps" help:"SVI steps"`
	LR         float64 `flag:"lr" help:"Adam's learning rate"`
	Alpha      float64 `flag:"alpha" help:"θ_d ~ Dirichlet(α): the documents' topic prior"`
	Eta        float64 `flag:"eta" help:"β_k ~ Dirichlet(η): the topics' word prior"`
	HeldOut    float64 `flag:"heldout" help:"fraction of the documents held out for perplexity"`
	InferSteps int     `flag:"infer-steps" help:"SVI steps inferring θ for the held-out documents"`
	Top        int     `flag:"top" help:"top words per topic (printed, and for coherence)"`
}

// result is what -json prints.
type result struct {
	Topics     int `json:"topics"`
	Vocabulary int `json:"vocabulary"`
	Documents  int `json:"documents"`
	HeldOut    int `json:"held_out"`
	// Perplexity is the held-out documents' completion perplexity and
	// Unigram that of the training word frequencies on the same tokens.
	Perplexity      float64 `json:"perplexity"`
	Unigram         float64 `json:"unigram_perplexity"`
	TrainPerplexity float64 `json:"train_perplexity"`
	// Coherence is each topic's UMass coherence, CoherenceMean their mean.
	Coherence     []float64  `json:"coherence"`
	CoherenceMean float64    `json:"coherence_mean"`
	TopWords      [][]string `json:"top_words"`
	Chapters      []string   `json:"chapters"` // the chapter using each topic most
	ELBO          float64    `json:"elbo"`     // mean of the last tenth of the steps' estimates
	Seconds       float64    `json:"seconds"`
	Plots         []string   `json:"plots"`
	TopicsFile    string     `json:"topics_file"`
	ELBOFile      string     `json:"elbo_file"` // the ELBO estimate of every step, as CSV
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "ppl-lda", DataUsage: "a corpus in testdata/make_corpus.py's format (default: the embedded Bible chapters)"},
		config{Topics: 10, Batch: 32, Steps: 3000, LR: 0.1, Alpha: 0.5, Eta: 0.1, HeldOut: 0.1, InferSteps: 500, Top: 10}, run)
}

// load reads -data, or the embedded corpus.
func load(path string) (*corpus, error) {
	if path == "" {
		return readCorpus(bytes.NewReader(bible))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCorpus(f)
}

// split returns the training and held-out document indices (a random
// fraction, at least one of each).
func split(d int, frac float64, seed uint64) (train, held []int) {
	rng := tensor.NewRNG(seed)
	perm := rng.Perm(d)
	nh := min(max(int(math.Round(frac*float64(d))), 1), d-1)
	mark := make([]bool, d)
	for _, i := range perm[:nh] {
		mark[i] = true
	}
	for i := range d {
		if mark[i] {
			held = append(held, i)
		} else {
			train = append(train, i)
		}
	}
	return train, held
}

// fitLDA fits the model to the counts and returns E_q[β] (K, V), E_q[θ]
// (D, K) and the fit.
func fitLDA(env *cli.Env, counts [][]float64, opts ldaOptions, steps int, lr float64, seed uint64) (beta, theta [][]float64, fit *ppl.SVI, err error) {
	d, v := len(counts), len(counts[0])
	rng := tensor.NewRNG(seed)
	lambda0 := make([]float64, opts.Topics*v)
	for i := range lambda0 {
		lambda0[i] = 0.5 - math.Log(1-rng.Float64()) // 0.5 + Exp(1)
	}
	gamma0 := make([]float64, d*opts.Topics)
	for i, row := range counts {
		n := 0.0
		for _, c := range row {
			n += c
		}
		for k := range opts.Topics {
			gamma0[i*opts.Topics+k] = opts.Alpha + n/float64(opts.Topics)
		}
	}
	fit, err = ppl.FitSVI(env.Context(), ldaModel(counts, opts, nil),
		ldaGuide(d, opts, tensor.FromFloat64s(lambda0, opts.Topics, v), tensor.FromFloat64s(gamma0, d, opts.Topics)),
		ppl.SVIOptions{Steps: steps, LR: lr, Objective: ppl.MeanFieldELBO, Seed: seed})
	if err != nil {
		return nil, nil, nil, err
	}
	return normRows(fit.Params.Value("lambda")), normRows(fit.Params.Value("gamma")), fit, nil
}

// inferTheta fits q(θ_d) = Dirichlet(γ_d) for the documents' counts with
// the topics fixed, and returns E_q[θ].
func inferTheta(env *cli.Env, counts, beta [][]float64, opts ldaOptions, steps int, lr float64, seed uint64) ([][]float64, error) {
	d, k := len(counts), len(beta)
	flat := make([]float64, 0, k*len(beta[0]))
	for _, row := range beta {
		flat = append(flat, row...)
	}
	gamma0 := make([]float64, d*k)
	for i, row := range counts {
		n := 0.0
		for _, c := range row {
			n += c
		}
		for j := range k {
			gamma0[i*k+j] = opts.Alpha + n/float64(k)
		}
	}
	opts.Batch = 0
	fit, err := ppl.FitSVI(env.Context(), ldaModel(counts, opts, tensor.FromFloat64s(flat, k, len(beta[0]))),
		ldaGuide(d, opts, nil, tensor.FromFloat64s(gamma0, d, k)),
		ppl.SVIOptions{Steps: steps, LR: lr, Objective: ppl.MeanFieldELBO, Seed: seed})
	if err != nil {
		return nil, err
	}
	return normRows(fit.Params.Value("gamma")), nil
}

// book is a document's name without its chapter number.
func book(name string) string {
	if i := strings.LastIndexByte(name, ' '); i > 0 {
		return name[:i]
	}
	return name
}

// run fits LDA and reports it.
func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.Topics < 2 || cfg.Batch < 0 || cfg.Steps < 1 || !(cfg.LR > 0) || !(cfg.Alpha > 0) || !(cfg.Eta > 0) ||
		!(cfg.HeldOut > 0 && cfg.HeldOut < 1) || cfg.InferSteps < 1 || cfg.Top < 2 {
		return res, cli.BadFlagf("need -topics ≥ 2, -batch ≥ 0, -steps ≥ 1, -lr, -alpha, -eta > 0, 0 < -heldout < 1, -infer-steps ≥ 1 and -top ≥ 2")
	}
	c, err := load(env.Data)
	if err != nil {
		return res, err
	}
	trainIdx, heldIdx := split(len(c.Names), cfg.HeldOut, env.Seed)
	train, held := c.subset(trainIdx), c.subset(heldIdx)
	if cfg.Batch > len(trainIdx) {
		return res, cli.BadFlagf("-batch %d exceeds the %d training documents", cfg.Batch, len(trainIdx))
	}
	if cfg.Top > len(c.Vocab) {
		return res, cli.BadFlagf("-top %d exceeds the vocabulary of %d words", cfg.Top, len(c.Vocab))
	}
	res.Topics, res.Vocabulary, res.Documents, res.HeldOut = cfg.Topics, len(c.Vocab), len(c.Names), len(heldIdx)
	env.Printf("%d documents (%d held out), %d words; K = %d, α = %g, η = %g; %d SVI steps of %d documents\n",
		len(c.Names), len(heldIdx), len(c.Vocab), cfg.Topics, cfg.Alpha, cfg.Eta, cfg.Steps, cfg.Batch)

	opts := ldaOptions{Topics: cfg.Topics, Alpha: cfg.Alpha, Eta: cfg.Eta, Batch: cfg.Batch}
	start := time.Now()
	beta, thetaTrain, fit, err := fitLDA(env, train.Counts, opts, cfg.Steps, cfg.LR, env.Seed)
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	every := max(cfg.Steps/10, 1)
	for s := every - 1; s < cfg.Steps; s += every {
		env.Printf("step %5d  −ELBO %.0f\n", s+1, fit.Loss[s])
	}
	tail := fit.Loss[cfg.Steps-max(cfg.Steps/10, 1):]
	for _, l := range tail {
		res.ELBO -= l / float64(len(tail))
	}

	// Held-out document completion.
	obs, eval := splitCounts(held.Counts, env.Seed+7)
	thetaHeld, err := inferTheta(env, obs, beta, opts, cfg.InferSteps, cfg.LR, env.Seed+11)
	if err != nil {
		return res, fmt.Errorf("held-out θ: %w", err)
	}
	res.Perplexity = math.Exp(logPerplexity(eval, thetaHeld, beta))
	res.TrainPerplexity = math.Exp(logPerplexity(train.Counts, thetaTrain, beta))
	freq := make([]float64, len(c.Vocab))
	for _, row := range train.Counts {
		for v, n := range row {
			freq[v] += n
		}
	}
	res.Unigram = unigramPerplexity(eval, freq)
	env.Printf("held-out perplexity %.1f (unigram %.1f); training %.1f; %.1f s\n", res.Perplexity, res.Unigram, res.TrainPerplexity, res.Seconds)

	// Topics: coherence, top words, the chapter using each most.
	theta := make([][]float64, len(c.Names))
	for i, d := range trainIdx {
		theta[d] = thetaTrain[i]
	}
	for i, d := range heldIdx {
		theta[d] = thetaHeld[i]
	}
	var txt strings.Builder
	for k := range cfg.Topics {
		top := topWords(beta[k], cfg.Top)
		words := make([]string, len(top))
		for i, v := range top {
			words[i] = c.Vocab[v]
		}
		coh := umass(train.Counts, top)
		b := topChapter(c.Names, theta, k)
		res.TopWords, res.Coherence, res.Chapters = append(res.TopWords, words), append(res.Coherence, coh), append(res.Chapters, b)
		res.CoherenceMean += coh / float64(cfg.Topics)
		line := fmt.Sprintf("topic %2d  coherence %7.1f  %-24s %s\n", k+1, coh, "("+b+")", strings.Join(words, " "))
		env.Printf("%s", line)
		txt.WriteString(line)
	}
	env.Printf("mean UMass coherence %.1f\n", res.CoherenceMean)
	res.TopicsFile = env.Path("topics.txt")
	if err := os.WriteFile(res.TopicsFile, []byte(txt.String()), 0o644); err != nil {
		return res, err
	}
	var csv strings.Builder
	csv.WriteString("step,elbo\n")
	for s, l := range fit.Loss {
		fmt.Fprintf(&csv, "%d,%.3f\n", s+1, -l)
	}
	res.ELBOFile = env.Path("elbo.csv")
	if err := os.WriteFile(res.ELBOFile, []byte(csv.String()), 0o644); err != nil {
		return res, err
	}
	window := max(cfg.Steps/30, 1)
	ma := blockMeans(fit.Loss, window)
	p, err := env.WritePNG("elbo.png", plot.Panel{Title: "LDA by SVI", XLabel: "step", YLabel: "−ELBO (minibatch estimate)",
		Curves: []plot.Curve{{Name: "−ELBO", Y: fit.Loss, Style: plot.Line},
			{Name: fmt.Sprintf("mean of %d steps", window), X: ma.x, Y: ma.y, Style: plot.Line}}})
	if err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, p)
	if p, err = env.WritePNG("topics.png", topicMap(c.Names, theta)); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, p)
	return res, nil
}

// unigramPerplexity is the perplexity of the counts under the word
// frequencies freq, each plus one (Laplace smoothing: no zero).
func unigramPerplexity(counts [][]float64, freq []float64) float64 {
	total := 0.0
	for _, f := range freq {
		total += f + 1
	}
	var ll, n float64
	for _, row := range counts {
		for v, c := range row {
			ll += c * math.Log((freq[v]+1)/total)
			n += c
		}
	}
	return math.Exp(-ll / n)
}

// topChapter returns the name of the document with the largest E[θ_dk].
func topChapter(names []string, theta [][]float64, k int) string {
	best := 0
	for d := range names {
		if theta[d][k] > theta[best][k] {
			best = d
		}
	}
	return names[best]
}

// topicMap is the heat map of E[θ_dk] (topic k against chapter d, in the
// corpus's order) with a vertical line where each book starts.
func topicMap(names []string, theta [][]float64) plot.Panel {
	k := len(theta[0])
	xs, ys := make([]float64, len(names)), make([]float64, k)
	z := make([][]float64, k)
	for j := range k {
		ys[j] = float64(j + 1)
		z[j] = make([]float64, len(names))
		for d := range names {
			z[j][d] = theta[d][j]
		}
	}
	var starts []float64
	for d := range names {
		xs[d] = float64(d + 1)
		if d > 0 && book(names[d]) != book(names[d-1]) {
			starts = append(starts, float64(d)+0.5)
		}
	}
	return plot.Panel{Title: "E[θ]: topic use per chapter (lines: book boundaries)", XLabel: "chapter", YLabel: "topic",
		Map: &plot.Map{X: xs, Y: ys, Z: z}, Curves: []plot.Curve{{Name: "books", X: starts, Style: plot.VLines}}}
}

// xy is a curve's points.
type xy struct{ x, y []float64 }

// blockMeans returns the means of the consecutive blocks of w values
// of y, at the blocks' last steps (counted from 1).
func blockMeans(y []float64, w int) xy {
	var out xy
	for end := w; end <= len(y); end += w {
		s := 0.0
		for _, v := range y[end-w : end] {
			s += v
		}
		out.x, out.y = append(out.x, float64(end)), append(out.y, s/float64(w))
	}
	return out
}
