//go:build linux && (amd64 || arm64)

package autodiff_test

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
	_ "github.com/gradus-ml/gradus/tensor/cuda"
)

// gpuRun evaluates case f on inputs placed on dev: its value, and the
// gradient of the sum of its value with respect to every input, all
// brought back to the CPU. A *tensor.Error panic (an op without a GPU
// kernel) is returned as err.
func gpuRun(f func([]*graph.Node) *graph.Node, inputs []*tensor.Tensor, dev tensor.Device) (out []*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*tensor.Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	g := graph.New()
	xs := make([]*graph.Node, len(inputs))
	for i, in := range inputs {
		xs[i] = g.Var(in.To(dev))
	}
	y := f(xs)
	grads := autodiff.Grad(graph.Sum(y, nil, false), xs...)
	out = append(out, y.Value().To(tensor.CPU))
	for _, gr := range grads {
		if gr != nil {
			out = append(out, gr.Value().To(tensor.CPU))
		}
	}
	return out, nil
}

// amplified scales the tolerance of ops whose values amplify roundings
// by construction: gamma_p_deriv's derivatives in α (and implicit_gamma's
// slope, made of them) are five-point differences with steps h of 10⁻³ of
// α, which multiply the few-ulp differences between the device's exp,
// log and lgamma and Go's by up to 1.5/h = 3000 (α ≥ 0.5), as the op's
// documented accuracy (about 10⁻¹² relative at first order) says.
var amplified = map[string]float64{"probabilistic.gamma_p_deriv": 8, "probabilistic.implicit_gamma": 8}

// TestAllOpsOnGPU runs every gradient-check case of every registered op
// on the CUDA device and on the CPU, in float32 and float64: the value
// and the gradient of its sum (so the op's VJP rule runs on the device
// too) must agree within a few hundred roundings relative to
// max(1, |CPU value|) (the GPU's reductions and cuBLAS add in other
// orders). Ops that reach an operation without a GPU kernel are listed,
// with the first operation missing; every other failure fails the test.
func TestAllOpsOnGPU(t *testing.T) {
	dev, err := tensor.CUDA(0)
	if err != nil {
		if os.Getenv("GRADUS_CUDA_REQUIRE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var on []string
	missing := map[string]string{}
	names := make([]string, 0)
	for _, op := range graph.Registered() {
		names = append(names, op.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		worst := [2]float64{}
		for i, c := range opCases[name] {
			label := caseLabel(name, i, c)
			for k, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				inputs := c.inputs(tensor.NewRNG(seedOf(label)))
				for j, in := range inputs {
					inputs[j] = in.Cast(dt)
				}
				want, err := gpuRun(c.f, inputs, tensor.CPU)
				if err != nil {
					t.Fatalf("%s %v on the CPU: %v", label, dt, err)
				}
				got, err := gpuRun(c.f, inputs, dev)
				if err != nil {
					if _, seen := missing[name]; !seen {
						missing[name] = err.Error()
					}
					continue
				}
				eps := 0x1p-53
				if dt == tensor.Float32 {
					eps = 0x1p-24
				}
				limit := 512 * eps
				if f, ok := amplified[name]; ok {
					limit *= f
				}
				for j := range want {
					w, g := want[j].Values(), got[j].Values()
					for e := range w {
						d := math.Abs(g[e]-w[e]) / max(1, math.Abs(w[e]))
						if math.IsNaN(w[e]) != math.IsNaN(g[e]) || d > limit {
							t.Errorf("%s %v, result %d, element %d: %v on %v, %v on the CPU (difference %.3g eps)", label, dt, j, e, g[e], dev, w[e], d/eps)
							break
						}
						if !math.IsNaN(d) {
							worst[k] = max(worst[k], d/eps)
						}
					}
				}
			}
		}
		if _, bad := missing[name]; !bad {
			on = append(on, fmt.Sprintf("%s (%.0f, %.0f)", name, worst[0], worst[1]))
		}
	}
	t.Logf("%d ops run on %v with their VJPs; worst difference in float32 and float64 roundings: %s", len(on), dev, strings.Join(on, ", "))
	var no []string
	for _, name := range names {
		if m, ok := missing[name]; ok {
			no = append(no, name+": "+m)
		}
	}
	t.Logf("%d ops not yet on the GPU, with the first operation missing:\n%s", len(no), strings.Join(no, "\n"))
}
