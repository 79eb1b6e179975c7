// Package mnist holds what the MNIST examples (mnist-mlp, mnist-cnn, lstm)
// share: their flags, loading the digits, and a run that trains a
// classifier with the public train package, writes its curves with package
// plot and round-trips a checkpoint. Everything it uses is public; it only
// saves the three programs from repeating the same sixty lines. Other
// programs that train on the digits (dae, flow) load them with LoadMNIST.
package mnist
