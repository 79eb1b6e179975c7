// Package linear fits linear regression models in scikit-learn's family:
// least squares (FitLeastSquares) and ridge regression (FitRidge) in
// closed form, the lasso and the elastic net by cyclic coordinate descent
// (FitLasso, FitElasticNet) with their regularisation path (FitPath), and
// quantile regression by a primal-dual interior-point method
// (FitQuantile).
//
//	x, y := … // x (n, d), y (n)
//	m, err := linear.FitRidge(x, y, linear.RidgeOptions{Alpha: 1})
//	if err != nil { … }
//	pred := m.Predict(xTest) // (m) tensor
//	fmt.Println(m.Coef, m.Intercept)
//
//	l, err := linear.FitLasso(ctx, x, y, linear.LassoOptions{Alpha: 0.1})
//	path, err := linear.FitPath(ctx, x, y, linear.PathOptions{NumAlphas: 50})
//	q, err := linear.FitQuantile(ctx, x, y, linear.QuantileOptions{Quantile: 0.9})
//
// Every fit fits an unpenalised intercept unless its options set
// NoIntercept (the closed forms and coordinate descent by centring x and
// y first, as scikit-learn does). x and y may be float32 or float64: the fits
// compute in float64 and keep Coef and Intercept as float64, and Predict
// returns a tensor of its input's dtype.
//
// The penalised objectives are scikit-learn's, so that fitted coefficients
// can be compared with it: ridge minimises ‖y − Xw − b‖² + α‖w‖², the
// elastic net 1/(2n)·‖y − Xw − b‖² + αρ‖w‖₁ + α(1−ρ)/2·‖w‖² (the lasso is
// ρ = 1), and quantile regression (1/n)·Σ ρ_τ(yᵢ − xᵢw − b) + α‖w‖₁ with
// the pinball loss ρ_τ(r) = max(τr, (τ−1)r).
package linear
