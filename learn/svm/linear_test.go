package svm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
)

// The primal linear SVM trained by gradient reaches the optimum that SMO
// certifies on the dual with the linear kernel K(a, b) = a·b: strong
// duality makes the dual's primal objective the minimum, and the gradient
// fit's objective lands on it (hinge: within 0.5 %, the subgradient
// method's accuracy after 4000 steps).
func TestLinearSVMPrimalMeetsDual(t *testing.T) {
	_, x, labels := load(t)
	xb, lb := pair(x, labels)
	dual, err := svm.FitSVC(context.Background(), xb, lb, svm.SVCOptions{Kernel: kernel.NewLinear(1), C: 0.5, Tol: 1e-9})
	require.NoError(t, err)
	opt := dual.Machines[0].Primal
	require.Less(t, dual.Machines[0].Gap, 1e-6*opt)
	prim, err := svm.FitLinearSVM(context.Background(), xb, lb, svm.LinearSVMOptions{C: 0.5, Loss: svm.Hinge, MaxIter: 4000})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, prim.Objective, opt*(1-1e-9), "no point beats the optimum")
	assert.Less(t, prim.Objective, opt*1.005, "hinge objective %g, dual optimum %g", prim.Objective, opt)
	// Same separator: decisions agree in sign (LIBSVM-style machines put the
	// smaller label first, the primal fit the larger).
	dd, pd := dual.Machines[0].Decision(xb).Values(), prim.Decision(xb).Values()
	agree := 0
	for i := range dd {
		if (dd[i] > 0) != (pd[i] > 0) {
			agree++
		}
	}
	assert.GreaterOrEqual(t, agree, len(dd)-2)
}

// The squared hinge is smooth: L-BFGS converges, and its objective is
// below the hinge machine's at the hinge solution (a sanity bound).
func TestLinearSVMSquaredHinge(t *testing.T) {
	_, x, labels := load(t)
	xb, lb := pair(x, labels)
	m, err := svm.FitLinearSVM(context.Background(), xb, lb, svm.LinearSVMOptions{C: 0.5, Loss: svm.SquaredHinge, MaxIter: 500})
	require.NoError(t, err)
	assert.Equal(t, 2, m.Positive)
	again, err := svm.FitLinearSVM(context.Background(), xb, lb, svm.LinearSVMOptions{C: 0.5, Loss: svm.SquaredHinge, MaxIter: 1000})
	require.NoError(t, err)
	assert.InDelta(t, m.Objective, again.Objective, 1e-6*m.Objective, "L-BFGS has converged")
	_, err = svm.FitLinearSVM(context.Background(), xb, make([]int, len(lb)), svm.LinearSVMOptions{C: 0.5, Loss: svm.Hinge, MaxIter: 10})
	assert.ErrorContains(t, err, "exactly two classes")
}
