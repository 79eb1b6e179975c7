// Package train is the training loop of Gradus: a Trainer takes a model,
// an optimiser, a loss function and a data.Loader and runs epochs of
// optimiser steps with gradient accumulation, clipping by global norm, a
// learning-rate schedule, evaluation, early stopping on a monitored
// metric, best-checkpoint saving, exact resumption from a checkpoint,
// callbacks, a progress line and a JSON-lines log.
//
//	tr := train.New(model, optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{}),
//		func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node { ... return loss },
//		loader, train.Options{Epochs: 10, Eval: eval, Monitor: "val_loss"})
//	hist, err := tr.Fit(context.Background())
//
// Or drive it step by step with Trainer.Step and Trainer.EndEpoch.
//
// A run is deterministic: the loader's order depends only on its seed and
// the epoch, the loss function receives an RNG derived from Options.Seed and
// the epoch, and the schedule is a function of the optimiser step. A
// checkpoint therefore needs only the model (with the random streams its
// layers keep, such as a Dropout's), the optimiser state and the counters
// to continue a run bit for bit (Trainer.Save, Trainer.Resume), and
// Resume restores all of them or, when anything in the file is wrong,
// none.
package train
