package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// UMass coherence on three documents, by hand. Documents {a, b}, {a} and
// {b, c} (a twice in the first: presence counts, not frequency), so
// D(a) = D(b) = 2, D(c) = 1, D(a,b) = 1, D(a,c) = 0, D(b,c) = 1.
//   - top words (a, b, c): log((1+1)/2) + log((0+1)/2) + log((1+1)/2) = −log 2
//   - top words (c, b, a): log((1+1)/1) + log((0+1)/1) + log((1+1)/2) = log 2
//   - top words (a, c):    log((0+1)/2) = −log 2
func TestUMassHandComputed(t *testing.T) {
	counts := [][]float64{
		{2, 1, 0, 0},
		{1, 0, 0, 3}, // the fourth word is never a top word
		{0, 1, 1, 0},
	}
	assert.InDelta(t, -math.Log(2), umass(counts, []int{0, 1, 2}), 1e-15)
	assert.InDelta(t, math.Log(2), umass(counts, []int{2, 1, 0}), 1e-15)
	assert.InDelta(t, -math.Log(2), umass(counts, []int{0, 2}), 1e-15)
	assert.InDelta(t, 0.0, umass(counts, []int{0, 3}), 1e-15, "log((1+1)/2)")
}

// Perplexity by hand: one document of counts (1, 3) under one topic with
// probabilities (1/2, 1/2) is exp(−(4 log ½)/4) = 2; under (1/4, 3/4) it
// is exp(−(log ¼ + 3 log ¾)/4), here as the mixture ¼·(1, 0) + ¾·(0, 1).
func TestLogPerplexity(t *testing.T) {
	c := [][]float64{{1, 3}}
	assert.InDelta(t, math.Log(2), logPerplexity(c, [][]float64{{1}}, [][]float64{{0.5, 0.5}}), 1e-15)
	assert.InDelta(t, -(math.Log(0.25)+3*math.Log(0.75))/4,
		logPerplexity(c, [][]float64{{0.25, 0.75}}, [][]float64{{1, 0}, {0, 1}}), 1e-15)
}

// permutations of 0…n−1.
func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// totalVariation is ½ Σ |p − q|.
func totalVariation(p, q []float64) float64 {
	s := 0.0
	for i := range p {
		s += math.Abs(p[i] - q[i])
	}
	return s / 2
}

// Documents drawn from a known LDA (K = 3 topics over V = 12 words, each
// topic putting most of its mass on four words of its own; 300
// documents of 60 words, α = 0.5): the fit by minibatch SVI (2,000 steps of
// 50 documents) recovers the
// topics. Fitted topics are matched to the true ones by the best of the
// 3! assignments (the optimum the Hungarian method finds, by
// enumeration), and each matched pair is within total variation 0.06
// (measured: 0.039).
func TestRecoversKnownTopics(t *testing.T) {
	const k, v, d, n = 3, 12, 300, 60
	trueBeta := make([][]float64, k)
	for j := range trueBeta {
		trueBeta[j] = make([]float64, v)
		for w := range v {
			trueBeta[j][w] = 0.04 / 8
			if w/4 == j {
				trueBeta[j][w] = 0.96 / 4
			}
		}
		trueBeta[j][4*j] *= 1.5 // unequal weights within a topic
		sum := 0.0
		for _, p := range trueBeta[j] {
			sum += p
		}
		for w := range trueBeta[j] {
			trueBeta[j][w] /= sum
		}
	}
	g := graph.New()
	rng := tensor.NewRNG(3)
	theta := probabilistic.NewDirichlet(g.Const(tensor.Full(tensor.Float64, 0.5, k))).Sample(rng, d).Values()
	counts := make([][]float64, d)
	for i := range counts {
		counts[i] = make([]float64, v)
		for range n {
			z := pick(rng, theta[i*k:(i+1)*k])
			counts[i][pick(rng, trueBeta[z])]++
		}
	}
	beta, _, fit, err := fitLDA(clitest.Env(t), counts, ldaOptions{Topics: k, Alpha: 0.5, Eta: 0.1, Batch: 50}, 2000, 0.05, 1)
	require.NoError(t, err)
	best, bestPerm := math.Inf(1), []int(nil)
	for _, p := range permutations(k) {
		worst := 0.0
		for j := range k {
			worst = math.Max(worst, totalVariation(beta[p[j]], trueBeta[j]))
		}
		if worst < best {
			best, bestPerm = worst, p
		}
	}
	t.Logf("matching %v, worst total variation %.4f; −ELBO %.0f → %.0f", bestPerm, best, fit.Loss[0], fit.Loss[len(fit.Loss)-1])
	assert.Less(t, best, 0.06)
}

// pick draws an index with probabilities p.
func pick(rng *tensor.RNG, p []float64) int {
	u := rng.Float64()
	for i, q := range p {
		if u -= q; u < 0 {
			return i
		}
	}
	return len(p) - 1
}

// The embedded corpus reads back with the sizes SOURCE.md gives.
func TestCorpus(t *testing.T) {
	c, err := load("")
	require.NoError(t, err)
	assert.Len(t, c.Names, 333)
	assert.Len(t, c.Vocab, 2038)
	total := 0.0
	for _, row := range c.Counts {
		for _, n := range row {
			total += n
		}
	}
	assert.Equal(t, 65741.0, total)
	assert.Equal(t, "Leviticus 1", c.Names[0])
	assert.Equal(t, "Revelation of John 22", c.Names[332])
}

// A short run (4 topics, 120 steps of 16 documents): every output is
// there, the topics already predict held-out words better than the
// unigram model, and each coherence lies between its bounds: every one
// of its 10 terms log((D(v_m, v_l) + 1)/D(v_l)) is at least log(1/300)
// (300 training documents) and at most log 2... in fact at most 0 unless
// v_l never occurs without v_m, so the sum is at most 10·log 2.
func TestRunSmall(t *testing.T) {
	res, r := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"topics", "vocabulary", "documents", "perplexity", "coherence_mean", "top_words"},
		Pictures: []string{"elbo.png", "topics.png"}},
		"-topics", "4", "-batch", "16", "-steps", "120", "-infer-steps", "40", "-lr", "0.1", "-top", "5")
	assert.Equal(t, 4, res.Topics)
	assert.Equal(t, 2038, res.Vocabulary)
	assert.Equal(t, 333, res.Documents)
	assert.Equal(t, 33, res.HeldOut)
	assert.Less(t, res.Perplexity, res.Unigram)
	assert.Greater(t, res.Perplexity, 1.0)
	require.Len(t, res.TopWords, 4)
	for k, words := range res.TopWords {
		assert.Len(t, words, 5)
		assert.GreaterOrEqual(t, res.Coherence[k], 10*math.Log(1.0/300))
		assert.LessOrEqual(t, res.Coherence[k], 10*math.Log(2))
	}
	assert.InDelta(t, (res.Coherence[0]+res.Coherence[1]+res.Coherence[2]+res.Coherence[3])/4, res.CoherenceMean, 1e-12)
	b, err := os.ReadFile(res.TopicsFile)
	require.NoError(t, err, r.JSON)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 4)
	b, err = os.ReadFile(res.ELBOFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 121, "a header and a line per step")
	assert.True(t, strings.HasPrefix(lines[120], "120,-"), lines[120])
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-topics", "1"}, {"-batch", "1000"}, {"-heldout", "1"}, {"-top", "1"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}

// The document-completion split gives every token to exactly one half,
// about half of them to each.
func TestSplitCounts(t *testing.T) {
	counts := [][]float64{{10, 0, 3}, {0, 400, 1}}
	obs, eval := splitCounts(counts, 5)
	for d, row := range counts {
		for v, n := range row {
			assert.Equal(t, n, obs[d][v]+eval[d][v])
		}
	}
	assert.InDelta(t, 200, obs[1][1], 3*10, "Binomial(400, ½): sd 10")
}
