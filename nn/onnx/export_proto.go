package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// The exporter's small builders of ONNX messages: tensors, attributes and
// value infos. Names carry an ex prefix so that they stay apart from the
// importer's helpers in this package.

// exElemType is the ONNX element type of a Gradus dtype.
func exElemType(dt tensor.DType) int32 {
	if dt == tensor.Float64 {
		return int32(pb.TensorProto_DOUBLE)
	}
	return int32(pb.TensorProto_FLOAT)
}

// exTensor returns t as an ONNX tensor named name, its data little-endian
// in raw_data.
func exTensor(name string, t *tensor.Tensor) *pb.TensorProto {
	c := t.Contiguous()
	var raw []byte
	if t.DType() == tensor.Float64 {
		v := c.Float64s()
		raw = make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
		}
	} else {
		v := c.Float32s()
		raw = make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
	}
	return &pb.TensorProto{Name: proto.String(name), Dims: exDims(t.Shape()), DataType: proto.Int32(exElemType(t.DType())), RawData: raw}
}

// exInt64Tensor returns an int64 tensor of shape dims holding v.
func exInt64Tensor(name string, v []int64, dims ...int) *pb.TensorProto {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &pb.TensorProto{Name: proto.String(name), Dims: exDims(dims), DataType: proto.Int32(int32(pb.TensorProto_INT64)), RawData: raw}
}

func exDims(shape []int) []int64 {
	d := make([]int64, len(shape))
	for i, n := range shape {
		d[i] = int64(n)
	}
	return d
}

// exValueInfo describes a graph input or output: its element type and
// shape, with the dimensions flagged in dyn named "batch".
func exValueInfo(name string, elem int32, shape []int, dyn []bool) *pb.ValueInfoProto {
	dims := make([]*pb.TensorShapeProto_Dimension, len(shape))
	for i, n := range shape {
		if i < len(dyn) && dyn[i] {
			dims[i] = &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}}
		} else {
			dims[i] = &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(n)}}
		}
	}
	return &pb.ValueInfoProto{
		Name: proto.String(name),
		Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
			ElemType: proto.Int32(elem),
			Shape:    &pb.TensorShapeProto{Dim: dims},
		}}},
	}
}

// exAttr builds a node attribute from an int, int64, float64, string,
// []int, []int64 or *pb.TensorProto value.
func exAttr(name string, v any) *pb.AttributeProto {
	a := &pb.AttributeProto{Name: proto.String(name)}
	typ := func(t pb.AttributeProto_AttributeType) { a.Type = t.Enum() }
	switch v := v.(type) {
	case int:
		typ(pb.AttributeProto_INT)
		a.I = proto.Int64(int64(v))
	case int64:
		typ(pb.AttributeProto_INT)
		a.I = proto.Int64(v)
	case float64:
		typ(pb.AttributeProto_FLOAT)
		a.F = proto.Float32(float32(v))
	case string:
		typ(pb.AttributeProto_STRING)
		a.S = []byte(v)
	case []int:
		typ(pb.AttributeProto_INTS)
		a.Ints = exDims(v)
	case []int64:
		typ(pb.AttributeProto_INTS)
		a.Ints = v
	case *pb.TensorProto:
		typ(pb.AttributeProto_TENSOR)
		a.T = v
	default:
		panic(fmt.Sprintf("onnx: attribute %s of unsupported type %T", name, v))
	}
	return a
}
