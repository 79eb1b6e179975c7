package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// On a small problem (n = 7, C = 3) checked by a dense computation of size
// nC that shares nothing with Algorithm 3.3: at the mode the gradient of
// Ψ(f) = −½fᵀK⁻¹f + yᵀf − Σᵢ log Σ_c exp fᵢc vanishes, f̂_c = K(y_c − π̂_c);
// and the Laplace evidence equals Ψ(f̂) − ½ log det(I + W K_big) with
// W = blockdiag(diag(πᵢ) − πᵢπᵢᵀ).
func TestMultiClassifierAgainstDenseLaplace(t *testing.T) {
	x := tensor.FromFloat64s([]float64{-2, -1.5, -0.2, 0.1, 0.4, 1.8, 2.2}, 7, 1)
	labels := []int{0, 0, 1, 1, 2, 2, 2}
	m, err := FitMultiClassifier(context.Background(), x, labels, MultiClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8), 2), Classes: 3})
	require.NoError(t, err)
	n, C := 7, 3
	k := kernelMatrix(m.kernel, m.x, nil)
	for c := range C {
		r := make([]float64, n)
		fc := make([]float64, n)
		for i := range n {
			r[i] = -m.probs[i*C+c]
			if labels[i] == c {
				r[i]++
			}
			fc[i] = m.mode[i*C+c]
		}
		kr := matVec(k, r)
		for i := range n {
			assert.InDelta(t, fc[i], kr[i], 1e-8, "stationarity, class %d, point %d", c, i)
		}
	}
	// Dense: Ψ(f̂) with K⁻¹ per class, and log det(I + W·K_big).
	kinv, err := tensor.Inverse(k)
	require.NoError(t, err)
	psi := 0.0
	for c := range C {
		fc := make([]float64, n)
		for i := range n {
			fc[i] = m.mode[i*C+c]
		}
		kf := matVec(kinv, fc)
		for i := range n {
			psi -= 0.5 * fc[i] * kf[i]
		}
	}
	for i, l := range labels {
		psi += m.mode[i*C+l]
		s := 0.0
		for c := range C {
			s += math.Exp(m.mode[i*C+c])
		}
		psi -= math.Log(s)
	}
	big := make([]float64, n*C*n*C)
	for i := range n {
		for c := range C {
			for j := range n {
				for c2 := range C {
					// (W K_big)[(i,c),(j,c2)] = Σ_c' W_i[c][c'] K_ij δ_{c'c2}
					w := -m.probs[i*C+c] * m.probs[i*C+c2]
					if c == c2 {
						w += m.probs[i*C+c]
					}
					v := w * k.At(i, j)
					if i == j && c == c2 {
						v++
					}
					big[(i*C+c)*n*C+j*C+c2] = v
				}
			}
		}
	}
	sign, logdet, err := tensor.SlogDet(tensor.FromFloat64s(big, n*C, n*C))
	require.NoError(t, err)
	require.Equal(t, 1.0, sign.Item())
	// The algorithm takes the determinant at the last iterate's π, one Newton
	// step before f̂: agreement to 1e-6.
	assert.InDelta(t, psi-0.5*logdet.Item(), m.LogMarginalLikelihood(), 1e-6)
}

// On iris (4 standardised features, 3 classes) the classifier fits the
// training set as well as the one-vs-one SVM does (over 95 %).
func TestMultiClassifierIris(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	m, err := FitMultiClassifier(context.Background(), x, labels, MultiClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(1.5), 4)})
	require.NoError(t, err)
	assert.Equal(t, 3, m.Classes())
	pred := m.Predict(x)
	right := 0
	for i, p := range pred {
		if p == labels[i] {
			right++
		}
	}
	assert.Greater(t, float64(right)/150, 0.95)
	assert.Less(t, m.Iterations(), 30)
	_, err = FitMultiClassifier(context.Background(), x, append([]int(nil), labels[:149]...), MultiClassifierOptions{Kernel: kernel.NewRBF(1), Classes: 3})
	assert.Error(t, err)
	bad := append([]int(nil), labels...)
	bad[3] = 5
	_, err = FitMultiClassifier(context.Background(), x, bad, MultiClassifierOptions{Kernel: kernel.NewRBF(1), Classes: 3})
	assert.ErrorContains(t, err, "label 3 is 5")
}
