package checkpoint

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// Every dtype a model file uses reads back to the values its bytes encode,
// worked out by hand: the float16 and bfloat16 patterns below are exact
// powers and fractions of two, the integers their two's-complement bytes.
func TestReadEveryDType(t *testing.T) {
	le := binary.LittleEndian
	u16 := func(vs ...uint16) []byte {
		b := make([]byte, 2*len(vs))
		for i, v := range vs {
			le.PutUint16(b[2*i:], v)
		}
		return b
	}
	cases := []struct {
		dtype string
		data  []byte
		want  []float64
		as    tensor.DType
	}{
		// F16: 1.0 = 0x3C00, −2.0 = 0xC000, 0.5 = 0x3800, the smallest
		// subnormal 2⁻²⁴ = 0x0001.
		{"F16", u16(0x3C00, 0xC000, 0x3800, 0x0001), []float64{1, -2, 0.5, math.Ldexp(1, -24)}, tensor.Float32},
		// BF16: the top half of float32: 1.0 = 0x3F80, −3.0 = 0xC040, +Inf = 0x7F80.
		{"BF16", u16(0x3F80, 0xC040, 0x7F80, 0x0000), []float64{1, -3, math.Inf(1), 0}, tensor.Float32},
		{"I64", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 7), math.MaxUint64), []float64{7, -1}, tensor.Float64},
		{"I32", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1<<31), 5), []float64{-(1 << 31), 5}, tensor.Float64},
		{"U32", binary.LittleEndian.AppendUint32(nil, 1<<31), []float64{1 << 31}, tensor.Float64},
		{"I16", u16(0xFFFE, 300), []float64{-2, 300}, tensor.Float64},
		{"U16", u16(0xFFFE), []float64{65534}, tensor.Float64},
		{"I8", []byte{0x80, 0x7F}, []float64{-128, 127}, tensor.Float64},
		{"U8", []byte{0x80, 0x7F}, []float64{128, 127}, tensor.Float64},
		{"BOOL", []byte{1, 0}, []float64{1, 0}, tensor.Float64},
		{"U64", binary.LittleEndian.AppendUint64(nil, 1<<53), []float64{1 << 53}, tensor.Float64},
	}
	for _, c := range cases {
		t.Run(c.dtype, func(t *testing.T) {
			n := len(c.want)
			js := `{"w":{"dtype":"` + c.dtype + `","shape":[` + itoa(n) + `],"data_offsets":[0,` + itoa(len(c.data)) + `]}}`
			ts, _, err := Read(bytes.NewReader(header(js, c.data)))
			require.NoError(t, err)
			assert.Equal(t, c.as, ts["w"].DType())
			assert.Equal(t, c.want, ts["w"].Values())
		})
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// Values that float64 cannot hold exactly, and BOOL bytes other than 0 and
// 1, are errors naming the tensor.
func TestReadLossyDTypes(t *testing.T) {
	big := binary.LittleEndian.AppendUint64(nil, 1<<53+1)
	_, _, err := Read(bytes.NewReader(header(`{"n":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, big)))
	assert.ErrorContains(t, err, `"n"`)
	assert.ErrorContains(t, err, "cannot be held exactly")
	_, _, err = Read(bytes.NewReader(header(`{"b":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`, []byte{2})))
	assert.ErrorContains(t, err, "neither 0 nor 1")
}

// LoadInto converts to the parameters' dtype: float32 values into float64
// parameters exactly; a value that overflows float32 is refused and
// nothing is written.
func TestLoadIntoConverts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	require.NoError(t, WriteFile(path, map[string]*tensor.Tensor{
		"w":   tensor.FromValues(tensor.Float32, []float64{0.5, -1.25}, 2),
		"big": tensor.FromFloat64s([]float64{1e300}, 1),
	}, nil))
	params := dict{"w": tensor.Zeros(tensor.Float64, 2), "big": tensor.Zeros(tensor.Float64, 1)}
	_, err := LoadInto(path, params, LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, -1.25}, params["w"].Values())
	small := dict{"w": tensor.Zeros(tensor.Float32, 2), "big": tensor.Zeros(tensor.Float32, 1)}
	_, err = LoadInto(path, small, LoadOptions{})
	assert.ErrorContains(t, err, "overflows float32")
	assert.Equal(t, []float64{0, 0}, small["w"].Values(), "nothing written on error")
}
