package nn

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Initialisers fill a tensor in place and return it, as torch.nn.init's
// functions do. Random ones take an explicit *tensor.RNG, so the same seed
// gives the same weights on every run.

// FanMode selects which fan Kaiming initialisation preserves: FanIn keeps
// the variance of activations in the forward pass, FanOut that of gradients
// in the backward pass.
type FanMode int

const (
	FanIn  FanMode = iota // preserve the forward variance (PyTorch's default)
	FanOut                // preserve the backward variance
)

// Fans returns the fan-in and fan-out of a weight of the given shape, as
// torch.nn.init._calculate_fan_in_and_fan_out: for (out, in, k...) the fan
// in is in·Πk and the fan out out·Πk. It panics for fewer than two
// dimensions.
func Fans(shape []int) (fanIn, fanOut int) {
	if len(shape) < 2 {
		tensor.Fail("nn.Fans", "fan in and fan out need at least 2 dimensions, got %s", tensor.FormatShape(shape))
	}
	field := 1
	for _, d := range shape[2:] {
		field *= d
	}
	return shape[1] * field, shape[0] * field
}

// Gain returns the recommended gain for a nonlinearity, as
// torch.nn.init.calculate_gain: 1 for "linear", "identity", "sigmoid" and
// the convolutions ("conv1d", "conv2d", "conv3d", and "conv_transpose1d" …);
// 5/3 for "tanh"; √2 for "relu"; √(2/(1+slope²)) for "leaky_relu" with
// param the negative slope (0.01 when param is negative, as torch's None);
// 3/4 for "selu". It panics for any other name.
func Gain(nonlinearity string, param float64) float64 {
	switch nonlinearity {
	case "linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d",
		"conv_transpose1d", "conv_transpose2d", "conv_transpose3d":
		return 1
	case "tanh":
		return 5.0 / 3
	case "relu":
		return math.Sqrt2
	case "leaky_relu":
		if param < 0 {
			param = 0.01
		}
		return math.Sqrt(2 / (1 + param*param))
	case "selu":
		return 0.75
	}
	tensor.Fail("nn.Gain", "unsupported nonlinearity %q", nonlinearity)
	return 0
}

// Uniform fills t with values drawn from U(lo, hi) and returns it.
func Uniform(rng *tensor.RNG, t *tensor.Tensor, lo, hi float64) *tensor.Tensor {
	checkRNG("nn.Uniform", rng)
	tensor.CopyInto(t, rng.Uniform(t.DType(), lo, hi, t.Shape()...))
	return t
}

// Normal fills t with values drawn from N(mean, std²) and returns it.
func Normal(rng *tensor.RNG, t *tensor.Tensor, mean, std float64) *tensor.Tensor {
	checkRNG("nn.Normal", rng)
	tensor.CopyInto(t, rng.Normal(t.DType(), mean, std, t.Shape()...))
	return t
}

// Zeros fills t with zeros and returns it.
func Zeros(t *tensor.Tensor) *tensor.Tensor { t.Fill(0); return t }

// Ones fills t with ones and returns it.
func Ones(t *tensor.Tensor) *tensor.Tensor { t.Fill(1); return t }

// XavierUniform fills t with U(−a, a), a = gain·√(6/(fan_in+fan_out))
// (Glorot and Bengio 2010), and returns it.
func XavierUniform(rng *tensor.RNG, t *tensor.Tensor, gain float64) *tensor.Tensor {
	in, out := Fans(t.Shape())
	a := gain * math.Sqrt(6/float64(in+out))
	return Uniform(rng, t, -a, a)
}

// XavierNormal fills t with N(0, σ²), σ = gain·√(2/(fan_in+fan_out)), and
// returns it.
func XavierNormal(rng *tensor.RNG, t *tensor.Tensor, gain float64) *tensor.Tensor {
	in, out := Fans(t.Shape())
	return Normal(rng, t, 0, gain*math.Sqrt(2/float64(in+out)))
}

// kaimingStd is gain/√fan, the standard deviation He et al. (2015) derive.
func kaimingStd(op string, t *tensor.Tensor, a float64, mode FanMode, nonlinearity string) float64 {
	in, out := Fans(t.Shape())
	fan := in
	switch mode {
	case FanIn:
	case FanOut:
		fan = out
	default:
		tensor.Fail(op, "unknown fan mode %d", mode)
	}
	if fan == 0 {
		tensor.Fail(op, "cannot initialise a tensor of shape %s: its fan is zero", tensor.FormatShape(t.Shape()))
	}
	return Gain(nonlinearity, a) / math.Sqrt(float64(fan))
}

// KaimingUniform fills t with U(−b, b), b = gain·√(3/fan), where fan is
// chosen by mode and the gain by the nonlinearity ("relu", "leaky_relu"
// with negative slope a, "linear", ...), as torch.nn.init.kaiming_uniform_;
// it returns t. PyTorch's Linear and Conv2D use a = √5 with "leaky_relu",
// which gives b = 1/√fan_in.
func KaimingUniform(rng *tensor.RNG, t *tensor.Tensor, a float64, mode FanMode, nonlinearity string) *tensor.Tensor {
	b := math.Sqrt(3) * kaimingStd("nn.KaimingUniform", t, a, mode, nonlinearity)
	return Uniform(rng, t, -b, b)
}

// KaimingNormal fills t with N(0, σ²), σ = gain/√fan, as
// torch.nn.init.kaiming_normal_, and returns it.
func KaimingNormal(rng *tensor.RNG, t *tensor.Tensor, a float64, mode FanMode, nonlinearity string) *tensor.Tensor {
	return Normal(rng, t, 0, kaimingStd("nn.KaimingNormal", t, a, mode, nonlinearity))
}

// Orthogonal fills t with a (semi-)orthogonal matrix times gain, as
// torch.nn.init.orthogonal_ (Saxe et al. 2013): t is viewed as a matrix of
// shape (t.Dim(0), rest); its rows are orthonormal if there are fewer rows
// than columns, its columns otherwise. The matrix is the Q factor of a
// Gaussian matrix, with signs fixed so that R's diagonal is positive, which
// makes it uniformly (Haar) distributed. It returns t and panics for fewer
// than two dimensions.
func Orthogonal(rng *tensor.RNG, t *tensor.Tensor, gain float64) *tensor.Tensor {
	checkRNG("nn.Orthogonal", rng)
	if t.Dim() < 2 {
		tensor.Fail("nn.Orthogonal", "only tensors with 2 or more dimensions are supported, got %s", tensor.FormatShape(t.Shape()))
	}
	rows := t.Shape()[0]
	cols := t.Size() / max(rows, 1)
	if rows == 0 || cols == 0 {
		return t
	}
	m, n := rows, cols
	if rows < cols {
		m, n = cols, rows
	}
	a := rng.Normal(tensor.Float64, 0, 1, m, n).Float64s()
	q := householderQ(a, m, n)
	out := make([]float64, rows*cols)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := gain * q[i*n+j]
			if rows < cols {
				out[j*cols+i] = v // transpose back
			} else {
				out[i*cols+j] = v
			}
		}
	}
	tensor.CopyInto(t, tensor.FromValues(t.DType(), out, t.Shape()...))
	return t
}

// householderQ returns the thin Q factor (m×n, row-major) of the m×n
// matrix a (m ≥ n, row-major, overwritten) from a Householder QR
// factorisation, with each column's sign chosen so that R has a
// non-negative diagonal.
func householderQ(a []float64, m, n int) []float64 {
	vs := make([][]float64, n) // Householder vectors, vs[k] of length m−k
	diag := make([]float64, n) // R's diagonal
	for k := 0; k < n; k++ {
		// v = x + sign(x₀)·‖x‖·e₁ reflects x onto −sign(x₀)·‖x‖·e₁.
		v := make([]float64, m-k)
		norm := 0.0
		for i := k; i < m; i++ {
			v[i-k] = a[i*n+k]
			norm += v[i-k] * v[i-k]
		}
		norm = math.Sqrt(norm)
		alpha := -norm
		if v[0] < 0 {
			alpha = norm
		}
		diag[k] = alpha
		v[0] -= alpha
		vn := 0.0
		for _, x := range v {
			vn += x * x
		}
		if vn == 0 { // the column is already zero below the diagonal
			vs[k] = nil
			continue
		}
		vs[k] = v
		// Apply H = I − 2vvᵀ/(vᵀv) to the remaining columns.
		for j := k + 1; j < n; j++ {
			s := 0.0
			for i := k; i < m; i++ {
				s += v[i-k] * a[i*n+j]
			}
			s *= 2 / vn
			for i := k; i < m; i++ {
				a[i*n+j] -= s * v[i-k]
			}
		}
	}
	// Q = H₀H₁…Hₙ₋₁ applied to the first n columns of the identity.
	q := make([]float64, m*n)
	for j := 0; j < n; j++ {
		q[j*n+j] = 1
	}
	for k := n - 1; k >= 0; k-- {
		v := vs[k]
		if v == nil {
			continue
		}
		vn := 0.0
		for _, x := range v {
			vn += x * x
		}
		for j := 0; j < n; j++ {
			s := 0.0
			for i := k; i < m; i++ {
				s += v[i-k] * q[i*n+j]
			}
			s *= 2 / vn
			for i := k; i < m; i++ {
				q[i*n+j] -= s * v[i-k]
			}
		}
	}
	// Make R's diagonal non-negative: Q·D, R ← D·R with D = diag(sign).
	for j := 0; j < n; j++ {
		if diag[j] < 0 {
			for i := 0; i < m; i++ {
				q[i*n+j] = -q[i*n+j]
			}
		}
	}
	return q
}

func checkRNG(op string, rng *tensor.RNG) {
	if rng == nil {
		tensor.Fail(op, "nil *tensor.RNG: initialisers take an explicit seeded generator")
	}
}
