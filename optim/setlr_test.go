package optim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

// SetLR must change the rate the next Step uses: with the rate set to 0
// no optimiser may move its parameters (no weight decay configured).
func TestSetLRTakesEffect(t *testing.T) {
	makers := map[string]func(ps []*tensor.Tensor) Optimizer{
		"sgd":     func(ps []*tensor.Tensor) Optimizer { return NewSGD(ps, SGDOptions{LR: 0.1, Momentum: 0.9}) },
		"adam":    func(ps []*tensor.Tensor) Optimizer { return NewAdam(ps, AdamOptions{LR: 0.1}) },
		"adamw":   func(ps []*tensor.Tensor) Optimizer { return NewAdamW(ps, AdamOptions{LR: 0.1}) },
		"rmsprop": func(ps []*tensor.Tensor) Optimizer { return NewRMSProp(ps, RMSPropOptions{LR: 0.1}) },
		"adagrad": func(ps []*tensor.Tensor) Optimizer { return NewAdagrad(ps, AdagradOptions{LR: 0.1}) },
	}
	for name, mk := range makers {
		p := tensor.FromFloat64s([]float64{1, -2})
		g := tensor.FromFloat64s([]float64{0.5, 0.1})
		opt := mk([]*tensor.Tensor{p})
		opt.SetLR(0)
		assert.NoError(t, opt.Step([]*tensor.Tensor{g}), name)
		assert.Equal(t, []float64{1, -2}, p.Values(), name)
	}
}
