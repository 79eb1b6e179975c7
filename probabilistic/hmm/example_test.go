package hmm_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/hmm"
	"github.com/gradus-ml/gradus/tensor"
)

// A two-state model with sticky transitions and well separated Gaussian
// emissions decodes the obvious path; the log-likelihood sums over all
// 2⁶ paths (−2.2625 by brute-force enumeration in SciPy).
func Example() {
	g := graph.New()
	logInit := graph.Log(g.Const(tensor.FromFloat64s([]float64{0.5, 0.5}, 2)))
	logTrans := graph.Log(g.Const(tensor.FromFloat64s([]float64{0.9, 0.1, 0.1, 0.9}, 2, 2)))
	x := g.Const(tensor.FromFloat64s([]float64{-1.1, -0.9, -1, 1.2, 0.8, 1}, 6))
	means := g.Const(tensor.FromFloat64s([]float64{-1, 1}, 2))
	scales := g.Const(tensor.FromFloat64s([]float64{0.3, 0.3}, 2))
	emit := hmm.GaussianEmissions(x, means, scales) // (6, 2)
	path, _ := hmm.Viterbi(logInit, logTrans, emit)
	fmt.Println(path)
	fmt.Printf("log p(x) = %.4f\n", hmm.LogLikelihood(logInit, logTrans, emit).Item())
	p := hmm.Marginals(logInit, logTrans, emit).Value().Values()
	fmt.Printf("p(z₄ = 1 | x) = %.4f\n", p[3*2+1])
	// Output:
	// [0 0 0 1 1 1]
	// log p(x) = -2.2625
	// p(z₄ = 1 | x) = 1.0000
}
