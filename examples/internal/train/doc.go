// Package train holds what the training examples (mnist-mlp, mnist-cnn,
// lstm) share: a mini-batch classifier training loop on a Gradus graph,
// accuracy evaluation, progress output (a progress bar on a terminal, one
// line per epoch otherwise) and PNG training curves.
//
// It is internal to the examples: plotting and progress bars stay out of
// the library packages, so a user who only needs autodiff does not pull
// them in.
package train
