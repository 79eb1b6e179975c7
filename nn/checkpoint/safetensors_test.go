package checkpoint

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// le64 is n as 8 little-endian bytes.
func le64(n byte) []byte { return []byte{n, 0, 0, 0, 0, 0, 0, 0} }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Fixtures written out by hand from the format's definition.
var fixtures = []struct {
	name  string
	bytes []byte
	want  map[string]*tensor.Tensor
	meta  map[string]string
}{
	{
		// One F32 tensor "a" = [1, 2]: a 54-byte header padded to 56 = 0x38
		// with two spaces; 1.0f = 0x3f800000 and 2.0f = 0x40000000.
		name: "f32",
		bytes: cat(le64(0x38),
			[]byte(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  `),
			[]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40}),
		want: map[string]*tensor.Tensor{"a": tensor.FromFloat32s([]float32{1, 2}, 2)},
	},
	{
		// Metadata first, then "a" = [1.5, −2] (0x3ff8000000000000 and
		// 0xc000000000000000) and an empty "z" at offset 16: a 139-byte
		// header padded to 144 = 0x90 with five spaces.
		name: "f64+metadata+empty",
		bytes: cat(le64(0x90),
			[]byte(`{"__metadata__":{"epoch":"3"},"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"z":{"dtype":"F64","shape":[0],"data_offsets":[16,16]}}     `),
			[]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0}),
		want: map[string]*tensor.Tensor{"a": tensor.FromFloat64s([]float64{1.5, -2}, 2), "z": tensor.New(tensor.Float64, 0)},
		meta: map[string]string{"epoch": "3"},
	},
	{
		// A 0-d F64 scalar 0.25 = 0x3fd0000000000000: 53 bytes padded to 56.
		name: "f64 scalar",
		bytes: cat(le64(0x38),
			[]byte(`{"b":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}   `),
			[]byte{0, 0, 0, 0, 0, 0, 0xd0, 0x3f}),
		want: map[string]*tensor.Tensor{"b": tensor.Scalar(tensor.Float64, 0.25)},
	},
	{
		// No tensors at all: "{}" padded to 8.
		name:  "empty",
		bytes: cat(le64(8), []byte(`{}      `)),
		want:  map[string]*tensor.Tensor{},
	},
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			got, meta, err := Read(bytes.NewReader(f.bytes))
			require.NoError(t, err)
			require.Len(t, got, len(f.want))
			for name, w := range f.want {
				require.Contains(t, got, name)
				assert.Equal(t, w.DType(), got[name].DType(), name)
				assert.Equal(t, w.Shape(), got[name].Shape(), name)
				assert.Equal(t, w.Values(), got[name].Values(), name)
			}
			if f.meta == nil {
				assert.Empty(t, meta)
			} else {
				assert.Equal(t, f.meta, meta)
			}
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, f.want, f.meta))
			assert.Equal(t, f.bytes, buf.Bytes(), "written:\n%q\nwant:\n%q", buf.Bytes(), f.bytes)
		})
	}
}

// bits returns the raw bit patterns of a tensor's elements, so NaNs and
// signed zeros compare exactly.
func bits(t *tensor.Tensor) []uint64 {
	t = t.Contiguous()
	var out []uint64
	if t.DType() == tensor.Float32 {
		for _, v := range t.Float32s() {
			out = append(out, uint64(math.Float32bits(v)))
		}
		return out
	}
	for _, v := range t.Float64s() {
		out = append(out, math.Float64bits(v))
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-40, 3.4e38, math.Pi}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(5)
			base := rng.Normal(dt, 0, 1, 3, 4)
			ts := map[string]*tensor.Tensor{
				"scalar":          tensor.Scalar(dt, -7.25),
				"empty":           tensor.New(dt, 0),
				"empty2d":         tensor.New(dt, 2, 0, 3),
				"vector":          tensor.FromValues(dt, special, len(special)),
				"matrix":          base,
				"view.transposed": tensor.Transpose(base), // not contiguous
				"enc.fc1.weight":  rng.Normal(dt, 0, 1, 2, 3, 4),
				"name with ü & <": tensor.FromValues(dt, []float64{1}, 1),
			}
			meta := map[string]string{"epoch": "12", "note": `quotes " and \ and <html>`}
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, ts, meta))
			b := buf.Bytes()
			n := int(b[0]) | int(b[1])<<8
			assert.Zero(t, n%8, "header length is a multiple of 8")
			got, gotMeta, err := Read(bytes.NewReader(b))
			require.NoError(t, err)
			assert.Equal(t, meta, gotMeta)
			require.Len(t, got, len(ts))
			for name, w := range ts {
				require.Contains(t, got, name)
				g := got[name]
				assert.Equal(t, dt, g.DType(), name)
				assert.Equal(t, w.Shape(), g.Shape(), name)
				assert.Equal(t, bits(w), bits(g), name)
			}
			// Writing what was read gives the same bytes.
			var again bytes.Buffer
			require.NoError(t, Write(&again, got, gotMeta))
			assert.Equal(t, b, again.Bytes())
		})
	}
}

func TestWriteRejects(t *testing.T) {
	for _, dt := range numtest.DTypes {
		x := tensor.New(dt, 2)
		for _, c := range []struct {
			name string
			ts   map[string]*tensor.Tensor
			want string
		}{
			{"nil", map[string]*tensor.Tensor{"w": nil}, `tensor "w" is nil`},
			{"empty name", map[string]*tensor.Tensor{"": x}, `invalid tensor name ""`},
			{"reserved", map[string]*tensor.Tensor{"__metadata__": x}, `invalid tensor name "__metadata__"`},
			{"bad utf-8", map[string]*tensor.Tensor{"\xff": x}, `invalid tensor name`},
		} {
			err := Write(&bytes.Buffer{}, c.ts, nil)
			require.Error(t, err, c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

// header builds safetensors bytes from a JSON header and a data section,
// padding the header to a multiple of 8 as the format wants.
func header(js string, data []byte) []byte {
	for len(js)%8 != 0 {
		js += " "
	}
	return cat(le64(byte(len(js))), []byte(js), data)
}

// readCases are malformed inputs, each with the tensor the error must name
// ("" if none) and a phrase it must contain.
var readCases = []struct {
	name   string
	data   []byte
	tensor string
	want   string
}{
	{"empty input", nil, "", "truncated"},
	{"short length", []byte{8, 0, 0}, "", "truncated"},
	{"header length beyond data", cat(le64(200), []byte(`{}`)), "", "header length 200"},
	{"truncated header", fixtures[0].bytes[:30], "", "header length 56"},
	{"truncated data", fixtures[0].bytes[:len(fixtures[0].bytes)-3], "a", "truncated"},
	{"trailing garbage", cat(fixtures[0].bytes, []byte("xyz")), "", "3 bytes of trailing data"},
	{"corrupt JSON", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]`, make([]byte, 8)), "a", "corrupt JSON"},
	{"not an object", header(`[1, 2]`, nil), "", "not a JSON object"},
	{"garbage after object", header(`{} x`, nil), "", "after the object"},
	{"bad UTF-8", header("{\"\xff\":1}", nil), "", "UTF-8"},
	{"corrupt record", header(`{"a":{"dtype":"F32","shape":"two","data_offsets":[0,8]}}`, make([]byte, 8)), "a", "corrupt header record"},
	{"unknown dtype", header(`{"w":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", `unknown dtype "F17"`},
	{"unsupported dtype", header(`{"w":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", `unsupported dtype "F8_E4M3"`},
	{"missing dtype", header(`{"w":{"shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "no dtype"},
	{"missing offsets", header(`{"w":{"dtype":"F32","shape":[2]}}`, make([]byte, 8)), "w", "no data_offsets"},
	{"shape/offsets mismatch", header(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "needs 12 bytes but data_offsets [0, 8] span 8"},
	{"shape/offsets mismatch F64", header(`{"w":{"dtype":"F64","shape":[2,1],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "needs 16 bytes but data_offsets [0, 8] span 8"},
	{"truncated data F64", fixtures[1].bytes[:len(fixtures[1].bytes)-1], "a", "truncated"},
	{"overlapping offsets F64", header(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)),
		"b", `overlap tensor "a"`},
	{"negative dimension", header(`{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "negative dimension"},
	{"reversed offsets", header(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, make([]byte, 8)), "w", "invalid data_offsets"},
	{"overlapping offsets", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)),
		"b", `overlap tensor "a"`},
	{"gap", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 12)),
		"b", "gap"},
	{"offsets beyond data", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 8)),
		"b", "extend past the end"},
	{"duplicate name", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)),
		"a", "appears twice"},
	{"metadata not strings", header(`{"__metadata__":{"epoch":3}}`, nil), "", "__metadata__"},
	{"header length 2⁶⁴−1", bytes.Repeat([]byte{0xff}, 16), "", "exceeds the limit"},
	{"header length 100 MB from 8 bytes", cat([]byte{0x00, 0xe1, 0xf5, 0x05, 0, 0, 0, 0}, []byte(`{}`)), "", "header length 100000000 but only 2 bytes follow"},
	{"empty tensor name", header(`{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), "", "empty name"},
	{"empty tensor of impossible shape", header(`{"w":{"dtype":"F32","shape":[0,281474976710656,281474976710656],"data_offsets":[0,0]}}`, nil), "w", "more than 281474976710656 elements"},
	{"shape beyond 2⁴⁸ elements", header(`{"w":{"dtype":"U8","shape":[1073741824,1073741824],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "more than 281474976710656 elements"},
	{"shape of fractions", header(`{"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}}`, make([]byte, 8)), "w", "corrupt header record"},
	{"offsets beyond int64", header(`{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,99999999999999999999]}}`, make([]byte, 1)), "w", "corrupt header record"},
	{"three data_offsets", header(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 8)), "w", "are not [begin, end]"},
	{"one data_offset", header(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[0]}}`, nil), "w", "are not [begin, end]"},
	{"empty tensor past the end", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"z":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}}`, make([]byte, 4)), "z", "gap"},
	{"1 GB claimed in a tiny file", header(`{"w":{"dtype":"U8","shape":[1000000000],"data_offsets":[0,1000000000]}}`, make([]byte, 8)), "w", "extend past the end"},
	{"BOOL byte of 2", header(`{"w":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`, []byte{2}), "w", "neither 0 nor 1"},
	{"I64 beyond 2⁵³", header(`{"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, []byte{0, 0, 0, 0, 0, 0, 0x40, 0}), "w", "cannot be held exactly"},
}

func TestReadErrors(t *testing.T) {
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(c.data))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrFormat)
			var fe *FormatError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, c.tensor, fe.Tensor, err.Error())
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
