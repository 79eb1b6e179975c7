// Package tensor provides dense n-dimensional arrays of float32 and float64
// and the numerical kernels Gradus is built on: elementwise maths with NumPy
// broadcasting, reductions, shape operations, linear algebra over a fast
// GEMM, convolution and pooling, and seeded random numbers.
//
// A Tensor is a view: a dtype, a shape, strides in elements and an offset
// into shared storage. Reshape (where the layout allows), Transpose, Expand,
// Slice, Squeeze and Unsqueeze return views that share memory; every other
// operation returns a new, contiguous, row-major tensor. Operations named
// with a "To" suffix write into a caller-provided destination instead, so hot
// loops can avoid allocation.
//
// # Errors
//
// Misuse (shapes that do not broadcast, mixed dtypes, an axis or index out
// of range) is a programmer error: the operation panics with a *Error that
// names the operation, the shapes and dtypes involved, and the caller's
// file:line outside Gradus. Public entry points that train or fit turn such
// panics into returned errors with Recover. Failures that depend on the data
// (a matrix that is not positive definite, a singular system) are returned
// as errors, never panics.
//
//	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
//	b := tensor.FromFloat64s([]float64{10, 20, 30}, 3)
//	y := tensor.Add(x, b)          // broadcasts b over the rows: shape (2, 3)
//	s := tensor.Sum(y, []int{1}, false) // (66, 75)
//
// Every exported function validates its arguments: it is where a user's call
// enters. Package graph, whose constructors have validated already, calls the
// same kernels without the checks through internal/unchecked (see graph's
// package doc, "Validation").
package tensor
