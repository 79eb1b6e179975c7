package tensor

import (
	"fmt"

	gt "gorgonia.org/tensor"
)

// FromDense converts a gorgonia.org/tensor *Dense of dtype Float32 or
// Float64 into a Tensor. When d is laid out row-major and contiguous (a
// freshly made tensor, or a view such as a block of whole rows) the result
// shares d's memory, so writes through either are visible in both. Other
// layouts (column-major, lazily transposed, strided views) are copied. It
// returns an error for a nil or masked tensor and for any other dtype.
func FromDense(d *gt.Dense) (*Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("tensor.FromDense: nil *Dense")
	}
	if d.IsMasked() {
		return nil, fmt.Errorf("tensor.FromDense: masked %v tensor of shape %v is not supported", d.Dtype(), d.Shape())
	}
	shape := []int(d.Shape().Clone())
	if d.IsScalar() {
		shape = []int{}
	}
	switch d.Dtype() {
	case gt.Float32:
		return fromDense(d, Float32, shape, d.Float32s())
	case gt.Float64:
		return fromDense(d, Float64, shape, d.Float64s())
	}
	return nil, fmt.Errorf("tensor.FromDense: dtype %v of shape %v is not supported (only float32 and float64)", d.Dtype(), d.Shape())
}

// fromDense wraps data, the storage of d starting at d's first element,
// as a Tensor of the given shape.
func fromDense[T Float](d *gt.Dense, dt DType, shape []int, data []T) (*Tensor, error) {
	size := shapeSize(shape)
	t := &Tensor{dtype: dt, shape: shape, strides: rowMajorStrides(shape)}
	if size == 0 {
		setStorage(t, []T{})
		return t, nil
	}
	if denseSharable(d, shape, len(data)) {
		setStorage(t, data[:size:size])
		return t, nil
	}
	// A strided view over d's storage with d's own strides describes
	// column-major, transposed and sliced tensors alike; Clone then lays it
	// out row-major.
	strides := d.Strides()
	last := 0
	ok := len(strides) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = strides[i] >= 0
		last += (shape[i] - 1) * strides[i]
	}
	if !ok || last >= len(data) {
		return nil, fmt.Errorf("tensor.FromDense: %v tensor of shape %v has strides %v that do not fit its %d stored elements", d.Dtype(), d.Shape(), strides, len(data))
	}
	v := &Tensor{dtype: dt, shape: shape, strides: cloneInts(strides)}
	for i := range shape {
		if shape[i] == 1 {
			v.strides[i] = 0 // gorgonia may report any stride for these
		}
	}
	setStorage(v, data)
	return v.Clone(), nil
}

// denseSharable reports whether d's storage holds its elements row-major
// and without gaps from the first one on, so it can be used in place.
func denseSharable(d *gt.Dense, shape []int, n int) bool {
	o := d.DataOrder()
	if o.IsColMajor() || o.IsTransposed() || (d.IsMaterializable() && !d.IsView()) {
		return false
	}
	if len(shape) == 0 {
		return n >= 1
	}
	strides := d.Strides()
	if len(strides) != len(shape) {
		return false
	}
	want := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return n >= want
}

func setStorage[T Float](t *Tensor, data []T) {
	switch s := any(data).(type) {
	case []float32:
		t.f32 = s
	case []float64:
		t.f64 = s
	}
}

// ToDense returns t as a gorgonia.org/tensor *Dense with the same shape and
// dtype. A contiguous t shares its memory with the result, so writes
// through either are visible in both; otherwise the Dense holds a
// row-major copy.
func (t *Tensor) ToDense() *gt.Dense {
	c := t.Contiguous()
	n := c.Size()
	var backing any
	if c.dtype == Float32 {
		backing = c.f32[c.offset : c.offset+n : c.offset+n]
	} else {
		backing = c.f64[c.offset : c.offset+n : c.offset+n]
	}
	if len(c.shape) == 0 {
		// gorgonia represents a scalar as shape () over one element.
		return gt.New(gt.WithBacking(backing), gt.WithShape())
	}
	return gt.New(gt.WithBacking(backing), gt.WithShape(c.shape...))
}
