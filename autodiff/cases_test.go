package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// opCase is one gradient-check case for a registered op: inputs sampled
// from the op's valid domain (float64) and a function applying the op.
// TestGradCheckAllOps checks every case in every mode and fails for any
// registered op without a case. TestGradCheckAllOpsFloat32 runs the same
// cases with the inputs cast to float32, so f must build any constants in
// its inputs' dtype (xs[0].DType()), and every input is differentiated:
// indices, masks and other fixed arguments belong in f's closure.
type opCase struct {
	name   string // optional label when an op has several cases
	inputs func(rng *tensor.RNG) []*tensor.Tensor
	f      func(xs []*graph.Node) *graph.Node
	// tol overrides the default relative tolerance when > 0.
	tol float64
	// noSecondOrder skips the second-order modes, for ops that are
	// piecewise linear (their second derivative is zero almost everywhere
	// and finite differences straddle kinks). Say why where it is set.
	noSecondOrder bool
}

// opCases maps a registered op name to its cases. Files named
// cases_<area>_test.go add to it in init functions.
var opCases = map[string][]opCase{}

func addCase(op string, c opCase) { opCases[op] = append(opCases[op], c) }
