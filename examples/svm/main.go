// Command svm trains support-vector machines on data shipped with Gradus
// and prints the certificate of each optimum: the primal and dual
// objectives and their gap.
//
// The default is the breast-cancer set (all 30 features standardised by
// the population standard deviation, labels ±1 with benign = +1) with a
// C-SVC of the chosen kernel; -data iris trains the three-class RBF
// machine on the two petal features instead (one-vs-one). Either way a PNG
// shows the decision regions of a machine on two features (for breast
// cancer, a second machine on mean radius and mean texture).
//
//	go run ./examples/svm [-data breast-cancer|iris] [-kernel rbf|linear] [-C 1] [-gamma 0] [-out out/svm] [-json] [-quiet]
//
// -gamma 0 means scikit-learn's "scale": 1/(n_features·Var(X)). -json
// prints {"dual_objective", "primal_objective", "duality_gap", "n_support",
// "bias", "train_accuracy", ...}; bias is b of f(x) = Σ yᵢαᵢK(xᵢ, x) + b
// with f > 0 for the larger label (benign), as scikit-learn's intercept_.
package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

type config struct {
	Kernel string  `flag:"kernel" help:"rbf or linear"`
	C      float64 `flag:"C" help:"box constraint C"`
	Nu     float64 `flag:"nu" help:"ν in (0, 1]: train a ν-SVC instead of a C-SVC (0: C-SVC with -C)"`
	Gamma  float64 `flag:"gamma" help:"RBF γ of exp(−γ‖x−x'‖²); 0: 1/(n_features·Var(X))"`
}

type result struct {
	Dual     float64 `json:"dual_objective"`
	Primal   float64 `json:"primal_objective"`
	Gap      float64 `json:"duality_gap"`
	Support  int     `json:"n_support"`
	Bias     float64 `json:"bias"` // two classes only
	Accuracy float64 `json:"train_accuracy"`
	Gamma    float64 `json:"gamma"`
	NuC      float64 `json:"nu_c,omitempty"` // ν-SVC, two classes: the C = 1/r it amounts to
	Seconds  float64 `json:"seconds"`
	Plot     string  `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	// -seed is unused: the SMO solver is deterministic.
	return cli.Configured(cli.Program{Name: "svm", Data: "breast-cancer", DataUsage: "breast-cancer or iris"}, config{Kernel: "rbf", C: 1}, run)
}

// load returns the standardised features, the labels and the class names.
func load(name string) (*tensor.Tensor, []int, []string, error) {
	switch name {
	case "breast-cancer":
		x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
		if err != nil {
			return nil, nil, nil, err
		}
		for i, l := range labels { // scikit-learn's target is 1 for benign
			labels[i] = 2*l - 1
		}
		data.Standardise(x)
		return x, labels, []string{"malignant (−1)", "benign (+1)"}, nil
	case "iris":
		x, labels, err := data.Classes("sklearn/iris.csv", "target")
		if err != nil {
			return nil, nil, nil, err
		}
		return tensor.Slice(x, 1, 2, 4, 1).Contiguous(), labels, []string{"setosa", "versicolor", "virginica"}, nil
	}
	return nil, nil, nil, cli.BadFlagf("unknown -data %q (want breast-cancer or iris)", name)
}

// pickKernel returns the kernel and the γ it uses (0 for linear).
func pickKernel(cfg config, x *tensor.Tensor) (kernel.Kernel, float64, error) {
	switch cfg.Kernel {
	case "linear":
		return kernel.NewLinear(1), 0, nil
	case "rbf":
		g := cfg.Gamma
		if g == 0 {
			g = svm.ScaleGamma(x)
		}
		if !(g > 0) {
			return nil, 0, cli.BadFlagf("-gamma must be positive, got %g", g)
		}
		return kernel.NewRBF(math.Sqrt(1 / (2 * g))), g, nil // RBF(ℓ) is exp(−‖x−x'‖²/(2ℓ²))
	}
	return nil, 0, cli.BadFlagf("unknown -kernel %q (want rbf or linear)", cfg.Kernel)
}

func run(cfg config, env *cli.Env) (res result, err error) {
	start := time.Now()
	x, labels, names, err := load(env.Data)
	if err != nil {
		return res, err
	}
	k, gamma, err := pickKernel(cfg, x)
	if err != nil {
		return res, err
	}
	res.Gamma = gamma
	fit := func(x *tensor.Tensor) (*svm.SVC, error) {
		if cfg.Nu != 0 {
			return svm.FitNuSVC(env.Context(), x, labels, svm.NuSVCOptions{Kernel: k, Nu: cfg.Nu, Tol: 1e-6})
		}
		return svm.FitSVC(env.Context(), x, labels, svm.SVCOptions{Kernel: k, C: cfg.C, Tol: 1e-6})
	}
	m, err := fit(x)
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	right := 0
	for i, p := range m.Predict(x) {
		if p == labels[i] {
			right++
		}
	}
	res.Accuracy = float64(right) / float64(len(labels))
	res.Primal, res.Dual, res.Gap = m.Primal, m.Dual, m.Gap
	seen := map[int]bool{}
	for _, b := range m.Machines {
		for _, i := range b.Support {
			seen[i] = true
		}
		env.Printf("classes %d vs %d: %d support vectors, primal %.6f, dual %.6f, gap %.2e, %d SMO steps\n",
			b.Positive, b.Negative, len(b.Support), b.Primal, b.Dual, b.Gap, b.Iterations)
	}
	res.Support = len(seen)
	if len(m.Machines) == 1 {
		// The machine's positive class is the smaller label; report b for
		// f > 0 on the larger one, as scikit-learn does.
		res.Bias = -m.Machines[0].Bias
		if cfg.Nu != 0 {
			res.NuC = m.Machines[0].C
		}
	}
	box := fmt.Sprintf("C = %g", cfg.C)
	if cfg.Nu != 0 {
		box = fmt.Sprintf("ν = %g, C = 1/r = %.6g", cfg.Nu, res.NuC)
	}
	env.Printf("%s, %s kernel (%s, γ = %.4g): training accuracy %.2f%%, %d support vectors, bias %.6f, gap %.2e (%.2f s)\n",
		env.Data, cfg.Kernel, box, gamma, 100*res.Accuracy, res.Support, res.Bias, res.Gap, res.Seconds)
	x2, m2 := x, m
	if env.Data == "breast-cancer" { // the picture needs a machine on two features
		x2 = tensor.Slice(x, 1, 0, 2, 1).Contiguous()
		if m2, err = fit(x2); err != nil {
			return res, err
		}
		seen = map[int]bool{}
		for _, i := range m2.Machines[0].Support {
			seen[i] = true
		}
	}
	axes := [2]string{"petal length (cm)", "petal width (cm)"}
	if env.Data == "breast-cancer" {
		axes = [2]string{"mean radius (standardised)", "mean texture (standardised)"}
	}
	kind := "C-SVC"
	if cfg.Nu != 0 {
		kind = fmt.Sprintf("ν-SVC (ν = %g)", cfg.Nu)
	}
	title := fmt.Sprintf("%s: %s %s decision regions", env.Data, cfg.Kernel, kind)
	res.Plot = env.Path("regions.png")
	if err := draw2D(res.Plot, title, axes, m2, x2, labels, names, seen); err != nil {
		return res, err
	}
	env.Println("decision regions:", res.Plot)
	return res, nil
}

// draw2D paints the predicted class on a grid over the data's range and
// the points on top, support vectors ringed.
func draw2D(path, title string, axes [2]string, m *svm.SVC, x *tensor.Tensor, labels []int, names []string, support map[int]bool) error {
	const nx, ny = 120, 90
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := range x.Shape()[0] {
		x0, x1 = min(x0, x.At(i, 0)), max(x1, x.At(i, 0))
		y0, y1 = min(y0, x.At(i, 1)), max(y1, x.At(i, 1))
	}
	padX, padY := 0.05*(x1-x0), 0.05*(y1-y0)
	x0, x1, y0, y1 = x0-padX, x1+padX, y0-padY, y1+padY
	regions := &plot.Map{X: make([]float64, nx), Y: make([]float64, ny), Z: make([][]float64, ny)}
	grid := make([]float64, 0, 2*nx*ny)
	for j := range ny {
		regions.Y[j] = y0 + (y1-y0)*float64(j)/(ny-1)
		for i := range nx {
			regions.X[i] = x0 + (x1-x0)*float64(i)/(nx-1)
			grid = append(grid, regions.X[i], regions.Y[j])
		}
	}
	index := map[int]int{} // label → its class's index in m.Classes
	for ci, c := range m.Classes {
		index[c] = ci
	}
	cls := m.Predict(tensor.FromFloat64s(grid, nx*ny, 2))
	for j := range ny {
		regions.Z[j] = make([]float64, nx)
		for i := range nx {
			regions.Z[j][i] = float64(index[cls[j*nx+i]])
		}
	}
	classes := make([]int, len(labels))
	sv := plot.Curve{Name: "support vectors", Style: plot.Rings}
	for i, l := range labels {
		classes[i] = index[l]
		if support[i] {
			sv.X, sv.Y = append(sv.X, x.At(i, 0)), append(sv.Y, x.At(i, 1))
		}
	}
	return plot.WritePNG(path, plot.Panel{Title: title, XLabel: axes[0], YLabel: axes[1], Map: regions,
		Curves: append(plot.ByLabel(x, classes, names), sv)})
}
