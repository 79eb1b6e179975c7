package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// Optimizer updates a fixed list of parameters in place from their
// gradients. The parameter list is given once, to the constructor; Step
// takes the gradients in the same order.
type Optimizer interface {
	// Step applies one update. It returns an error, and changes neither
	// the parameters nor the optimiser's state, when the gradients do not
	// match the parameters or contain NaN or Inf.
	Step(grads []*tensor.Tensor) error
	// Params returns the parameters the optimiser updates, in order.
	Params() []*tensor.Tensor
	// LR returns the current learning rate.
	LR() float64
	// SetLR sets the learning rate used by the following steps; schedules
	// call it.
	SetLR(lr float64)
	// State returns a copy of the optimiser's state as named tensors, for
	// checkpoints, its per-parameter buffers keyed by the parameters' names
	// (names[i] names Params()[i], e.g. nn.Names(model.Params())).
	State(names []string) map[string]*tensor.Tensor
	// LoadState restores a state returned by State, matching the
	// per-parameter buffers by the parameters' names, so the parameters
	// may be listed in another order than when it was saved. It validates
	// every name, shape, dtype and value (no NaN or ±Inf; no negative
	// running squares) first and changes nothing on error, so a caller
	// restoring a model with it can call it last among the steps that may
	// fail.
	LoadState(names []string, state map[string]*tensor.Tensor) error
}

// ErrMismatch is wrapped by the errors of Step and LoadState when a tensor
// does not fit: wrong count, shape, dtype or name.
var ErrMismatch = errors.New("tensor does not fit")

// ErrNonFinite is wrapped by the error of Step when a gradient holds NaN or
// Inf, and by Minimize's when the objective is not finite at the start.
var ErrNonFinite = errors.New("NaN/Inf")

// Error is the error returned by Step and LoadState. Whatever it reports,
// the parameters and the optimiser's state were left unchanged.
type Error struct {
	Op    string // e.g. "Adam.Step"
	Param int    // index of the offending parameter, -1 if none in particular
	Msg   string // what was wrong
	Err   error  // ErrMismatch or ErrNonFinite
}

// Error formats the error as "optim.<Op>: <Msg>".
func (e *Error) Error() string { return "optim." + e.Op + ": " + e.Msg }

// Unwrap lets errors.Is match ErrMismatch or ErrNonFinite.
func (e *Error) Unwrap() error { return e.Err }

// Every optimiser satisfies Optimizer.
var (
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*Adam)(nil)
	_ Optimizer = (*RMSProp)(nil)
	_ Optimizer = (*Adagrad)(nil)
)

// slot is one state buffer of parameter param, e.g. its "exp_avg".
type slot struct {
	param  int
	suffix string
	t      *tensor.Tensor
	square bool // a running sum or average of squares: never negative
}

// base holds what every first-order optimiser shares: the parameters, the
// learning rate, the step count and the named state buffers. The concrete
// optimisers embed it and add Step.
type base struct {
	name   string // "SGD", "Adam", ...
	params []*tensor.Tensor
	lr     float64
	step   int
	slots  []slot
}

func newBase(name string, params []*tensor.Tensor, lr float64) base {
	op := "New" + name
	if len(params) == 0 {
		tensor.Fail(op, "no parameters")
	}
	for i, p := range params {
		if p == nil {
			tensor.Fail(op, "parameter %d is nil", i)
		}
		if p.DType() != tensor.Float32 && p.DType() != tensor.Float64 {
			tensor.Fail(op, "parameter %d has unsupported dtype %v", i, p.DType())
		}
		if !p.IsContiguous() {
			tensor.Fail(op, "parameter %d of shape %s is not contiguous; optimisers update parameters in place and need their storage (pass the original tensor, not a view)", i, tensor.FormatShape(p.Shape()))
		}
	}
	checkLR(op, lr)
	return base{name: name, params: append([]*tensor.Tensor(nil), params...), lr: lr}
}

// addSlots allocates one zero buffer per parameter, saved as
// "<parameter name>.suffix".
func (b *base) addSlots(suffix string) []*tensor.Tensor {
	ts := make([]*tensor.Tensor, len(b.params))
	for i, p := range b.params {
		ts[i] = tensor.ZerosLike(p)
		b.slots = append(b.slots, slot{param: i, suffix: suffix, t: ts[i]})
	}
	return ts
}

// addSquareSlots is addSlots for buffers of squared gradients (Adam's
// exp_avg_sq, Adagrad's sum), which LoadState refuses when negative: the
// update takes their square root.
func (b *base) addSquareSlots(suffix string) []*tensor.Tensor {
	ts := b.addSlots(suffix)
	for k := len(b.slots) - len(ts); k < len(b.slots); k++ {
		b.slots[k].square = true
	}
	return ts
}

// keys returns the state key of every slot, checking names: one non-empty,
// distinct name per parameter, none "step" or "lr". Wrong names are misuse
// and panic with a *tensor.Error naming op.
func (b *base) keys(op string, names []string) []string {
	if len(names) != len(b.params) {
		tensor.Fail(op, "got %d names for %d parameters", len(names), len(b.params))
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if n == "" || n == "step" || n == "lr" || seen[n] {
			tensor.Fail(op, "name %d (%q) must be non-empty, distinct and neither \"step\" nor \"lr\"", i, n)
		}
		seen[n] = true
	}
	out := make([]string, len(b.slots))
	for k, s := range b.slots {
		out[k] = names[s.param] + "." + s.suffix
	}
	return out
}

func checkLR(op string, lr float64) {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		tensor.Fail(op, "learning rate %g must be finite and >= 0", lr)
	}
}

// Params returns the parameters, in the order given to the constructor.
func (b *base) Params() []*tensor.Tensor { return b.params }

// LR returns the current learning rate.
func (b *base) LR() float64 { return b.lr }

// SetLR sets the learning rate for the following steps. It panics with a
// *tensor.Error if lr is negative, NaN or infinite.
func (b *base) SetLR(lr float64) {
	checkLR(b.name+".SetLR", lr)
	b.lr = lr
}

// Steps returns how many steps have been applied (restored by LoadState).
func (b *base) Steps() int { return b.step }

// check validates the gradients before anything is touched, so a refused
// step leaves parameters and state as they were.
func (b *base) check(grads []*tensor.Tensor) error {
	// The op name is built only on failure: a concatenation up front would
	// allocate on every step.
	if len(grads) != len(b.params) {
		return &Error{Op: b.name + ".Step", Param: -1, Err: ErrMismatch,
			Msg: fmt.Sprintf("got %d gradients for %d parameters", len(grads), len(b.params))}
	}
	for i, g := range grads {
		p := b.params[i]
		if g == nil {
			return &Error{Op: b.name + ".Step", Param: i, Err: ErrMismatch, Msg: fmt.Sprintf("gradient of parameter %d is nil", i)}
		}
		if g.DType() != p.DType() || !slices.Equal(g.Shape(), p.Shape()) {
			return &Error{Op: b.name + ".Step", Param: i, Err: ErrMismatch, Msg: fmt.Sprintf(
				"gradient of parameter %d has shape %s %v, the parameter has shape %s %v",
				i, tensor.FormatShape(g.Shape()), g.DType(), tensor.FormatShape(p.Shape()), p.DType())}
		}
		if !g.IsContiguous() {
			return &Error{Op: b.name + ".Step", Param: i, Err: ErrMismatch, Msg: fmt.Sprintf(
				"gradient of parameter %d (shape %s) is not contiguous", i, tensor.FormatShape(g.Shape()))}
		}
		if g.Device() != p.Device() {
			return &Error{Op: b.name + ".Step", Param: i, Err: ErrMismatch, Msg: fmt.Sprintf(
				"gradient of parameter %d (shape %s) lives on %v, the parameter on %v", i, tensor.FormatShape(g.Shape()), g.Device(), p.Device())}
		}
	}
	if tensor.AllFinite(grads...) { // one wait for all of a GPU's gradients
		return nil
	}
	for i, g := range grads {
		if n, at, v := tensor.NonFinite(g); n > 0 {
			return &Error{Op: b.name + ".Step", Param: i, Err: ErrNonFinite, Msg: fmt.Sprintf(
				"gradient of parameter %d (shape %s) is NaN/Inf (%g at element %d); parameters and state unchanged",
				i, tensor.FormatShape(g.Shape()), v, at)}
		}
	}
	return nil
}

// State returns a copy of the state: "step" (the number of steps taken)
// and "lr" (the current learning rate) as float64 scalars, and the
// per-parameter buffers named "<parameter name>.<buffer>" with the
// parameter's shape and dtype, e.g. "fc1.weight.exp_avg", where names[i]
// names parameter i. The copies do not change when the optimiser steps
// again. It panics with a *tensor.Error unless names holds one non-empty,
// distinct name per parameter (none "step" or "lr").
func (b *base) State(names []string) map[string]*tensor.Tensor {
	keys := b.keys(b.name+".State", names)
	m := make(map[string]*tensor.Tensor, len(b.slots)+2)
	m["step"] = tensor.Scalar(tensor.Float64, float64(b.step))
	m["lr"] = tensor.Scalar(tensor.Float64, b.lr)
	for k, s := range b.slots {
		m[keys[k]] = s.t.Clone()
	}
	return m
}

// LoadState restores a state saved by State from an optimiser of the same
// kind, configuration and parameter shapes, matching the buffers by the
// parameters' names (names[i] names parameter i, as for State), so a state
// saved with the parameters in another order restores each buffer to its
// own parameter. It requires exactly the names State produces, each with
// the right shape and dtype, a non-negative integer "step" and a valid
// "lr"; otherwise it returns an error wrapping ErrMismatch and changes
// nothing. A buffer holding NaN or ±Inf, or a buffer of squares (Adam's
// "exp_avg_sq", RMSProp's "square_avg", Adagrad's "sum") holding a
// negative value, would turn the parameters into NaN at the next step: it
// is refused with an error wrapping ErrNonFinite (or ErrMismatch for a
// negative value) that names the entry and the element, and nothing is
// changed. The tensors are copied. Wrong names panic as in State.
func (b *base) LoadState(names []string, state map[string]*tensor.Tensor) error {
	op := b.name + ".LoadState"
	keys := b.keys(op, names)
	fail := func(format string, args ...any) error {
		return &Error{Op: op, Param: -1, Err: ErrMismatch, Msg: fmt.Sprintf(format, args...)}
	}
	want := map[string]bool{"step": true, "lr": true}
	for _, k := range keys {
		want[k] = true
	}
	var unknown []string
	for name := range state {
		if !want[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fail("unknown state entries %s (this %s expects %d entries)", strings.Join(unknown, ", "), b.name, len(want))
	}
	scalar := func(name string) (float64, error) {
		t, ok := state[name]
		if !ok || t == nil {
			return 0, fail("missing %q", name)
		}
		if t.DType() != tensor.Float64 || t.Size() != 1 {
			return 0, fail("%q must be a float64 scalar, got shape %s %v", name, tensor.FormatShape(t.Shape()), t.DType())
		}
		return t.Values()[0], nil
	}
	step, err := scalar("step")
	if err != nil {
		return err
	}
	if !(step >= 0) || step != math.Trunc(step) || step > 1<<53 {
		return fail("\"step\" is %g, want a non-negative integer", step)
	}
	lr, err := scalar("lr")
	if err != nil {
		return err
	}
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fail("\"lr\" is %g, want finite and >= 0", lr)
	}
	for k, s := range b.slots {
		t, ok := state[keys[k]]
		if !ok || t == nil {
			return fail("missing %q", keys[k])
		}
		if t.DType() != s.t.DType() || !slices.Equal(t.Shape(), s.t.Shape()) {
			return fail("%q has shape %s %v, want %s %v", keys[k], tensor.FormatShape(t.Shape()), t.DType(), tensor.FormatShape(s.t.Shape()), s.t.DType())
		}
		if err := checkSlotValues(op, keys[k], s, t); err != nil {
			return err
		}
	}
	for k, s := range b.slots {
		tensor.CopyInto(s.t, state[keys[k]])
	}
	b.step = int(step)
	b.lr = lr
	return nil
}

// checkSlotValues refuses a buffer value the update cannot start from: NaN
// or ±Inf anywhere, a negative value in a buffer of squares.
func checkSlotValues(op, key string, s slot, t *tensor.Tensor) error {
	if n, i, v := tensor.NonFinite(t); n > 0 {
		return &Error{Op: op, Param: s.param, Err: ErrNonFinite, Msg: fmt.Sprintf(
			"%q holds %g at element %d of %d; a non-finite buffer would make every later step NaN", key, v, i, t.Size())}
	}
	if !s.square {
		return nil
	}
	var i int
	var v float64
	// A state on a GPU is read on the host: LoadState is not a hot path.
	if c := t.To(tensor.CPU).Contiguous(); c.DType() == tensor.Float32 {
		i, v = firstNegative(c.Float32s())
	} else {
		i, v = firstNegative(c.Float64s())
	}
	if i >= 0 {
		return &Error{Op: op, Param: s.param, Err: ErrMismatch, Msg: fmt.Sprintf(
			"%q holds %g at element %d of %d; a buffer of squared gradients is never negative", key, v, i, t.Size())}
	}
	return nil
}

// firstNegative returns the index and value of the first negative element
// of xs, or −1.
func firstNegative[T tensor.Float](xs []T) (int, float64) {
	for i, x := range xs {
		if x < 0 {
			return i, float64(x)
		}
	}
	return -1, 0
}

// sqrt is the IEEE square root in T's precision. For float32 it goes
// through math.Sqrt, which the compiler turns into one instruction: the
// float64 root of a float32 rounded back to float32 is exactly the
// correctly rounded float32 root (53 ≥ 2·24 + 2 bits), the result
// math32.Sqrt gives, but inlined (math32.Sqrt is an assembly call and
// costs more than the rest of an Adam update).
func sqrt[T tensor.Float](x T) T {
	return T(math.Sqrt(float64(x)))
}

// lerp is torch.lerp: a + w·(b − a), evaluated from the nearer end as
// PyTorch's CPU kernel does so the moving averages round the same way.
func lerp[T tensor.Float](a, b, w T) T {
	// T(·) rounds each product before the addition (no FMA), as the AVX2
	// Adam kernel does.
	if w < 0.5 {
		return a + T(w*(b-a))
	}
	return b - T((b-a)*(1-w))
}

// f32 and f64 return the storage of a contiguous tensor, nil for a nil
// tensor (a buffer the configuration does not use).
func f32(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

func f64(t *tensor.Tensor) []float64 {
	if t == nil {
		return nil
	}
	return t.Float64s()
}
