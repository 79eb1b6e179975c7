// Package losses provides training objectives as functions on graph nodes:
// regression (MSE, L1, Huber, GaussianNLL), binary classification (BCE,
// BCEWithLogits, BernoulliNLL, Hinge), multi-class classification
// (CrossEntropy, NLL, MultiMarginHinge) and the Kullback-Leibler terms of
// variational models (KLDiagGaussian, KLDiagGaussians).
//
// Every loss is composed from graph ops, so its gradient, and its second
// derivatives, come from those ops' rules. Where a textbook formula overflows
// or cancels, the stable form is used instead (log-softmax for
// cross-entropy, softplus for BCE with logits). Definitions and defaults
// follow PyTorch's torch.nn losses so numbers can be compared with it.
//
//	g := graph.New()
//	logits := g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 1, 3))
//	loss := losses.CrossEntropy(logits, []int{2}, losses.CrossEntropyOptions{})
//	fmt.Printf("%.6f\n", loss.Item())      // 0.407606 = log(e¹+e²+e³) − 3
//	grad := autodiff.Grad(loss, logits)[0] // softmax − onehot
//
// # Reduction
//
// Element- or sample-wise losses are reduced as Reduction says: Mean (the
// zero value, so the default), Sum, or None, which returns the unreduced
// losses.
//
// # Errors
//
// Misuse (operands of different shapes or dtypes, a label out of range, an
// invalid option) panics with a *tensor.Error naming the loss, as graph ops
// do; the message names the shapes and the offending label.
package losses
