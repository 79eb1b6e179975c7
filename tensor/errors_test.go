package tensor

import (
	"errors"
	"fmt"
	"testing"
)

func TestNotConvergedError(t *testing.T) {
	var err error = &NotConvergedError{Op: "mixture.FitGaussian", Iterations: 100, Change: 0.02, Tol: 1e-3}
	if want := "mixture.FitGaussian: did not converge in 100 iterations (last change 0.02, tolerance 0.001)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	var nc *NotConvergedError
	if !errors.Is(err, ErrNotConverged) || !errors.As(fmt.Errorf("wrapped: %w", err), &nc) || nc.Iterations != 100 {
		t.Errorf("errors.Is/As do not see the non-convergence: %v", err)
	}
	short := &NotConvergedError{Op: "gp.FitExact", Iterations: 3}
	if want := "gp.FitExact: did not converge in 3 iterations"; short.Error() != want {
		t.Errorf("Error() = %q, want %q", short.Error(), want)
	}
}
