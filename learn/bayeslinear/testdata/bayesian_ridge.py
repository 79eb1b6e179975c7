"""scikit-learn's BayesianRidge on the embedded diabetes set: the numbers
TestEvidenceFixedPointGradientAndScikitLearn compares with (lambda_ is the
weights' precision α, alpha_ the noise precision β). Run from the
repository root with /usr/bin/python3."""
import numpy as np
from sklearn.linear_model import BayesianRidge

d = np.loadtxt("data/files/sklearn/diabetes.csv", delimiter=",", skiprows=1)
m = BayesianRidge(tol=1e-12, n_iter=10000).fit(d[:, :-1], d[:, -1])
print("lambda_", repr(m.lambda_), "alpha_", repr(m.alpha_))
