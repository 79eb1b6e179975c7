// Package mnist holds what the MNIST classifier examples (mnist-mlp,
// mnist-cnn) and the lstm example share: flags, data loading, a
// mini-batch classifier loop with per-epoch test accuracy, curves and a
// checkpoint round trip. It is example glue; the reusable pieces are the
// public packages train (the loop, progress) and plot (the curves).
package mnist
