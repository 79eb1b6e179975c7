package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// ONNX's TensorProto.DataType codes.
const (
	tFloat    = 1
	tUint8    = 2
	tInt8     = 3
	tUint16   = 4
	tInt16    = 5
	tInt32    = 6
	tInt64    = 7
	tString   = 8
	tBool     = 9
	tFloat16  = 10
	tDouble   = 11
	tUint32   = 12
	tUint64   = 13
	tBFloat16 = 16
)

// elemTypes names each ONNX element type and gives its width in bytes
// when stored raw. The set is the safetensors reader's (nn/checkpoint):
// F64, F32, F16, BF16 and the signed and unsigned integers of 8 to 64
// bits and BOOL.
var elemTypes = map[int32]struct {
	name string
	size int
}{
	tFloat: {"float32", 4}, tDouble: {"float64", 8}, tFloat16: {"float16", 2}, tBFloat16: {"bfloat16", 2},
	tInt64: {"int64", 8}, tUint64: {"uint64", 8}, tInt32: {"int32", 4}, tUint32: {"uint32", 4},
	tInt16: {"int16", 2}, tUint16: {"uint16", 2}, tInt8: {"int8", 1}, tUint8: {"uint8", 1}, tBool: {"bool", 1},
}

// ElemTypeName returns the name of an ONNX TensorProto element type code
// ("float32", "int64", ...), or "type N" for a code Gradus does not read.
func ElemTypeName(code int32) string {
	if e, ok := elemTypes[code]; ok {
		return e.name
	}
	if code == tString {
		return "string"
	}
	return "type " + strconv.Itoa(int(code))
}

// isFloat reports whether an element type becomes a float tensor (a graph
// node) rather than a host integer tensor.
func isFloat(code int32) bool {
	return code == tFloat || code == tDouble || code == tFloat16 || code == tBFloat16
}

// floatDType is the Gradus dtype that holds an ONNX float type exactly:
// float64 for double, float32 for the rest.
func floatDType(code int32) tensor.DType {
	if code == tDouble {
		return tensor.Float64
	}
	return tensor.Float32
}

// constant is a decoded tensor: a float tensor (a parameter or a
// constant node), or integers and booleans held on the host as a float64
// tensor, exact up to 2⁵³ (shape arithmetic never comes near; larger
// values, such as the int64 limits Slice uses for open ends, round to the
// nearest float64 and are clamped where they are used as indices).
type constant struct {
	f       *tensor.Tensor
	h       *tensor.Tensor
	boolean bool
}

// decodeTensor decodes t; dir is where its external data lives ("" when
// the model came from a reader, which refuses external data).
func decodeTensor(t *pb.TensorProto, dir string) (constant, error) {
	name := t.GetName()
	et, ok := elemTypes[t.GetDataType()]
	if !ok {
		return constant{}, fmt.Errorf("tensor %q: element type %s is not supported (want one of float32, float64, float16, bfloat16, (u)int8-64, bool)", name, ElemTypeName(t.GetDataType()))
	}
	shape := make([]int, len(t.GetDims()))
	n := 1
	for i, d := range t.GetDims() {
		if d < 0 || d > math.MaxInt32 {
			return constant{}, fmt.Errorf("tensor %q: dimension %d is %d", name, i, d)
		}
		shape[i] = int(d)
		n *= int(d)
		if n > 1<<31 {
			return constant{}, fmt.Errorf("tensor %q: shape %v is too large", name, t.GetDims())
		}
	}
	raw := t.GetRawData()
	if t.GetDataLocation() == pb.TensorProto_EXTERNAL {
		var err error
		if raw, err = readExternal(t, dir); err != nil {
			return constant{}, err
		}
	}
	code := t.GetDataType()
	// The data's length is checked before anything of the shape's size is
	// allocated, so a corrupt shape cannot ask for gigabytes.
	got, want, unit := len(raw), n*et.size, "bytes"
	if raw == nil && t.GetDataLocation() != pb.TensorProto_EXTERNAL {
		want, unit = n, "values"
		switch code {
		case tFloat:
			got = len(t.GetFloatData())
		case tDouble:
			got = len(t.GetDoubleData())
		case tInt64:
			got = len(t.GetInt64Data())
		case tUint32, tUint64:
			got = len(t.GetUint64Data())
		default:
			got = len(t.GetInt32Data())
		}
	}
	if got != want {
		return constant{}, fmt.Errorf("tensor %q: %d %s of data for shape %s %s, want %d", name, got, unit, tensor.FormatShape(shape), et.name, want)
	}
	vals := make([]float64, n)
	switch {
	case raw != nil || t.GetDataLocation() == pb.TensorProto_EXTERNAL:
		for i := range vals {
			v, err := rawValue(code, raw[i*et.size:])
			if err != nil {
				return constant{}, fmt.Errorf("tensor %q: %v at index %d", name, err, i)
			}
			vals[i] = v
		}
	case code == tFloat:
		for i, v := range t.GetFloatData() {
			vals[i] = float64(v)
		}
	case code == tDouble:
		copy(vals, t.GetDoubleData())
	case code == tInt64:
		for i, v := range t.GetInt64Data() {
			vals[i] = float64(v)
		}
	case code == tUint32 || code == tUint64:
		for i, v := range t.GetUint64Data() {
			vals[i] = float64(v)
		}
	default: // int32_data holds the narrow types, float16 and bfloat16 as bits
		var b [4]byte
		for i, v := range t.GetInt32Data() {
			binary.LittleEndian.PutUint32(b[:], uint32(v))
			x, err := rawValue(code, b[:])
			if err != nil {
				return constant{}, fmt.Errorf("tensor %q: %v at index %d", name, err, i)
			}
			if code == tInt32 {
				x = float64(v)
			}
			vals[i] = x
		}
	}
	if isFloat(code) {
		return constant{f: tensor.FromValues(floatDType(code), vals, shape...)}, nil
	}
	return constant{h: tensor.FromFloat64s(vals, shape...), boolean: code == tBool}, nil
}

// rawValue decodes one little-endian element of type code from b.
func rawValue(code int32, b []byte) (float64, error) {
	le := binary.LittleEndian
	switch code {
	case tFloat:
		return float64(math.Float32frombits(le.Uint32(b))), nil
	case tDouble:
		return math.Float64frombits(le.Uint64(b)), nil
	case tFloat16:
		return float64(halfToFloat32(le.Uint16(b))), nil
	case tBFloat16:
		return float64(math.Float32frombits(uint32(le.Uint16(b)) << 16)), nil
	case tInt64:
		return float64(int64(le.Uint64(b))), nil
	case tUint64:
		v := le.Uint64(b)
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("uint64 value %d does not fit int64", v)
		}
		return float64(v), nil
	case tInt32:
		return float64(int32(le.Uint32(b))), nil
	case tUint32:
		return float64(le.Uint32(b)), nil
	case tInt16:
		return float64(int16(le.Uint16(b))), nil
	case tUint16:
		return float64(le.Uint16(b)), nil
	case tInt8:
		return float64(int8(b[0])), nil
	case tUint8:
		return float64(b[0]), nil
	case tBool:
		if b[0] > 1 {
			return 0, fmt.Errorf("bool byte %d is neither 0 nor 1", b[0])
		}
		return float64(b[0]), nil
	}
	return 0, fmt.Errorf("element type %s", ElemTypeName(code))
}

// halfToFloat32 widens an IEEE 754 binary16 value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0:
		v := float32(math.Ldexp(float64(frac), -24)) // zero or subnormal
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// readExternal reads the bytes of a tensor stored outside the model file
// (external_data: location, offset, length), relative to dir. A location
// outside dir is refused.
func readExternal(t *pb.TensorProto, dir string) ([]byte, error) {
	name := t.GetName()
	if dir == "" {
		return nil, fmt.Errorf("tensor %q: data is in an external file; read the model with Open(path) so that the file can be found", name)
	}
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range t.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 {
			return nil, fmt.Errorf("tensor %q: external data %s = %q is not a valid size", name, kv.GetKey(), kv.GetValue())
		}
	}
	clean := filepath.Clean(filepath.FromSlash(loc))
	if loc == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("tensor %q: external data location %q must be a relative path inside the model's folder", name, loc)
	}
	path := filepath.Join(dir, clean)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: external data: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: external data: %w", name, err)
	}
	if length < 0 {
		length = st.Size() - offset
	}
	if offset+length > st.Size() || length < 0 {
		return nil, fmt.Errorf("tensor %q: external data %s holds %d bytes, want %d at offset %d", name, path, st.Size(), length, offset)
	}
	b := make([]byte, length)
	if _, err := f.ReadAt(b, offset); err != nil {
		return nil, fmt.Errorf("tensor %q: external data %s: %w", name, path, err)
	}
	return b, nil
}
