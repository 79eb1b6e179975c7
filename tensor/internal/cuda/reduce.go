//go:build linux && (amd64 || arm64)

package cuda

import "fmt"

// MaxLast sets dst[r] to the maximum of row r of the rows × cols matrix x:
// NaN if the row has a NaN, else the first of its largest values (so the
// sign of a zero maximum is that of the CPU's scan), as tensor.Max over
// the last axis.
func (k *Kernels) MaxLast(dt DType, rows, cols int, dst, x *Buffer) error {
	return k.rows("max_last", dt, rows, cols, dst, rows, x)
}

// MinLast sets dst[r] to the minimum of row r, as MaxLast the maximum.
func (k *Kernels) MinLast(dt DType, rows, cols int, dst, x *Buffer) error {
	return k.rows("min_last", dt, rows, cols, dst, rows, x)
}

// ProdLast sets dst[r] to the product of row r (in another order than the
// CPU's, so it may round differently).
func (k *Kernels) ProdLast(dt DType, rows, cols int, dst, x *Buffer) error {
	return k.rows("prod_last", dt, rows, cols, dst, rows, x)
}

// LogSumExpLast sets dst[r] to log Σⱼ exp(x[r, j]), computed as m + log Σ
// exp(x − m) with m the row's maximum (0 where that is ±Inf), as
// tensor.LogSumExp: a row of −Inf gives −Inf, a NaN gives NaN.
func (k *Kernels) LogSumExpLast(dt DType, rows, cols int, dst, x *Buffer) error {
	return k.rows("logsumexp_last", dt, rows, cols, dst, rows, x)
}

// VarianceLast sets dst[r] to the variance of row r, Σ(x − mean)² /
// (cols − ddof) by the CPU's corrected two-pass algorithm (tensor.Variance;
// kernels/reduce.cu), NaN where cols − ddof ≤ 0.
func (k *Kernels) VarianceLast(dt DType, rows, cols, ddof int, dst, x *Buffer) error {
	const op = "variance_last"
	if rows < 0 || cols <= 0 {
		return fmt.Errorf("cuda: %s: %d×%d: cols must be positive", op, rows, cols)
	}
	if err := fits(op, dt, rows, dst); err != nil {
		return err
	}
	if err := fits(op, dt, rows*cols, x); err != nil || rows == 0 {
		return err
	}
	return k.launch(op, dt, rows, cols, dst, x, ddof)
}
