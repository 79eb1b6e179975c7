// Package cluster partitions the rows of a data matrix: k-means by Lloyd's
// algorithm with k-means++ seeding and restarts (KMeans), its mini-batch
// variant for large n (MiniBatchKMeans), and DP-means, which chooses the
// number of clusters itself from a penalty λ on each new one (DPMeans; the
// small-variance limit of a Dirichlet-process mixture, Kulis and Jordan
// 2012, seed 000 §2.1.2).
//
//	res, err := cluster.KMeans(x, cluster.KMeansOptions{K: 3, Seed: 1}) // x (n, d)
//	fmt.Println(res.Inertia, res.Labels[:5], res.Centers.Shape())
//	labels := res.Predict(xNew)
//
// Data are float32 or float64 tensors; the work is done in float64 and the
// centres are returned in float64. Every random choice comes from a
// tensor.RNG seeded by the options, so a seed gives the same clustering on
// every run and platform. Bad input (not a matrix, fewer rows than
// clusters, NaN or Inf) is an error naming what was wrong.
package cluster
