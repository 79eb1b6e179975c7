package kernel

import (
	"math"
	"strconv"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Kind names the profile f(r) of a Stationary kernel. Code that evaluates
// a stationary kernel outside a graph (gp's matrix-free products, its
// random Fourier features) switches on it.
type Kind int

// The stationary profiles.
const (
	KindRBF               Kind = iota // exp(−r²/2)
	KindMatern12                      // exp(−r)
	KindMatern32                      // (1 + √3 r) exp(−√3 r)
	KindMatern52                      // (1 + √5 r + 5r²/3) exp(−√5 r)
	KindRationalQuadratic             // (1 + r²/(2α))^(−α)
)

var stationaryNames = [...]string{"rbf", "matern12", "matern32", "matern52", "rq"}

// String returns the kernel's short name, the prefix of its
// hyperparameters' names ("rbf", "matern32", "rq").
func (k Kind) String() string {
	if k < 0 || int(k) >= len(stationaryNames) {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return stationaryNames[k]
}

// Stationary is a kernel k(x, x') = f(r) of the scaled distance
// r = ‖(x − x')/ℓ‖ with unit variance (wrap it in Scale for a variance):
//
//	RBF                 exp(−r²/2)
//	Matérn ½            exp(−r)
//	Matérn 3⁄2          (1 + √3 r) exp(−√3 r)
//	Matérn 5⁄2          (1 + √5 r + 5r²/3) exp(−√5 r)
//	rational quadratic  (1 + r²/(2α))^(−α)
//
// The lengthscale ℓ is one value (isotropic) or one per input dimension
// (automatic relevance determination, ARD).
type Stationary struct {
	kind        Kind
	lengthscale *Hyperparam
	alpha       *Hyperparam
}

func newStationary(kind Kind, lengthscale []float64) *Stationary {
	if len(lengthscale) == 0 {
		lengthscale = []float64{1}
	}
	name := stationaryNames[kind]
	return &Stationary{kind: kind, lengthscale: NewHyperparam(name+".lengthscale", lengthscale...)}
}

// NewRBF returns the squared-exponential kernel exp(−r²/2). One lengthscale
// (or none: 1) is isotropic; several give ARD, one per input dimension.
// Its hyperparameter is "rbf.lengthscale".
func NewRBF(lengthscale ...float64) *Stationary { return newStationary(KindRBF, lengthscale) }

// NewMatern12 returns the Matérn ν = ½ (exponential) kernel exp(−r).
func NewMatern12(lengthscale ...float64) *Stationary { return newStationary(KindMatern12, lengthscale) }

// NewMatern32 returns the Matérn ν = 3⁄2 kernel (1 + √3 r) exp(−√3 r).
func NewMatern32(lengthscale ...float64) *Stationary { return newStationary(KindMatern32, lengthscale) }

// NewMatern52 returns the Matérn ν = 5⁄2 kernel
// (1 + √5 r + 5r²/3) exp(−√5 r).
func NewMatern52(lengthscale ...float64) *Stationary { return newStationary(KindMatern52, lengthscale) }

// NewRationalQuadratic returns the rational quadratic kernel
// (1 + r²/(2α))^(−α), a scale mixture of RBF kernels; α → ∞ gives the RBF.
// Its hyperparameters are "rq.lengthscale" and "rq.alpha".
func NewRationalQuadratic(alpha float64, lengthscale ...float64) *Stationary {
	k := newStationary(KindRationalQuadratic, lengthscale)
	k.alpha = NewHyperparam("rq.alpha", alpha)
	return k
}

// Kind returns the kernel's profile.
func (k *Stationary) Kind() Kind { return k.kind }

// Lengthscale returns the lengthscale hyperparameter.
func (k *Stationary) Lengthscale() *Hyperparam { return k.lengthscale }

// Alpha returns the rational quadratic's shape hyperparameter α (nil for
// the other kernels).
func (k *Stationary) Alpha() *Hyperparam { return k.alpha }

// Hyperparams returns the lengthscale (and α for the rational quadratic).
func (k *Stationary) Hyperparams() []*Hyperparam {
	if k.alpha != nil {
		return []*Hyperparam{k.lengthscale, k.alpha}
	}
	return []*Hyperparam{k.lengthscale}
}

// scaled divides x by the lengthscale, checking an ARD lengthscale's size.
func (k *Stationary) scaled(op string, x *graph.Node, ls *graph.Node, d int) *graph.Node {
	if s := k.lengthscale.Size(); s > 1 && s != d {
		tensor.Fail(op, "%s has %d values but the inputs have %d columns", k.lengthscale.Name(), s, d)
	}
	return graph.Div(x, ls)
}

// K returns the covariance matrix between the rows of x1 and x2.
func (k *Stationary) K(x1, x2 *graph.Node) *graph.Node {
	op := "kernel." + stationaryNames[k.kind] + ".K"
	d := checkInputs(op, x1, x2)
	ls := k.lengthscale.Node(x1.Graph())
	a := k.scaled(op, x1, ls, d)
	b := a
	if x2 != x1 {
		b = k.scaled(op, x2, ls, d)
	}
	r2 := graph.SqDist(a, b)
	switch k.kind {
	case KindRBF:
		return graph.Exp(graph.MulScalar(r2, -0.5))
	case KindMatern12:
		return graph.Exp(graph.Neg(safeSqrt(r2)))
	case KindMatern32:
		s := graph.MulScalar(safeSqrt(r2), math.Sqrt(3))
		return graph.Mul(graph.AddScalar(s, 1), graph.Exp(graph.Neg(s)))
	case KindMatern52:
		s := graph.MulScalar(safeSqrt(r2), math.Sqrt(5))
		poly := graph.Add(graph.AddScalar(s, 1), graph.MulScalar(r2, 5.0/3))
		return graph.Mul(poly, graph.Exp(graph.Neg(s)))
	default: // rational quadratic: exp(−α log(1 + r²/(2α)))
		alpha := k.alpha.Node(x1.Graph())
		t := graph.Log1p(graph.Div(r2, graph.MulScalar(alpha, 2)))
		return graph.Exp(graph.Neg(graph.Mul(alpha, t)))
	}
}

// Diag returns ones: every stationary kernel here has unit variance.
func (k *Stationary) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel."+stationaryNames[k.kind]+".Diag", x)
	return fullConst(x.Graph(), x.DType(), 1, x.Shape()[0])
}

// Periodic is the periodic (exp-sine-squared) kernel of MacKay, as in
// scikit-learn's ExpSineSquared:
//
//	k(x, x') = exp(−2 sin²(π‖x − x'‖/p) / ℓ²)
//
// with period p and lengthscale ℓ (both scalars). Its hyperparameters are
// "periodic.lengthscale" and "periodic.period".
type Periodic struct {
	lengthscale, period *Hyperparam
}

// NewPeriodic returns the periodic kernel with the given lengthscale and
// period.
func NewPeriodic(lengthscale, period float64) *Periodic {
	return &Periodic{
		lengthscale: NewHyperparam("periodic.lengthscale", lengthscale),
		period:      NewHyperparam("periodic.period", period),
	}
}

// Lengthscale returns the lengthscale hyperparameter.
func (k *Periodic) Lengthscale() *Hyperparam { return k.lengthscale }

// Period returns the period hyperparameter.
func (k *Periodic) Period() *Hyperparam { return k.period }

// Hyperparams returns the lengthscale and the period.
func (k *Periodic) Hyperparams() []*Hyperparam { return []*Hyperparam{k.lengthscale, k.period} }

// K returns the covariance matrix between the rows of x1 and x2.
func (k *Periodic) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.periodic.K", x1, x2)
	g := x1.Graph()
	r := safeSqrt(graph.SqDist(x1, x2))
	s := graph.Sin(graph.Div(graph.MulScalar(r, math.Pi), k.period.Node(g)))
	ls := k.lengthscale.Node(g)
	return graph.Exp(graph.MulScalar(graph.Div(graph.Square(s), graph.Square(ls)), -2))
}

// Diag returns ones.
func (k *Periodic) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.periodic.Diag", x)
	return fullConst(x.Graph(), x.DType(), 1, x.Shape()[0])
}

// Profile returns the kernel as a function of the squared scaled distance
// r² = ‖(x − x')/ℓ‖², at the hyperparameters' current values, for code
// that evaluates many kernel entries outside a graph (the SVM solver's
// kernel columns). It equals K entry by entry.
func (k *Stationary) Profile() func(r2 float64) float64 {
	switch k.kind {
	case KindRBF:
		return func(r2 float64) float64 { return math.Exp(-0.5 * r2) }
	case KindMatern12:
		return func(r2 float64) float64 { return math.Exp(-math.Sqrt(max(r2, 0))) }
	case KindMatern32:
		return func(r2 float64) float64 {
			s := math.Sqrt(3 * max(r2, 0))
			return (1 + s) * math.Exp(-s)
		}
	case KindMatern52:
		return func(r2 float64) float64 {
			s := math.Sqrt(5 * max(r2, 0))
			return (1 + s + 5*r2/3) * math.Exp(-s)
		}
	default:
		alpha := k.alpha.Value()
		return func(r2 float64) float64 { return math.Exp(-alpha * math.Log1p(r2/(2*alpha))) }
	}
}
