package optim

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// SGDOptions configures NewSGD. The zero value of every field except LR is
// PyTorch's default; LR 0 means the default 1e-3 unless NoDefaults is set.
type SGDOptions struct {
	LR          float64 // learning rate (default 1e-3)
	Momentum    float64 // momentum factor μ (0: plain SGD)
	Dampening   float64 // dampening τ of the momentum buffer
	Nesterov    bool    // Nesterov momentum (needs Momentum > 0 and Dampening 0)
	WeightDecay float64 // L2 penalty λ, added to the gradient
	NoDefaults  bool    // take LR literally, so LR 0 is a real 0
}

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and L2 weight decay, with the semantics of
// torch.optim.SGD: with d = g + λp,
//
//	b ← d on the first step, else b ← μb + (1−τ)d
//	d ← d + μb (Nesterov) or d ← b (momentum)
//	p ← p − lr·d
type SGD struct {
	base
	cfg SGDOptions
	buf []*tensor.Tensor // momentum buffers, nil without momentum
}

// NewSGD returns an SGD optimiser for params. It panics with a
// *tensor.Error if a parameter is not a contiguous float32/float64 tensor
// or the configuration is invalid (negative values, Nesterov without
// momentum or with dampening), as torch.optim.SGD does.
func NewSGD(params []*tensor.Tensor, cfg SGDOptions) *SGD {
	if cfg.LR == 0 && !cfg.NoDefaults {
		cfg.LR = 1e-3
	}
	o := &SGD{base: newBase("SGD", params, cfg.LR), cfg: cfg}
	for _, v := range []struct {
		name string
		x    float64
	}{{"Momentum", cfg.Momentum}, {"Dampening", cfg.Dampening}, {"WeightDecay", cfg.WeightDecay}} {
		if !(v.x >= 0) || math.IsInf(v.x, 0) {
			tensor.Fail("NewSGD", "%s %g must be finite and >= 0", v.name, v.x)
		}
	}
	if cfg.Nesterov && (cfg.Momentum <= 0 || cfg.Dampening != 0) {
		tensor.Fail("NewSGD", "Nesterov momentum needs Momentum > 0 and Dampening 0, got %g and %g", cfg.Momentum, cfg.Dampening)
	}
	if cfg.Momentum != 0 {
		o.buf = o.addSlots("momentum_buffer")
	}
	return o
}

// Step applies one SGD update in place. It returns an error and changes
// nothing if the gradients do not match the parameters or are not finite.
// It allocates nothing but the goroutines that split parameters of
// 64Ki elements or more over the cores.
func (o *SGD) Step(grads []*tensor.Tensor) error {
	if err := o.check(grads); err != nil {
		return err
	}
	first := o.step == 0
	c := o.cfg
	for i, p := range o.params {
		var b *tensor.Tensor
		if o.buf != nil {
			b = o.buf[i]
		}
		h := [8]float64{o.lr, c.Momentum, 1 - c.Dampening, c.WeightDecay, b2f(first), b2f(c.Nesterov)}
		if kern.DeviceUpdate("sgd", p, grads[i], [3]*tensor.Tensor{b}, h) {
			continue
		}
		if p.DType() == tensor.Float32 {
			sgdSplit(p.Float32s(), grads[i].Float32s(), f32(b), float32(o.lr), float32(c.Momentum), float32(1-c.Dampening), float32(c.WeightDecay), first, c.Nesterov)
		} else {
			sgdSplit(p.Float64s(), grads[i].Float64s(), f64(b), o.lr, c.Momentum, 1-c.Dampening, c.WeightDecay, first, c.Nesterov)
		}
	}
	o.step++
	return nil
}

// b2f is 1 for true and 0 for false, a flag among a GPU update's scalars.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sgdUpdate follows torch's _single_tensor_sgd element by element; keep1
// is 1 − dampening.
func sgdUpdate[T tensor.Float](p, g, buf []T, lr, mom, keep1, wd T, first, nesterov bool) {
	g = g[:len(p)]
	for i := range p {
		d := g[i]
		if wd != 0 {
			d += wd * p[i]
		}
		if mom != 0 {
			if first {
				buf[i] = d
			} else {
				buf[i] = buf[i]*mom + keep1*d
			}
			if nesterov {
				d += mom * buf[i]
			} else {
				d = buf[i]
			}
		}
		p[i] -= lr * d
	}
}
