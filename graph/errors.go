package graph

import (
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// The error policy (stated in the package doc, "Errors"): misuse panics
// with a *tensor.Error naming the op, the operands and the caller;
// failures that depend on the data panic with a *DataError, which entry
// points that fit or train recover into an error with tensor.Recover.
//
// Failures that depend on the data (a matrix that is not positive
// definite, a singular matrix) cannot be returned from an op constructor
// without breaking chaining, so the op panics with a *DataError. Code that
// expects such failures (a Gaussian process trying more jitter) recovers
// them with `defer tensor.Recover(&err)` and then inspects err with
// errors.As or errors.Is (tensor.ErrNotPositiveDefinite,
// tensor.ErrSingular).

// Describe lists the nodes' shapes and dtypes for error messages, as
// "(2, 3) float32, (2,) float32" ("nil" for a nil node, "stale node" for
// one whose graph was Reset), so packages built on graph word their
// errors the same way.
func Describe(ns ...*Node) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		switch {
		case n == nil:
			parts[i] = "nil"
		case n.value == nil:
			parts[i] = "stale node"
		default:
			parts[i] = tensor.FormatShape(n.value.Shape()) + " " + n.value.DType().String()
		}
	}
	return strings.Join(parts, ", ")
}

// DataError is the panic value of an op whose kernel failed because of its
// input values rather than their shapes: a Cholesky factorisation of a
// matrix that is not positive definite, a solve with a singular matrix.
// It unwraps both to a *tensor.Error, so tensor.Recover turns the panic into
// an error, and to the kernel's error, so
// errors.As(err, new(*tensor.NotPositiveDefiniteError)) and
// errors.Is(err, tensor.ErrSingular) see the cause.
type DataError struct {
	Op  string // the graph op, e.g. "cholesky"
	Err error  // the kernel's error

	failure *tensor.Error
}

// Error describes the failure like a *tensor.Error: op, cause, caller.
func (e *DataError) Error() string { return e.failure.Error() }

// Unwrap returns the *tensor.Error describing the failure and the kernel's
// error.
func (e *DataError) Unwrap() []error { return []error{e.failure, e.Err} }

// failData panics with a *DataError for op caused by the kernel error err.
func failData(op string, err error) {
	panic(&DataError{Op: op, Err: err, failure: &tensor.Error{Op: op, Msg: err.Error(), Caller: tensor.CallerOutside()}})
}
