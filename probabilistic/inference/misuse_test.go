package inference

import (
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
)

// The convergence diagnostics panic with a *tensor.Error naming the
// diagnostic, the chains' fault and the caller's line.
func TestDiagnosticsMisusePanicsNameCallAndCaller(t *testing.T) {
	four := []float64{1, 2, 3, 4}
	cases := []struct {
		name, op, site string
		f              func()
		frag           string
	}{
		{"no chains", "inference.Rhat", numtest.Here(), func() { Rhat(nil) }, "no chains"},
		{"short chain", "inference.BulkESS", numtest.Here(), func() { BulkESS([][]float64{{1, 2, 3}}) }, "chain 0 has 3 draws"},
		{"unequal chains", "inference.TailESS", numtest.Here(), func() { TailESS([][]float64{four, {1, 2, 3, 4, 5}}) }, "chain 1 has 5 draws, chain 0 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			numtest.Misuse(t, c.op, c.site, c.f, c.frag)
		})
	}
}
