package diffusion

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUNetShapesAndNames(t *testing.T) {
	u := NewUNet(tensor.NewRNG(1), UNetOptions{Base: 8, MaxT: 50}, tensor.Float32)
	names := map[string]bool{}
	for _, p := range u.Params() {
		assert.False(t, names[p.Name], "duplicate %s", p.Name)
		names[p.Name] = true
	}
	for _, n := range []string{"time1.weight", "down1.conv1.weight", "pool1.weight", "attn.attn.in_proj_weight",
		"attn.norm.weight", "up2.weight", "upblock2.skip.weight", "upblock1.time.bias", "out.bias"} {
		assert.True(t, names[n], n)
	}
	g := graph.New()
	x := g.Const(Noise(tensor.NewRNG(2), tensor.Float32, 3, 1, 28, 28))
	y := u.Forward(x, []int{0, 17, 50})
	assert.Equal(t, []int{3, 1, 28, 28}, y.Shape())
	// The output convolution starts at zero.
	for _, v := range y.Value().Values() {
		require.Zero(t, v)
	}
	// Other sizes that are multiples of 4 work too.
	assert.Equal(t, []int{2, 1, 8, 12}, u.Forward(g.Const(tensor.Zeros(tensor.Float32, 2, 1, 8, 12)), []int{1, 2}).Shape())
}

// A few Adam steps on one batch at fixed noise and time steps lower the
// ε-prediction loss well below its starting value (the mean of ε², about
// 1, since the untrained model predicts 0), and every parameter receives a
// gradient once the output layer has moved.
func TestUNetLearns(t *testing.T) {
	rng := tensor.NewRNG(3)
	u := NewUNet(rng, UNetOptions{Base: 8, MaxT: 100}, tensor.Float32)
	s, err := Linear(100, 1e-4, 0.02)
	require.NoError(t, err)
	x0 := tensor.MulScalar(tensor.Sign(Noise(rng, tensor.Float32, 4, 1, 8, 8)), 0.8)
	eps := Noise(rng, tensor.Float32, 4, 1, 8, 8)
	ts := []int{10, 40, 70, 100}
	ps := u.Params()
	opt := optim.NewAdam(nn.Values(ps), optim.AdamOptions{LR: 3e-3})
	g := graph.New()
	var first, last float64
	for i := range 30 {
		g.Reset()
		l := s.LossAt(g, u.Forward, x0, eps, ts)
		if i == 0 {
			first = l.Item()
		}
		last = l.Item()
		grads := nn.Gradients(l, ps)
		if i == 5 {
			for j, gr := range grads {
				nonzero := false
				for _, v := range gr.Values() {
					nonzero = nonzero || v != 0
				}
				assert.True(t, nonzero, "gradient of %s", ps[j].Name)
			}
		}
		require.NoError(t, opt.Step(grads))
	}
	t.Logf("loss %.4f → %.4f", first, last)
	assert.InDelta(t, 1, first, 0.3)
	assert.Less(t, last, 0.3*first)
}

func TestUNetBadInput(t *testing.T) {
	assert.Contains(t, panicMessage(func() { NewUNet(tensor.NewRNG(1), UNetOptions{Base: 12, Groups: 8}, tensor.Float32) }),
		"diffusion.NewUNet: invalid configuration")
	assert.Contains(t, panicMessage(func() { NewUNet(tensor.NewRNG(1), UNetOptions{Base: 8, Heads: 3}, tensor.Float32) }),
		"heads 2·Base")
	u := NewUNet(tensor.NewRNG(1), UNetOptions{Base: 8, MaxT: 10}, tensor.Float32)
	g := graph.New()
	for _, c := range []struct {
		shape []int
		t     []int
		want  string
	}{
		{[]int{2, 784}, []int{1, 1}, "input shape (2, 784) does not fit: want (N, 1, H, W) with H and W positive multiples of 4"},
		{[]int{2, 1, 30, 30}, []int{1, 1}, "input shape (2, 1, 30, 30) does not fit"},
		{[]int{2, 3, 28, 28}, []int{1, 1}, "input shape (2, 3, 28, 28) does not fit"},
		{[]int{2, 1, 28, 28}, []int{1}, "1 time steps for a batch of 2"},
		{[]int{2, 1, 28, 28}, []int{1, 11}, "time step 11 outside 0…10"},
	} {
		msg := panicMessage(func() { u.Forward(g.Const(tensor.Zeros(tensor.Float32, c.shape...)), c.t) })
		assert.Contains(t, msg, "diffusion.UNet(channels 1, base 8)")
		assert.Contains(t, msg, c.want)
	}
	msg := panicMessage(func() { u.Forward(g.Const(tensor.Zeros(tensor.Float64, 1, 1, 28, 28)), []int{1}) })
	assert.Contains(t, msg, "float64")
}
