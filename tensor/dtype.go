package tensor

import "fmt"

// DType is the element type of a Tensor.
type DType uint8

// The supported element types.
const (
	Float32 DType = iota + 1
	Float64
)

// String returns "float32" or "float64".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	if d == Float32 {
		return 4
	}
	return 8
}

// Float is the set of element types a Tensor can hold; generic kernels are
// instantiated once per dtype so float32 work never round-trips through
// float64.
type Float interface{ ~float32 | ~float64 }
