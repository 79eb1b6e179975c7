package onnx_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// FuzzRead feeds Read arbitrary bytes, seeded with the zoo's models and
// small hand-made ones: it returns a model or an error, never panics, and
// a model it returns runs on zero inputs of its declared shapes (symbolic
// sizes 2) to outputs or an error.
func FuzzRead(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.onnx")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && filepath.Base(p) != "mlp.onnx" {
			f.Add(b)
		}
	}
	f.Add(model(13, []*pb.NodeProto{op("Relu", "r", []string{"x"}, []string{"y"})}, nil))
	f.Add(model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "b"}, []string{"y"})}, []*pb.TensorProto{raw("b", 1, f32(1, 2, 3), 3)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := onnx.Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var ins []*tensor.Tensor
		for _, vi := range m.Inputs() {
			shape := make([]int, len(vi.Shape))
			size := 1
			for i, d := range vi.Shape {
				shape[i] = d
				if d < 0 {
					shape[i] = 2
				}
				size *= shape[i]
			}
			if size > 1<<16 {
				return
			}
			dt := tensor.Float32
			if vi.ElemType == "float64" {
				dt = tensor.Float64
			}
			ins = append(ins, tensor.Zeros(dt, shape...))
		}
		m.Run(ins...) //nolint:errcheck // an error is fine, a panic is not
	})
}
