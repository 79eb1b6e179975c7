"""Times scikit-learn's SVC (LIBSVM) on the problems of svm's
BenchmarkFitSVC: breast cancer (standardised) and MNIST 0-vs-1 from the
embedded training split (pixels / 255), RBF with gamma="scale", C = 1,
tol = 1e-3, a 100 MB cache; with and without shrinking. Prints the median
of the rounds in ms. Run from the repository root with /usr/bin/python3."""
import gzip
import sys
import time

import numpy as np
from sklearn.svm import SVC

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
d = np.loadtxt("data/files/sklearn/breast_cancer.csv", delimiter=",", skiprows=1)
bc = ((d[:, :30] - d[:, :30].mean(0)) / d[:, :30].std(0), d[:, 30])
with gzip.open("data/files/mnist10k/train-images-idx3-ubyte.gz") as f:
    img = np.frombuffer(f.read()[16:], np.uint8).reshape(-1, 784)
with gzip.open("data/files/mnist10k/train-labels-idx1-ubyte.gz") as f:
    lab = np.frombuffer(f.read()[8:], np.uint8)
keep = lab <= 1
mn = (img[keep].astype(np.float32) / 255).astype(np.float64), lab[keep]
for name, (X, y) in [("breast-cancer", bc), ("mnist-0-vs-1", mn)]:
    for shrinking in [True, False]:
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            m = SVC(kernel="rbf", C=1.0, gamma="scale", tol=1e-3, cache_size=100, shrinking=shrinking).fit(X, y)
            times.append(time.perf_counter() - t)
        print(f"{name} shrinking={shrinking}: median {1e3 * np.median(times):.2f} ms "
              f"(min {1e3 * min(times):.2f}, max {1e3 * max(times):.2f}), {m.n_support_.sum()} SVs")
