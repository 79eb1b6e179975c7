package nn

import (
	"fmt"
	"sync"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Dropout zeroes each element of its input with probability P in training
// mode and scales the rest by 1/(1−P), so the expected output equals the
// input (inverted dropout, as PyTorch's nn.Dropout). In evaluation mode it
// is the identity. Masks come from the seeded RNG given to NewDropout, so a
// run is reproducible; the RNG is the layer's state beyond its (absent)
// parameters, listed by RNGs so that checkpoints save and restore it.
//
// Concurrency: a tensor.RNG is not safe for concurrent use. Forward holds
// a lock while it draws a mask, so one Dropout may be called from several
// goroutines without a data race, but the masks each goroutine gets then
// depend on the scheduling, and the lock does not cover other users of
// the same RNG (two Dropouts built with one RNG, or code drawing from it
// directly) running at the same time. For concurrent forward passes that
// are reproducible and race-free, give each goroutine its own model
// replica with its own Dropout and its own RNG (for example
// tensor.NewRNG(parent.Uint64()) per goroutine).
type Dropout struct {
	mode
	P   float64 // probability of zeroing an element in training mode
	rng *tensor.RNG
	mu  sync.Mutex // guards rng while Forward draws a mask
}

// NewDropout returns a dropout layer with probability p drawing its masks
// from rng. It panics unless 0 ≤ p ≤ 1.
func NewDropout(rng *tensor.RNG, p float64) *Dropout {
	checkRNG("nn.NewDropout", rng)
	if !(p >= 0 && p <= 1) {
		tensor.Fail("nn.NewDropout", "probability %v is not in [0, 1]", p)
	}
	return &Dropout{P: p, rng: rng}
}

// String names the layer, e.g. "Dropout(p=0.5)".
func (d *Dropout) String() string { return fmt.Sprintf("Dropout(p=%g)", d.P) }

// RNGs returns the layer's random stream under the name "mask" (see
// Stochastic).
func (d *Dropout) RNGs() []NamedRNG { return []NamedRNG{{Name: "mask", RNG: d.rng}} }

// Params returns nil: dropout has no parameters.
func (d *Dropout) Params() []NamedParam { return nil }

// Forward applies dropout to x in training mode and returns x itself in
// evaluation mode or when P is 0.
func (d *Dropout) Forward(x *graph.Node) *graph.Node {
	if x == nil {
		tensor.Fail(d.String(), "nil input")
	}
	if d.eval || d.P == 0 {
		return x
	}
	g := x.Graph()
	// The mask is a constant (no gradient flows to it) drawn on the host:
	// on the CPU in the graph's pool, so a training loop does not
	// allocate one per step; for a GPU graph in a host tensor, from the
	// same stream, which the graph copies in.
	mask := g.AllocHost(x.DType(), x.Shape()...)
	keep, scale := 1-d.P, 0.0
	if keep > 0 {
		scale = 1 / keep
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch x.DType() {
	case tensor.Float32:
		m := mask.Float32s()
		for i := range m {
			m[i] = 0
			if d.rng.Float64() < keep {
				m[i] = float32(scale)
			}
		}
	default:
		m := mask.Float64s()
		for i := range m {
			m[i] = 0
			if d.rng.Float64() < keep {
				m[i] = scale
			}
		}
	}
	return graph.Mul(x, g.Const(mask))
}
