package optim

import (
	"github.com/gradus-ml/gradus/tensor"
)

// AdagradOptions configures NewAdagrad. Zero-valued fields take PyTorch's
// defaults (LR 1e-2, Eps 1e-10; LRDecay, WeightDecay and
// InitialAccumulator 0); set NoDefaults to take every field literally.
type AdagradOptions struct {
	LR                 float64 // learning rate
	LRDecay            float64 // the rate at step t is LR / (1 + (t−1)·LRDecay)
	WeightDecay        float64 // L2 penalty added to the gradient
	InitialAccumulator float64 // starting value of the sum of squared gradients
	Eps                float64 // added to the denominator
	NoDefaults         bool    // take every field literally
}

// Adagrad is the Adagrad optimiser with the semantics of
// torch.optim.Adagrad. At step t, with g the gradient plus λp:
//
//	s ← s + g²,   p ← p − lr/(1 + (t−1)·decay) · g / (√s + ε)
type Adagrad struct {
	base
	cfg AdagradOptions
	sum []*tensor.Tensor
}

// NewAdagrad returns an Adagrad optimiser for params. It panics with a
// *tensor.Error if a parameter is not a contiguous float32/float64 tensor
// or a hyperparameter is negative.
func NewAdagrad(params []*tensor.Tensor, cfg AdagradOptions) *Adagrad {
	if !cfg.NoDefaults {
		def(&cfg.LR, 1e-2)
		def(&cfg.Eps, 1e-10)
	}
	o := &Adagrad{base: newBase("Adagrad", params, cfg.LR), cfg: cfg}
	checkNonNeg("NewAdagrad", "LRDecay", cfg.LRDecay)
	checkNonNeg("NewAdagrad", "WeightDecay", cfg.WeightDecay)
	checkNonNeg("NewAdagrad", "InitialAccumulator", cfg.InitialAccumulator)
	checkNonNeg("NewAdagrad", "Eps", cfg.Eps)
	o.sum = o.addSquareSlots("sum")
	for _, s := range o.sum {
		s.Fill(cfg.InitialAccumulator)
	}
	return o
}

// Step applies one Adagrad update in place. It returns an error and
// changes nothing if the gradients do not match the parameters or are not
// finite. It allocates nothing but the goroutines that split parameters of
// 64Ki elements or more over the cores.
func (o *Adagrad) Step(grads []*tensor.Tensor) error {
	if err := o.check(grads); err != nil {
		return err
	}
	c := o.cfg
	clr := o.lr / (1 + float64(o.step)*c.LRDecay)
	for i, p := range o.params {
		if kern.DeviceUpdate("adagrad", p, grads[i], [3]*tensor.Tensor{o.sum[i]}, [8]float64{-clr, c.Eps, c.WeightDecay}) {
			continue
		}
		if p.DType() == tensor.Float32 {
			adagradSplit(p.Float32s(), grads[i].Float32s(), o.sum[i].Float32s(), float32(-clr), float32(c.Eps), float32(c.WeightDecay))
		} else {
			adagradSplit(p.Float64s(), grads[i].Float64s(), o.sum[i].Float64s(), -clr, c.Eps, c.WeightDecay)
		}
	}
	o.step++
	return nil
}

// adagradUpdate follows torch's _single_tensor_adagrad element by element.
func adagradUpdate[T tensor.Float](p, g, sum []T, negLR, eps, wd T) {
	g, sum = g[:len(p)], sum[:len(p)]
	for i := range p {
		gi := g[i]
		if wd != 0 {
			gi += wd * p[i]
		}
		sum[i] += gi * gi
		p[i] += negLR * (gi / (sqrt(sum[i]) + eps))
	}
}
