// The round trip of issue 30: every exported family re-imported by the
// importer (Read, Model.Run) gives Gradus's outputs, at the example's
// batch and, where the batch is dynamic, a larger one.

package onnx

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

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
