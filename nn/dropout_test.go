package nn_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// A Sequential lists its Dropouts' streams under their layers' names, one
// RNG shared by two layers under both, and a layer without randomness
// lists none.
func TestRNGsNamesDropoutStreams(t *testing.T) {
	shared, own := tensor.NewRNG(1), tensor.NewRNG(2)
	a, b, c := nn.NewDropout(shared, 0.5), nn.NewDropout(shared, 0.1), nn.NewDropout(own, 0.2)
	inner := nn.NewSequential().Add("drop", b)
	m := nn.NewSequential(a, nn.ReLU{}, inner, c)
	rs := nn.RNGs(m)
	require.Len(t, rs, 3)
	assert.Equal(t, "0.mask", rs[0].Name)
	assert.Equal(t, "2.drop.mask", rs[1].Name)
	assert.Equal(t, "3.mask", rs[2].Name)
	assert.Same(t, shared, rs[0].RNG)
	assert.Same(t, shared, rs[1].RNG)
	assert.Same(t, own, rs[2].RNG)
	assert.Nil(t, nn.RNGs(nn.ReLU{}))
	assert.Nil(t, nn.RNGs(nn.NewLinear(own, 2, 2, true, tensor.Float32)))
}

// One Dropout called from several goroutines draws every mask element
// exactly once from its stream: afterwards the RNG is where a single
// goroutine making all the draws leaves it. (Unsynchronised draws lose or
// repeat some; the race detector also flags them.)
func TestDropoutConcurrentForwardDrawsEachElementOnce(t *testing.T) {
	const goroutines, calls, size = 8, 8, 4096
	d := nn.NewDropout(tensor.NewRNG(9), 0.5)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := graph.New()
			for range calls {
				g.Reset()
				d.Forward(g.Const(tensor.Ones(tensor.Float64, size)))
			}
		}()
	}
	wg.Wait()

	ref := tensor.NewRNG(9)
	for range goroutines * calls * size {
		ref.Float64()
	}
	want, err := ref.MarshalBinary()
	require.NoError(t, err)
	got, err := d.RNGs()[0].RNG.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
