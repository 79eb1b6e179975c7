// Package optim updates tensors to minimise a loss: first-order optimisers
// (SGD with momentum and Nesterov, Adam, AdamW, RMSProp, Adagrad) with the
// semantics of their torch.optim namesakes, learning-rate schedules,
// gradient clipping, and L-BFGS with a strong-Wolfe line search for
// full-batch problems.
//
// Optimisers work on tensors, not on graph nodes or modules: a parameter is
// a contiguous *tensor.Tensor updated in place, and its gradient a tensor of
// the same shape and dtype, usually the value of an autodiff.Grad node.
//
//	w := tensor.Zeros(tensor.Float64, 3)
//	opt := optim.NewAdam([]*tensor.Tensor{w}, optim.AdamOptions{LR: 0.01})
//	sched := optim.CosineAnnealingLR(0.01, 500, 0)
//	g := graph.New()
//	for step := 0; step < 500; step++ {
//		g.Reset()
//		wv := g.Var(w)
//		loss := lossOf(wv) // any scalar graph of wv
//		grad := autodiff.Grad(loss, wv)[0].Value()
//		opt.SetLR(sched.LR(step))
//		if err := opt.Step([]*tensor.Tensor{grad}); err != nil {
//			return err // NaN gradient: w and the optimiser state are unchanged
//		}
//	}
//
// # Steps
//
// Step checks everything before it writes anything: the number of
// gradients, each gradient's shape and dtype, and that every element is
// finite. On error (an *Error wrapping ErrMismatch or ErrNonFinite) the
// parameters and the optimiser's state are unchanged. A step does not
// allocate: the state buffers are made by the constructor, and the update
// loops run directly over the float32 or float64 storage, in the
// parameter's own precision.
//
// # Defaults
//
// Zero-valued configuration fields take PyTorch's defaults. Where zero is
// also a meaningful value (Beta1 = 0, AdamW without decay), set the
// configuration's NoDefaults flag and every field is taken literally.
//
// # Checkpoints
//
// State returns the step count, the learning rate and every moment buffer
// as named tensors keyed by the parameters' names ("step", "lr",
// "fc1.weight.exp_avg", "fc1.weight.exp_avg_sq", ...), ready for
// nn/checkpoint.Save; LoadState restores them by name, whatever order the
// parameters were listed in when the state was saved, after validating
// every name, shape and dtype. Training resumed from a checkpoint is bit-identical
// to training that never stopped.
//
// # Errors
//
// Misuse (a non-contiguous parameter, a negative learning rate, Nesterov
// without momentum) panics with a *tensor.Error, as everywhere in Gradus.
// Data-dependent failures (NaN gradients, a mismatching checkpoint, an
// objective that fails during L-BFGS) are returned as errors and leave the
// caller's tensors unchanged or at the last good point.
package optim
