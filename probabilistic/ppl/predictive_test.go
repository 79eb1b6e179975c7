package ppl

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// bigY is a data set of 40 rows for the subsampling test.
func bigY() []float64 {
	rng := tensor.NewRNG(4)
	y := make([]float64, 40)
	for i := range y {
		y[i] = 1 + 1.5*rng.NormFloat64()
	}
	return y
}

// TestSubsampledELBOUnbiased: for one draw of the guide, the ELBO of a
// plate subsampling 5 of 40 rows, averaged over many subsamples, equals
// the full-data ELBO within 4 standard errors.
func TestSubsampledELBOUnbiased(t *testing.T) {
	y := bigY()
	model := func(sub int) Model {
		return func(c *Ctx) {
			mu := Sample(c, "mu", normal(c, 0, 2))
			sd := Sample(c, "sd", probabilistic.NewGamma(c.Scalar(2), c.Scalar(1)))
			Plate(c, "data", len(y), PlateOptions{Subsample: sub}, func(idx []int) {
				rows := make([]float64, len(idx))
				for i, j := range idx {
					rows[i] = y[j]
				}
				Observe(c, "y", probabilistic.NewNormal(mu, sd), vec(rows...))
			})
		}
	}
	guide := AutoNormal(model(0), AutoGuideOptions{InitScale: 0.3})
	store := NewParamStore()
	g := graph.New()
	gt := &Trace{}
	Run(g, Record(Seed(WithParams(guide, store), 1), gt))
	full := &Trace{}
	Run(g, Record(Replay(model(0), gt), full))
	want := logWeight(gt, full, false).Item()
	const k = 1500
	var sum, sumSq float64
	for i := range k {
		mt := &Trace{}
		Run(g, Record(Replay(Seed(model(5), uint64(i)), gt), mt))
		w := logWeight(gt, mt, false).Item()
		sum += w
		sumSq += w * w
	}
	mean := sum / k
	se := math.Sqrt((sumSq/k - mean*mean) / k)
	t.Logf("subsampled ELBO mean %.4f ± %.4f, full-data ELBO %.4f", mean, se, want)
	if math.Abs(mean-want) > 4*se {
		t.Errorf("subsampled ELBO mean %.4f ± %.4f, full-data ELBO %.4f", mean, se, want)
	}
}

// TestPredictive: prior and posterior predictive draws of the
// normal–normal model against its exact predictive distributions, and the
// per-observation log-likelihood against the formula.
func TestPredictive(t *testing.T) {
	meanVar := func(v []float64, stride, j int) (float64, float64) {
		n := float64(len(v) / stride)
		m, s := 0.0, 0.0
		for i := j; i < len(v); i += stride {
			m += v[i] / n
		}
		for i := j; i < len(v); i += stride {
			s += (v[i] - m) * (v[i] - m) / n
		}
		return m, s
	}
	const n = 2000
	prior, err := Predictive(normalNormal, nil, PredictiveOptions{Draws: n, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sh := prior["y"].Shape(); sh[0] != n || sh[1] != len(nnY) {
		t.Fatalf("prior predictive y has shape %v", sh)
	}
	// Prior predictive: y_i ~ N(0, 1 + 4).
	m, v := meanVar(prior["y"].Values(), len(nnY), 0)
	if math.Abs(m) > 4*math.Sqrt(5.0/n) || math.Abs(v-5) > 4*5*math.Sqrt(2.0/n) {
		t.Errorf("prior predictive y₀: mean %.3f variance %.3f, want 0 and 5", m, v)
	}
	// Posterior predictive from exact posterior draws: y_i ~ N(m, 1 + v).
	pm, pv := normalNormalExact()
	rng := tensor.NewRNG(2)
	draws := make([]float64, n)
	for i := range draws {
		draws[i] = pm + math.Sqrt(pv)*rng.NormFloat64()
	}
	post := Samples{"mu": tensor.FromValues(tensor.Float64, draws, n)}
	pred, err := Predictive(normalNormal, post, PredictiveOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m, v = meanVar(pred["y"].Values(), len(nnY), 3)
	if math.Abs(m-pm) > 4*math.Sqrt((1+pv)/n) || math.Abs(v-1-pv) > 4*(1+pv)*math.Sqrt(2.0/n) {
		t.Errorf("posterior predictive y₃: mean %.3f variance %.3f, want %.3f and %.3f", m, v, pm, 1+pv)
	}
	if got := pred["mu"].Values()[7]; got != draws[7] {
		t.Errorf("the posterior's own draws come back changed: %v vs %v", got, draws[7])
	}
	ll, err := LogLikelihood(normalNormal, Samples{"mu": vec(0.5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if sh := ll["y"].Shape(); sh[0] != 2 || sh[1] != len(nnY) {
		t.Fatalf("log-likelihood has shape %v", sh)
	}
	for i, mu := range []float64{0.5, 1} {
		for j, y := range nnY {
			if got := ll["y"].Values()[i*len(nnY)+j]; math.Abs(got-logN(y, mu, 1)) > 1e-12 {
				t.Errorf("log p(y%d | mu = %v) = %v, want %v", j, mu, got, logN(y, mu, 1))
			}
		}
	}
	if _, ok := ll["mu"]; ok {
		t.Errorf("the log-likelihood lists the latent site mu")
	}
}

// PointwiseLPD is log of the mean likelihood over draws, per observation.
func TestPointwiseLPD(t *testing.T) {
	ll := tensor.FromValues(tensor.Float64, []float64{math.Log(0.2), -1000, math.Log(0.4), -1001}, 2, 2)
	got := PointwiseLPD(ll).Values()
	want := []float64{math.Log(0.3), -1000 + math.Log((1+math.Exp(-1))/2)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("lpd[%d] = %.15g, want %.15g", i, got[i], want[i])
		}
	}
}
