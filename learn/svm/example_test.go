package svm_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The maximum-margin line between x = −1 (class 1) and x = +1 (class 0)
// under the linear kernel is f(x) = x; the duality gap certifies it.
func ExampleFitSVC() {
	x := tensor.FromFloat64s([]float64{-1, 1}, 2, 1)
	m, err := svm.FitSVC(context.Background(), x, []int{1, 0}, svm.SVCOptions{Kernel: kernel.NewLinear(1), C: 10, Tol: 1e-12})
	if err != nil {
		panic(err)
	}
	b := m.Machines[0]
	fmt.Printf("f(0.5) = %.3f, support vectors %d, primal %.3f, dual %.3f, gap < 1e-9: %v\n",
		b.Decision(tensor.FromFloat64s([]float64{0.5}, 1, 1)).At(0), len(b.Support), b.Primal, b.Dual, b.Gap < 1e-9)
	fmt.Println(m.Predict(tensor.FromFloat64s([]float64{3, -0.2}, 2, 1)))
	// Output:
	// f(0.5) = 0.500, support vectors 2, primal 0.500, dual 0.500, gap < 1e-9: true
	// [0 1]
}

// ν-SVC with ν = 0.5 on the same two points starts from α = (½, ½), which
// is already optimal: both are free support vectors with equal gradients,
// so the margin r = 1 and the machine is the C-SVC with C = 1/r = 1 and
// f(x) = x.
func ExampleFitNuSVC() {
	x := tensor.FromFloat64s([]float64{-1, 1}, 2, 1)
	m, err := svm.FitNuSVC(context.Background(), x, []int{1, 0}, svm.NuSVCOptions{Kernel: kernel.NewLinear(1), Nu: 0.5, Tol: 1e-12})
	if err != nil {
		panic(err)
	}
	b := m.Machines[0]
	fmt.Printf("f(0.5) = %.3f, C = 1/r = %.3f, dual coefficients %.3f\n",
		b.Decision(tensor.FromFloat64s([]float64{0.5}, 1, 1)).At(0), b.C, b.DualCoef)
	// Output:
	// f(0.5) = 0.500, C = 1/r = 1.000, dual coefficients [-0.500 0.500]
}

// ν-SVR finds the tube's width itself. The targets z = x ± ½ (alternating)
// are fitted best by f(x) = x with every point on the tube's edge, ε = ½.
func ExampleFitNuSVR() {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 1)
	z := []float64{0.5, 0.5, 2.5, 2.5, 4.5, 4.5, 6.5, 6.5, 8.5, 8.5}
	m, err := svm.FitNuSVR(context.Background(), x, tensor.FromFloat64s(z, len(z)), svm.NuSVROptions{Kernel: kernel.NewLinear(1), C: 1, Nu: 0.4, Tol: 1e-10})
	if err != nil {
		panic(err)
	}
	f := m.Predict(tensor.FromFloat64s([]float64{0, 9}, 2, 1)).Values()
	fmt.Printf("ε = %.3f, f(0) = %.3f, f(9) = %.3f, gap < 1e-9: %v\n", m.Epsilon, f[0], f[1], m.Gap < 1e-9)
	// Output:
	// ε = 0.500, f(0) = 0.000, f(9) = 9.000, gap < 1e-9: true
}

// Three classes at the corners of a triangle, scored jointly by one
// Crammer–Singer machine; the duality gap certifies the solution.
func ExampleFitCrammerSinger() {
	x := tensor.FromFloat64s([]float64{2, 0, 0, 2, -2, -2, 2.5, 0.5, -0.5, 3, -3, -1}, 6, 2)
	m, err := svm.FitCrammerSinger(context.Background(), x, []int{0, 1, 2, 0, 1, 2}, svm.CrammerSingerOptions{Kernel: kernel.NewLinear(1), C: 10, Tol: 1e-10})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v, primal %.6f, gap < 1e-6 of it: %v\n",
		m.Predict(tensor.FromFloat64s([]float64{4, 0, 0, 4, -4, -4}, 3, 2)), m.Primal, m.Gap < 1e-6*m.Primal)
	// Output:
	// [0 1 2], primal 0.203704, gap < 1e-6 of it: true
}

// Label the positions of noisy sequences from a sticky two-state chain
// with a chain-structured SVM: Viterbi decoding through learned
// transition weights smooths out the noise of single positions.
func ExampleFitStructured() {
	rng := tensor.NewRNG(1)
	gen := func(n int) (xs [][][]float64, ys [][]int) {
		for range n {
			x, y := make([][]float64, 30), make([]int, 30)
			for t := range y {
				if t > 0 && rng.Float64() < 0.9 {
					y[t] = y[t-1]
				} else {
					y[t] = rng.Intn(2)
				}
				x[t] = []float64{float64(2*y[t]-1) + 1.2*rng.NormFloat64(), 1} // a noisy sign and a constant
			}
			xs, ys = append(xs, x), append(ys, y)
		}
		return xs, ys
	}
	xs, ys := gen(50)
	m, err := svm.FitStructured(context.Background(), xs, ys, svm.StructuredOptions[[][]float64, []int]{
		Model: svm.Chain{States: 2, Width: 2}, C: 10, Eps: 0.01})
	if err != nil {
		panic(err)
	}
	xt, yt := gen(50)
	hits, total := 0, 0
	for i := range xt {
		for t, y := range m.Predict(xt[i]) {
			if y == yt[i][t] {
				hits++
			}
			total++
		}
	}
	fmt.Printf("converged: %v, held-out accuracy above 0.9: %v\n", m.Converged, float64(hits)/float64(total) > 0.9)
	// Output: converged: true, held-out accuracy above 0.9: true
}
