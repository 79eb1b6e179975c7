// Package cluster partitions the rows of a data matrix: k-means by Lloyd's
// algorithm with k-means++ seeding and restarts (FitKMeans), its
// mini-batch variant for large n (FitMiniBatchKMeans), and DP-means, which
// chooses the number of clusters itself from a penalty λ on each new one
// (FitDPMeans; the small-variance limit of a Dirichlet-process mixture,
// Kulis and Jordan 2012, "Revisiting k-means: new algorithms via Bayesian
// nonparametrics").
//
//	km, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 3, Seed: 1}) // x (n, d)
//	fmt.Println(km.Inertia, km.Labels[:5], km.Centers.Shape())
//	labels := km.Predict(xNew)
//
// Data are float32 or float64 tensors; the work is done in float64 and the
// centres are returned in float64. Every random choice comes from a
// tensor.RNG seeded by the options, so a seed gives the same clustering on
// every run and platform. Bad input (not a matrix, zero columns, fewer
// rows than clusters, NaN or Inf) is an error naming what was wrong. A fit
// whose ctx is cancelled stops after the current iteration and returns the
// clustering it has with an error wrapping ctx.Err().
package cluster
