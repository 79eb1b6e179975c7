package autodiff

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// VmapOptions says where Vmap finds the examples in each argument and
// where it puts them in each result.
type VmapOptions struct {
	// InAxes holds, per argument, the axis that indexes the examples
	// (negative counts from the end), or graph.NotBatched for an argument
	// shared by every example. nil means axis 0 of every argument.
	InAxes []int
	// OutAxes holds, per result, the axis of the examples in the result
	// (negative counts from the end). nil means axis 0 of every result.
	OutAxes []int
}

// Vmap returns f vectorised over a batch: the returned function takes
// arguments holding a batch of examples along their in-axes and returns
// f's results for every example, stacked along their out-axes, as if f
// had been called once per example and the results stacked, but at the
// cost of one batched call. f is written for one example and may close
// over nodes (weights), which are shared by every example.
//
// The returned function traces f once, on example 0, so f sees
// per-example shapes; then every node f built that depends on an
// argument is rewritten by its op's batching rule into one node for the
// whole batch (see graph.Batcher). The results are ordinary nodes of the
// arguments' graph: they can be differentiated (Grad of Vmap), and f may
// itself differentiate (Vmap of Grad: per-example gradients) or vmap
// (nested Vmap). Go code in f that reads values (an if on y.Item(),
// graph.Sort's order) sees example 0's only.
//
// The returned function panics with a *tensor.Error when an argument is
// nil, the lengths of opts' axes do not match the arguments or results,
// an axis is out of range, the batched arguments disagree on the number
// of examples or there is none, or an op f uses has no batching rule.
func Vmap(f func(xs []*graph.Node) []*graph.Node, opts VmapOptions) func(xs []*graph.Node) []*graph.Node {
	if f == nil {
		tensor.Fail("Vmap", "nil function")
	}
	return func(xs []*graph.Node) []*graph.Node {
		b, examples := vmapInputs(xs, opts.InAxes)
		ys := f(examples)
		if opts.OutAxes != nil && len(opts.OutAxes) != len(ys) {
			tensor.Fail("Vmap", "%d out-axes for %d results", len(opts.OutAxes), len(ys))
		}
		out := make([]*graph.Node, len(ys))
		for j, y := range ys {
			if y == nil {
				tensor.Fail("Vmap", "result %d of f is nil", j)
			}
			to := 0
			if opts.OutAxes != nil {
				to = opts.OutAxes[j]
			}
			out[j] = vmapOutput(b, y, to)
		}
		return out
	}
}

// vmapInputs checks the arguments, makes each batched one's example 0 and
// binds it in a new Batching.
func vmapInputs(xs []*graph.Node, inAxes []int) (*graph.Batching, []*graph.Node) {
	if inAxes != nil && len(inAxes) != len(xs) {
		tensor.Fail("Vmap", "%d in-axes for %d arguments", len(inAxes), len(xs))
	}
	axes := make([]int, len(xs))
	size := -1
	for i, x := range xs {
		if x == nil {
			tensor.Fail("Vmap", "argument %d is nil", i)
		}
		ax := 0
		if inAxes != nil {
			ax = inAxes[i]
		}
		if ax != graph.NotBatched {
			if ax < 0 {
				ax += x.Dim()
			}
			if ax < 0 || ax >= x.Dim() {
				tensor.Fail("Vmap", "in-axis %d out of range for argument %d %v", inAxes[i], i, x)
			}
			if n := x.Shape()[ax]; size >= 0 && n != size {
				tensor.Fail("Vmap", "argument %d %v has %d examples along axis %d, an earlier one %d", i, x, n, ax, size)
			}
			size = x.Shape()[ax]
		}
		axes[i] = ax
	}
	if size < 1 {
		tensor.Fail("Vmap", "no batched argument with examples among %s (in-axes %v)", graph.Describe(xs...), inAxes)
	}
	b := graph.NewBatching(size)
	examples := make([]*graph.Node, len(xs))
	for i, x := range xs {
		if axes[i] == graph.NotBatched {
			examples[i] = x
			continue
		}
		examples[i] = graph.Squeeze(graph.Slice(x, axes[i], 0, 1, 1), axes[i])
		b.Bind(examples[i], x, axes[i])
	}
	return b, examples
}

// vmapOutput returns the batched form of the traced result y with the
// examples on axis to; a result that depends on no argument is broadcast.
func vmapOutput(b *graph.Batching, y *graph.Node, to int) *graph.Node {
	n, ax := b.Batched(y)
	if ax == graph.NotBatched {
		n, ax = graph.BroadcastTo(graph.Unsqueeze(y, 0), append([]int{b.Size()}, y.Shape()...)...), 0
	}
	if to < 0 {
		to += n.Dim()
	}
	if to < 0 || to >= n.Dim() {
		tensor.Fail("Vmap", "out-axis %d out of range for a result of per-example shape %v", to, y.Shape())
	}
	if to == ax {
		return n
	}
	perm := make([]int, 0, n.Dim())
	for i := range n.Dim() {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm[:to], append([]int{ax}, perm[to:]...)...)
	return graph.Permute(n, perm...)
}

// PerExampleGrads returns the gradient of loss with respect to each of
// params for every example of a batch, each shaped (B, param's shape...):
// Vmap of Grad, costing about one batch gradient rather than B of them.
// loss builds one example's scalar loss from the params and that
// example's nodes (batch[i] with its leading axis removed); batch holds
// the inputs (and targets, such as one-hot labels) with the B examples on
// axis 0. The gradients are nodes of the params' graph.
//
// PerExampleGrads panics like Vmap and Grad: for a loss that is not a
// scalar, nodes from different graphs, or batch entries that disagree on
// B.
func PerExampleGrads(loss func(params, example []*graph.Node) *graph.Node, params, batch []*graph.Node) []*graph.Node {
	if loss == nil {
		tensor.Fail("PerExampleGrads", "nil loss")
	}
	if len(batch) == 0 {
		tensor.Fail("PerExampleGrads", "empty batch")
	}
	return Vmap(func(ex []*graph.Node) []*graph.Node {
		y := loss(params, ex)
		checkNode("PerExampleGrads", "loss", y)
		if y.Size() != 1 {
			tensor.Fail("PerExampleGrads", "loss must have size 1 per example, got shape %v", y.Shape())
		}
		return Grad(y, params...)
	}, VmapOptions{})(batch)
}
