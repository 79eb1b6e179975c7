package ppl

import (
	"context"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/optim"
)

// TestSVIFullRankGaussian: on Bayesian linear regression the full-rank
// guide's family holds the exact posterior, and SVI with the sticking-the-landing gradient finds it to 1e-6 (the brief asks 1e-3).
func TestSVIFullRankGaussian(t *testing.T) {
	guide := AutoMultivariateNormal(linReg, AutoGuideOptions{})
	steps := 1500
	s, err := FitSVI(context.Background(), linReg, guide, SVIOptions{Steps: steps, Particles: 1, LR: 0.03, StickTheLanding: true,
		Schedule: optim.ExponentialLR(0.03, math.Pow(0.1, 1/float64(steps))), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, cov := linExact()
	loc := s.Params.Value("auto_loc").Values()
	l := s.Params.Value("auto_scale_tril").Values()
	q := [2][2]float64{{l[0] * l[0], l[0] * l[2]}, {l[2] * l[0], l[2]*l[2] + l[3]*l[3]}}
	for i := range 2 {
		if math.Abs(loc[i]-m[i]) > 1e-6 {
			t.Errorf("mean[%d] = %.6f, exact %.6f", i, loc[i], m[i])
		}
		for j := range 2 {
			if math.Abs(q[i][j]-cov[i][j]) > 1e-6 {
				t.Errorf("cov[%d][%d] = %.6f, exact %.6f", i, j, q[i][j], cov[i][j])
			}
		}
	}
	t.Logf("mean %v exact %v; cov %v exact %v; final loss %.4f", loc, m, q, cov, s.Loss[len(s.Loss)-1])
}
