// Package autodiff differentiates graphs built with package graph: reverse
// mode (Grad, ValueAndGrad, VJP), forward mode (JVP), their compositions
// (HVP, Hessian), full Jacobians (Jacobian, JacobianFwd), vectorisation
// over a batch (Vmap, PerExampleGrads), rematerialisation (Checkpoint: a
// segment recomputed in the reverse sweep instead of stored) and a
// checker for derivative rules (GradCheck).
//
// Every derivative is itself a graph of ordinary nodes, built from the ops'
// VJP and JVP rules, so it can be differentiated again: Grad of Grad gives
// second derivatives, and JVP of Grad gives Hessian-vector products
// (forward-over-reverse) at the cost of a few gradient evaluations.
//
//	g := graph.New()
//	x := g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 3))
//	y := graph.Sum(graph.Mul(x, x), nil, false) // Σ x²
//	dx := autodiff.Grad(y, x)[0]                // 2x = (2, 4, 6)
//	d2 := autodiff.Grad(graph.Sum(dx, nil, false), x)[0] // (2, 2, 2)
//	v := g.Const(tensor.FromFloat64s([]float64{1, 0, 0}, 3))
//	hv := autodiff.HVP(y, []*graph.Node{x}, []*graph.Node{v})[0] // H·v = (2, 0, 0)
//	fmt.Println(dx.Value(), d2.Value(), hv.Value())
//
// Which nodes are differentiated: an x may be a Var or any intermediate
// result. A gradient flows along every path from the xs to the output
// except through graph.StopGradient, which passes its value through and
// blocks derivatives. Constants never receive gradients (ops skip them, so
// a Const asked for gets zeros). An x the output does not depend on gets a
// zero tensor of its shape, never nil.
//
// The sweeps are loops over the graph's creation order (a topological
// order), not recursions, so chains of any length differentiate without
// deepening the stack. The nodes they create live in the same graph, and
// graph.Reset recycles them along with the rest of a training step.
//
// # Vmap
//
// Vmap vectorises a function written for one example; PerExampleGrads is
// Vmap of Grad. The design fits define-by-run: Vmap slices example 0 out
// of each batched argument and calls f once on it, so f's shape checks
// see per-example shapes and its nodes are recorded as usual; then a
// graph.Batching walks the recorded nodes from the first slice to the
// last result in creation order and replaces every node that depends on
// a slice by the batched node its op's batching rule builds (graph.Batcher,
// next to the op's Forward, VJP and JVP), leaving the nodes that depend on
// no slice (closed-over weights and what is computed from them alone) as
// they are. The batched results are ordinary nodes of the caller's graph,
// so Grad, JVP and Vmap itself apply to them, and a Vmap of Grad batches
// the backward pass Grad recorded during the trace. Transforms nest
// because each records ordinary ops. The trace costs one example's worth
// of work; Go code that reads values (graph.Sort, a branch on Item) sees
// example 0 only. Jacobian, JacobianFwd and Hessian are Vmap of VJP or
// JVP over the rows of the identity.
//
// Errors follow the graph package: misuse (an output of the wrong size, a
// node from another graph, mismatched shapes) panics with a *tensor.Error
// naming the function and the caller's file:line; GradCheck returns errors.
package autodiff
