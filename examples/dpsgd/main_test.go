package main

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/optim/privacy"
	"github.com/gradus-ml/gradus/tensor"
)

// The vmapped per-example gradients equal autodiff.Grad of each example's
// cross-entropy (losses.CrossEntropy, not the one-hot form the example
// writes) taken alone, in float64, to 1e-12.
func TestPerExampleGradsMatchLoopOfGrad(t *testing.T) {
	rng := tensor.NewRNG(5)
	m := newMLP(rng, 16, tensor.Float64)
	x := rng.Uniform(tensor.Float64, 0, 1, 5, 784)
	labels := []int{3, 0, 9, 3, 7}
	checkAgainstGrad(t, m, x, labels, perExampleGrads(m, x, labels))
}

func checkAgainstGrad(t *testing.T, m *mlp, x *tensor.Tensor, labels []int, got []*tensor.Tensor) {
	t.Helper()
	for e := range labels {
		g := graph.New()
		ps := make([]*graph.Node, 4)
		for i, p := range m.params() {
			ps[i] = g.Var(p)
		}
		xe := g.Const(tensor.Slice(x, 0, e, e+1, 1).Contiguous())
		logits := graph.Add(graph.MatMulT(graph.Tanh(graph.Add(graph.MatMulT(xe, ps[0], false, true), ps[1])), ps[2], false, true), ps[3])
		want := autodiff.Grad(losses.CrossEntropy(logits, labels[e:e+1], losses.CrossEntropyOptions{}), ps...)
		for i := range ps {
			w := want[i].Value().Float64s()
			row := got[i].Float64s()[e*len(w) : (e+1)*len(w)]
			for j := range w {
				if math.Abs(row[j]-w[j]) > 1e-12 {
					t.Fatalf("example %d, parameter %d, element %d: vmap %.15g, loop %.15g", e, i, j, row[j], w[j])
				}
			}
		}
	}
}

// Two epochs on 2,000 digits (expected batch 256, so q = 0.128 and 16
// steps) at σ = 1: the reported ε is the accountant's for exactly those
// steps, and the private model beats chance (10 %) by a wide margin (it
// reaches 0.83; at least 0.6 is asked), as does the non-private baseline.
func TestShortRun(t *testing.T) {
	res, r := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"test_accuracy", "epsilon", "delta", "noise_multiplier", "clip", "epochs", "seconds_per_epoch"},
		Pictures: []string{"dpsgd.png"},
	}, "-epochs", "2", "-train-n", "2000", "-test-n", "500", "-batch", "256", "-sigma", "1", "-lr", "2")
	q := 256.0 / 2000
	rdp, err := privacy.RDP(q, 1, 16, privacy.DefaultOrders())
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := privacy.Epsilon(privacy.DefaultOrders(), rdp, 1e-5, privacy.Balle2020)
	if eps := res.Epsilon; math.Abs(eps-want) > 1e-12 {
		t.Errorf("ε = %.15g, the accountant gives %.15g for q = %g, σ = 1, 16 steps", eps, want, q)
	}
	if acc := res.TestAccuracy; acc < 0.6 {
		t.Errorf("test accuracy %.3f after two private epochs, want >= 0.6 (chance is 0.1)", acc)
	}
	// The baseline is the same run without noise: same weights and batches,
	// so it learns at least as well within the noise of 500 test digits.
	if len(res.NonPrivatePerEpoch) != 2 || res.NonPrivateTestAccuracy < 0.6 {
		t.Errorf("non-private baseline: accuracy per epoch %v, want 2 epochs ending >= 0.6", res.NonPrivatePerEpoch)
	}
	if res.NonPrivateTestAccuracy == res.TestAccuracy && res.NonPrivatePerEpoch[0] == res.TestAccuracyPerEpoch[0] {
		t.Errorf("the baseline's accuracies %v equal the private run's %v: was the noise applied?", res.NonPrivatePerEpoch, res.TestAccuracyPerEpoch)
	}
	if res.NoiseMultiplier != 1 || res.Delta != 1e-5 || res.Clip != 1 || res.Epochs != 2 || res.Steps != 16 {
		t.Errorf("settings not reported as given: %v", r.JSON)
	}
}

// Bad flags exit with code 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-clip", "0"}, {"-delta", "1"}, {"-epochs", "0"}, {"-sigma", "-1"}} {
		clitest.Fails(t, program(), 2, args...)
	}
}

// BenchmarkPerExampleGrads measures the per-example gradients of 256
// digits.
func BenchmarkPerExampleGrads(b *testing.B) {
	rng := tensor.NewRNG(1)
	m := newMLP(rng, 128, tensor.Float32)
	x := rng.Uniform(tensor.Float32, 0, 1, 256, 784)
	labels := make([]int, 256)
	for i := range labels {
		labels[i] = i % 10
	}
	for b.Loop() {
		perExampleGrads(m, x, labels)
	}
}
