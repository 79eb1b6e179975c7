package privacy

import (
	"errors"
	"fmt"
	"math"
)

// DefaultOrders returns the Rényi orders the accountant evaluates when none
// are given: 1.25 to 4.5 in steps of a quarter or a half, every integer from
// 5 to 63, then 64, 128 and 256 (the grid of TensorFlow Privacy's
// compute_dp_sgd_privacy, without its 512). Small orders give the best ε
// for long runs at small δ, large ones for short runs.
func DefaultOrders() []float64 {
	orders := []float64{1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5}
	for a := 5; a <= 64; a++ {
		orders = append(orders, float64(a))
	}
	return append(orders, 128, 256)
}

// RDP returns the Rényi differential privacy of steps compositions of the
// sampled Gaussian mechanism at each order: every step includes each
// example independently with probability q (Poisson sampling) and adds
// Gaussian noise of standard deviation sigma times the sensitivity.
// rdp[i] is the bound on the Rényi divergence of order orders[i] between
// the outputs on neighbouring data sets, steps·log(A_α)/(α−1), with
// A_α = E_{z∼N(0,σ²)}[((1−q) + q·e^{(2z−1)/(2σ²)})^α] (Mironov, Talwar and
// Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian
// Mechanism", Section 3.3): a finite binomial sum for integer α, two
// convergent series with erfc terms otherwise.
//
// q = 0 gives 0; q = 1 gives the Gaussian mechanism's steps·α/(2σ²);
// sigma = 0 (with q > 0) gives +Inf. It returns an error if q is outside
// [0, 1], sigma or steps is negative or not finite, or an order is not
// finite and above 1.
func RDP(q, sigma float64, steps int, orders []float64) ([]float64, error) {
	if err := checkMechanism("RDP", q, sigma, steps); err != nil {
		return nil, err
	}
	if err := checkOrders(orders); err != nil {
		return nil, fmt.Errorf("privacy.RDP: %w", err)
	}
	out := make([]float64, len(orders))
	for i, a := range orders {
		out[i] = float64(steps) * rdpOnce(q, sigma, a)
	}
	return out, nil
}

func checkMechanism(op string, q, sigma float64, steps int) error {
	switch {
	case !(q >= 0 && q <= 1):
		return fmt.Errorf("privacy.%s: sampling rate q = %g must lie in [0, 1]", op, q)
	case !(sigma >= 0) || math.IsInf(sigma, 0):
		return fmt.Errorf("privacy.%s: noise multiplier sigma = %g must be finite and >= 0", op, sigma)
	case steps < 0:
		return fmt.Errorf("privacy.%s: steps = %d must be >= 0", op, steps)
	}
	return nil
}

func checkOrders(orders []float64) error {
	if len(orders) == 0 {
		return errors.New("no Rényi orders")
	}
	for i, a := range orders {
		if !(a > 1) || math.IsInf(a, 0) {
			return fmt.Errorf("order %d is %g; orders must be finite and > 1", i, a)
		}
	}
	return nil
}

// rdpOnce is the RDP of one step at order a.
func rdpOnce(q, sigma, a float64) float64 {
	switch {
	case q == 0:
		return 0
	case sigma == 0:
		return math.Inf(1)
	case q == 1:
		return a / (2 * sigma * sigma)
	}
	if a == math.Trunc(a) {
		return logAInt(q, sigma, int(a)) / (a - 1)
	}
	return logAFrac(q, sigma, a) / (a - 1)
}

// logAInt is log A_α for integer α ≥ 2 by the binomial expansion
// A_α = Σ_k C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}. The binomial weights
// sum to 1 and the k = 0, 1 exponentials are 1, so it sums
// A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k (e^{(k²−k)/(2σ²)} − 1), whose
// terms are all positive, and returns log1p of it: for small q the RDP is
// tiny and log(A_α) summed directly would lose it to rounding.
func logAInt(q, sigma float64, a int) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	lgA, _ := math.Lgamma(float64(a) + 1)
	s := math.Inf(-1) // log(A_α − 1)
	for k := 2; k <= a; k++ {
		lgK, _ := math.Lgamma(float64(k) + 1)
		lgAK, _ := math.Lgamma(float64(a-k) + 1)
		x := float64(k*k-k) / (2 * sigma * sigma)
		s = logAddExp(s, lgA-lgK-lgAK+float64(a-k)*l1q+float64(k)*lq+logExpm1(x))
	}
	return log1pExp(s)
}

// logAFrac is log A_α for fractional α > 1, split at z0, where
// q·μ1(z) = (1−q)·μ0(z): below z0 the integrand is expanded in powers of
// q·μ1/μ0, above it in powers of (1−q), each power integrating to a
// Gaussian tail (Mironov, Talwar and Zhang 2019, Section 3.3):
//
//	A_α = Σ_i C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} ½erfc((i−z0)/(√2σ))
//	    + Σ_i C(α,i) q^{α−i} (1−q)^i e^{(j²−j)/(2σ²)} ½erfc((z0−j)/(√2σ)),  j = α−i.
//
// For i > α the binomial coefficients alternate in sign and both series
// decrease like i^{−α−2}, so stopping when a term falls below 1e-17 of the
// partial sum bounds the truncation error by that term.
func logAFrac(q, sigma, a float64) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	z0 := sigma*sigma*(math.Log(1/q-1)) + 0.5
	s2 := math.Sqrt2 * sigma
	lgA, _ := math.Lgamma(a + 1)
	var sum0, sum1 signedLog
	sum0.l, sum1.l = math.Inf(-1), math.Inf(-1)
	for i := 0; ; i++ {
		fi := float64(i)
		lgI, _ := math.Lgamma(fi + 1)
		lgAI, sign := math.Lgamma(a - fi + 1)
		lc := lgA - lgI - lgAI
		j := a - fi
		t0 := lc + fi*lq + j*l1q + (fi*fi-fi)/(2*sigma*sigma) + logHalfErfc((fi-z0)/s2)
		t1 := lc + j*lq + fi*l1q + (j*j-j)/(2*sigma*sigma) + logHalfErfc((z0-j)/s2)
		sum0.add(sign, t0)
		sum1.add(sign, t1)
		if fi > a && max(t0, t1) < logAddExp(sum0.l, sum1.l)-39 || i > 1_000_000 {
			break
		}
	}
	return logAddExp(sum0.l, sum1.l)
}

// signedLog is a running sum s·e^l of terms given by sign and logarithm.
type signedLog struct {
	l   float64
	neg bool
}

func (s *signedLog) add(sign int, l float64) {
	neg := sign < 0
	switch {
	case math.IsInf(l, -1):
	case math.IsInf(s.l, -1):
		s.l, s.neg = l, neg
	case neg == s.neg:
		s.l = logAddExp(s.l, l)
	case l < s.l:
		s.l += math.Log1p(-math.Exp(l - s.l))
	default:
		s.l, s.neg = l+math.Log1p(-math.Exp(s.l-l)), neg
	}
}

// logAddExp is log(e^a + e^b) without overflow.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// log1pExp is log(1 + e^x), accurate for x far below 0.
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// logExpm1 is log(e^x − 1) for x > 0, without overflow.
func logExpm1(x float64) float64 {
	if x > 30 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// logHalfErfc is log(½·erfc(x)), by the asymptotic expansion where erfc
// underflows.
func logHalfErfc(x float64) float64 {
	if x < 20 {
		return math.Log(0.5 * math.Erfc(x))
	}
	// erfc(x) = e^{−x²}/(x√π)·(1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶) + …)
	r := 1 / (x * x)
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) - math.Ln2 +
		math.Log1p(-r/2+3*r*r/4-15*r*r*r/8)
}
