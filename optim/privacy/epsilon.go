package privacy

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Conversion selects how a Rényi-DP curve becomes an (ε, δ) guarantee.
type Conversion int

const (
	// Balle2020 is ε = RDP(α) + log((α−1)/α) − (log δ + log α)/(α−1),
	// minimised over the orders (Balle, Barthe, Gaboardi, Hsu and Sato
	// 2020, "Hypothesis Testing Interpretations and Rényi Differential
	// Privacy", Theorem 21). It is smaller than Mironov2017 at every order
	// and is what Opacus and current TensorFlow Privacy report. The default.
	Balle2020 Conversion = iota
	// Mironov2017 is the classic ε = RDP(α) + log(1/δ)/(α−1), minimised
	// over the orders (Mironov 2017, "Rényi Differential Privacy",
	// Proposition 3), as Abadi et al. 2016 and the first TensorFlow Privacy
	// tutorials reported.
	Mironov2017
)

// String names the conversion.
func (c Conversion) String() string {
	switch c {
	case Balle2020:
		return "Balle et al. 2020"
	case Mironov2017:
		return "Mironov 2017"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// Epsilon converts the Rényi-DP curve rdp (rdp[i] at orders[i], as RDP
// returns) into the smallest ε over the orders such that the mechanism is
// (ε, δ)-differentially private, and returns the order that attains it.
// ε is never below 0. It returns an error if the slices differ in length,
// an order is not finite and above 1, an rdp value is negative or NaN,
// delta is not in (0, 1) or the conversion is unknown.
func Epsilon(orders, rdp []float64, delta float64, conv Conversion) (eps, order float64, err error) {
	if err := checkOrders(orders); err != nil {
		return 0, 0, fmt.Errorf("privacy.Epsilon: %w", err)
	}
	switch {
	case len(rdp) != len(orders):
		return 0, 0, fmt.Errorf("privacy.Epsilon: %d RDP values for %d orders", len(rdp), len(orders))
	case !(delta > 0 && delta < 1):
		return 0, 0, fmt.Errorf("privacy.Epsilon: delta = %g must lie in (0, 1)", delta)
	case conv != Balle2020 && conv != Mironov2017:
		return 0, 0, fmt.Errorf("privacy.Epsilon: unknown conversion %d", int(conv))
	}
	eps, order = math.Inf(1), orders[0]
	logDelta := math.Log(delta)
	for i, a := range orders {
		r := rdp[i]
		if !(r >= 0) {
			return 0, 0, fmt.Errorf("privacy.Epsilon: RDP at order %g is %g; want a value >= 0", a, r)
		}
		e := r - logDelta/(a-1)
		if conv == Balle2020 {
			e = r + math.Log1p(-1/a) - (logDelta+math.Log(a))/(a-1)
		}
		if e < eps {
			eps, order = e, a
		}
	}
	return max(eps, 0), order, nil
}

// AccountantOptions configures an Accountant.
type AccountantOptions struct {
	// Orders are the Rényi orders tracked (nil: DefaultOrders()).
	Orders []float64
	// Conversion turns the RDP curve into ε (zero value: Balle2020).
	Conversion Conversion
}

// Accountant tracks the privacy spent by a sequence of sampled Gaussian
// mechanisms, such as the steps of DP-SGD, by adding their Rényi-DP
// curves (RDP composes additively at each order; Mironov 2017,
// Proposition 1), and reports it as (ε, δ).
type Accountant struct {
	orders []float64
	rdp    []float64
	conv   Conversion
}

// NewAccountant returns an accountant that has spent nothing. It panics
// with a *tensor.Error if an order is not finite and above 1 or the
// conversion is unknown.
func NewAccountant(opts AccountantOptions) *Accountant {
	orders := opts.Orders
	if orders == nil {
		orders = DefaultOrders()
	}
	if err := checkOrders(orders); err != nil {
		tensor.Fail("NewAccountant", "%v", err)
	}
	if opts.Conversion != Balle2020 && opts.Conversion != Mironov2017 {
		tensor.Fail("NewAccountant", "unknown conversion %d", int(opts.Conversion))
	}
	return &Accountant{orders: append([]float64(nil), orders...), rdp: make([]float64, len(orders)), conv: opts.Conversion}
}

// Compose records steps more steps of the sampled Gaussian mechanism with
// sampling rate q and noise multiplier sigma. On error (as RDP's) nothing
// is recorded.
func (a *Accountant) Compose(q, sigma float64, steps int) error {
	r, err := RDP(q, sigma, steps, a.orders)
	if err != nil {
		return err
	}
	for i := range r {
		a.rdp[i] += r[i]
	}
	return nil
}

// Epsilon returns the ε spent so far at delta, and the order attaining it.
// It returns an error if delta is not in (0, 1).
func (a *Accountant) Epsilon(delta float64) (eps, order float64, err error) {
	return Epsilon(a.orders, a.rdp, delta, a.conv)
}

// RDP returns the tracked orders and the Rényi-DP curve spent so far at
// each of them (copies).
func (a *Accountant) RDP() (orders, rdp []float64) {
	return append([]float64(nil), a.orders...), append([]float64(nil), a.rdp...)
}

// NoiseMultiplier returns the smallest noise multiplier σ, to a relative
// precision of 1e-4 and erring on the private side, for which steps steps
// of the sampled Gaussian mechanism at sampling rate q are (ε, δ)-DP with
// ε ≤ targetEps, under the orders and conversion of opts. It bisects on σ,
// as ε falls monotonically as σ grows. It returns an error for arguments
// RDP or Epsilon would refuse, a target that is not positive, or one that
// no σ up to 1e4 reaches.
func NoiseMultiplier(targetEps, delta, q float64, steps int, opts AccountantOptions) (float64, error) {
	orders := opts.Orders
	if orders == nil {
		orders = DefaultOrders()
	}
	if !(targetEps > 0) || math.IsInf(targetEps, 0) {
		return 0, fmt.Errorf("privacy.NoiseMultiplier: target epsilon %g must be finite and > 0", targetEps)
	}
	if err := checkMechanism("NoiseMultiplier", q, 1, steps); err != nil {
		return 0, err
	}
	epsAt := func(sigma float64) (float64, error) {
		r, err := RDP(q, sigma, steps, orders)
		if err != nil {
			return 0, err
		}
		e, _, err := Epsilon(orders, r, delta, opts.Conversion)
		return e, err
	}
	hi := 1.0
	for {
		e, err := epsAt(hi)
		if err != nil {
			return 0, fmt.Errorf("privacy.NoiseMultiplier: %w", err)
		}
		if e <= targetEps {
			break
		}
		if hi *= 2; hi > 1e4 {
			return 0, fmt.Errorf("privacy.NoiseMultiplier: no noise multiplier up to 1e4 reaches epsilon %g at delta %g", targetEps, delta)
		}
	}
	lo := hi / 2
	for hi-lo > 1e-4*hi {
		mid := (lo + hi) / 2
		if e, _ := epsAt(mid); e <= targetEps {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
