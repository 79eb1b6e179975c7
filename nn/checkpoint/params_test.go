package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// model returns fresh parameters with distinct values: fc.weight (2, 3),
// fc.bias (2) and a scalar scale.
func model(dt tensor.DType, offset float64) map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{
		"fc.weight": tensor.FromValues(dt, []float64{1 + offset, 2, 3, 4, 5, 6}, 2, 3),
		"fc.bias":   tensor.FromValues(dt, []float64{-1 + offset, -2}, 2),
		"scale":     tensor.Scalar(dt, 0.5+offset),
	}
}

// snapshot copies the values of params.
func snapshot(params map[string]*tensor.Tensor) map[string][]float64 {
	s := map[string][]float64{}
	for k, v := range params {
		s[k] = v.Values()
	}
	return s
}

func TestSaveLoadInto(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.safetensors")
			opt := map[string]*tensor.Tensor{
				"step":         tensor.Scalar(dt, 10),
				"m.fc.weight":  tensor.Full(dt, 0.25, 2, 3),
				"v.fc.weight":  tensor.Full(dt, 0.5, 2, 3),
				"optim.nested": tensor.Scalar(dt, 1), // keeps its own prefix
			}
			require.NoError(t, Save(path, model(dt, 0), opt, map[string]string{"epoch": "4"}))

			// Stored names: parameters as given, state under "optim.".
			raw, meta, err := ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "4", meta["epoch"])
			assert.Contains(t, raw, "fc.weight")
			assert.Contains(t, raw, "optim.step")
			assert.Contains(t, raw, "optim.optim.nested")

			dst := model(dt, 100)
			dst["fc.weight"] = tensor.Transpose(tensor.New(dt, 3, 2)) // a non-contiguous destination
			state, err := LoadInto(path, dst)
			require.NoError(t, err)
			assert.Equal(t, snapshot(model(dt, 0)), snapshot(dst))
			require.Len(t, state, 4)
			assert.Equal(t, 10.0, state["step"].Item())
			assert.Equal(t, []float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, state["m.fc.weight"].Values())
			assert.Equal(t, []int{2, 3}, state["v.fc.weight"].Shape())
			assert.Equal(t, 1.0, state["optim.nested"].Item())
		})
	}
}

func TestLoadIntoMismatchLeavesParamsUnchanged(t *testing.T) {
	for _, dt := range numtest.DTypes {
		cases := []struct {
			name  string
			edit  func(m map[string]*tensor.Tensor) // applied to the saved model
			wants []string
		}{
			{"shape", func(m map[string]*tensor.Tensor) { m["fc.weight"] = tensor.New(dt, 3, 2) },
				[]string{`tensor "fc.weight" is (3, 2) ` + dt.String() + ` in the file but (2, 3) ` + dt.String() + ` in the model`}},
			{"missing", func(m map[string]*tensor.Tensor) { delete(m, "scale") },
				[]string{`tensor "scale" () ` + dt.String() + ` is missing from the file`}},
			{"unexpected", func(m map[string]*tensor.Tensor) { m["fc2.weight"] = tensor.New(dt, 4) },
				[]string{`unexpected tensor "fc2.weight" (4,)`}},
			{"several", func(m map[string]*tensor.Tensor) {
				delete(m, "scale")
				m["fc.bias"] = tensor.New(dt, 3)
				m["extra"] = tensor.New(dt, 1)
			}, []string{`"scale"`, `"fc.bias" is (3,)`, `unexpected tensor "extra"`}},
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "m.safetensors")
				saved := model(dt, 0)
				c.edit(saved)
				require.NoError(t, Save(path, saved, nil, nil))

				dst := model(dt, 100)
				before := snapshot(dst)
				state, err := LoadInto(path, dst)
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrMismatch)
				assert.Nil(t, state)
				assert.Contains(t, err.Error(), path)
				for _, w := range c.wants {
					assert.Contains(t, err.Error(), w)
				}
				assert.Equal(t, before, snapshot(dst), "no parameter may change on a failed load")
			})
		}
	}
}

func TestLoadIntoCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, Save(path, model(tensor.Float32, 0), nil, nil))
	dst := model(tensor.Float32, 100)
	before := snapshot(dst)
	// Truncate the last data byte.
	data := readFileBytes(t, path)
	writeFileBytes(t, path, data[:len(data)-1])
	_, err := LoadInto(path, dst)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), path)
	assert.Equal(t, before, snapshot(dst))
}

func TestSaveReservedPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	err := Save(path, map[string]*tensor.Tensor{"optim.lr": tensor.Scalar(tensor.Float32, 1)}, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"optim.lr"`)
	assertNoTempFiles(t, filepath.Dir(path))
}
