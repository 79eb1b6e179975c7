package checkpoint

import (
	"encoding/binary"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// dtypeNames maps Gradus dtypes to the safetensors names they are written
// as.
var dtypeNames = map[tensor.DType]string{tensor.Float32: "F32", tensor.Float64: "F64"}

// fileDType is how a safetensors dtype is read: its width in bytes and the
// Gradus dtype that holds its values exactly.
type fileDType struct {
	size int
	to   tensor.DType
}

var fileDTypes = map[string]fileDType{
	"F64": {8, tensor.Float64}, "F32": {4, tensor.Float32},
	"F16": {2, tensor.Float32}, "BF16": {2, tensor.Float32},
	"I64": {8, tensor.Float64}, "U64": {8, tensor.Float64},
	"I32": {4, tensor.Float64}, "U32": {4, tensor.Float64},
	"I16": {2, tensor.Float64}, "U16": {2, tensor.Float64},
	"I8": {1, tensor.Float64}, "U8": {1, tensor.Float64}, "BOOL": {1, tensor.Float64},
}

// unsupportedDTypes are the format's other dtypes, refused by name.
var unsupportedDTypes = []string{"F8_E5M2", "F8_E4M3", "C64"}

// maxExact is 2⁵³: every integer of at most this magnitude is a float64.
const maxExact = 1 << 53

// decode builds a tensor from its little-endian bytes, converting as
// fileDTypes says. An integer that float64 cannot hold exactly is an error.
func decode(e entry, b []byte) (*tensor.Tensor, error) {
	t := tensor.New(e.dtype, e.shape...)
	n := t.Size()
	if n == 0 {
		return t, nil
	}
	le := binary.LittleEndian
	switch e.file {
	case "F32", "F16", "BF16":
		d := t.Float32s()
		for i := range d {
			switch e.file {
			case "F32":
				d[i] = math.Float32frombits(le.Uint32(b[4*i:]))
			case "F16":
				d[i] = halfToFloat32(le.Uint16(b[2*i:]))
			default:
				d[i] = math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16)
			}
		}
		return t, nil
	}
	d := t.Float64s()
	for i := range d {
		switch e.file {
		case "F64":
			d[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		case "I64":
			v := int64(le.Uint64(b[8*i:]))
			if v > maxExact || v < -maxExact {
				return nil, formatErr(e.name, "I64 value %d at index %d cannot be held exactly as a float64", v, i)
			}
			d[i] = float64(v)
		case "U64":
			v := le.Uint64(b[8*i:])
			if v > maxExact {
				return nil, formatErr(e.name, "U64 value %d at index %d cannot be held exactly as a float64", v, i)
			}
			d[i] = float64(v)
		case "I32":
			d[i] = float64(int32(le.Uint32(b[4*i:])))
		case "U32":
			d[i] = float64(le.Uint32(b[4*i:]))
		case "I16":
			d[i] = float64(int16(le.Uint16(b[2*i:])))
		case "U16":
			d[i] = float64(le.Uint16(b[2*i:]))
		case "I8":
			d[i] = float64(int8(b[i]))
		case "U8":
			d[i] = float64(b[i])
		case "BOOL":
			if b[i] > 1 {
				return nil, formatErr(e.name, "BOOL byte %d at index %d is neither 0 nor 1", b[i], i)
			}
			d[i] = float64(b[i])
		}
	}
	return t, nil
}

// halfToFloat32 widens an IEEE 754 binary16 value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: frac·2⁻²⁴, exact in float32.
		v := float32(frac) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

// convert returns src in dtype dt: float32 to float64 exactly, float64 to
// float32 rounded, with an error when a finite value overflows float32.
func convert(name string, src *tensor.Tensor, dt tensor.DType) (*tensor.Tensor, error) {
	if src.DType() == dt {
		return src, nil
	}
	if dt == tensor.Float32 {
		for i, v := range src.Values() {
			if !math.IsInf(v, 0) && !math.IsNaN(v) && math.Abs(v) > math.MaxFloat32 {
				return nil, formatErr(name, "value %g at index %d overflows float32", v, i)
			}
		}
	}
	return src.Cast(dt), nil
}
