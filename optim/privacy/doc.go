// Package privacy trains models with differential privacy: the DP-SGD
// step (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar and Zhang 2016,
// "Deep Learning with Differential Privacy") on top of any optim
// optimiser, and a Rényi-DP accountant for the sampled Gaussian mechanism
// it runs (Mironov, Talwar and Zhang 2019, "Rényi Differential Privacy of
// the Sampled Gaussian Mechanism").
//
// A DP-SGD step takes the per-example gradients of a batch drawn by
// Poisson sampling (each example in with probability q), clips each
// example's gradient to norm C over all parameters jointly, sums them,
// adds N(0, σ²C²) noise to every coordinate, divides by the expected batch
// size qN and hands the result to the wrapped optimiser. The accountant
// adds up the Rényi-DP of those steps and converts it to (ε, δ):
//
//	q := 256.0 / 60000
//	acc := privacy.NewAccountant(privacy.AccountantOptions{})
//	if err := acc.Compose(q, 1.1, 60*234); err != nil { … }
//	eps, _, err := acc.Epsilon(1e-5) // 2.59 (Balle et al. 2020's conversion; 3.01 by Mironov 2017's)
//
// # Accuracy
//
// The RDP of integer orders is an exact finite sum; that of fractional
// orders a pair of series summed until the next term is below 1e-17 of
// the total. Both agree with numerical integration of the divergence's
// definition in 40-digit arithmetic (testdata/gen.py) to 1e-9 relative
// (where the RDP is tiny, to 1e-16 in log A_α), and whole runs' ε to 1e-8.
// TensorFlow Privacy's published values (its MNIST tutorial's ε and its
// tests' RDP) are reproduced to the digits printed.
package privacy
