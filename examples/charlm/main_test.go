package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// Add-one baselines by hand: on "abab" over 3 characters p(a) = p(b) =
// (2+1)/(4+3) = 3/7, and p(b | a) = (2+1)/(2+3) = 3/5, p(a | b) =
// (1+1)/(1+3) = 1/2.
func TestBaselinesByHand(t *testing.T) {
	uni, bi := baselines([]int{0, 1, 0, 1}, []int{0, 1, 0}, 3)
	assert.InDelta(t, -math.Log2(3.0/7), uni, 1e-12)
	assert.InDelta(t, -(math.Log2(3.0/5)+math.Log2(0.5))/2, bi, 1e-12)
}

// The embedded text is the whole of Opticks (SOURCES.md) and its
// characters survive encoding and decoding.
func TestCorpus(t *testing.T) {
	c := newCorpus(opticks)
	assert.Len(t, c.text, 567038)
	assert.Len(t, c.chars, 91)
	ids, err := c.encode("Colours of LIGHT")
	require.NoError(t, err)
	assert.Equal(t, "Colours of LIGHT", c.decode(ids))
	_, err = c.encode("€")
	assert.ErrorContains(t, err, "not in the text's vocabulary")
}

// heldOutBPC scores every character but the first exactly once, each from
// the characters before it in its window: the same as scoring each window
// by hand, the last one short.
func TestHeldOutBPCScoresEachCharacterOnce(t *testing.T) {
	m := nn.NewTransformerLM(tensor.NewRNG(1), nn.TransformerLMOptions{Vocab: 5, Context: 4, Width: 8, Heads: 2, Layers: 1}, tensor.Float64)
	for _, p := range m.Params() {
		tensor.MulScalarTo(p.Value, p.Value, 30) // far from uniform predictions
	}
	val := []int{0, 3, 1, 4, 2, 2, 0, 1, 3, 4} // windows [0,5), [4,9), [8,10)
	nats := 0.0
	for _, w := range [][2]int{{0, 5}, {4, 9}, {8, 10}} {
		seq := val[w[0]:w[1]]
		logp := graph.LogSoftmax(m.Forward(graph.New(), seq[:len(seq)-1], 1), -1).Value().Values()
		for i, next := range seq[1:] {
			nats -= logp[i*5+next]
		}
	}
	want := nats / 9 / math.Ln2
	assert.InDelta(t, want, heldOutBPC(m, val, 4, 2), 1e-12)
	assert.InDelta(t, want, heldOutBPC(m, val, 4, 1), 1e-12)
	assert.Greater(t, math.Abs(want-math.Log2(5)), 0.1, "the check needs a non-uniform model")
}

// The quick mode trains a tiny model for 60 steps: its held-out bits per
// character beat the unigram model, the training loss falls, and the
// sample, the curve and the log are written.
func TestDemoBeatsUnigramModel(t *testing.T) {
	t.Parallel()
	res, r := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"val_bpc", "unigram_bpc", "bigram_bpc", "train_bpc", "val_bpc_per_epoch", "sample"}, Pictures: []string{"curve.png"}, Files: []string{"sample.txt", "log.jsonl"}},
		"-demo")
	assert.InDelta(t, 4.49, res.UnigramBPC, 0.01)
	assert.InDelta(t, 3.44, res.BigramBPC, 0.01)
	assert.Less(t, res.ValBPC, res.UnigramBPC)
	require.Len(t, res.StepBPC, 60)
	first := (res.StepBPC[0] + res.StepBPC[1] + res.StepBPC[2]) / 3
	last := (res.StepBPC[57] + res.StepBPC[58] + res.StepBPC[59]) / 3
	assert.Less(t, last, first-1, "training loss in bits: %.3f → %.3f", first, last)
	assert.Len(t, []rune(res.Sample), len("Light")+80)

	log := clitest.Log(t, r.Path("log.jsonl"))
	require.Len(t, log, 2, "one JSON line per epoch")
	assert.Equal(t, res.ValBPC, log[1].Metrics["val_bpc"])
}
