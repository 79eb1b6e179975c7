package inference_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// PSIS-LOO flags the observation whose leave-one-out predictive the
// posterior cannot importance-sample: an outlier in a normal model.
func ExamplePSISLOO() {
	y := []float64{-0.3, 0.8, -1.1, 0.4, 0.1, -0.6, 1.2, 0.2, -0.2, 0.5, 7}
	n := float64(len(y))
	const s = 2000
	// Exact posterior draws of the mean under a flat prior, unit variance
	// known: N(ȳ, 1/n).
	mu := tensor.NewRNG(1).Normal(tensor.Float64, 8/n, 1/math.Sqrt(n), s).Values()
	ll := make([]float64, 0, s*len(y))
	for _, m := range mu {
		for _, v := range y {
			ll = append(ll, -0.5*math.Log(2*math.Pi)-0.5*(v-m)*(v-m))
		}
	}
	logLik := tensor.FromFloat64s(ll, s, len(y))
	loo, err := inference.PSISLOO(logLik)
	if err != nil {
		panic(err)
	}
	waic, _ := inference.WAIC(logLik)
	fmt.Printf("elpd_loo %.1f ± %.1f, elpd_waic %.1f\n", loo.Estimate, loo.SE, waic.Estimate)
	fmt.Printf("k̂ above %.2f: observations %v\n", loo.KThreshold, loo.BadK())
	// Output:
	// elpd_loo -36.7 ± 21.2, elpd_waic -36.6
	// k̂ above 0.70: observations [10]
}
