package losses_test

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// gradValue returns the value of the gradient of y with respect to x.
func gradValue(y, x *graph.Node) *tensor.Tensor { return autodiff.Grad(y, x)[0].Value() }
