// Command linreg fits a linear model to the diabetes data set (Efron et
// al. 2004, shipped with Gradus) by gradient descent on a Gradus graph,
// then takes one Newton step with the Hessian that autodiff derives from
// the same graph, and checks both against the closed-form least-squares
// solution of the normal equations.
//
// It draws the gradient-descent loss against the step (loss.png in -out).
//
//	go run ./examples/linreg [-steps 300] [-lr 0.1] [-out out/linreg] [-json] [-quiet]
package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

func main() { cli.Main(program()) }

// config holds the flags.
type config struct {
	Steps int     `flag:"steps" help:"gradient-descent steps"`
	LR    float64 `flag:"lr" help:"learning rate"`
}

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "linreg"}, config{Steps: 300, LR: 0.1}, run)
}

// result holds the figures the program reports.
type result struct {
	GDLoss     float64 `json:"gd_mse"`       // mean squared error after gradient descent
	NewtonLoss float64 `json:"newton_mse"`   // after one Newton step from zero
	ExactLoss  float64 `json:"exact_mse"`    // of the normal-equations solution
	MaxCoefGap float64 `json:"max_coef_gap"` // max |w_newton − w_exact|
	Plot       string  `json:"plot"`
}

// run loads the data, standardises it, and fits it three ways.
func run(c config, env *cli.Env) (res result, err error) {
	steps, lr := c.Steps, c.LR
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		return res, err
	}
	rows, target, err := tab.Split("target")
	if err != nil {
		return res, err
	}
	n, d := len(rows), len(rows[0])
	flat := make([]float64, 0, n*(d+1))
	for _, r := range rows {
		flat = append(flat, r...)
		flat = append(flat, 1) // intercept column
	}
	x := tensor.FromFloat64s(flat, n, d+1)
	standardise(x, d)
	y := tensor.FromFloat64s(append([]float64(nil), target...), n, 1)
	mean, sd := stat.PopMeanStdDev(target, nil)
	for i := range target {
		y.SetAt((target[i]-mean)/sd, i, 0)
	}

	// Mean squared error as a graph: ½·mean((Xw − y)²).
	loss := func(g *graph.Graph, w *graph.Node) *graph.Node {
		r := graph.Sub(graph.MatMul(g.Const(x), w), g.Const(y))
		return graph.MulScalar(graph.Mean(graph.Square(r), nil, false), 0.5)
	}

	// Gradient descent.
	w := tensor.Zeros(tensor.Float64, d+1, 1)
	g := graph.New()
	curve := make([]float64, 0, steps)
	for step := 1; step <= steps; step++ {
		g.Reset()
		wv := g.Var(w)
		l, grads := autodiff.ValueAndGrad(loss(g, wv), wv)
		tensor.SubTo(w, w, tensor.MulScalar(grads[0].Value(), lr))
		curve = append(curve, l)
		if step == 1 || step%50 == 0 || step == steps {
			env.Printf("step %4d  loss %.6f\n", step, l)
		}
	}
	res.GDLoss = evalLoss(loss, w)

	// One Newton step from zero: the loss is quadratic, so it lands on the
	// optimum. The Hessian comes from forward-over-reverse autodiff.
	g.Reset()
	w0 := g.Var(tensor.Zeros(tensor.Float64, d+1, 1))
	l0 := loss(g, w0)
	grad := autodiff.Grad(l0, w0)[0].Value()
	h := autodiff.Hessian(l0, w0) // shape (d+1, 1, d+1, 1)
	hm := tensor.Reshape(h, d+1, d+1)
	step, err := tensor.Solve(hm, grad)
	if err != nil {
		return res, fmt.Errorf("Newton step: %w", err)
	}
	wNewton := tensor.Neg(step)
	res.NewtonLoss = evalLoss(loss, wNewton)

	// Closed form: (XᵀX)⁻¹Xᵀy.
	xtx := tensor.MatMulT(x, x, true, false)
	xty := tensor.MatMulT(x, y, true, false)
	wExact, err := tensor.Solve(xtx, xty)
	if err != nil {
		return res, fmt.Errorf("normal equations: %w", err)
	}
	res.ExactLoss = evalLoss(loss, wExact)
	for i, v := range wNewton.Values() {
		res.MaxCoefGap = math.Max(res.MaxCoefGap, math.Abs(v-wExact.Values()[i]))
	}
	env.Printf("gradient descent (%d steps): mse/2 = %.6f\n", steps, res.GDLoss)
	env.Printf("one Newton step (autodiff Hessian): mse/2 = %.6f\n", res.NewtonLoss)
	env.Printf("normal equations: mse/2 = %.6f (max coefficient gap to Newton %.2e)\n", res.ExactLoss, res.MaxCoefGap)
	env.Printf("fraction of variance explained: %.3f\n", 1-2*res.ExactLoss)
	res.Plot = env.Path("loss.png")
	return res, plot.WritePNG(res.Plot, plot.Panel{Title: "linreg: gradient descent", XLabel: "step", YLabel: "mse/2",
		Curves: []plot.Curve{{Name: "loss", Y: curve, Style: plot.Line}}})
}

func evalLoss(loss func(*graph.Graph, *graph.Node) *graph.Node, w *tensor.Tensor) float64 {
	g := graph.New()
	return loss(g, g.Const(w)).Item()
}

// standardise scales the first d columns of x to mean 0 and population
// standard deviation 1.
func standardise(x *tensor.Tensor, d int) {
	n := x.Shape()[0]
	col := make([]float64, n)
	for j := 0; j < d; j++ {
		for i := range col {
			col[i] = x.At(i, j)
		}
		m, s := stat.PopMeanStdDev(col, nil)
		for i := range col {
			x.SetAt((col[i]-m)/s, i, j)
		}
	}
}
