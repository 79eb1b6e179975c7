package tensor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

func TestFormatShape(t *testing.T) {
	cases := []struct {
		shape []int
		want  string
	}{
		{nil, "()"},
		{[]int{}, "()"},
		{[]int{3}, "(3,)"},
		{[]int{0}, "(0,)"},
		{[]int{2, 3}, "(2, 3)"},
		{[]int{1, 0, 4}, "(1, 0, 4)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, tensor.FormatShape(c.shape), "%v", c.shape)
	}
	// Error messages use the same spelling, with the dtype after the shape.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		e := fixTensorError(t, func() { tensor.Add(tensor.New(dt, 2, 3), tensor.New(dt, 3, 2)) })
		assert.Contains(t, e.Msg, "(2, 3)")
		assert.Contains(t, e.Msg, "(3, 2)")
		assert.NotContains(t, e.Msg, "[2 3]")
	}
}
