package gan_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/gan"
	"github.com/gradus-ml/gradus/tensor"
)

// A linear critic D(x) = w·x has the gradient w at every point, so the
// penalty is λ(‖w‖ − 1)² whatever the interpolates, and its gradient with
// respect to w is 2λ(‖w‖ − 1)·w/‖w‖. With w = (1, 2, 2, 4), ‖w‖ = 5, λ = 10:
// the penalty is 160 and its gradient 16·w. The gradient only appears by
// differentiating through ∇ₓD, so this checks the second-order path too.
func TestGradientPenaltyLinearCritic(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(3)
			lin := nn.NewLinear(rng, 4, 1, false, dt)
			tensor.CopyInto(lin.Weight.Value, tensor.FromValues(dt, []float64{1, 2, 2, 4}, 1, 4))
			critic := func(x *graph.Node) *graph.Node { return lin.Forward(graph.Reshape(x, x.Shape()[0], 4)) }
			g := graph.New()
			real := g.Const(rng.Normal(dt, 0, 1, 3, 1, 2, 2))
			fake := g.Const(rng.Normal(dt, 0, 1, 3, 1, 2, 2))
			gp := gan.GradientPenalty(critic, real, fake, rng.Uniform(dt, 0, 1, 3), 10)
			assert.Empty(t, gp.Shape())
			tol := numtest.Pick(dt, 1e-4, 1e-9)
			assert.InDelta(t, 160, gp.Item(), 160*tol)
			grads := nn.Gradients(gp, lin.Params())
			numtest.Close(t, []float64{16, 32, 32, 64}, grads[0], tol)
		})
	}
}

// The penalty's gradient with respect to a small convolutional critic's
// parameters (Conv2D → LeakyReLU → Linear, float64) against central
// differences of the penalty itself: the derivative of a function that
// contains a derivative.
func TestGradientPenaltyFiniteDifferences(t *testing.T) {
	dt := tensor.Float64
	rng := tensor.NewRNG(7)
	conv := nn.NewConv2D(rng, 1, 2, [2]int{3, 3}, nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, DType: dt})
	lin := nn.NewLinear(rng, 8, 1, true, dt)
	critic := nn.NewSequential(conv, nn.NewLeakyReLU(0.2), nn.NewFlatten(), lin)
	realT := rng.Normal(dt, 0, 1, 3, 1, 4, 4)
	fakeT := rng.Normal(dt, 0, 1, 3, 1, 4, 4)
	eps := rng.Uniform(dt, 0, 1, 3)
	g := graph.New()
	penalty := func() *graph.Node {
		g.Reset()
		return gan.GradientPenalty(critic.Forward, g.Const(realT), g.Const(fakeT), eps, 10)
	}
	ps := critic.Params()
	grads := nn.Gradients(penalty(), ps)
	require.Len(t, grads, 4)
	const h = 1e-6
	checked := 0
	for k, p := range ps {
		v := p.Value.Float64s()
		got := grads[k].Float64s()
		for i := range v {
			old := v[i]
			v[i] = old + h
			up := penalty().Item()
			v[i] = old - h
			down := penalty().Item()
			v[i] = old
			want := (up - down) / (2 * h)
			assert.InDelta(t, want, got[i], 1e-6*math.Max(1, math.Abs(want)), "%s[%d]", p.Name, i)
			checked++
		}
	}
	assert.Equal(t, 2*9+2+8+1, checked)
	assert.Greater(t, penalty().Item(), 0.0)
}

// The standard GAN's losses at logits worked by hand: σ(0) = ½ gives
// log 2 per term; GeneratorLoss is mean softplus(−l).
func TestBCELosses(t *testing.T) {
	g := graph.New()
	zero := g.Const(tensor.Zeros(tensor.Float64, 4, 1))
	assert.InDelta(t, 2*math.Ln2, gan.DiscriminatorLoss(zero, zero).Item(), 1e-12)
	l := g.Const(tensor.FromFloat64s([]float64{1, -2}, 2, 1))
	want := (math.Log1p(math.Exp(-1)) + math.Log1p(math.Exp(2))) / 2
	assert.InDelta(t, want, gan.GeneratorLoss(l).Item(), 1e-12)
	// D(real) = (1, −2) and D(fake) = (0, 0, 0, 0): both BCE terms by hand.
	wantD := want + math.Ln2
	assert.InDelta(t, wantD, gan.DiscriminatorLoss(l, zero).Item(), 1e-12)
}

func TestWassersteinLosses(t *testing.T) {
	g := graph.New()
	r := g.Const(tensor.FromFloat64s([]float64{1, 3}, 2, 1))
	f := g.Const(tensor.FromFloat64s([]float64{-1, 0, 4}, 3, 1))
	assert.InDelta(t, 1-2, gan.CriticLoss(r, f).Item(), 1e-12)
	assert.InDelta(t, -1, gan.WassersteinGeneratorLoss(f).Item(), 1e-12)
}

func TestDCGANShapes(t *testing.T) {
	rng := tensor.NewRNG(1)
	cfg := gan.Options{Size: 28, Channels: 1, Latent: 16, Width: 8, BatchNorm: true}
	gen := gan.NewGenerator(rng, cfg, tensor.Float32)
	disc := gan.NewDiscriminator(rng, cfg, tensor.Float32)
	g := graph.New()
	x := gen.Forward(g.Const(rng.Normal(tensor.Float32, 0, 1, 5, 16)))
	assert.Equal(t, []int{5, 1, 28, 28}, x.Shape())
	for _, v := range x.Value().Values() {
		require.Less(t, math.Abs(v), 1.0)
	}
	assert.Equal(t, []int{5, 1}, disc.Forward(x).Shape())
	var names []string
	for _, p := range gen.Params() {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"0.weight", "1.weight", "1.bias", "3.weight", "4.weight", "4.bias", "6.weight", "6.bias"}, names)
	// (16·16·7·7) + 2·16 + (16·8·4·4) + 2·8 + (8·1·4·4 + 1)
	assert.Equal(t, 12544+32+2048+16+129, nn.NumParams(gen))
	// Without batch norm the critic's middle convolution has a bias instead.
	critic := gan.NewDiscriminator(rng, gan.Options{Size: 28, Channels: 1, Latent: 16, Width: 8}, tensor.Float32)
	names = names[:0]
	for _, p := range critic.Params() {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"}, names)
}

func TestMisuse(t *testing.T) {
	g := graph.New()
	rng := tensor.NewRNG(1)
	a := g.Const(rng.Normal(tensor.Float64, 0, 1, 3, 4))
	b := g.Const(rng.Normal(tensor.Float64, 0, 1, 2, 4))
	id := func(x *graph.Node) *graph.Node { return x }
	sum := func(x *graph.Node) *graph.Node { return graph.Sum(x, []int{1}, false) }
	for name, tc := range map[string]struct {
		f    func()
		want string
	}{
		"shapes":    {func() { gan.GradientPenalty(sum, a, b, tensor.Zeros(tensor.Float64, 3), 10) }, "must be batches"},
		"eps":       {func() { gan.GradientPenalty(sum, a, a, tensor.Zeros(tensor.Float64, 2), 10) }, "3 interpolation weights"},
		"scores":    {func() { gan.GradientPenalty(id, a, a, tensor.Zeros(tensor.Float64, 3), 10) }, "one score per sample"},
		"generator": {func() { gan.NewGenerator(rng, gan.Options{Size: 30, Channels: 1, Latent: 2, Width: 2}, tensor.Float64) }, "multiple of 4"},
		"noise": {func() {
			gan.NewGenerator(rng, gan.Options{Size: 28, Channels: 1, Latent: 2, Width: 2}, tensor.Float64).Forward(a)
		}, "want (N, 2)"},
	} {
		var err error
		func() {
			defer tensor.Recover(&err)
			tc.f()
		}()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.want, name)
	}
}
