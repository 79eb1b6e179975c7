// The round trip of issue 30: every exported family re-imported by the
// importer (Read, Model.Run) gives Gradus's outputs, at the example's
// batch and, where the batch is dynamic, a larger one, and has exactly
// the module's parameters and buffers as its own.

package onnx

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// paramNames returns the sorted, distinct names of ps.
func paramNames(ps []nn.NamedParam) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

func TestExportRoundTrip(t *testing.T) {
	for _, c := range exportCases() {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Export(&buf, c.m, c.in, c.opts); err != nil {
				t.Fatal(err)
			}
			m, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			// The re-import's parameters and buffers are the module's,
			// under its state-dict names, and nothing else.
			if got, want := paramNames(m.Params()), paramNames(c.m.Params()); !slices.Equal(got, want) {
				t.Errorf("re-imported parameters %v, want %v", got, want)
			}
			if got, want := paramNames(m.Buffers()), paramNames(nn.Buffers(c.m)); !slices.Equal(got, want) {
				t.Errorf("re-imported buffers %v, want %v", got, want)
			}
			inputs := [][]*tensor.Tensor{c.in}
			if c.dynamic {
				inputs = append(inputs, c.bigger())
			}
			for _, in := range inputs {
				got, err := m.Run(in...)
				if err != nil {
					t.Fatal(err)
				}
				want := c.outputs(in)
				if len(got) != len(want) {
					t.Fatalf("%d outputs, want %d", len(got), len(want))
				}
				for i := range want {
					tol := 1e-12
					if want[i].DType() == tensor.Float32 {
						tol = 1e-5
					}
					g, w := got[i].Contiguous().Values(), want[i].Contiguous().Values()
					if !slices.Equal(got[i].Shape(), want[i].Shape()) || got[i].DType() != want[i].DType() {
						t.Fatalf("output %d: %v %v, want %v %v", i, got[i].DType(), got[i].Shape(), want[i].DType(), want[i].Shape())
					}
					for k := range w {
						if math.Abs(g[k]-w[k]) > tol*(1+math.Abs(w[k])) {
							t.Fatalf("output %d element %d: %v, want %v", i, k, g[k], w[k])
						}
					}
				}
			}
		})
	}
}
