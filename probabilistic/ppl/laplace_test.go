package ppl

import (
	"context"
	"math"
	"testing"
)

// TestLaplace: the approximation is exact for the normal–normal model;
// for the gamma–Poisson model it is N(log(a/b), 1/a) in log λ, since the
// unconstrained density is λ^a·e^{−bλ} (the Jacobian adds one to the
// shape a − 1).
func TestLaplace(t *testing.T) {
	ctx := context.Background()
	l, err := FitLaplace(ctx, normalNormal, LaplaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, v := normalNormalExact()
	if math.Abs(l.Mean[0]-m) > 1e-8 || math.Abs(l.Cov[0]-v) > 1e-8 {
		t.Errorf("normal–normal: N(%.10f, %.10f), exact N(%.10f, %.10f)", l.Mean[0], l.Cov[0], m, v)
	}
	l, err = FitLaplace(ctx, gammaPoisson, LaplaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mG, vG := gammaExact()
	a, b := mG*mG/vG, mG/vG
	if math.Abs(l.Mean[0]-math.Log(a/b)) > 1e-8 || math.Abs(l.Cov[0]-1/a) > 1e-8 {
		t.Errorf("gamma–Poisson: N(%.10f, %.10f) in log λ, want N(%.10f, %.10f)", l.Mean[0], l.Cov[0], math.Log(a/b), 1/a)
	}
	d, err := l.Sample(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := d["rate"].Values(); len(r) != 3 || r[0] <= 0 {
		t.Errorf("draws of the rate %v: want 3 positive values", r)
	}
}

// TestImportance: with the exact posterior as proposal (the Laplace
// approximation of the normal–normal model) every weight is the evidence,
// so the estimate is exact and ESS is the number of draws; with the prior
// as proposal the estimate agrees within its Monte Carlo error.
func TestImportance(t *testing.T) {
	ctx := context.Background()
	l, err := FitLaplace(ctx, normalNormal, LaplaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := logEvidenceNN()
	w, err := Importance(ctx, normalNormal, l.Guide(), ImportanceOptions{Draws: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.LogEvidence-ev) > 1e-9 || math.Abs(w.ESS-200) > 1e-6 {
		t.Errorf("Laplace proposal: log evidence %.12f (exact %.12f), ESS %.6f of 200", w.LogEvidence, ev, w.ESS)
	}
	w, err = Importance(ctx, normalNormal, nil, ImportanceOptions{Draws: 4000, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := normalNormalExact()
	mean := 0.0
	for i, mu := range w.Samples["mu"].Values() {
		mean += w.Weights[i] * mu
	}
	t.Logf("prior proposal: log evidence %.4f (exact %.4f), ESS %.0f of 4000, E[mu] %.4f (exact %.4f)", w.LogEvidence, ev, w.ESS, mean, m)
	if math.Abs(w.LogEvidence-ev) > 0.1 || math.Abs(mean-m) > 0.05 {
		t.Errorf("prior proposal: log evidence %.4f (exact %.4f), E[mu] %.4f (exact %.4f)", w.LogEvidence, ev, mean, m)
	}
}
