package vae

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Masking noise drops about Drop of the entries and keeps the rest as they
// were; on data with structure (each row one of four binary prototypes) a
// short training run reconstructs clean rows from corrupted ones far
// better than the corrupted input itself does.
func TestDAE(t *testing.T) {
	rng := tensor.NewRNG(1)
	m := NewDAE(rng, DAEOptions{Input: 16, Hidden: []int{12}, Code: 4, Drop: 0.3, DType: tensor.Float64})
	x := tensor.Ones(tensor.Float64, 200, 16)
	cx := m.Corrupt(x, tensor.NewRNG(2)).Values()
	zeros := 0
	for _, v := range cx {
		if v == 0 {
			zeros++
		}
	}
	assert.InDelta(t, 0.3, float64(zeros)/float64(len(cx)), 0.02)

	protos := make([]float64, 4*16)
	for p := range 4 {
		for j := range 16 {
			if (j/4 == p) || (j%4 == p) {
				protos[p*16+j] = 1
			}
		}
	}
	data := make([]float64, 0, 64*16)
	for i := range 64 {
		data = append(data, protos[(i%4)*16:(i%4+1)*16]...)
	}
	clean := tensor.FromFloat64s(data, 64, 16)
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 0.02})
	g := graph.New()
	for range 300 {
		g.Reset()
		loss := m.Loss(g.Const(m.Corrupt(clean, rng)), g.Const(clean))
		require.NoError(t, opt.Step(nn.Gradients(loss, m.Params())))
	}
	g.Reset()
	noisy := m.Corrupt(clean, tensor.NewRNG(3))
	rec := graph.Sigmoid(m.Reconstruct(g.Const(noisy))).Value().Values()
	wrongRec, wrongNoisy := 0, 0
	for i, c := range data {
		if (rec[i] > 0.5) != (c > 0.5) {
			wrongRec++
		}
		if noisy.Values()[i] != c {
			wrongNoisy++
		}
	}
	assert.Greater(t, wrongNoisy, 100, "the corruption flips about 30 % of the 448 ones")
	assert.Less(t, wrongRec, wrongNoisy/10, "reconstructed pixels wrong: %d, corrupted ones: %d", wrongRec, wrongNoisy)
	assert.Panics(t, func() { NewDAE(rng, DAEOptions{Input: 16, Code: 4, Drop: 1}) })
	assert.Panics(t, func() { NewDAE(rng, DAEOptions{Input: 16, Hidden: []int{0}, Code: 4}) })
	assert.Equal(t, tensor.Float32, NewDAE(rng, DAEOptions{Input: 3, Code: 2}).Encoder.Params()[0].Value.DType())
}
