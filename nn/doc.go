// Package nn provides neural-network layers built on package graph:
// Linear, Conv2D, pooling, Flatten, Embedding, Dropout, BatchNorm,
// LayerNorm, LSTM and GRU (and their cells), activation layers, Sequential,
// and the weight initialisers of torch.nn.init.
//
// Layouts, parameter names and default initialisations follow PyTorch
// (Linear weight (out, in), Conv2D weight (out, in/groups, kh, kw), LSTM
// gates i, f, g, o in weight_ih_l0 ...), so results are comparable and
// weights can be moved between the two.
//
// A layer owns Params, tensors that persist across training steps. Each
// step builds a graph; a layer's Forward binds its parameters into it with
// Param.Node, and Gradients differentiates a loss with respect to them:
//
//	rng := tensor.NewRNG(1)
//	model := nn.NewSequential(
//		nn.NewLinear(rng, 784, 256, true, tensor.Float32),
//		nn.ReLU{},
//		nn.NewLinear(rng, 256, 10, true, tensor.Float32),
//	)
//	g := graph.New()
//	logits := model.Forward(g.Const(batch)) // (32, 784) → (32, 10)
//	loss := graph.Mean(graph.Square(logits), nil, false)
//	grads := nn.Gradients(loss, model.Params()) // then opt.Step(grads); g.Reset()
//
// Parameters are listed in a stable order under dotted names
// ("0.weight", "0.bias", "2.weight", ...) like PyTorch's state_dict; state
// that is saved but not trained (BatchNorm's running statistics) is listed
// separately by Buffers.
//
// # Modes
//
// Modules start in training mode, as in PyTorch. SetTraining(false)
// switches Dropout to the identity and BatchNorm to its running
// statistics; composites pass the mode on to their children.
//
// # Errors
//
// Misuse panics with a *tensor.Error (see package graph): an input of the
// wrong shape names the layer, the expected and the actual shape, e.g.
// "tensor.Linear(784→256): input shape (32, 100) does not fit: want
// (..., 784)". Entry points that train return such panics as errors with
// tensor.Recover.
//
// # Randomness
//
// Initialisers and Dropout take an explicit *tensor.RNG; the package has no
// global random state, so a seed reproduces a run exactly. A module that
// draws while it runs (Dropout) lists its generators through Stochastic
// (RNGs), so that a checkpoint saves their states and a resumed run draws
// what an uninterrupted one would.
package nn
