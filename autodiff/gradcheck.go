package autodiff

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// GradCheck modes, as they appear in GradCheckResult.Mode.
const (
	ModeVJP      = "vjp"        // reverse mode against finite differences
	ModeJVP      = "jvp"        // forward mode against finite differences, and JVP/VJP duality
	ModeVJP2     = "vjp2"       // reverse of reverse against differences of the gradient
	ModeJVPofVJP = "jvp-of-vjp" // forward over reverse against differences of the gradient
)

// GradCheckOptions tunes GradCheck. The zero value checks to second order
// with defaults suited to each input's dtype.
type GradCheckOptions struct {
	// Name labels the check in errors; empty means the name of the op
	// that produces f's output.
	Name string
	// Eps is the finite-difference step, scaled by max(1, |x|) for each
	// element. Zero means 1e-6 for float64 and 1e-3 for float32.
	Eps float64
	// Tol is the largest relative error accepted by the first-order modes
	// (vjp, jvp). Zero means 1e-5 for float64 and 1e-2 for float32.
	Tol float64
	// Tol2 is the same for the second-order modes (vjp2, jvp-of-vjp).
	// Zero means 1e-4 for float64 and 5e-2 for float32.
	Tol2 float64
	// Seed seeds the random projections and directions.
	Seed uint64
	// Order is 1 for the first-order modes only, 2 (or 0) for all four.
	Order int
	// Directions is the number of random directions per input for the
	// forward-mode checks. Zero means 2.
	Directions int
	// MaxElements, when positive, limits the element-by-element checks
	// (vjp, vjp2) to that many elements per input, chosen at random; each
	// element costs two evaluations of f. Zero checks every element.
	MaxElements int
}

// GradCheckResult is the outcome of one mode for one input.
type GradCheckResult struct {
	Mode  string // one of ModeVJP, ModeJVP, ModeVJP2, ModeJVPofVJP
	Input int    // index of the input differentiated (vjp, vjp2) or perturbed (jvp, jvp-of-vjp)
	// MaxRelErr is the worst relative error |a−b| / max(1, |a|, |b|) over
	// the compared numbers; NaN anywhere counts as +Inf.
	MaxRelErr float64
	Tol       float64 // the tolerance it was held to
	Passed    bool    // MaxRelErr <= Tol
	Worst     string  // where the worst error occurred, with both values
}

// GradCheckReport collects the results of GradCheck.
type GradCheckReport struct {
	Name    string            // the check's label: GradCheckOptions.Name or the output op's name
	Results []GradCheckResult // one per mode and input, in the order run
	Passed  bool              // every result passed
}

// MaxRelErr returns the worst relative error of a mode over all inputs,
// or NaN if the mode was not run.
func (r GradCheckReport) MaxRelErr(mode string) float64 {
	worst := math.NaN()
	for _, res := range r.Results {
		if res.Mode == mode && !(res.MaxRelErr <= worst) {
			worst = res.MaxRelErr
		}
	}
	return worst
}

// GradCheck checks the derivatives of f, a function built from graph ops
// (typically a single op, possibly a user's own), against central finite
// differences at the given inputs. It builds f on a fresh graph with one
// Var per input (a copy: the caller's tensors are not modified) and, with u
// and w random tensors shaped like f's output and the inputs:
//
//   - vjp: the gradient of ⟨u, f(x)⟩ by reverse mode, element by element
//     against finite differences of ⟨u, f(x)⟩;
//   - jvp: the JVP along random directions v against
//     (f(x+hv) − f(x−hv)) / 2h, and the duality ⟨u, J v⟩ = ⟨Jᵀu, v⟩;
//   - vjp2 (Order 2): the gradient of ⟨∇⟨u, f⟩, w⟩ by reverse of reverse
//     against finite differences of the first-order gradient;
//   - jvp-of-vjp (Order 2): the JVP of the gradient of ⟨u, f⟩ (a
//     Hessian-vector product) against finite differences of that gradient.
//
// Every input is differentiated, so inputs that are not differentiable
// (indices, masks) belong in f's closure. The relative error of a pair a,
// b is |a−b| / max(1, |a|, |b|). Inputs may be float32, with looser default
// tolerances; differences are always accumulated in float64.
//
// GradCheck returns the report and, if some result failed, an error naming
// the op, the mode, the input and the worst element. A *tensor.Error panic
// from f (or from a derivative rule) is returned as an error too.
func GradCheck(f func(xs []*graph.Node) *graph.Node, inputs []*tensor.Tensor, opt GradCheckOptions) (rep GradCheckReport, err error) {
	done := false
	defer func() {
		if err != nil && !done { // a *tensor.Error panic, recovered below
			err = fmt.Errorf("autodiff.GradCheck %s: %w", rep.Name, err)
		}
	}()
	defer tensor.Recover(&err)
	rep.Name = opt.Name
	if f == nil {
		tensor.Fail("GradCheck", "f is nil")
	}
	if len(inputs) == 0 {
		tensor.Fail("GradCheck", "no inputs")
	}
	c := &checker{f: f, g: graph.New(), rng: tensor.NewRNG(opt.Seed)}
	for i, in := range inputs {
		if in == nil {
			tensor.Fail("GradCheck", "input %d is nil", i)
		}
		c.xs = append(c.xs, in.Clone())
	}
	y, _ := c.eval()
	if rep.Name == "" {
		rep.Name = "(leaf)"
		if y.Op() != nil {
			rep.Name = y.Op().Name()
		}
	}
	c.yShape, c.yDType = append([]int(nil), y.Shape()...), y.DType()
	c.u = c.rng.Normal(c.yDType, 0, 1, c.yShape...)
	if opt.Directions <= 0 {
		opt.Directions = 2
	}

	for i := range c.xs {
		tol := tolFor(opt.Tol, c.xs[i].DType(), 1e-5, 1e-2)
		rep.Results = append(rep.Results, c.checkVJP(i, opt, tol))
	}
	for i := range c.xs {
		tol := tolFor(opt.Tol, c.xs[i].DType(), 1e-5, 1e-2)
		rep.Results = append(rep.Results, c.checkJVP(i, opt, tol))
	}
	if opt.Order != 1 {
		c.w = make([]*tensor.Tensor, len(c.xs))
		for i, x := range c.xs {
			c.w[i] = c.rng.Normal(x.DType(), 0, 1, x.Shape()...)
		}
		for i := range c.xs {
			tol := tolFor(opt.Tol2, c.xs[i].DType(), 1e-4, 5e-2)
			rep.Results = append(rep.Results, c.checkVJP2(i, opt, tol))
		}
		for i := range c.xs {
			tol := tolFor(opt.Tol2, c.xs[i].DType(), 1e-4, 5e-2)
			rep.Results = append(rep.Results, c.checkJVPofVJP(i, opt, tol))
		}
	}
	c.g.Reset()

	done = true
	rep.Passed = true
	for _, r := range rep.Results {
		if !r.Passed && rep.Passed {
			rep.Passed = false
			err = fmt.Errorf("autodiff.GradCheck: op %s, mode %s, input %d: max relative error %.3g > tolerance %.3g (%s)",
				rep.Name, r.Mode, r.Input, r.MaxRelErr, r.Tol, r.Worst)
		}
	}
	return rep, err
}

func tolFor(set float64, dt tensor.DType, f64, f32 float64) float64 {
	switch {
	case set > 0:
		return set
	case dt == tensor.Float32:
		return f32
	}
	return f64
}

func epsFor(set float64, dt tensor.DType) float64 {
	switch {
	case set > 0:
		return set
	case dt == tensor.Float32:
		return 1e-3
	}
	return 1e-6
}

// checker holds the state of one GradCheck: the perturbed copies of the
// inputs and the random projections. Every evaluation rebuilds f on the
// same graph after a Reset, so values are copied out before the next one.
type checker struct {
	f      func(xs []*graph.Node) *graph.Node
	g      *graph.Graph
	rng    *tensor.RNG
	xs     []*tensor.Tensor // contiguous copies, perturbed in place
	u      *tensor.Tensor   // projection of the output
	w      []*tensor.Tensor // projections of the gradient (second order)
	yShape []int
	yDType tensor.DType
}

// eval builds f afresh and returns its output and the input nodes.
func (c *checker) eval() (*graph.Node, []*graph.Node) {
	c.g.Reset()
	vars := make([]*graph.Node, len(c.xs))
	for i, x := range c.xs {
		vars[i] = c.g.Var(x)
	}
	y := c.f(vars)
	if y == nil {
		tensor.Fail("GradCheck", "f returned nil")
	}
	if y.Graph() != c.g {
		tensor.Fail("GradCheck", "f returned a node of another graph")
	}
	if c.yShape != nil && (!slices.Equal(y.Shape(), c.yShape) || y.DType() != c.yDType) {
		tensor.Fail("GradCheck", "f returned %v %v after %v %v for perturbed inputs", y.Shape(), y.DType(), c.yShape, c.yDType)
	}
	return y, vars
}

// grads evaluates f and the gradients of ⟨u, f⟩ with respect to every input.
func (c *checker) grads() ([]*graph.Node, []*graph.Node) {
	y, vars := c.eval()
	return VJP(y, c.g.Const(c.u), vars...), vars
}

func (c *checker) objective() float64 {
	y, _ := c.eval()
	return dot(c.u.Values(), y.Value().Values())
}

func (c *checker) gradObjective() float64 {
	gs, _ := c.grads()
	s := 0.0
	for i, gi := range gs {
		s += dot(c.w[i].Values(), gi.Value().Values())
	}
	return s
}

// perturb sets element k of input i to x0+h and returns the value stored,
// which differs from x0+h after rounding to float32.
func (c *checker) perturb(i, k int, v float64) float64 {
	x := c.xs[i]
	if x.DType() == tensor.Float32 {
		x.Float32s()[k] = float32(v)
		return float64(x.Float32s()[k])
	}
	x.Float64s()[k] = v
	return v
}

// centralDiff returns the central difference of fn with respect to element
// k of input i.
func (c *checker) centralDiff(i, k int, eps float64, fn func() float64) float64 {
	x0 := elem(c.xs[i], k)
	h := eps * math.Max(1, math.Abs(x0))
	xp := c.perturb(i, k, x0+h)
	fp := fn()
	xm := c.perturb(i, k, x0-h)
	fm := fn()
	c.perturb(i, k, x0)
	return (fp - fm) / (xp - xm)
}

// elements returns the indices of the elements to check among n: all of
// them, or limit distinct ones at random.
func (c *checker) elements(n, limit int) []int {
	if limit <= 0 || limit >= n {
		idx := make([]int, n)
		for k := range idx {
			idx[k] = k
		}
		return idx
	}
	return c.rng.Perm(n)[:limit]
}

// elem returns element k of a contiguous tensor.
func elem(t *tensor.Tensor, k int) float64 {
	if t.DType() == tensor.Float32 {
		return float64(t.Float32s()[k])
	}
	return t.Float64s()[k]
}

// shift adds s·v to input i in place.
func (c *checker) shift(i int, v *tensor.Tensor, s float64) {
	x := c.xs[i]
	vv := v.Values()
	if x.DType() == tensor.Float32 {
		d := x.Float32s()
		for k := range d {
			d[k] += float32(s * vv[k])
		}
		return
	}
	d := x.Float64s()
	for k := range d {
		d[k] += s * vv[k]
	}
}

// directionalDiff returns the central difference of fn along v for input
// i, restoring the input afterwards.
func (c *checker) directionalDiff(i int, v *tensor.Tensor, eps float64, fn func() [][]float64) [][]float64 {
	x0 := c.xs[i].Clone()
	h := eps * math.Max(1, maxAbs(x0.Values()))
	c.shift(i, v, h)
	fp := fn()
	tensor.CopyInto(c.xs[i], x0)
	c.shift(i, v, -h)
	fm := fn()
	tensor.CopyInto(c.xs[i], x0)
	for a := range fp {
		for k := range fp[a] {
			fp[a][k] = (fp[a][k] - fm[a][k]) / (2 * h)
		}
	}
	return fp
}

func (c *checker) checkVJP(i int, opt GradCheckOptions, tol float64) GradCheckResult {
	gs, _ := c.grads()
	return c.checkElements(ModeVJP, i, gs[i].Value().Values(), c.objective, opt, tol)
}

// checkElements compares ad, the derivative of fn with respect to input i
// by reverse mode, against central differences of fn, element by element.
func (c *checker) checkElements(mode string, i int, ad []float64, fn func() float64, opt GradCheckOptions, tol float64) GradCheckResult {
	e := newErrTracker(mode, i, tol)
	eps := epsFor(opt.Eps, c.xs[i].DType())
	for _, k := range c.elements(len(ad), opt.MaxElements) {
		e.add(ad[k], c.centralDiff(i, k, eps, fn), "element %d", k)
	}
	return e.result()
}

func (c *checker) checkJVP(i int, opt GradCheckOptions, tol float64) GradCheckResult {
	e := newErrTracker(ModeJVP, i, tol)
	eps := epsFor(opt.Eps, c.xs[i].DType())
	for d := 0; d < opt.Directions; d++ {
		v := c.rng.Normal(c.xs[i].DType(), 0, 1, c.xs[i].Shape()...)
		y, vars := c.eval()
		tangents := make([]*graph.Node, len(vars))
		tangents[i] = c.g.Const(v)
		jv := JVP([]*graph.Node{y}, vars, tangents)[0].Value().Values()
		vjp := VJP(y, c.g.Const(c.u), vars[i])[0].Value()
		e.add(dot(c.u.Values(), jv), dot(vjp.Values(), v.Values()), "direction %d: ⟨u, J v⟩ by JVP against ⟨Jᵀu, v⟩ by VJP", d)
		fd := c.directionalDiff(i, v, eps, func() [][]float64 {
			y, _ := c.eval()
			return [][]float64{y.Value().Values()}
		})[0]
		for k := range jv {
			e.add(jv[k], fd[k], "direction %d, output element %d", d, k)
		}
	}
	return e.result()
}

func (c *checker) checkVJP2(i int, opt GradCheckOptions, tol float64) GradCheckResult {
	gs, vars := c.grads()
	seeds := make([]*graph.Node, len(gs))
	for j := range gs {
		seeds[j] = c.g.Const(c.w[j])
	}
	ad := backward("GradCheck", gs, seeds, vars[i:i+1])[0].Value().Values()
	return c.checkElements(ModeVJP2, i, ad, c.gradObjective, opt, tol)
}

func (c *checker) checkJVPofVJP(i int, opt GradCheckOptions, tol float64) GradCheckResult {
	e := newErrTracker(ModeJVPofVJP, i, tol)
	eps := epsFor(opt.Eps, c.xs[i].DType())
	for d := 0; d < opt.Directions; d++ {
		v := c.rng.Normal(c.xs[i].DType(), 0, 1, c.xs[i].Shape()...)
		gs, vars := c.grads()
		tangents := make([]*graph.Node, len(vars))
		tangents[i] = c.g.Const(v)
		hv := JVP(gs, vars, tangents)
		ad := make([][]float64, len(hv))
		for j := range hv {
			ad[j] = hv[j].Value().Values()
		}
		fd := c.directionalDiff(i, v, eps, func() [][]float64 {
			gs, _ := c.grads()
			out := make([][]float64, len(gs))
			for j := range gs {
				out[j] = gs[j].Value().Values()
			}
			return out
		})
		for j := range ad {
			for k := range ad[j] {
				e.add(ad[j][k], fd[j][k], "direction %d, gradient of input %d, element %d", d, j, k)
			}
		}
	}
	return e.result()
}

// errTracker keeps the worst relative error of one result.
type errTracker struct {
	res GradCheckResult
}

func newErrTracker(mode string, input int, tol float64) *errTracker {
	return &errTracker{res: GradCheckResult{Mode: mode, Input: input, Tol: tol}}
}

func (e *errTracker) add(ad, fd float64, where string, args ...any) {
	r := relErr(ad, fd)
	if r > e.res.MaxRelErr || (e.res.Worst == "" && r >= e.res.MaxRelErr) {
		e.res.MaxRelErr = r
		e.res.Worst = fmt.Sprintf(where, args...) + fmt.Sprintf(": autodiff %.10g, finite differences %.10g", ad, fd)
	}
}

func (e *errTracker) result() GradCheckResult {
	e.res.Passed = e.res.MaxRelErr <= e.res.Tol
	return e.res
}

// relErr is |a−b| / max(1, |a|, |b|): absolute near zero, relative for
// large values. NaN on either side is +Inf.
func relErr(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.Inf(1)
	}
	if a == b { // equal infinities
		return 0
	}
	return math.Abs(a-b) / math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
