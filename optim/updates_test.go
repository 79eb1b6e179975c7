package optim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// Every hand case starts from p = (1, −2) and takes the gradients
// g₁ = (0.5, 0.1) then g₂ = (−0.2, 0.3). The expected values were worked
// out from the update formulas of the torch.optim documentation; the
// comments show the arithmetic, element 0 first.
var handCases = []struct {
	name         string
	make         func(p []*tensor.Tensor) Optimizer
	want1, want2 [2]float64
}{
	{
		name: "SGD lr=0.1",
		make: func(p []*tensor.Tensor) Optimizer { return NewSGD(p, SGDOptions{LR: 0.1}) },
		// p₁ = p − 0.1g₁ = (1 − 0.05, −2 − 0.01)
		want1: [2]float64{0.95, -2.01},
		// p₂ = p₁ − 0.1g₂ = (0.95 + 0.02, −2.01 − 0.03)
		want2: [2]float64{0.97, -2.04},
	},
	{
		name: "SGD momentum=0.9 dampening=0.5 wd=0.1",
		make: func(p []*tensor.Tensor) Optimizer {
			return NewSGD(p, SGDOptions{LR: 0.1, Momentum: 0.9, Dampening: 0.5, WeightDecay: 0.1})
		},
		// d₁ = g₁ + 0.1p = (0.5 + 0.1, 0.1 − 0.2) = (0.6, −0.1); b₁ = d₁ (first step, no dampening)
		// p₁ = p − 0.1b₁ = (1 − 0.06, −2 + 0.01)
		want1: [2]float64{0.94, -1.99},
		// d₂ = g₂ + 0.1p₁ = (−0.2 + 0.094, 0.3 − 0.199) = (−0.106, 0.101)
		// b₂ = 0.9b₁ + 0.5d₂ = (0.54 − 0.053, −0.09 + 0.0505) = (0.487, −0.0395)
		// p₂ = p₁ − 0.1b₂ = (0.94 − 0.0487, −1.99 + 0.00395)
		want2: [2]float64{0.8913, -1.98605},
	},
	{
		name: "SGD nesterov momentum=0.9",
		make: func(p []*tensor.Tensor) Optimizer {
			return NewSGD(p, SGDOptions{LR: 0.1, Momentum: 0.9, Nesterov: true})
		},
		// b₁ = g₁ = (0.5, 0.1); d₁ = g₁ + 0.9b₁ = (0.95, 0.19); p₁ = (1 − 0.095, −2 − 0.019)
		want1: [2]float64{0.905, -2.019},
		// b₂ = 0.9b₁ + g₂ = (0.45 − 0.2, 0.09 + 0.3) = (0.25, 0.39)
		// d₂ = g₂ + 0.9b₂ = (−0.2 + 0.225, 0.3 + 0.351) = (0.025, 0.651)
		// p₂ = p₁ − 0.1d₂ = (0.905 − 0.0025, −2.019 − 0.0651)
		want2: [2]float64{0.9025, -2.0841},
	},
	{
		name: "Adam lr=0.1",
		make: func(p []*tensor.Tensor) Optimizer { return NewAdam(p, AdamOptions{LR: 0.1}) },
		// m₁ = 0.1g₁, v₁ = 0.001g₁², so m̂ = g₁, v̂ = g₁² and the step is
		// 0.1·g/(|g| + 1e-8): 0.1·0.5/0.50000001 = 0.099999998, 0.1·0.1/0.10000001 = 0.09999999
		want1: [2]float64{1 - 0.099999998, -2 - 0.09999999},
		// m₂ = 0.9m₁ + 0.1g₂ = (0.045 − 0.02, 0.009 + 0.03) = (0.025, 0.039)
		// v₂ = 0.999v₁ + 0.001g₂² = (0.00024975 + 0.00004, 0.00000999 + 0.00009) = (0.00028975, 0.00009999)
		// m̂ = m₂/(1 − 0.81) = (0.131578947368, 0.205263157895)
		// v̂ = v₂/(1 − 0.998001) = (0.144947473737, 0.050020010005); √v̂ = (0.380719691, 0.223651537)
		// step = 0.1·m̂/(√v̂ + 1e-8) = (0.034560583883, 0.091778107794)
		want2: [2]float64{0.900000002 - 0.034560583883489, -2.09999999 - 0.091778107794409},
	},
	{
		name: "Adam lr=0.1 L2 wd=0.1",
		make: func(p []*tensor.Tensor) Optimizer { return NewAdam(p, AdamOptions{LR: 0.1, WeightDecay: 0.1}) },
		// g' = g₁ + 0.1p = (0.6, −0.1); step 0.1·g'/(|g'| + 1e-8) = (0.0999999983333, −0.09999999)
		want1: [2]float64{1 - 0.09999999833333335, -2 + 0.09999999000000102},
		// g' = g₂ + 0.1p₁ = (−0.2 + 0.0900000002, 0.3 − 0.190000001) = (−0.1099999998, 0.109999999)
		// m₂ = 0.9·(0.06, −0.01) + 0.1g' = (0.0430000000, 0.0019999999)
		// v₂ = 0.999·(0.00036, 0.00001) + 0.001g'² = (0.00037174, 0.00002209)
		// m̂ = m₂/0.19 = (0.226315789561, 0.010526315263); v̂ = v₂/0.001999 = (0.185962981472, 0.011050525153)
		// step = 0.1·m̂/(√v̂ + 1e-8) = (0.052480938707, 0.010013476270)
		want2: [2]float64{0.9000000016666666 - 0.052480938707296, -1.900000009999999 - 0.010013476270136},
	},
	{
		name: "Adam AMSGrad lr=0.1 beta2=0.5",
		make: func(p []*tensor.Tensor) Optimizer {
			return NewAdam(p, AdamOptions{LR: 0.1, Beta2: 0.5, AMSGrad: true})
		},
		// step 1 is the sign step again
		want1: [2]float64{1 - 0.099999998, -2 - 0.09999999},
		// v₁ = 0.5g₁² = (0.125, 0.005); v₂ = 0.5v₁ + 0.5g₂² = (0.0825, 0.0475)
		// max(v₁, v₂) = (0.125, 0.0475): element 0 keeps the older, larger value
		// v̂ = (0.125, 0.0475)/(1 − 0.25) = (0.166666667, 0.063333333); m̂ as for Adam
		// step = 0.1·m̂/(√v̂ + 1e-8) = (0.1·0.131578947/0.408248290, 0.1·0.205263158/0.251661148)
		//      = (0.032230127405, 0.081563305062)
		want2: [2]float64{0.900000002 - 0.032230127405042, -2.09999999 - 0.081563305062482},
	},
	{
		name: "AdamW lr=0.1 wd=0.1",
		make: func(p []*tensor.Tensor) Optimizer { return NewAdamW(p, AdamOptions{LR: 0.1, WeightDecay: 0.1}) },
		// p ← p·(1 − 0.01) = (0.99, −1.98), then the Adam sign step of 0.099999998, 0.09999999
		want1: [2]float64{0.99 - 0.099999998, -1.98 - 0.09999999},
		// p₁·0.99 = (0.881100001980, −2.059199990100), minus the Adam step of the plain case
		want2: [2]float64{0.99*0.890000002 - 0.034560583883489, 0.99*-2.07999999 - 0.091778107794409},
	},
	{
		name: "RMSProp lr=0.01",
		make: func(p []*tensor.Tensor) Optimizer { return NewRMSProp(p, RMSPropOptions{LR: 0.01}) },
		// s₁ = 0.01g₁² = (0.0025, 0.0001); σ = √s₁ + 1e-8 = (0.05000001, 0.01000001)
		// p₁ = p − 0.01·g₁/σ = (1 − 0.01·9.9999980, −2 − 0.01·9.9999900)
		want1: [2]float64{0.90000002, -2.0999999},
		// s₂ = 0.99s₁ + 0.01g₂² = (0.002475 + 0.0004, 0.000099 + 0.0009) = (0.002875, 0.000999)
		// σ = (0.053619036, 0.031606971); p₂ = p₁ − 0.01·(−0.2/0.053619036, 0.3/0.031606971)
		//   = (0.90000002 + 0.037300183, −2.0999999 − 0.094915770)
		want2: [2]float64{0.9373002053730881, -2.194915669545329},
	},
	{
		name: "RMSProp centered momentum=0.5 alpha=0.9 wd=0.1",
		make: func(p []*tensor.Tensor) Optimizer {
			return NewRMSProp(p, RMSPropOptions{LR: 0.01, Alpha: 0.9, Momentum: 0.5, Centered: true, WeightDecay: 0.1})
		},
		// g' = (0.6, −0.1); s₁ = 0.1g'² = (0.036, 0.001); a₁ = 0.1g' = (0.06, −0.01)
		// σ = √(s₁ − a₁²) + 1e-8 = √(0.0324, 0.0009) + 1e-8 = (0.18000001, 0.03000001)
		// b₁ = g'/σ = (3.333333148, −3.333332222); p₁ = p − 0.01b₁
		want1: [2]float64{1 - 0.03333333148148159, -2 + 0.033333322222225927},
		// g' = g₂ + 0.1p₁ = (−0.103333333, 0.103333332)
		// s₂ = 0.9s₁ + 0.1g'² = (0.033467778, 0.001967778); a₂ = 0.9a₁ + 0.1g' = (0.043666667, 0.001333333)
		// σ = √(s₂ − a₂²) + 1e-8 = (0.177654168, 0.044339608)
		// b₂ = 0.5b₁ + g'/σ = (1.085012149, 0.663831072); p₂ = p₁ − 0.01b₂
		want2: [2]float64{0.9666666685185185 - 0.010850121491737825, -1.9666666777777742 - 0.00663831071564883},
	},
	{
		name: "Adagrad lr=0.1",
		make: func(p []*tensor.Tensor) Optimizer { return NewAdagrad(p, AdagradOptions{LR: 0.1}) },
		// s₁ = g₁² = (0.25, 0.01); p₁ = p − 0.1·g₁/(√s₁ + 1e-10) = (1 − 0.09999999998, −2 − 0.0999999999)
		want1: [2]float64{0.90000000002, -2.0999999999},
		// s₂ = (0.29, 0.1); p₂ = p₁ − 0.1·(−0.2/0.538516481, 0.3/0.316227766)
		//    = (0.90000000002 + 0.037139067635, −2.0999999999 − 0.094868329805)
		want2: [2]float64{0.9371390676485138, -2.1948683296750513},
	},
	{
		name: "Adagrad lr_decay=0.5 initial=0.1 wd=0.1",
		make: func(p []*tensor.Tensor) Optimizer {
			return NewAdagrad(p, AdagradOptions{LR: 0.1, LRDecay: 0.5, InitialAccumulator: 0.1, WeightDecay: 0.1})
		},
		// clr = 0.1; g' = (0.6, −0.1); s₁ = 0.1 + g'² = (0.46, 0.11)
		// p₁ = p − 0.1·(0.6/0.678232998, −0.1/0.331662479) = (1 − 0.088465174, −2 + 0.030151134)
		want1: [2]float64{0.9115348263201052, -1.9698488655513144},
		// clr = 0.1/(1 + 0.5) = 0.0666667; g' = g₂ + 0.1p₁ = (−0.108846517, 0.103015113)
		// s₂ = s₁ + g'² = (0.471847564, 0.120612114)
		// p₂ = p₁ − 0.0666667·(−0.108846517/0.686911613, 0.103015113/0.347292836)
		//    = (0.911534826 + 0.010563855, −1.969848866 − 0.019774897)
		want2: [2]float64{0.9220986810442724, -1.9896237621787314},
	},
}

func vals(dt tensor.DType, v ...float64) *tensor.Tensor {
	return tensor.FromValues(dt, v, len(v))
}

func TestHandWorkedUpdates(t *testing.T) {
	for _, c := range handCases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				p := vals(dt, 1, -2)
				opt := c.make([]*tensor.Tensor{p})
				require.NoError(t, opt.Step([]*tensor.Tensor{vals(dt, 0.5, 0.1)}))
				require.InDeltaSlice(t, c.want1[:], p.Values(), numtest.Tol(dt), "after step 1")
				require.NoError(t, opt.Step([]*tensor.Tensor{vals(dt, -0.2, 0.3)}))
				require.InDeltaSlice(t, c.want2[:], p.Values(), numtest.Tol(dt), "after step 2")
				require.Same(t, p, opt.Params()[0], "updated in place")
			})
		}
	}
}

// At step 1 Adam's bias corrections make m̂ = g and v̂ = g², so with ε → 0
// every element moves by exactly lr·sign(g), whatever the gradient's size
// (Kingma & Ba, section 2.1).
func TestAdamFirstStepIsSignStep(t *testing.T) {
	grads := []float64{3e-4, -7, 250, -0.01, 1}
	for _, dt := range numtest.DTypes {
		for _, betas := range [][2]float64{{0.9, 0.999}, {0.5, 0.9}, {0.99, 0.9999}} {
			t.Run(fmt.Sprintf("%v/%v", dt, betas), func(t *testing.T) {
				p := tensor.Zeros(dt, len(grads))
				opt := NewAdam([]*tensor.Tensor{p}, AdamOptions{LR: 0.01, Beta1: betas[0], Beta2: betas[1], Eps: 1e-30})
				require.NoError(t, opt.Step([]*tensor.Tensor{tensor.FromValues(dt, grads, len(grads))}))
				for i, g := range grads {
					require.InDelta(t, -0.01*math.Copysign(1, g), p.At(i), 0.01*numtest.Tol(dt), "element %d", i)
				}
			})
		}
	}
}
