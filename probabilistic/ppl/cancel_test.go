package ppl

import (
	"context"
	"errors"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic/inference"
)

// Every engine returns promptly, with ctx.Err() wrapped, when its context
// is cancelled; FitSVI and Importance with what they have.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NUTS(ctx, normalNormal, inference.NUTSOptions{Chains: 1, Warmup: 10, Draws: 10}); !errors.Is(err, context.Canceled) {
		t.Errorf("NUTS: %v", err)
	}
	s, err := FitSVI(ctx, normalNormal, AutoNormal(normalNormal, AutoGuideOptions{}), SVIOptions{Steps: 10})
	if !errors.Is(err, context.Canceled) || s == nil || len(s.Loss) != 0 {
		t.Errorf("FitSVI: %v", err)
	}
	if _, err := FitLaplace(ctx, normalNormal, LaplaceOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("FitLaplace: %v", err)
	}
	if _, err := Importance(ctx, normalNormal, nil, ImportanceOptions{Draws: 10}); !errors.Is(err, context.Canceled) {
		t.Errorf("Importance: %v", err)
	}
}

// A Laplace fit out of iterations returns its approximation with a
// *tensor.NotConvergedError.
func TestLaplaceUnconverged(t *testing.T) {
	l, err := FitLaplace(context.Background(), linReg, LaplaceOptions{MaxIter: 1})
	if l == nil {
		t.Fatalf("no approximation: %v", err)
	}
	numtest.Unconverged(t, err, "ppl.FitLaplace", l.Mean, l.Cov)
}
