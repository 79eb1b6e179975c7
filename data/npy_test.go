package data

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// The files of testdata/make_npy.py, with the values written there.
func TestLoadNPY(t *testing.T) {
	f4, err := LoadNPY("testdata/f4.npy")
	require.NoError(t, err)
	assert.Equal(t, tensor.Float32, f4.DType())
	assert.Equal(t, []int{2, 3}, f4.Shape())
	assert.Equal(t, []float64{1.5, -2, 0.25, 3, 4, 5}, f4.Values())
	f8, err := LoadNPY("testdata/f8.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.1, 1e300, -7}, f8.Values())
	i8, err := LoadNPY("testdata/i8.npy")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, i8.Shape())
	assert.Equal(t, []float64{-3, 1 << 40}, i8.Values())
	u1, err := LoadNPY("testdata/u1.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{250, 251, 252, 253, 254, 255}, u1.Values())
	npz, err := LoadNPZ("testdata/pair.npz")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 0, 1}, npz["x"].Values())
	assert.Equal(t, []float64{7, 8}, npz["y"].Values())
}

func TestNPYErrors(t *testing.T) {
	_, err := LoadNPY("testdata/fortran.npy")
	assert.ErrorContains(t, err, "Fortran")
	b, err := os.ReadFile("testdata/f8.npy")
	require.NoError(t, err)
	_, err = ReadNPY(bytes.NewReader(b[:len(b)-3]), "cut.npy")
	assert.ErrorContains(t, err, "cut.npy: truncated data")
	_, err = ReadNPY(bytes.NewReader([]byte("not numpy at all")), "x.npy")
	assert.ErrorContains(t, err, "bad magic")
	_, err = ReadNPZ([]byte("PK nonsense"), "bad.npz")
	assert.ErrorContains(t, err, "not a .npz archive")
}
