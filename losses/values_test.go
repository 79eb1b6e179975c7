package losses_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// lse3 = log(e¹ + e² + e³), the log-normaliser of the logits (1, 2, 3).
var lse3 = math.Log(math.E + math.E*math.E + math.E*math.E*math.E)

// valueCase is a loss worked out by hand: f applied to Vars holding
// inputs (with shapes) must give want (row-major) shaped wantShape.
type valueCase struct {
	name      string
	inputs    [][]float64
	shapes    [][]int
	f         func(xs []*graph.Node) *graph.Node
	want      []float64
	wantShape []int
}

func vars(g *graph.Graph, dt tensor.DType, inputs [][]float64, shapes [][]int) []*graph.Node {
	xs := make([]*graph.Node, len(inputs))
	for i, in := range inputs {
		xs[i] = g.Var(tensor.FromValues(dt, in, shapes[i]...))
	}
	return xs
}

// assertClose checks got ≈ want relative to max(1, |want|) at a tolerance
// suited to dt.
func assertClose(t *testing.T, dt tensor.DType, want []float64, got *tensor.Tensor) {
	t.Helper()
	tol := 1e-12
	if dt == tensor.Float32 {
		tol = 2e-6
	}
	g := got.Values()
	require.Len(t, g, len(want))
	for i := range want {
		assert.InDelta(t, want[i], g[i], tol*math.Max(1, math.Abs(want[i])), "element %d", i)
	}
}

func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				y := c.f(vars(g, dt, c.inputs, c.shapes))
				assert.Equal(t, dt, y.DType())
				assert.Equal(t, c.wantShape, y.Shape())
				assertClose(t, dt, c.want, y.Value())
			})
		}
	}
}

func TestRegressionValues(t *testing.T) {
	// pred (1, 2, 3) against target (0, 2, 5): errors (1, 0, −2).
	pt := [][]float64{{1, 2, 3}, {0, 2, 5}}
	s3 := [][]int{{3}, {3}}
	// Huber on errors (0.5, −2, 3).
	hub := [][]float64{{0.5, -2, 3}, {0, 0, 0}}
	runValueCases(t, []valueCase{
		{"mse/mean", pt, s3, func(x []*graph.Node) *graph.Node { return losses.MSE(x[0], x[1], losses.Mean) }, []float64{5.0 / 3}, []int{}},
		{"mse/sum", pt, s3, func(x []*graph.Node) *graph.Node { return losses.MSE(x[0], x[1], losses.Sum) }, []float64{5}, []int{}},
		{"mse/none", pt, s3, func(x []*graph.Node) *graph.Node { return losses.MSE(x[0], x[1], losses.None) }, []float64{1, 0, 4}, []int{3}},
		{"l1/mean", pt, s3, func(x []*graph.Node) *graph.Node { return losses.L1(x[0], x[1], losses.Mean) }, []float64{1}, []int{}},
		{"l1/none", pt, s3, func(x []*graph.Node) *graph.Node { return losses.L1(x[0], x[1], losses.None) }, []float64{1, 0, 2}, []int{3}},
		// delta 1: ½·0.25, 1·(2 − ½), 1·(3 − ½).
		{"huber/delta1/none", hub, s3, func(x []*graph.Node) *graph.Node { return losses.Huber(x[0], x[1], 1, losses.None) }, []float64{0.125, 1.5, 2.5}, []int{3}},
		{"huber/delta1/mean", hub, s3, func(x []*graph.Node) *graph.Node { return losses.Huber(x[0], x[1], 1, losses.Mean) }, []float64{4.125 / 3}, []int{}},
		// delta 2: |−2| = delta sits on the boundary, where both branches give 2.
		{"huber/delta2/sum", hub, s3, func(x []*graph.Node) *graph.Node { return losses.Huber(x[0], x[1], 2, losses.Sum) }, []float64{0.125 + 2 + 4}, []int{}},
		// Far in the tail: 1·(10⁴ − ½), exact in float32 too (no cancellation).
		{"huber/tail", [][]float64{{1e4}, {0}}, [][]int{{1}, {1}}, func(x []*graph.Node) *graph.Node { return losses.Huber(x[0], x[1], 1, losses.Sum) },
			[]float64{9999.5}, []int{}},
		// ½(log 1 + 1²/1) = ½ and ½(log 4 + 0) = log 2.
		{"gaussiannll/none", [][]float64{{1, 0}, {1, 4}, {2, 0}}, [][]int{{2}, {2}, {2}},
			func(x []*graph.Node) *graph.Node {
				return losses.GaussianNLL(x[0], x[1], x[2], false, 1e-6, losses.None)
			},
			[]float64{0.5, math.Ln2}, []int{2}},
		{"gaussiannll/full/mean", [][]float64{{1, 0}, {1, 4}, {2, 0}}, [][]int{{2}, {2}, {2}},
			func(x []*graph.Node) *graph.Node {
				return losses.GaussianNLL(x[0], x[1], x[2], true, 1e-6, losses.Mean)
			},
			[]float64{(0.5+math.Ln2)/2 + 0.5*math.Log(2*math.Pi)}, []int{}},
		// variance 0.1 clamped to eps 0.5: ½(log 0.5 + 1/0.5).
		{"gaussiannll/eps", [][]float64{{0}, {0.1}, {1}}, [][]int{{1}, {1}, {1}},
			func(x []*graph.Node) *graph.Node { return losses.GaussianNLL(x[0], x[1], x[2], false, 0.5, losses.Sum) },
			[]float64{0.5 * (math.Log(0.5) + 2)}, []int{}},
		// One variance per row (2, 2) mean with (2,) variance: rows use 1 and 4.
		{"gaussiannll/per-row", [][]float64{{0, 0, 0, 0}, {1, 4}, {1, 1, 2, 0}}, [][]int{{2, 2}, {2}, {2, 2}},
			func(x []*graph.Node) *graph.Node {
				return losses.GaussianNLL(x[0], x[1], x[2], false, 1e-6, losses.None)
			},
			[]float64{0.5, 0.5, 0.5 * (math.Log(4) + 1), math.Ln2}, []int{2, 2}},
		// Last axis of size 1 broadcasts.
		{"gaussiannll/last-axis-1", [][]float64{{0, 0, 0, 0}, {1, 4}, {1, 1, 2, 0}}, [][]int{{2, 2}, {2, 1}, {2, 2}},
			func(x []*graph.Node) *graph.Node {
				return losses.GaussianNLL(x[0], x[1], x[2], false, 1e-6, losses.Sum)
			},
			[]float64{0.5 + 0.5 + 0.5*(math.Log(4)+1) + math.Ln2}, []int{}},
	})
}

func TestBinaryValues(t *testing.T) {
	// p (0.5, 0.9, 0.2) against t (1, 0, 0): −log 0.5, −log 0.1, −log 0.8;
	// p = 0 against t = 1 costs the clamp's 100; p = 1 against 1 and p = 0
	// against 0 cost nothing; a soft target 0.25 at p = ½ costs log 2.
	bce := [][]float64{{0.5, 0.9, 0.2, 0, 1, 0, 0.5}, {1, 0, 0, 1, 1, 0, 0.25}}
	s7 := [][]int{{7}, {7}}
	wantBCE := []float64{math.Ln2, math.Log(10), -math.Log(0.8), 100, 0, 0, math.Ln2}
	// softplus(0) = log 2, softplus(2) = log(1 + e²), softplus(−1) + ½.
	logit := [][]float64{{0, 2, -1}, {1, 0, 0.5}}
	s3 := [][]int{{3}, {3}}
	wantLogit := []float64{math.Ln2, math.Log(1 + math.Exp(2)), math.Log(1+math.Exp(-1)) + 0.5}
	hinge := [][]float64{{2, 0.5, -1, 0.5}, {1, 1, -1, -1}}
	s4 := [][]int{{4}, {4}}
	runValueCases(t, []valueCase{
		{"bce/none", bce, s7, func(x []*graph.Node) *graph.Node { return losses.BCE(x[0], x[1], losses.None) }, wantBCE, []int{7}},
		{"bce/sum", bce, s7, func(x []*graph.Node) *graph.Node { return losses.BCE(x[0], x[1], losses.Sum) },
			[]float64{2*math.Ln2 + math.Log(10) - math.Log(0.8) + 100}, []int{}},
		{"bcewithlogits/none", logit, s3, func(x []*graph.Node) *graph.Node { return losses.BCEWithLogits(x[0], x[1], losses.None) }, wantLogit, []int{3}},
		{"bcewithlogits/mean", logit, s3, func(x []*graph.Node) *graph.Node { return losses.BCEWithLogits(x[0], x[1], losses.Mean) },
			[]float64{(wantLogit[0] + wantLogit[1] + wantLogit[2]) / 3}, []int{}},
		{"bernoullinll/none", logit, s3, func(x []*graph.Node) *graph.Node { return losses.BernoulliNLL(x[0], x[1], losses.None) }, wantLogit, []int{3}},
		// max(0, 1 − y·s): 1 − 2 < 0, 1 − 0.5, 1 − 1 = 0, 1 + 0.5.
		{"hinge/none", hinge, s4, func(x []*graph.Node) *graph.Node { return losses.Hinge(x[0], x[1], losses.None) }, []float64{0, 0.5, 0, 1.5}, []int{4}},
		{"hinge/mean", hinge, s4, func(x []*graph.Node) *graph.Node { return losses.Hinge(x[0], x[1], losses.Mean) }, []float64{0.5}, []int{}},
	})
}

func TestBCEWithLogitsStable(t *testing.T) {
	// At |x| = 100, σ(x) saturates (to 1 in both numtest.DTypes), so BCE of the
	// sigmoid would cost the clamp's 100 or log 0; the stable form gives
	// softplus(±100) − x·t exactly: ~0 when right, 100 when wrong.
	x := []float64{100, -100, 100, -100}
	tg := []float64{1, 1, 0, 0}
	want := []float64{0, 100, 100, 0}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xs := vars(g, dt, [][]float64{x, tg}, [][]int{{4}, {4}})
			l := losses.BCEWithLogits(xs[0], xs[1], losses.None)
			assertClose(t, dt, want, l.Value())
			grad := gradValue(losses.BCEWithLogits(xs[0], xs[1], losses.Sum), xs[0])
			// σ(x) − t: (0, −1, 1, 0).
			assertClose(t, dt, []float64{0, -1, 1, 0}, grad)
			for _, v := range append(l.Value().Values(), grad.Values()...) {
				assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "non-finite %v", v)
			}
		})
	}
}

// TestBCEWithLogitsSum checks the fused Sum path (one pass, float64
// accumulation) against terms worked out by hand and the None path.
func TestBCEWithLogitsSum(t *testing.T) {
	// softplus(x) − x·t: (0, 1) → ln 2; (2, 0) → ln(1 + e²) = 2.1269280110429727;
	// (−100, 1) → 100 + ln(1 + e⁻¹⁰⁰) = 100; (3, 0.25) → ln(1 + e³) − 0.75.
	x := []float64{0, 2, -100, 3}
	tg := []float64{1, 0, 1, 0.25}
	want := math.Ln2 + 2.1269280110429727 + 100 + math.Log1p(math.Exp(3)) - 0.75
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xs := vars(g, dt, [][]float64{x, tg}, [][]int{{2, 2}, {2, 2}})
			sum := losses.BCEWithLogits(xs[0], xs[1], losses.Sum)
			assert.Empty(t, sum.Shape())
			assert.InDelta(t, want, sum.Item(), 1e4*numtest.Tol(dt))
			var byHand float64
			for _, v := range losses.BernoulliNLL(xs[0], xs[1], losses.None).Value().Values() {
				byHand += v
			}
			assert.InDelta(t, byHand, losses.BernoulliNLL(xs[0], xs[1], losses.Sum).Item(), 1e4*numtest.Tol(dt))
		})
	}
}

func TestBCEWithLogitsAgreesWithBCE(t *testing.T) {
	// For moderate logits the two routes to the same loss agree.
	x := []float64{-4, -1.5, -0.2, 0, 0.7, 2.5, 5}
	tg := []float64{0, 1, 0.3, 1, 0, 0.8, 1}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xs := vars(g, dt, [][]float64{x, tg}, [][]int{{7}, {7}})
			a := losses.BCEWithLogits(xs[0], xs[1], losses.None).Value().Values()
			b := losses.BCE(graph.Sigmoid(xs[0]), xs[1], losses.None).Value().Values()
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-5
			}
			assert.InDeltaSlice(t, a, b, tol)
		})
	}
}

func TestClassificationValues(t *testing.T) {
	// Two rows of logits (1, 2, 3) with labels 2 and 0: −log p = lse3 − 3
	// and lse3 − 1, where lse3 = log(e¹ + e² + e³) ≈ 3.40760596.
	logits := [][]float64{{1, 2, 3, 1, 2, 3}}
	s23 := [][]int{{2, 3}}
	labels := []int{2, 0}
	ce := func(o losses.CrossEntropyOptions) func(x []*graph.Node) *graph.Node {
		return func(x []*graph.Node) *graph.Node { return losses.CrossEntropy(x[0], labels, o) }
	}
	w := []float64{1, 2, 3}
	runValueCases(t, []valueCase{
		{"ce/single", [][]float64{{1, 2, 3}}, [][]int{{1, 3}},
			func(x []*graph.Node) *graph.Node {
				return losses.CrossEntropy(x[0], []int{2}, losses.CrossEntropyOptions{})
			}, []float64{0.40760596444438}, []int{}},
		{"ce/mean", logits, s23, ce(losses.CrossEntropyOptions{}), []float64{lse3 - 2}, []int{}},
		{"ce/sum", logits, s23, ce(losses.CrossEntropyOptions{Reduction: losses.Sum}), []float64{2*lse3 - 4}, []int{}},
		{"ce/none", logits, s23, ce(losses.CrossEntropyOptions{Reduction: losses.None}), []float64{lse3 - 3, lse3 - 1}, []int{2}},
		// Weights 3 and 1 on the two targets: (3(L−3) + (L−1)) / (3 + 1) = L − 2.5.
		{"ce/weights/mean", logits, s23, ce(losses.CrossEntropyOptions{Weights: w}), []float64{lse3 - 2.5}, []int{}},
		{"ce/weights/none", logits, s23, ce(losses.CrossEntropyOptions{Weights: w, Reduction: losses.None}), []float64{3 * (lse3 - 3), lse3 - 1}, []int{2}},
		// ε = 0.3: the mean over classes of −log p is L − 2, so the rows
		// cost 0.7(L−3) + 0.3(L−2) = L − 2.7 and 0.7(L−1) + 0.3(L−2) = L − 1.3.
		{"ce/smoothing/none", logits, s23, ce(losses.CrossEntropyOptions{LabelSmoothing: 0.3, Reduction: losses.None}), []float64{lse3 - 2.7, lse3 - 1.3}, []int{2}},
		{"ce/smoothing/mean", logits, s23, ce(losses.CrossEntropyOptions{LabelSmoothing: 0.3}), []float64{lse3 - 2}, []int{}},
		// Both: the smoothing term is (ε/C)·Σ_c w_c(L − x_c) = 0.1(6L − 14);
		// rows 0.7·3(L−3) + 0.1(6L−14) = 2.7L − 7.7 and 0.7(L−1) + 0.1(6L−14)
		// = 1.3L − 2.1; Mean divides their sum by 3 + 1.
		{"ce/both/none", logits, s23, ce(losses.CrossEntropyOptions{LabelSmoothing: 0.3, Weights: w, Reduction: losses.None}),
			[]float64{2.7*lse3 - 7.7, 1.3*lse3 - 2.1}, []int{2}},
		{"ce/both/mean", logits, s23, ce(losses.CrossEntropyOptions{LabelSmoothing: 0.3, Weights: w}), []float64{lse3 - 2.45}, []int{}},
		// Full smoothing: only the uniform term, L − 2 per row.
		{"ce/smoothing1/sum", logits, s23, ce(losses.CrossEntropyOptions{LabelSmoothing: 1, Reduction: losses.Sum}), []float64{2*lse3 - 4}, []int{}},
		// Large logits do not overflow: (1000, 1001, 1002) has the same loss.
		{"ce/large", [][]float64{{1000, 1001, 1002}}, [][]int{{1, 3}},
			func(x []*graph.Node) *graph.Node {
				return losses.CrossEntropy(x[0], []int{2}, losses.CrossEntropyOptions{})
			}, []float64{lse3 - 3}, []int{}},
		{"nll/mean", [][]float64{{-0.5, -1, -2, -3, -0.25, -4}}, s23,
			func(x []*graph.Node) *graph.Node { return losses.NLL(x[0], []int{1, 2}, losses.CrossEntropyOptions{}) }, []float64{2.5}, []int{}},
		{"nll/weights/sum", [][]float64{{-0.5, -1, -2, -3, -0.25, -4}}, s23,
			func(x []*graph.Node) *graph.Node {
				return losses.NLL(x[0], []int{1, 2}, losses.CrossEntropyOptions{Weights: w, Reduction: losses.Sum})
			}, []float64{2*1 + 3*4}, []int{}},
		// torch.nn.MultiMarginLoss's example: ((1 − 0.7) + (1 − 0.6) + (1 − 0.4)) / 4.
		{"multimargin/single", [][]float64{{0.1, 0.2, 0.4, 0.8}}, [][]int{{1, 4}},
			func(x []*graph.Node) *graph.Node { return losses.MultiMarginHinge(x[0], []int{3}, 1, losses.Mean) }, []float64{0.325}, []int{}},
		// Second row label 0, margin 0.5: max(0, 0.5 − 1 + s_j) for s_j = 0, 2, 0.5: 0 + 1.5 + 0 over 3.
		{"multimargin/none", [][]float64{{0, 1, 0, 1, 2, 0.5}}, s23,
			func(x []*graph.Node) *graph.Node { return losses.MultiMarginHinge(x[0], []int{1, 0}, 0.5, losses.None) },
			[]float64{0, 1.5 / 3}, []int{2}},
		{"multimargin/sum", [][]float64{{0.1, 0.2, 0.4, 0.8, 1, 0, 0, 0}}, [][]int{{2, 4}},
			func(x []*graph.Node) *graph.Node { return losses.MultiMarginHinge(x[0], []int{3, 0}, 1, losses.Sum) },
			[]float64{0.325 + 0}, []int{}},
	})
}

func TestKLValues(t *testing.T) {
	runValueCases(t, []valueCase{
		// μ = 1, σ² = 1: ½(1 + 1 − 0 − 1).
		{"kl/unit", [][]float64{{1}, {0}}, [][]int{{1}, {1}},
			func(x []*graph.Node) *graph.Node { return losses.KLDiagGaussian(x[0], x[1], losses.Mean) }, []float64{0.5}, []int{}},
		// Rows (μ, σ²) = ((1, 0), (1, 2)) and ((0, 0), (1, 1)):
		// ½[(1 + 1 − 0 − 1) + (0 + 2 − log 2 − 1)] = 1 − ½log 2, and 0.
		{"kl/rows/none", [][]float64{{1, 0, 0, 0}, {0, math.Ln2, 0, 0}}, [][]int{{2, 2}, {2, 2}},
			func(x []*graph.Node) *graph.Node { return losses.KLDiagGaussian(x[0], x[1], losses.None) },
			[]float64{1 - math.Ln2/2, 0}, []int{2}},
		{"kl/rows/mean", [][]float64{{1, 0, 0, 0}, {0, math.Ln2, 0, 0}}, [][]int{{2, 2}, {2, 2}},
			func(x []*graph.Node) *graph.Node { return losses.KLDiagGaussian(x[0], x[1], losses.Mean) },
			[]float64{(1 - math.Ln2/2) / 2}, []int{}},
		// Against N(0, 1) the general form agrees with the one above.
		{"kl2/standard", [][]float64{{1}, {0}, {0}, {0}}, [][]int{{1}, {1}, {1}, {1}},
			func(x []*graph.Node) *graph.Node { return losses.KLDiagGaussians(x[0], x[1], x[2], x[3], losses.Sum) }, []float64{0.5}, []int{}},
		// N(0, 2) ‖ N(1, 4): ½(log 4 − log 2 + (2 + 1)/4 − 1) = ½(log 2 − ¼);
		// the second row is KL(p ‖ p) = 0. The prior (1,) broadcasts.
		{"kl2/broadcast/none", [][]float64{{0, 1}, {math.Ln2, math.Log(4)}, {1}, {math.Log(4)}}, [][]int{{2, 1}, {2, 1}, {1}, {1}},
			func(x []*graph.Node) *graph.Node { return losses.KLDiagGaussians(x[0], x[1], x[2], x[3], losses.None) },
			[]float64{0.5 * (math.Ln2 - 0.25), 0}, []int{2}},
	})
}

func TestBCEGradientFiniteAtSaturation(t *testing.T) {
	// At p = 0 and p = 1 the clamped logarithms have zero derivative; the
	// other term contributes −(1 − t)·d log(1 − p)/dp = 1/(1 − p) at p = 0
	// (t = 0.5: 0.5) and t·d(−log p)/dp = −1/p at p = 1 (t = 0.5: −0.5).
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xs := vars(g, dt, [][]float64{{0, 1}, {0.5, 0.5}}, [][]int{{2}, {2}})
			l := losses.BCE(xs[0], xs[1], losses.Sum)
			assertClose(t, dt, []float64{100}, l.Value()) // −(½·(−100) + ½·log 1), twice
			assertClose(t, dt, []float64{0.5, -0.5}, gradValue(l, xs[0]))
		})
	}
}

func TestGaussianNLLClampIsStraightThrough(t *testing.T) {
	// variance 0.1 is clamped to eps 0.5; the gradient is that of
	// ½(log v + d²/v) at v = 0.5, d = 1: ½(1/v − d²/v²) = ½(2 − 4) = −1,
	// passed to the variance unchanged, as in PyTorch.
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xs := vars(g, dt, [][]float64{{0}, {0.1}, {1}}, [][]int{{1}, {1}, {1}})
			l := losses.GaussianNLL(xs[0], xs[1], xs[2], false, 0.5, losses.Sum)
			assertClose(t, dt, []float64{-1}, gradValue(l, xs[1]))
			// d/dμ = −(t − μ)/v = −2.
			assertClose(t, dt, []float64{-2}, gradValue(l, xs[0]))
		})
	}
}
