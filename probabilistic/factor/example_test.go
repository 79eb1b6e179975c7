package factor_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/factor"
	"github.com/gradus-ml/gradus/tensor"
)

// A chain of three binary variables that like to agree: φ(a, b) = e if
// a = b and 1 otherwise. Z = 2(e + 1)² by hand, and by symmetry every
// marginal is (½, ½).
func ExampleModel_BeliefPropagation() {
	g := graph.New()
	agree := g.Const(tensor.FromFloat64s([]float64{1, 0, 0, 1}, 2, 2)) // log φ
	m := factor.Model{Cards: []int{2, 2, 2}, Factors: []factor.Factor{
		{Vars: []int{0, 1}, Table: agree},
		{Vars: []int{1, 2}, Table: agree},
	}}
	bp, err := m.BeliefPropagation()
	if err != nil {
		panic(err)
	}
	fmt.Printf("log Z %.6f (by hand %.6f), by elimination %.6f\n",
		bp.LogZ.Item(), math.Log(2*(math.E+1)*(math.E+1)), m.LogPartition(nil).Item())
	fmt.Println(bp.Marginals[2].Value().Values())
	// Output:
	// log Z 3.319671 (by hand 3.319671), by elimination 3.319671
	// [0.5 0.5]
}
