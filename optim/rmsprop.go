package optim

import (
	"github.com/gradus-ml/gradus/tensor"
)

// RMSPropOptions configures NewRMSProp. Zero-valued fields take PyTorch's
// defaults (LR 1e-2, Alpha 0.99, Eps 1e-8; Momentum, WeightDecay 0); set
// NoDefaults to take every field literally.
type RMSPropOptions struct {
	LR          float64 // learning rate
	Alpha       float64 // decay of the squared-gradient average, in [0, 1)
	Eps         float64 // added to the denominator
	Momentum    float64 // momentum factor (0: none)
	Centered    bool    // normalise by the variance estimate instead of the second moment
	WeightDecay float64 // L2 penalty added to the gradient
	NoDefaults  bool    // take every field literally
}

// RMSProp is the RMSProp optimiser with the semantics of
// torch.optim.RMSprop. With g the gradient plus λp:
//
//	s ← αs + (1−α)g²
//	a ← αa + (1−α)g,  σ = √(s − a²) + ε    (Centered; else σ = √s + ε)
//	b ← μb + g/σ,  p ← p − lr·b            (Momentum; else p ← p − lr·g/σ)
type RMSProp struct {
	base
	cfg           RMSPropOptions
	sq, avg, mbuf []*tensor.Tensor // square_avg, grad_avg (Centered), momentum_buffer (Momentum)
}

// NewRMSProp returns an RMSProp optimiser for params. It panics with a
// *tensor.Error if a parameter is not a contiguous float32/float64 tensor
// or a hyperparameter is out of range.
func NewRMSProp(params []*tensor.Tensor, cfg RMSPropOptions) *RMSProp {
	if !cfg.NoDefaults {
		def(&cfg.LR, 1e-2)
		def(&cfg.Alpha, 0.99)
		def(&cfg.Eps, 1e-8)
	}
	o := &RMSProp{base: newBase("RMSProp", params, cfg.LR), cfg: cfg}
	checkRange("NewRMSProp", "Alpha", cfg.Alpha, 0, 1)
	checkNonNeg("NewRMSProp", "Eps", cfg.Eps)
	checkNonNeg("NewRMSProp", "Momentum", cfg.Momentum)
	checkNonNeg("NewRMSProp", "WeightDecay", cfg.WeightDecay)
	o.sq = o.addSquareSlots("square_avg")
	if cfg.Momentum > 0 {
		o.mbuf = o.addSlots("momentum_buffer")
	}
	if cfg.Centered {
		o.avg = o.addSlots("grad_avg")
	}
	return o
}

// Step applies one RMSProp update in place. It returns an error and
// changes nothing if the gradients do not match the parameters or are not
// finite. It allocates nothing but the goroutines that split parameters of
// 64Ki elements or more over the cores.
func (o *RMSProp) Step(grads []*tensor.Tensor) error {
	if err := o.check(grads); err != nil {
		return err
	}
	c := o.cfg
	for i, p := range o.params {
		var avg, mbuf *tensor.Tensor
		if o.avg != nil {
			avg = o.avg[i]
		}
		if o.mbuf != nil {
			mbuf = o.mbuf[i]
		}
		h := [8]float64{-o.lr, c.Alpha, 1 - c.Alpha, c.Eps, c.Momentum, c.WeightDecay}
		if kern.DeviceUpdate("rmsprop", p, grads[i], [3]*tensor.Tensor{o.sq[i], avg, mbuf}, h) {
			continue
		}
		if p.DType() == tensor.Float32 {
			rmspropSplit(p.Float32s(), grads[i].Float32s(), o.sq[i].Float32s(), f32(avg), f32(mbuf),
				float32(-o.lr), float32(c.Alpha), float32(1-c.Alpha), float32(c.Eps), float32(c.Momentum), float32(c.WeightDecay))
		} else {
			rmspropSplit(p.Float64s(), grads[i].Float64s(), o.sq[i].Float64s(), f64(avg), f64(mbuf),
				-o.lr, c.Alpha, 1-c.Alpha, c.Eps, c.Momentum, c.WeightDecay)
		}
	}
	o.step++
	return nil
}

// rmspropUpdate follows torch's _single_tensor_rmsprop element by element;
// avg is nil unless centered, mbuf nil without momentum.
func rmspropUpdate[T tensor.Float](p, g, sq, avg, mbuf []T, negLR, alpha, w, eps, mom, wd T) {
	g, sq = g[:len(p)], sq[:len(p)]
	for i := range p {
		gi := g[i]
		if wd != 0 {
			gi += wd * p[i]
		}
		sq[i] = sq[i]*alpha + w*gi*gi
		var sigma T
		if avg != nil {
			avg[i] = lerp(avg[i], gi, w)
			// s − a² ≥ 0 in exact arithmetic; clamp so rounding cannot
			// produce the square root of a tiny negative number.
			sigma = sqrt(max(sq[i]-avg[i]*avg[i], 0)) + eps
		} else {
			sigma = sqrt(sq[i]) + eps
		}
		if mbuf != nil {
			mbuf[i] = mbuf[i]*mom + gi/sigma
			p[i] += negLR * mbuf[i]
		} else {
			p[i] += negLR * (gi / sigma)
		}
	}
}
