package optim

import (
	"math"

	"github.com/gradus-ml/gradus/internal/unchecked"
	"github.com/gradus-ml/gradus/tensor"
)

// kern holds tensor's trusted kernels; the optimisers take their GPU
// updates from it.
var kern = unchecked.Get[*tensor.Tensor, tensor.ConvParams, tensor.PoolParams]()

// AdamOptions configures NewAdam and NewAdamW. Zero-valued fields take
// PyTorch's defaults (LR 1e-3, Beta1 0.9, Beta2 0.999, Eps 1e-8;
// WeightDecay 0 for Adam and 1e-2 for AdamW). Set NoDefaults to take every
// field literally, e.g. to ask for Beta1 0 or AdamW without decay; the
// fields must then all be set.
type AdamOptions struct {
	LR          float64 // learning rate
	Beta1       float64 // decay of the first-moment average, in [0, 1)
	Beta2       float64 // decay of the second-moment average, in [0, 1)
	Eps         float64 // added to the denominator
	WeightDecay float64 // Adam: L2 penalty added to the gradient; AdamW: decoupled decay
	AMSGrad     bool    // use the running maximum of the second moment
	NoDefaults  bool    // take every field literally
}

// Adam is the Adam optimiser (Kingma & Ba) with the semantics of
// torch.optim.Adam, or of torch.optim.AdamW when made by NewAdamW. At step
// t, with g the gradient (plus λp for Adam's L2 weight decay):
//
//	p ← p·(1 − lr·λ)                        (AdamW only)
//	m ← β₁m + (1−β₁)g,   v ← β₂v + (1−β₂)g²   (v̂ ← max(v̂, v) with AMSGrad)
//	p ← p − lr/(1−β₁ᵗ) · m / (√v / √(1−β₂ᵗ) + ε)
type Adam struct {
	base
	cfg       AdamOptions
	decoupled bool
	m, v, vm  []*tensor.Tensor // exp_avg, exp_avg_sq, max_exp_avg_sq (AMSGrad only)
}

// NewAdam returns an Adam optimiser for params; WeightDecay is an L2
// penalty added to the gradient, as in torch.optim.Adam. It panics with a
// *tensor.Error if a parameter is not a contiguous float32/float64 tensor
// or a hyperparameter is out of range.
func NewAdam(params []*tensor.Tensor, cfg AdamOptions) *Adam {
	return newAdam("Adam", params, cfg, false)
}

// NewAdamW returns an AdamW optimiser for params: weight decay is
// decoupled from the gradient (p ← p·(1 − lr·λ) before the Adam update,
// as in torch.optim.AdamW) and defaults to 1e-2. It panics like NewAdam.
func NewAdamW(params []*tensor.Tensor, cfg AdamOptions) *Adam {
	return newAdam("AdamW", params, cfg, true)
}

func newAdam(name string, params []*tensor.Tensor, cfg AdamOptions, decoupled bool) *Adam {
	if !cfg.NoDefaults {
		def(&cfg.LR, 1e-3)
		def(&cfg.Beta1, 0.9)
		def(&cfg.Beta2, 0.999)
		def(&cfg.Eps, 1e-8)
		if decoupled {
			def(&cfg.WeightDecay, 1e-2)
		}
	}
	o := &Adam{base: newBase(name, params, cfg.LR), cfg: cfg, decoupled: decoupled}
	op := "New" + name
	checkRange(op, "Beta1", cfg.Beta1, 0, 1)
	checkRange(op, "Beta2", cfg.Beta2, 0, 1)
	checkNonNeg(op, "Eps", cfg.Eps)
	checkNonNeg(op, "WeightDecay", cfg.WeightDecay)
	o.m = o.addSlots("exp_avg")
	o.v = o.addSquareSlots("exp_avg_sq")
	if cfg.AMSGrad {
		o.vm = o.addSquareSlots("max_exp_avg_sq")
	}
	return o
}

// def sets *x to d when it is zero.
func def(x *float64, d float64) {
	if *x == 0 {
		*x = d
	}
}

func checkNonNeg(op, name string, x float64) {
	if !(x >= 0) || math.IsInf(x, 0) {
		tensor.Fail(op, "%s %g must be finite and >= 0", name, x)
	}
}

// checkRange requires lo <= x < hi.
func checkRange(op, name string, x, lo, hi float64) {
	if !(x >= lo && x < hi) {
		tensor.Fail(op, "%s %g must be in [%g, %g)", name, x, lo, hi)
	}
}

// Step applies one Adam (or AdamW) update in place. It returns an error
// and changes nothing if the gradients do not match the parameters or are
// not finite. It allocates nothing but the goroutines that split parameters of
// 64Ki elements or more over the cores.
func (o *Adam) Step(grads []*tensor.Tensor) error {
	if err := o.check(grads); err != nil {
		return err
	}
	t := float64(o.step + 1)
	c := o.cfg
	// Scalars are worked out in float64 as PyTorch does in Python, then
	// rounded once to the parameter's dtype.
	h := adamHyper{
		decay:    1,
		l2:       0,
		w1:       1 - c.Beta1,
		b2:       c.Beta2,
		w2:       1 - c.Beta2,
		stepSize: -o.lr / (1 - math.Pow(c.Beta1, t)),
		invBC2:   1 / math.Sqrt(1-math.Pow(c.Beta2, t)),
		eps:      c.Eps,
	}
	if o.decoupled {
		h.decay = 1 - o.lr*c.WeightDecay
	} else {
		h.l2 = c.WeightDecay
	}
	hd := [8]float64{h.w1, h.b2, h.w2, h.stepSize, h.invBC2, h.eps, h.decay, h.l2}
	for i, p := range o.params {
		var vm *tensor.Tensor
		if o.vm != nil {
			vm = o.vm[i]
		}
		if kern.DeviceUpdate("adam", p, grads[i], [3]*tensor.Tensor{o.m[i], o.v[i], vm}, hd) {
			continue
		}
		if p.DType() == tensor.Float32 {
			adamSplit(p.Float32s(), grads[i].Float32s(), o.m[i].Float32s(), o.v[i].Float32s(), f32(vm), h)
		} else {
			adamSplit(p.Float64s(), grads[i].Float64s(), o.m[i].Float64s(), o.v[i].Float64s(), f64(vm), h)
		}
	}
	o.step++
	return nil
}

type adamHyper struct {
	decay, l2, w1, b2, w2, stepSize, invBC2, eps float64
}

// adamUpdate follows torch's _single_tensor_adam element by element; vm is
// nil without AMSGrad. The denominator √v/√(1−β₂ᵗ) + ε is computed as
// √v·c + ε with c = 1/√(1−β₂ᵗ) worked out once in float64: the same value
// to within one rounding, without a division per element. Each combination
// of options has its own loop so the hot loop carries no branches.
func adamUpdate[T tensor.Float](p, g, m, v, vm []T, hp adamHyper) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	if vm != nil {
		vm = vm[:len(p)]
	}
	// torch.lerp evaluates from the nearer end; the moving average weight
	// is fixed for the whole step, so pick the form here.
	// Multiplying by decay = 1 is exact, so Adam and AdamW share a loop.
	if hp.l2 == 0 && vm == nil && hp.w1 < 0.5 {
		k := adamConsts[T]{T(hp.w1), T(hp.b2), T(hp.w2), T(hp.stepSize), T(hp.invBC2), T(hp.eps), T(hp.decay)}
		n := adamBlocks(p, g, m, v, &k)
		adamPlain(p[n:], g[n:], m[n:], v[n:], &k)
		return
	}
	adamGeneral(p, g, m, v, vm, hp)
}

// adamConsts are the per-step scalars of the plain update, rounded to the
// parameters' dtype, in the order the vector kernel reads them.
type adamConsts[T tensor.Float] struct {
	w1, b2, w2, stepSize, c, eps, decay T
}

// adamPlain is the update without L2 penalty or AMSGrad (decoupled decay
// allowed), for w1 < 1/2 (lerp from m). adamAVX2F32 performs exactly these
// operations.
func adamPlain[T tensor.Float](p, g, m, v []T, k *adamConsts[T]) {
	w1, b2, w2, stepSize, c, eps, decay := k.w1, k.b2, k.w2, k.stepSize, k.c, k.eps, k.decay
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := g[i]
		// T(·) rounds each product before the addition that follows, so
		// no build (GOAMD64=v3 fuses into FMAs) departs from the kernel.
		mi := m[i] + T(w1*(gi-m[i]))
		vi := T(v[i]*b2) + T(T(w2*gi)*gi)
		m[i], v[i] = mi, vi
		p[i] = T(p[i]*decay) + T(stepSize*(mi/(T(sqrt(vi)*c)+eps)))
	}
}

// adamGeneral handles weight decay (decoupled or L2), AMSGrad and any w1;
// the option tests are loop-invariant, so they predict perfectly.
func adamGeneral[T tensor.Float](p, g, m, v, vm []T, hp adamHyper) {
	decay, l2, w1, b2, w2 := T(hp.decay), T(hp.l2), T(hp.w1), T(hp.b2), T(hp.w2)
	stepSize, c, eps := T(hp.stepSize), T(hp.invBC2), T(hp.eps)
	for i := range p {
		if decay != 1 {
			p[i] *= decay
		}
		gi := g[i]
		if l2 != 0 {
			gi += T(l2 * p[i])
		}
		m[i] = lerp(m[i], gi, w1)
		v[i] = T(v[i]*b2) + T(T(w2*gi)*gi)
		vi := v[i]
		if vm != nil {
			vm[i] = max(vm[i], vi)
			vi = vm[i]
		}
		p[i] += T(stepSize * (m[i] / (T(sqrt(vi)*c) + eps)))
	}
}
