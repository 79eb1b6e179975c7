//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// TestOptimisersOnGPU runs three steps of every optimiser and option of
// package optim on GPU parameters and on the same parameters on the CPU,
// with the same gradients, then compares the parameters and every state
// buffer. The kernels perform the CPU loops' operations in the same
// order, each correctly rounded (--fmad=false), so they should agree to
// the bit; the tolerance, 4ε relative, allows for a last-bit difference
// in a square root or division. Gradient clipping by value and by global
// norm runs on the device too.
func TestOptimisersOnGPU(t *testing.T) {
	d := device(t)
	type maker func([]*tensor.Tensor) optim.Optimizer
	cases := []struct {
		name string
		make maker
	}{
		{"Adam", func(p []*tensor.Tensor) optim.Optimizer { return optim.NewAdam(p, optim.AdamOptions{LR: 1e-2}) }},
		{"Adam+L2+AMSGrad", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdam(p, optim.AdamOptions{LR: 1e-2, WeightDecay: 0.1, AMSGrad: true})
		}},
		{"AdamW", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdamW(p, optim.AdamOptions{LR: 1e-2, WeightDecay: 0.05, Beta1: 0.3})
		}},
		{"SGD", func(p []*tensor.Tensor) optim.Optimizer { return optim.NewSGD(p, optim.SGDOptions{LR: 0.1}) }},
		{"SGD+momentum+dampening+L2", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDOptions{LR: 0.1, Momentum: 0.9, Dampening: 0.2, WeightDecay: 1e-2})
		}},
		{"SGD+Nesterov", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDOptions{LR: 0.05, Momentum: 0.8, Nesterov: true})
		}},
		{"RMSProp", func(p []*tensor.Tensor) optim.Optimizer { return optim.NewRMSProp(p, optim.RMSPropOptions{LR: 1e-2}) }},
		{"RMSProp+centred+momentum+L2", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewRMSProp(p, optim.RMSPropOptions{LR: 1e-2, Centered: true, Momentum: 0.9, WeightDecay: 1e-3})
		}},
		{"Adagrad", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdagrad(p, optim.AdagradOptions{LR: 0.1, LRDecay: 0.01, WeightDecay: 1e-2, InitialAccumulator: 0.1})
		}},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				shapes := [][]int{{37, 29}, {29}, {70001}} // the last one spans many blocks
				var cpu, gpu []*tensor.Tensor
				names := make([]string, len(shapes))
				for i, s := range shapes {
					p := randn(dt, uint64(40+i), s...)
					cpu, gpu = append(cpu, p), append(gpu, p.To(d))
					names[i] = fmt.Sprintf("p%d", i)
				}
				oc, og := c.make(cpu), c.make(gpu)
				for step := range 3 {
					var gc, gg []*tensor.Tensor
					for i, s := range shapes {
						g := tensor.MulScalar(randn(dt, uint64(100*step+i), s...), float64(step+1))
						gc, gg = append(gc, g), append(gg, g.To(d))
					}
					if step == 1 {
						// Clipping on each device; the norms are summed in
						// different orders, so the clipped gradients agree
						// within a rounding of the norm, and the CPU's go to
						// both optimisers, whose steps must agree to the bit.
						optim.ClipByValue(gc, 2.5)
						optim.ClipByValue(gg, 2.5)
						nc, ng := optim.ClipByGlobalNorm(gc, 50), optim.ClipByGlobalNorm(gg, 50)
						if math.Abs(nc-ng) > 1e-12*nc || nc < 50 {
							t.Fatalf("global norm %v on the GPU, %v on the CPU (above 50, so that it clips)", ng, nc)
						}
						for i := range gc {
							near(t, "clipped "+names[i], gg[i], gc[i], 1e-12+4*eps(dt))
							gg[i] = gc[i].To(d)
						}
					}
					if err := oc.Step(gc); err != nil {
						t.Fatal(err)
					}
					if err := og.Step(gg); err != nil {
						t.Fatal(err)
					}
				}
				for i := range shapes {
					near(t, names[i], gpu[i], cpu[i], 4*eps(dt))
				}
				sc, sg := oc.State(names), og.State(names)
				if len(sc) != len(sg) || len(sc) < 2 {
					t.Fatalf("state has %d entries on the GPU, %d on the CPU", len(sg), len(sc))
				}
				for k, v := range sc {
					if strings.Contains(k, ".") {
						near(t, k, sg[k], v, 4*eps(dt))
					}
				}
				// The GPU state loads back into the GPU optimiser (its
				// checks read the buffers on the host).
				if err := og.LoadState(names, sg); err != nil {
					t.Fatalf("LoadState of the GPU optimiser's own state: %v", err)
				}
			})
		}
	}
}

// TestLBFGSRefusesGPU: L-BFGS runs on the CPU and says so.
func TestLBFGSRefusesGPU(t *testing.T) {
	d := device(t)
	x := []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3).To(d)}
	_, err := optim.Minimize(func(x, g []*tensor.Tensor) (float64, error) { return 0, nil }, x, optim.LBFGSOptions{})
	if err == nil || !strings.Contains(err.Error(), "L-BFGS runs on the CPU") {
		t.Fatalf("Minimize on GPU parameters: %v, want an error saying L-BFGS runs on the CPU", err)
	}
}
