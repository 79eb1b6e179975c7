package optim

import (
	"fmt"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkStep measures one update of a million parameters.
func BenchmarkStep(b *testing.B) {
	const n = 1 << 20
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			b.Run(fmt.Sprintf("%s/%v", k.name, dt), func(b *testing.B) {
				rng := tensor.NewRNG(1)
				p := rng.Normal(dt, 0, 1, n)
				g := []*tensor.Tensor{rng.Normal(dt, 0, 1, n)}
				opt := k.make([]*tensor.Tensor{p})
				b.SetBytes(int64(n * 4 * (1 + int(dt-tensor.Float32))))
				b.ReportAllocs()
				for b.Loop() {
					if err := opt.Step(g); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
