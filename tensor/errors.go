package tensor

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// Error describes a programmer error detected by an operation: shapes that
// do not fit, mixed dtypes, an axis or index out of range. Operations panic
// with a *Error; Recover turns the panic into an ordinary error.
type Error struct {
	Op     string // the operation, e.g. "Add" or "MatMul"
	Msg    string // what was wrong
	Caller string // file:line of the first caller outside Gradus, if known
}

// Error formats the failure as "tensor.<Op>: <Msg>", followed by the
// caller's file:line when it is known.
func (e *Error) Error() string {
	s := "tensor." + e.Op + ": " + e.Msg
	if e.Caller != "" {
		s += " (called at " + e.Caller + ")"
	}
	return s
}

// Fail panics with a *Error for op; the message is formatted with
// fmt.Sprintf. Packages built on tensor (graph, nn, ...) use it so every
// misuse in Gradus reads the same way.
func Fail(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...), Caller: CallerOutside()})
}

// Recover converts a panic carrying a *Error into *errp. Use it as
// `defer tensor.Recover(&err)` at API boundaries that return errors. Other
// panics are re-raised unchanged.
func Recover(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	var e *Error
	if err, ok := r.(error); ok && errors.As(err, &e) {
		*errp = err
		return
	}
	panic(r)
}

// libraryPackages are the Gradus packages whose frames CallerOutside skips.
var libraryPackages = []string{"tensor", "graph", "autodiff", "nn", "optim", "losses", "probabilistic", "learn", "data", "metrics", "plot", "train", "distributed", "internal/validate"}

const modulePath = "github.com/gradus-ml/gradus/"

// CallerOutside returns "file:line" of the innermost stack frame that is
// not inside a Gradus library package (tests of those packages count as
// callers), or "" if there is none.
func CallerOutside() string {
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !isLibraryFrame(f) {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !more {
			return ""
		}
	}
}

func isLibraryFrame(f runtime.Frame) bool {
	if strings.HasSuffix(f.File, "_test.go") {
		return false
	}
	if strings.HasPrefix(f.Function, "runtime.") {
		return true
	}
	rest, ok := strings.CutPrefix(f.Function, modulePath)
	if !ok {
		return false
	}
	for _, p := range libraryPackages {
		if strings.HasPrefix(rest, p+".") || strings.HasPrefix(rest, p+"/") {
			return true
		}
	}
	return false
}

// ErrNotPositiveDefinite is returned (wrapped in a *NotPositiveDefiniteError)
// when a Cholesky factorisation meets a non-positive pivot.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// ErrSingular is returned (wrapped) when a solve meets an exactly singular
// matrix.
var ErrSingular = errors.New("matrix is singular")

// NotPositiveDefiniteError reports the pivot at which a Cholesky
// factorisation failed. errors.Is(err, ErrNotPositiveDefinite) holds.
type NotPositiveDefiniteError struct {
	Op    string  // the operation that failed
	Pivot int     // 0-based index of the failing pivot
	Value float64 // the pivot's value (not positive, or NaN)
	Batch int     // index of the matrix within a batch, 0 if unbatched
}

// Error names the op, the matrix within the batch, and the failing pivot
// with its value.
func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("tensor.%s: matrix %d is not positive definite: pivot %d is %g", e.Op, e.Batch, e.Pivot, e.Value)
}

// Unwrap lets errors.Is match ErrNotPositiveDefinite.
func (e *NotPositiveDefiniteError) Unwrap() error { return ErrNotPositiveDefinite }

// ErrNotConverged is matched (errors.Is) by every *NotConvergedError.
var ErrNotConverged = errors.New("did not converge")

// NotConvergedError reports an iterative fit (EM, SMO, coordinate
// descent, L-BFGS, …) that used its iteration budget before meeting its
// tolerance. The fit that returns it also returns its best result so far,
// which callers may keep: errors.As(err, &nc) tells this case apart from
// a failure.
type NotConvergedError struct {
	Op         string  // the fit, e.g. "mixture.FitGaussian"
	Iterations int     // iterations run
	Change     float64 // the last change of the monitored quantity
	Tol        float64 // the tolerance it had to fall below
}

// Error names the fit, the iterations and, when they are set, the last
// change against the tolerance.
func (e *NotConvergedError) Error() string {
	if e.Tol == 0 && e.Change == 0 {
		return fmt.Sprintf("%s: did not converge in %d iterations", e.Op, e.Iterations)
	}
	return fmt.Sprintf("%s: did not converge in %d iterations (last change %.3g, tolerance %.3g)", e.Op, e.Iterations, e.Change, e.Tol)
}

// Unwrap lets errors.Is match ErrNotConverged.
func (e *NotConvergedError) Unwrap() error { return ErrNotConverged }
