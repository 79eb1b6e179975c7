// Package graph records computations on tensors as graphs of nodes whose
// ops know their derivatives. Execution is define-by-run: calling an op
// (Add, MatMul, ...) computes its value at once, so values are at hand
// while debugging and ordinary Go control flow builds the graph. Package
// autodiff walks the recorded graph to differentiate it.
//
//	g := graph.New()
//	w := g.Var(tensor.FromFloat64s([]float64{0.5, -1}, 2))
//	x := g.Const(tensor.FromFloat64s([]float64{3, 4}, 2))
//	y := graph.Exp(graph.Mul(w, x)) // computed now: (e^1.5, e^-4)
//	fmt.Println(y.Value())
//
// # Ops
//
// An Op provides Forward (the value), VJP (input cotangents from the output
// cotangent, told which inputs need one) and JVP (output tangent from the
// input tangents), and its batching rule (Batcher: the op for a whole
// batch of examples, for autodiff.Vmap). VJP and JVP are written with graph ops, so derivatives
// are graphs and can be differentiated again. Every op registers a value of
// its type (Registered lists them), and a test checks every entry to second
// order with autodiff.GradCheck. Users add ops by implementing Op and
// calling Apply.
//
// # Adding an op
//
// One file, one type, three rules, one registration, one gradient case
// (xlogy.go is the worked example):
//  1. graph/<op>.go: an unexported type with Name, Arity, Forward (the result
//     from g.AllocUninit), VJP, JVP and Batch side by side, written in graph
//     ops (BatchElementwise is the rule of elementwise ops).
//  2. An exported constructor that checks its operands and calls Apply; or,
//     if Forward calls kern (see Validation), a check method and apply.
//  3. Register(value of the type) in the file's init.
//  4. A case in autodiff's cases_*_test.go (TestGradCheckAllOps fails for a
//     registered op without one, TestBatchingAllOps for one without a
//     batching rule) and value tests worked out by hand.
//
// # Validation
//
// A call is validated once, where it enters Gradus, and trusted below. A
// graph constructor (Add, MatMul, Sum, Conv2D, ...) checks its operands
// (nodes, dtypes, shapes, axes) and so fixes the output's shape and dtype;
// its op's Forward then computes with kern, tensor's kernels without their
// checks (internal/unchecked, which only tensor and graph may import), and
// builds the output shape without checking it again. Such an op has a
// check method holding its constructor's checks, which Apply runs, so an
// op value re-applied to other nodes (Node.Op) fails like its constructor
// and never inside a kernel. Apply validates for ops users write, whose
// Forward calls tensor's exported functions; those validate, being an
// entry point of their own. nn layers check only what they say better in
// their terms (Linear's "want (..., 784)") and leave the rest to graph.
// VJP and JVP rules call the constructors like any user. Every misuse
// panic names the op, the shapes and the caller's file:line. Composites
// (Einsum, TakeAlongAxis) check their arguments once and build their
// inner ops without checking them again.
//
// The linear-algebra ops (Cholesky, Solve, TriSolve, Inverse, Det,
// SlogDet, Eigh, QR, SVD, and the triangular masks and products their
// adjoints use) are the deliberate exception: their Forwards call
// tensor's validating functions, whose checks cost O(rank) against the
// O(n²) to O(n³) work they guard.
//
// # Memory
//
// A Graph owns what it allocates: node structs, the slices Apply needs, and
// the output buffers ops obtain from Alloc. Reset takes all of it back for
// the next step, so a training loop that builds the same graph each step
// allocates almost nothing after the first. Nodes and values from before a
// Reset must not be used after it; copy out what must survive (Clone).
// Tensors passed to Var and Const stay the caller's.
//
// # Capture and replay
//
// Capture traces a step function once (define-by-run, as always) into a
// Program that Run replays on new input values: each op's Forward on
// buffers planned by liveness in one arena per dtype, with no nodes built.
// Dead code is removed, constant subgraphs folded, repeated
// subexpressions merged, sums of scattered slices made single writes and
// chains of elementwise ops fused into single passes over memory, with
// the kernels the unfused ops use; none of that changes a bit, so a
// replayed step equals the eager one exactly. Inputs are the tensors given to Capture;
// Const leaves are frozen. Steps that draw random numbers, Vars that are
// not inputs and ops holding indices from Go are refused (capture.go says
// why each is). Program.String dumps the ops and the buffer plan.
//
// # Concurrency
//
// A Graph is not safe for concurrent use. Separate graphs may be built and
// differentiated from separate goroutines; the package has no mutable
// global state apart from the op registry, which ops fill at init and a
// lock guards.
//
// # Errors
//
// Gradus uses one policy everywhere:
//
//   - Misuse is a programmer error and panics with a *tensor.Error built by
//     tensor.Fail. It names the op, the shapes and dtypes of the operands,
//     and the file:line of the first caller outside Gradus, e.g.
//     "tensor.matmul: inner dimensions differ: (2, 3) and (4, 5) (3 vs 4)
//     (called at train.go:42)". Mixing graphs, mixed dtypes, shapes that do
//     not broadcast, axes out of range and nil nodes are misuse.
//   - Failures that depend on the data (a matrix that is not positive
//     definite, a singular system) are returned as errors by the tensor
//     functions. A graph op cannot return one without breaking chaining, so
//     an op that meets one panics with a *DataError; it unwraps both to a
//     *tensor.Error (tensor.Recover returns it) and to the kernel's error,
//     so errors.Is(err, tensor.ErrNotPositiveDefinite) and errors.As work.
//     Code that expects such failures (a Gaussian process retrying with
//     more jitter) recovers them at its boundary.
//   - Entry points that train, fit or check (optimisers' loops, model
//     fitting, autodiff.GradCheck) return errors: they defer tensor.Recover,
//     which converts a *tensor.Error panic into an error and lets every
//     other panic through.
//
// So building a graph never needs an `if err != nil` after each op, and no
// index-out-of-range panic escapes from a kernel.
package graph
